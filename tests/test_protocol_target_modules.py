"""Rule ``target-modules`` on small repos (verdict, score, evidence line): PEFT lists resolved through configs,
argparse and launch flags, injection loops, wrapped fused qkv layers, loralib; and the rule's own examples."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from verifier.analysis.protocol import implementation, load_rule, validate_protocol_params, with_defaults
from verifier.analysis.protocol.examples import ExampleContext, example_problems, run_example
from verifier.analysis.protocol.target_modules import compare
from verifier.index.build import build_index

RULE = "target-modules"


def run(code: str, expect: list[str], files: dict[str, str] | None = None, method: str | None = None):
    params = {"expect": expect, **({"method": method} if method else {})}
    assert validate_protocol_params(RULE, params) is None
    example = {"code": textwrap.dedent(code), "files": {k: textwrap.dedent(v) for k, v in (files or {}).items()},
               "params": params}
    result, _ = run_example(RULE, example)
    return result


def run_repo_files(tmp_path: Path, files: dict[str, str], expect: list[str]):
    """The rule on a real index (config files, launch scripts), as a run sees the repo."""
    for path, text in files.items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))
    ctx = ExampleContext(build_index(tmp_path, use_cache=False))
    return implementation(RULE)(with_defaults(RULE, {"expect": expect}), ctx, None, load_rule(RULE))


def lines(result) -> list[tuple[str, int]]:
    return sorted((e.file, e.line) for e in result.evidence)


def test_rule_examples_hold():
    rule = load_rule(RULE)
    for kind in ("valid", "invalid"):
        for example in rule["examples"][kind]:
            assert example_problems(RULE, example, kind == "valid") == [], example["name"]


@pytest.mark.parametrize(("found", "required", "groups", "score"), [
    ({"query", "value"}, {"query", "value"}, [], 1.0),
    ({"query", "key", "value", "attention-output"}, {"query", "value"}, [], 0.75),  # more than claimed
    ({"query", "attention-output"}, {"query", "value"}, [], 0.5),  # a claimed family absent
    ({"mlp-in", "mlp-out"}, {"query", "value"}, [], 0.0),
    ({"query", "value"}, set(), [{"query", "key", "value", "attention-output"}], 1.0),  # "self-attention only"
    ({"query", "value", "mlp-in"}, set(), [{"query", "key", "value", "attention-output"}], 0.75),
    ({"mlp-in"}, set(), [{"query", "key", "value", "attention-output"}], 0.0),
])
def test_family_comparison(found, required, groups, score):
    assert compare(frozenset(found), frozenset(required), [frozenset(g) for g in groups]) == score


def test_list_from_a_yaml_config_through_the_loaded_dict(tmp_path):
    files = {
        "configs/lora.yaml": "lora:\n  r: 8\n  target_modules: [query, value]\n",
        "train.py": """\
            import yaml
            from peft import LoraConfig
            cfg = yaml.safe_load(open("configs/lora.yaml"))
            config = LoraConfig(r=cfg["lora"]["r"], target_modules=cfg["lora"]["target_modules"])
        """,
    }
    result = run_repo_files(tmp_path, files, ["query", "value"])
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert lines(result) == [("configs/lora.yaml", 3), ("train.py", 4)]


def test_launch_flag_values_override_the_argparse_default(tmp_path):
    files = {
        "train.py": """\
            import argparse
            from peft import LoraConfig
            parser = argparse.ArgumentParser()
            parser.add_argument("--lora_target_modules", nargs="+", default=["q_proj", "v_proj"])
            args = parser.parse_args()
            config = LoraConfig(r=8, target_modules=args.lora_target_modules)
        """,
        "run.sh": "python train.py --lora_target_modules q_proj k_proj v_proj o_proj\n",
    }
    result = run_repo_files(tmp_path, files, ["query", "value"])
    assert (result.status.value, result.score) == ("partial", 0.75)
    assert lines(result) == [("run.sh", 1), ("train.py", 6)]


def test_all_linear_and_a_regex_of_alternatives():
    everything = run('from peft import LoraConfig\nc = LoraConfig(target_modules="all-linear")\n', ["all-linear"])
    assert (everything.status.value, everything.score) == ("pass", 1.0) and lines(everything) == [("train.py", 2)]
    regex = run('from peft import LoraConfig\nc = LoraConfig(target_modules=r".*\\.(q_proj|v_proj)$")\n', ["query", "value"])
    assert (regex.status.value, regex.score) == ("pass", 1.0)


def test_split_string_from_argparse():
    code = """\
        import argparse
        from peft import LoraConfig
        parser = argparse.ArgumentParser()
        parser.add_argument("--targets", type=str, default="q_proj,k_proj,v_proj")
        args = parser.parse_args()
        config = LoraConfig(target_modules=args.targets.split(","))
    """
    result = run(code, ["qkv"])
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert lines(result) == [("train.py", 4), ("train.py", 6)]


def test_gpt2_c_proj_is_both_attention_output_and_mlp_out():
    result = run('from peft import LoraConfig\nc = LoraConfig(target_modules=["c_attn", "c_proj"])\n',
                 ["query", "key", "value", "attention-output"])
    assert (result.status.value, result.score) == ("partial", 0.75)
    assert "mlp-out" in result.message


@pytest.mark.parametrize(("code", "why"), [
    ('from peft import LoraConfig\nc = LoraConfig(target_modules=["query", "dense"])\n', "different modules in different architectures"),
    ('from peft import LoraConfig\nc = LoraConfig(r=8)\n', "PEFT's default depends on the architecture"),
    ('from peft import LoraConfig\n\ndef f(targets):\n    return LoraConfig(target_modules=targets)\n', "cannot"),
])
def test_unresolved_placements_stay_unverified(code, why):
    result = run(code, ["query", "value"])
    assert (result.status.value, result.score) == ("unverified", None)
    assert why in result.message


def test_a_config_without_target_modules_takes_peft_default_for_the_loaded_model():
    code = """\
        from peft import LoraConfig, get_peft_model
        from transformers import AutoModelForCausalLM
        model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B")
        model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16))
    """
    result = run(code, ["query", "value"])
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert lines(result) == [("train.py", 3), ("train.py", 4)]
    fused = run(code.replace("meta-llama/Llama-3.2-1B", "openai-community/gpt2"), ["query", "value"])
    assert (fused.status.value, fused.score) == ("partial", 0.75)  # c_attn: the key is adapted too


def test_injection_loop_with_endswith_and_the_linear_test():
    code = """\
        import torch.nn as nn

        def inject(model, lora_layer):
            for name, module in model.named_modules():
                if isinstance(module, nn.Linear) and name.endswith(("q_proj", "k_proj", "v_proj", "o_proj")):
                    parent, _, child = name.rpartition(".")
                    setattr(model.get_submodule(parent), child, lora_layer(module))
    """
    result = run(code, ["query", "key", "value", "attention-output"])
    assert (result.status.value, result.score) == ("pass", 1.0) and lines(result) == [("train.py", 4)]
    drift = run(code.replace('"k_proj", "v_proj", "o_proj"', '"fc1", "fc2"'), ["query", "key", "value", "attention-output"])
    assert (drift.status.value, drift.score) == ("partial", 0.5)


def test_every_linear_layer_and_a_hook_loop():
    every = """\
        import torch.nn as nn

        def inject(model, LoRALinear):
            for name, module in model.named_modules():
                if isinstance(module, nn.Linear):
                    parent, _, child = name.rpartition(".")
                    setattr(model.get_submodule(parent), child, LoRALinear(module))
    """
    result = run(every, ["all-linear"])
    assert (result.status.value, result.score) == ("pass", 1.0) and lines(result) == [("train.py", 4)]
    hooks = """\
        import torch

        def watch(model, store):
            for name, module in model.named_modules():
                if "q_proj" in name:
                    module.register_forward_hook(lambda m, i, o: store.append(o))
    """
    missing = run(hooks, ["query"])
    assert missing.status.value == "missing"
    quantised = every.replace("LoRALinear", "QuantLinear").replace("def inject", "def quantise")
    assert run(quantised, ["all-linear"]).status.value == "missing"  # replaces modules, but no adapter is placed


def test_loralib_merged_linear_enables_the_query_and_value_thirds():
    code = """\
        import loralib as lora
        import torch.nn as nn

        class Attention(nn.Module):
            def __init__(self, d, r):
                super().__init__()
                self.c_attn = lora.MergedLinear(d, 3 * d, r=r, enable_lora=[True, False, True])
                self.c_proj = nn.Linear(d, d)
    """
    result = run(code, ["query", "value"], method="lora")
    assert (result.status.value, result.score) == ("pass", 1.0) and lines(result) == [("train.py", 7)]
    keyed = run(code.replace("[True, False, True]", "[True, True, False]"), ["query", "value"])
    assert (keyed.status.value, keyed.score) == ("partial", 0.5)


def test_chunked_fused_output_counts_the_thirds_that_receive_a_term():
    code = """\
        import torch
        import torch.nn as nn

        class QKVWithLoRA(nn.Module):
            def __init__(self, qkv, r):
                super().__init__()
                self.qkv = qkv
                self.lora_v = nn.Sequential(nn.Linear(qkv.in_features, r), nn.Linear(r, qkv.in_features))

            def forward(self, x):
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                v = v + self.lora_v(x)
                return torch.cat([q, k, v], dim=-1)

        def wrap(vit):
            for blk in vit.blocks:
                blk.attn.qkv = QKVWithLoRA(blk.attn.qkv, 8)
    """
    result = run(code, ["value"])
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert lines(result) == [("train.py", 10), ("train.py", 12), ("train.py", 17)]  # forward, the term, the wrap


def test_method_filter_reads_only_that_methods_placements():
    code = """\
        from peft import LoraConfig
        import torch.nn as nn

        class Adapter(nn.Module):
            pass

        def build(block):
            block.mlp.fc2 = Adapter(block.mlp.fc2)
            return LoraConfig(target_modules=["q_proj", "v_proj"])
    """
    lora = run(code, ["query", "value"], method="lora")
    assert (lora.status.value, lora.score) == ("pass", 1.0) and lines(lora) == [("train.py", 9)]
    adapter = run(code, ["query", "value"], method="adapter")
    assert (adapter.status.value, adapter.score) == ("mismatch", 0.0) and lines(adapter) == [("train.py", 8)]


def test_parameters_are_validated():
    assert validate_protocol_params(RULE, {"expect": ["query"], "method": "prompt"}).startswith("method:")
    assert validate_protocol_params(RULE, {}).startswith("expect:")
    assert validate_protocol_params(RULE, {"expect": ["queries"]}).startswith("expect: 'queries' is not one of")
    # a check built without the loader (a compiled one) still cannot pass on an unknown family
    example = {"code": 'from peft import LoraConfig\nc = LoraConfig(target_modules=["q_proj"])\n', "files": {},
               "params": {"expect": ["queries"]}}
    unknown, _ = run_example(RULE, example)
    assert unknown.status.value == "unverified" and "not a module family" in unknown.message


def test_a_misspelt_family_is_a_spec_error_naming_the_field(tmp_path: Path):
    """A typo in `expect` is caught when the spec loads (exit 2, file:line and field), not reported as unverified."""
    from verifier.checks import validate_check
    from verifier.spec.errors import SpecError
    from verifier.spec.load import load_spec

    assert validate_protocol_params("target-modules", {"expect": ["query", "value"]}) is None
    assert validate_protocol_params("target-modules", {"expect": ["all-linear"]}) is None
    message = validate_protocol_params("target-modules", {"expect": ["querry", "value"]})
    assert message.startswith("expect: 'querry' is not one of") and message.endswith("did you mean 'query'?")
    spec = tmp_path / "sau.yaml"
    spec.write_text("version: 1\nsaus:\n  - id: x-D1-001\n    dimension: D1\n    claim: c\n"
                    "    check: {kind: protocol, rule: target-modules, expect: [querry, value]}\n", encoding="utf-8")
    with pytest.raises(SpecError) as err:
        load_spec(spec, validate_check)
    assert "sau.yaml:6" in str(err.value) and "did you mean 'query'" in str(err.value)
