"""Parameter kinds (every bias, every norm layer) in the trainable rule and the compiler, model-wide init schemes,
registry-built samplers, and the number shapes that are not settings: verdict, score and evidence line on small
repos; the exact compiled checks and reasons on claims written for the purpose."""

from __future__ import annotations

import textwrap

import pytest
from cie_index import make_index, run
from compiler_helpers import compiled, dumps
from values_helpers import indexed_repo

from verifier.analysis.protocol import validate_protocol_params
from verifier.analysis.protocol.examples import run_example
from verifier.spec.model import CallCheck

XAVIER = ("torch.nn.init.xavier_uniform_ | jax.nn.initializers.glorot_uniform | flax.linen.initializers.glorot_uniform | "
          "jax.nn.initializers.xavier_uniform | flax.linen.initializers.xavier_uniform")


def trainable(code: str, name: str, only: bool = False, besides: list[str] | None = None):
    params = {"name": name, **({"only": True} if only else {}), **({"besides": besides} if besides else {})}
    assert validate_protocol_params("trainable", params) is None
    result, _ = run_example("trainable", {"code": textwrap.dedent(code), "files": {}, "params": params})
    return result


def verdict(result) -> tuple[str, float | None]:
    return result.status.value, result.score


def lines(result) -> list[int]:
    return sorted(e.line for e in result.evidence)


# ----- the trainable rule: the norm kind ------------------------------------------------------------------
MODULE_TYPE_LOOP = """
    import torch
    from torch import nn

    def build(model):
        model.requires_grad_(False)
        for m in model.modules():
            if isinstance(m, {classes}):
                m.requires_grad_(True)
        return torch.optim.AdamW(filter(lambda p: p.requires_grad, model.parameters()), lr=1e-3)
"""


def test_layernorm_modules_switched_on_by_type_are_the_only_trained_norm_kind():
    result = trainable(MODULE_TYPE_LOOP.format(classes="nn.LayerNorm"), "norm", only=True)
    assert verdict(result) == ("pass", 1.0)
    assert lines(result) == [6, 9, 10]  # the freeze, the switch, the optimizer


def test_a_module_type_loop_that_also_switches_on_linear_layers_is_not_norm_only():
    result = trainable(MODULE_TYPE_LOOP.format(classes="(nn.LayerNorm, nn.Linear)"), "norm", only=True)
    assert verdict(result) == ("mismatch", 0.0)
    assert lines(result) == [9] and "LayerNorm / Linear" in result.message
    assert verdict(trainable(MODULE_TYPE_LOOP.format(classes="(nn.LayerNorm, nn.Linear)"), "norm")) == ("pass", 1.0)


def test_bias_only_fails_when_a_module_type_loop_trains_the_norm_layers_too():
    code = """
        import torch
        from torch import nn

        def build(model):
            for n, p in model.named_parameters():
                p.requires_grad = n.endswith(".bias")
            for m in model.modules():
                if isinstance(m, nn.LayerNorm):
                    m.requires_grad_(True)
            return torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    """
    result = trainable(code, "bias", only=True)
    assert verdict(result) == ("mismatch", 0.0) and lines(result) == [10]


def test_timm_norm_attributes_are_the_norm_kind():
    code = """
        import torch

        def build(model):
            model.requires_grad_(False)
            for blk in model.blocks:
                blk.norm1.requires_grad_(True)
                blk.norm2.requires_grad_(True)
            model.norm.requires_grad_(True)
            return torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    """
    result = trainable(code, "norm", only=True)
    assert verdict(result) == ("pass", 1.0)
    assert 5 in lines(result) and 10 in lines(result)


def test_a_comprehension_over_norm_modules_is_the_optimizer_of_the_kind_alone():
    code = """
        import torch
        from torch import nn

        def build(model):
            params = [p for m in model.modules() if isinstance(m, nn.LayerNorm) for p in m.parameters()]
            return torch.optim.AdamW(params, lr=1e-3)
    """
    result = trainable(code, "norm", only=True)
    assert verdict(result) == ("pass", 1.0) and lines(result) == [7]


@pytest.mark.parametrize("word", ["norm", "ln_", "layernorm"])
def test_name_filters_in_each_library_spelling_select_the_norm_kind(word: str):
    code = f"""
        import torch

        def build(model):
            for n, p in model.named_parameters():
                p.requires_grad = "{word}" in n
            return torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    """
    result = trainable(code, "norm", only=True)
    assert verdict(result) == ("pass", 1.0) and lines(result) == [5, 5, 7]


# ----- besides: the task head may train with the kind ------------------------------------------------------
HEAD_TOO = """
    import torch

    def build(model):
        for n, p in model.named_parameters():
            p.requires_grad = {test}
        return torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
"""


def test_the_head_beside_the_norm_layers_passes_only_when_named_besides():
    code = HEAD_TOO.format(test='"norm" in n or "head" in n')
    assert verdict(trainable(code, "norm", only=True, besides=["head"])) == ("pass", 1.0)
    alone = trainable(code, "norm", only=True)
    assert verdict(alone) == ("mismatch", 0.0) and lines(alone) == [6]


def test_biases_beside_the_norm_layers_and_head_are_a_mismatch_even_with_besides():
    code = HEAD_TOO.format(test='"norm" in n or "head" in n or "bias" in n')
    result = trainable(code, "norm", only=True, besides=["head"])
    assert verdict(result) == ("mismatch", 0.0) and lines(result) == [6] and "'bias'" in result.message


def test_besides_does_not_excuse_a_frozen_part():
    code = """
        import torch

        def build(model):
            model.norm.requires_grad_(False)
            return torch.optim.AdamW(model.parameters(), lr=1e-3)
    """
    result = trainable(code, "norm", only=True, besides=["head"])
    assert verdict(result) == ("mismatch", 0.0) and lines(result) == [5]


# ----- the compiler: kinds --------------------------------------------------------------------------------
KIND_ONLY = {"rule": "trainable", "only": True, "besides": ["head"]}


@pytest.mark.parametrize(
    "claim, checks",
    [
        ("LN tuning: 40K tunable params on the backbone", [{**KIND_ONLY, "name": "norm"}]),
        ("Bias tuning with 0.1M trainable parameters", [{**KIND_ONLY, "name": "bias"}]),
        # the places a "tunes bias terms in" list names are all the kind's: one check over the list
        ("Bias tuning: 0.1M tunable params, tunes bias terms in the stem, attention blocks, MLP layers",
         [{**KIND_ONLY, "name": "bias"}]),
        ("LN tuning, 100 epochs", [{"rule": "trainable", "name": "norm"}, {"name": "epochs", "expect": 100}]),
    ],
)
def test_kind_statements_compile_to_trainable_checks(claim: str, checks: list[dict]):
    result = compiled(claim, "D1")
    assert dumps(result) == checks and result.coverage == "full"


def test_a_combined_method_types_each_kind_it_names():
    result = compiled("Combo method: 150K tunable params (bias + LN tuning + scale factors)", "D1")
    assert dumps(result) == [{"rule": "trainable", "name": "bias"}, {"rule": "trainable", "name": "norm"},
                             {"rule": "trainable", "name": "feature_scale"}]
    assert result.coverage == "full"


def test_a_combined_method_names_what_it_leaves_out():
    result = compiled("Combo method: 150K tunable params (bias + LN tuning + prompt routing)", "D1")
    assert dumps(result) == [{"rule": "trainable", "name": "bias"}, {"rule": "trainable", "name": "norm"}]
    (fragment,) = result.fragments
    assert fragment.outcome == "typed" and fragment.reason.startswith("'prompt routing': no name the trainable rule")


@pytest.mark.parametrize("claim", ["The output is Wx + bias followed by a ReLU.", "y = W x + bias, trained with Adam."])
def test_a_bias_in_a_sum_is_no_trainability_statement(claim: str):
    assert not [c for c in dumps(compiled(claim, "D2")) if c.get("rule") == "trainable"]


# ----- the compiler: model-wide init schemes --------------------------------------------------------------
@pytest.mark.parametrize(
    "claim, target",
    [
        ("All weights are initialized with Xavier uniform.", XAVIER),
        ("Orthogonal init is used for the recurrent layers.",
         "torch.nn.init.orthogonal_ | jax.nn.initializers.orthogonal | flax.linen.initializers.orthogonal | "
         "jax.nn.initializers.delta_orthogonal | flax.linen.initializers.delta_orthogonal"),
    ],
)
def test_a_scheme_for_no_one_tensor_is_a_call_on_its_apis(claim: str, target: str):
    result = compiled(claim, "D2")
    assert dumps(result) == [{"target": target}] and result.coverage == "full"


def test_kaiming_without_its_variant_accepts_both_and_a_flag_sweep_is_no_call():
    kaiming = dumps(compiled("Kaiming initialization also tested as a baseline control.", "D1"))
    assert len(kaiming) == 1 and kaiming[0]["target"].split(" | ")[0] == "torch.nn.init.kaiming_uniform_"
    assert "torch.nn.init.kaiming_normal_" in kaiming[0]["target"].split(" | ")
    swept = dumps(compiled("Adapter: Xavier init [true, false]", "D1"))
    assert swept == [{"name": "xavier_init", "sweep": [True, False]}]


def test_zeros_for_every_weight_stays_with_the_judge():
    result = compiled("All biases are initialized to zero.", "D2")
    assert dumps(result) == [] and "needs one named tensor" in result.fragments[0].reason


def test_a_release_name_and_version_is_not_an_init_scheme_nor_a_model_id():
    result = compiled("Backbone init: MegaVid v2.1 initialization", "D1")
    assert dumps(result) == []
    assert result.fragments[0].reason.startswith("initialised from a release named by project and version (MegaVid v2.1)")


# ----- samplers built by a registry -------------------------------------------------------------------------
REGISTRY = {
    "pkg/registry.py": "class Registry:\n    def register_module(self, key=None):\n        return lambda cls: cls\n\n"
                       "SCHEDULERS = Registry()\n",
    "pkg/iddpm.py": 'from pkg.registry import SCHEDULERS\n\n\n@SCHEDULERS.register_module("iddpm")\nclass IDDPM:\n'
                    "    def __init__(self, num_sampling_steps=250):\n        self.steps = num_sampling_steps\n",
    "run.py": "def main():\n    pass\n\n\nif __name__ == '__main__':\n    main()\n",
}


def test_a_registered_class_is_built_from_its_config_key():
    files = {**REGISTRY, "configs/sample.py": 'scheduler = dict(type="iddpm", num_sampling_steps=100)\n'}
    result = run("call", CallCheck(target="IDDPM | create_diffusion"), make_index(files))
    assert verdict(result) == ("pass", 1.0)
    assert sorted((e.file, e.line) for e in result.evidence) == [("configs/sample.py", 1), ("pkg/iddpm.py", 5)]


def test_a_yaml_config_key_builds_the_registered_class_too(tmp_path):
    files = {**REGISTRY, "configs/sample.yaml": "scheduler:\n  type: iddpm\n  num_sampling_steps: 100\n"}
    result = run("call", CallCheck(target="IDDPM"), indexed_repo(tmp_path, files))
    assert verdict(result) == ("pass", 1.0) and ("configs/sample.yaml", 2) in [(e.file, e.line) for e in result.evidence]


def test_a_registered_class_no_config_selects_is_missing_and_arguments_need_a_call():
    files = {**REGISTRY, "configs/sample.py": 'scheduler = dict(type="ddim", num_sampling_steps=100)\n'}
    assert verdict(run("call", CallCheck(target="IDDPM"), make_index(files))) == ("missing", 0.0)
    files["configs/sample.py"] = 'scheduler = dict(type="iddpm")\n'
    assert run("call", CallCheck(target="IDDPM", args={"num_sampling_steps": 100}), make_index(files)).status.value == "missing"


def test_improved_ddpm_compiles_to_the_classes_that_implement_it():
    result = compiled("Sampling: 100 denoising steps, improved DDPM", "D1")
    assert {"target": "IDDPM | create_diffusion"} in dumps(result) and result.coverage == "full"


# ----- numbers that are no setting -------------------------------------------------------------------------
def test_a_count_of_structural_parts_with_a_letter_is_a_product_not_millions():
    result = compiled("Tensor method: stacks 8M weight matrices (8 layers x M matrices per layer)", "D1")
    assert not [c for c in dumps(result) if c.get("expect") == 8_000_000]
    assert "8M" not in " ".join(f.reason for f in result.fragments)


@pytest.mark.parametrize(
    "claim, start",
    [
        ("Sampling: deterministic mode uses w=[1,1,1], stochastic mode uses w=[1,1,<1] for the last state",
         "a list with an element given as a bound (<1)"),
        ("Forcing: amplitude a~U(-2,2) or 0 with 30% probability", "a value drawn or else a constant with a probability"),
        ("Solver: internal grid 64x8 points, downsample factor 8", "a size written as another size times the stated sampling factor (64x8)"),
    ],
)
def test_numbers_without_a_setting_name_say_why(claim: str, start: str):
    result = compiled(claim, "D1")
    assert any(f.reason.startswith(start) for f in result.fragments), [(f.text, f.reason) for f in result.fragments]


# ----- several parts alone: `only` over their union ------------------------------------------------------
LORA_MODEL = """
    import torch
    from torch import nn


    class LoRALinear(nn.Module):
        def __init__(self, base, r):
            super().__init__()
            self.base = base
            self.lora_A = nn.Parameter(torch.randn(r, base.in_features))
            self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
"""
PAIR_FILTER = """
    import torch

    def make_optimizer(model):
        params = [p for n, p in model.named_parameters() if {test}]
        return torch.optim.AdamW(params, lr=1e-4)
"""


def _pair(test: str, besides: list[str] | None):
    params = {"name": "A", "only": True, **({"besides": besides} if besides else {})}
    code = textwrap.dedent(PAIR_FILTER.format(test=test))
    result, _ = run_example("trainable", {"code": code, "files": {"lora.py": textwrap.dedent(LORA_MODEL)}, "params": params})
    return result


def test_only_a_and_b_pass_as_a_union_of_paper_symbols_and_fail_alone_or_with_the_base():
    both = _pair('"lora_A" in n or "lora_B" in n', ["B"])
    assert verdict(both) == ("pass", 1.0) and lines(both) == [6] and "(besides `lora_B`)" in both.message
    assert verdict(_pair('"lora_A" in n or "lora_B" in n', None)) == ("mismatch", 0.0)
    with_base = _pair('"lora_A" in n or "lora_B" in n or "base" in n', ["B"])
    assert verdict(with_base) == ("mismatch", 0.0) and lines(with_base) == [5]


def test_several_parts_alone_compile_to_one_union_check_and_one_check_each():
    result = compiled("Only the adapters and the classification head are trained.", "D2")
    assert dumps(result) == [{"rule": "trainable", "name": "adapter", "only": True, "besides": ["head"]},
                             {"rule": "trainable", "name": "head"}]


@pytest.mark.parametrize("claim", ["Our adapter outperforms LN tuning and bias tuning by 2 points.",
                                   "Unlike LayerNorm tuning, the prompt is learned per task."])
def test_a_kind_method_named_to_compare_is_not_the_repo_s_method(claim: str):
    assert not [c for c in dumps(compiled(claim, "D2")) if c.get("rule") == "trainable"]


def test_a_method_written_as_a_sum_of_kinds_and_a_kind_combined_with_another_train_beside_each_other():
    result = compiled("DiffFit = BitFit + LN-Tune + feature scaling factors", "D2")
    assert dumps(result) == [{"rule": "trainable", "name": "bias"}, {"rule": "trainable", "name": "norm"},
                             {"rule": "trainable", "name": "feature_scale"}]
    combined = compiled("Combined with BitFit (all bias terms) and LayerNorm tuning (LN weights and biases)", "D2")
    assert {"rule": "trainable", "name": "norm"} in dumps(combined)  # beside another part: not `only`
    assert combined.coverage == "full"
    assert dumps(compiled("LN tuning: 40K tunable params on the backbone", "D1")) == [{**KIND_ONLY, "name": "norm"}]
