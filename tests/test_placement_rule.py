"""Rule ``placement`` on small repos (verdict, score, evidence line): sequential and parallel adapters in block
forwards, patched forwards, wrappers, nn.Sequential, hooks, Flax modules, config branches; and the rule's own
examples."""

from __future__ import annotations

import textwrap

import pytest

from verifier.analysis.protocol import load_rule, validate_protocol_params
from verifier.analysis.protocol.examples import example_problems, run_example

RULE = "placement"

BLOCK_INIT = """\
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.attn, self.mlp = Attention(dim), Mlp(dim)
            self.adapter = Adapter(dim, 8)

"""


def run(code: str, files: dict[str, str] | None = None, **params):
    assert validate_protocol_params(RULE, params) is None
    example = {"code": textwrap.dedent(code), "files": {k: textwrap.dedent(v) for k, v in (files or {}).items()},
               "params": params}
    result, _ = run_example(RULE, example)
    return result


def block(forward: str) -> str:
    return textwrap.dedent(BLOCK_INIT) + textwrap.indent(textwrap.dedent(forward), "    ")


def lines(result) -> list[tuple[str, int, str]]:
    return sorted((e.file, e.line, e.role) for e in result.evidence)


def test_rule_examples_hold():
    rule = load_rule(RULE)
    for kind in ("valid", "invalid"):
        for example in rule["examples"][kind]:
            assert example_problems(RULE, example, kind == "valid") == [], example["name"]


def test_sequential_after_the_mlp_through_named_steps():
    code = block("""\
        def forward(self, x):
            x = x + self.attn(self.norm1(x))
            h = self.mlp(self.norm2(x))
            h = self.adapter(h)
            return x + h
    """)
    result = run(code, after=["mlp"])
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert lines(result) == [("train.py", 12, "call"), ("train.py", 13, "rule")]


def test_adapter_after_the_residual_add_is_still_after_the_mlp_not_the_attention():
    code = block("""\
        def forward(self, x):
            x = x + self.attn(self.norm1(x))
            x = x + self.mlp(self.norm2(x))
            return self.adapter(x)
    """)
    assert run(code, after=["mlp"]).status.value == "pass"
    result = run(code, after=["attention"])
    assert (result.status.value, result.score) == ("mismatch", 0.0)
    assert ("train.py", 13, "rule") in lines(result)


def test_parallel_claimed_on_a_sequential_block_is_a_mismatch_with_the_call_site():
    code = block("""\
        def forward(self, x):
            x = x + self.attn(self.norm1(x))
            x = x + self.adapter(self.mlp(self.norm2(x)))
            return x
    """)
    result = run(code, parallel_to="mlp")
    assert (result.status.value, result.score) == ("mismatch", 0.0)
    assert "after the MLP" in result.message
    assert ("train.py", 12, "rule") in lines(result)


def test_adapter_between_norm_and_mlp_is_before_the_mlp():
    code = block("""\
        def forward(self, x):
            x = x + self.attn(self.norm1(x))
            return x + self.mlp(self.adapter(self.norm2(x)))
    """)
    assert run(code, before=["mlp"]).status.value == "pass"
    assert run(code, after=["attention"]).status.value == "mismatch"  # a norm sits between them


def test_parallel_to_attention_and_mlp_convpass_style():
    code = textwrap.dedent("""\
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
                self.attn, self.mlp = Attention(dim), Mlp(dim)
                self.convpass_1, self.convpass_2 = ConvPass(dim), ConvPass(dim)

            def forward(self, x):
                h = self.norm1(x)
                x = x + self.attn(h) + self.convpass_1(h)
                h = self.norm2(x)
                x = x + self.mlp(h) + self.convpass_2(h)
                return x
    """)
    result = run(code, parallel_to=["attention", "mlp"])
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert [(f, n) for f, n, r in lines(result) if r == "rule"] == [("train.py", 12), ("train.py", 14)]


def test_inline_mlp_fc1_fc2_adaptformer_official_style():
    code = textwrap.dedent("""\
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self, dim, option):
                super().__init__()
                self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
                self.attn = Attention(dim)
                self.fc1, self.fc2, self.act = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim), nn.GELU()
                self.adaptmlp = Adapter(dim, 64)
                self.option = option

            def forward(self, x):
                x = x + self.attn(self.norm1(x))
                if self.option == "parallel":
                    adapt_x = self.adaptmlp(x)
                residual = x
                x = self.fc2(self.act(self.fc1(self.norm2(x))))
                if self.option == "sequential":
                    x = self.adaptmlp(x)
                elif self.option == "parallel":
                    x = x + adapt_x
                return residual + x
    """)
    parallel = run(code, parallel_to=["mlp"])
    sequential = run(code, after=["mlp"])
    assert (parallel.status.value, sequential.status.value) == ("pass", "pass")  # each design on its own branch
    assert ("train.py", 15, "rule") in lines(parallel)
    assert ("train.py", 19, "rule") in lines(sequential)
    # both placements are conditional (a config option): neither counts as an extra against the other
    assert parallel.score == sequential.score == 1.0


def test_a_module_between_fc1_and_fc2_is_inside_the_mlp():
    code = textwrap.dedent("""\
        import torch.nn as nn

        class Mlp(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc1, self.fc2, self.adapter = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim), Adapter(4 * dim)

            def forward(self, x):
                return self.fc2(self.adapter(self.fc1(x)))
    """)
    result = run(code, after=["mlp"])
    assert result.status.value == "unverified"  # applied, but neither after nor beside the MLP as a whole
    assert lines(result) == [("train.py", 9, "rule")]


def test_registry_constructed_module_with_an_mlp_word_in_its_name():
    """``self.ft_mlp_module = REGISTRY[name](...)`` of adapter classes is the adapter, not the MLP."""
    code = textwrap.dedent("""\
        import torch.nn as nn

        REGISTRY = {"adapter": Adapter, "convpass": ConvPass}

        class Block(nn.Module):
            def __init__(self, dim, kind):
                super().__init__()
                self.norm2, self.mlp = nn.LayerNorm(dim), Mlp(dim)
                self.ft_mlp_module = REGISTRY[kind](dim)

            def forward(self, x):
                h = self.mlp(self.norm2(x))
                return x + self.ft_mlp_module(h)
    """)
    result = run(code, after=["mlp"])
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert ("train.py", 13, "rule") in lines(result)


def test_wrapper_class_over_the_mlp_is_read_with_the_wrapped_module_as_the_mlp():
    code = textwrap.dedent("""\
        import torch.nn as nn

        class MlpWithAdapter(nn.Module):
            def __init__(self, mlp, dim, r):
                super().__init__()
                self.base = mlp
                self.down, self.up = nn.Linear(dim, r), nn.Linear(r, dim)

            def forward(self, x):
                return self.base(x) + self.up(self.down(x))

        def inject(vit, dim):
            for blk in vit.blocks:
                blk.mlp = MlpWithAdapter(blk.mlp, dim, 8)
    """)
    result = run(code, parallel_to=["mlp"])
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert ("train.py", 10, "rule") in lines(result)
    assert run(code, after=["mlp"]).status.value == "mismatch"


def test_sequential_wrapping_before_the_attention():
    code = """\
        import torch.nn as nn

        def inject(vit, dim):
            for blk in vit.blocks:
                blk.attn = nn.Sequential(Adapter(dim, 8), blk.attn)
    """
    result = run(code, before=["attention"])
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert lines(result) == [("train.py", 5, "rule")]
    assert run(code, after=["attention"]).status.value == "mismatch"


def test_pre_hook_feeds_the_mlp_input_and_a_hook_on_the_input_is_parallel():
    code = """\
        import torch

        def inject(vit, adapters):
            for blk, adapter in zip(vit.blocks, adapters):
                blk.mlp.register_forward_pre_hook(lambda m, inp: adapter(inp[0]))
                blk.attn.register_forward_hook(lambda m, inp, out: out + adapter(inp[0]))
    """
    both = run(code, before=["mlp"], parallel_to=["attention"])
    assert (both.status.value, both.score) == ("pass", 1.0)
    assert [(f, n) for f, n, r in lines(both) if r == "rule"] == [("train.py", 5), ("train.py", 6)]
    # the same injection also places it beside the attention, unconditionally: more than a before-MLP claim says
    before = run(code, before=["mlp"])
    assert (before.status.value, before.score) == ("partial", 0.75)


def test_patched_forward_defined_but_never_bound_is_missing():
    code = """\
        import torch.nn as nn

        class Adapter(nn.Module):
            def forward(self, x):
                return x + self.up(self.down(x))

        def adapter_forward(self, x):
            x = x + self.attn(self.norm1(x))
            return x + self.adapter(self.mlp(self.norm2(x)))

        def inject(vit):
            for blk in vit.blocks:
                blk.adapter = Adapter()
    """
    result = run(code, after=["mlp"])
    assert (result.status.value, result.score) == ("missing", 0.0)
    assert lines(result) == [("train.py", 3, "mention")]


def test_patched_forward_bound_with_dunder_get_from_another_file():
    files = {"petl/forward.py": """\
        def adapter_forward(self, x):
            x = x + self.attn(self.norm1(x))
            return x + self.adapter(self.mlp(self.norm2(x)))
    """}
    code = """\
        import torch
        from petl.forward import adapter_forward

        def inject(vit, make):
            for blk in vit.blocks:
                blk.adapter = make()
                blk.forward = adapter_forward.__get__(blk, type(blk))
    """
    result = run(code, files, after=["mlp"])
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert ("petl/forward.py", 3, "rule") in lines(result)


def test_loop_over_a_mixed_module_list_is_unverified():
    code = textwrap.dedent("""\
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.layers = nn.ModuleList([Attention(dim), Mlp(dim), Adapter(dim)])

            def forward(self, x):
                for layer in self.layers:
                    x = x + layer(x)
                return x
    """)
    result = run(code, after=["mlp"])
    assert result.status.value == "unverified"
    assert "loop over a container" in result.message
    assert lines(result) == [("train.py", 10, "rule")]


def test_no_adapter_anywhere_is_missing_without_evidence():
    result = run("""\
        import torch
        model = torch.nn.Linear(2, 2)
    """, after=["mlp"])
    assert (result.status.value, result.score, list(result.evidence)) == ("missing", 0.0, [])


def test_scale_family_reads_products_and_ignores_adapters():
    code = block("""\
        def forward(self, x):
            x = x + self.adapter(self.attn(self.norm1(x)))
            x = x + self.gamma_2 * self.mlp(self.norm2(x))
            return x
    """)
    result = run(code, module="scale", after=["mlp"])
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert ("train.py", 12, "rule") in lines(result)
    assert run(code, module="scale", after=["attention", "mlp"]).score == 0.5


def test_a_claim_needs_a_position():
    result = run("import torch\n", module="adapter")
    assert result.status.value == "unverified"
    assert "needs `after`, `before` or `parallel_to`" in result.message


@pytest.mark.parametrize("params", [{"after": ["ffn"]}, {"module": "lora", "after": ["mlp"]}])
def test_bad_parameters_are_spec_errors_or_unverified(params):
    error = validate_protocol_params(RULE, params)
    if error is None:
        result, _ = run_example(RULE, {"code": "import torch\n", "params": params})
        assert result.status.value == "unverified"
    else:
        assert "lora" in error


ATTENTION = """\
    import torch.nn as nn

    class Attention(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.qkv, self.proj, self.proj_drop = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim), nn.Dropout(0.1)
            self.adapter = Adapter(dim)

        def forward(self, x):
"""


@pytest.mark.parametrize(("body", "after", "parallel"), [
    ("out = attend(self.qkv(x))\nx = self.proj_drop(self.proj(out))\nreturn self.adapter(x)", "pass", "mismatch"),
    ("out = attend(self.qkv(x))\nreturn self.proj(out) + self.adapter(x)", "mismatch", "pass"),
    ("x = self.adapter(x)\nout = attend(self.qkv(x))\nreturn self.proj(out)", "unverified", "unverified"),
])
def test_inside_an_attention_class_its_own_steps_decide(body, after, parallel):
    code = textwrap.dedent(ATTENTION) + textwrap.indent(body, " " * 8) + "\n"
    assert run(code, after=["attention"]).status.value == after
    assert run(code, parallel_to=["attention"]).status.value == parallel


def test_a_missing_placement_beside_an_unreadable_one_is_unverified_not_partial():
    code = textwrap.dedent(ATTENTION) + textwrap.indent("x = self.adapter(x)\nreturn self.proj(attend(self.qkv(x)))", " " * 8)
    code += "\n\n" + block("""\
        def forward(self, x):
            x = x + self.attn(self.norm1(x))
            return x + self.adapter(self.mlp(self.norm2(x)))
    """).replace("import torch.nn as nn\n", "")
    result = run(code, after=["attention", "mlp"])
    assert result.status.value == "unverified"
    assert result.message.startswith("after the MLP found; the module is applied")
    assert lines(result) == [("train.py", 10, "rule")]
