"""Rule ``shape`` on small repos (verdict, score, evidence line): Linear / Parameter / Flax / Haiku shapes, the
orientation convention, anchored symbols, resolved factors, name mapping, and the rule's own examples."""

from __future__ import annotations

import textwrap

import pytest

from verifier.analysis.protocol import load_rule, validate_protocol_params
from verifier.analysis.protocol.examples import example_problems, run_example

RULE = "shape"
ADAPTER = {"expect": {"W_down": ["r", "D"], "W_up": ["D", "r"]}, "symbols": {"r": "lora_rank", "D": "hidden_size"}}
MLP_BIAS = {"expect": {"b_1": ["4*D"]}, "symbols": {"D": "hidden_size"}}
LORA = {"expect": {"A": ["r", "D"], "B": ["D", "r"]}, "symbols": {"r": "lora_rank", "D": "hidden_size"}}


def run(code: str, params: dict, files: dict[str, str] | None = None):
    assert validate_protocol_params(RULE, params) is None
    example = {"code": textwrap.dedent(code), "files": {k: textwrap.dedent(v) for k, v in (files or {}).items()},
               "params": params}
    result, _ = run_example(RULE, example)
    return result


def lines(result) -> list[tuple[str, int]]:
    return sorted((e.file, e.line) for e in result.evidence)


def test_rule_examples_hold():
    rule = load_rule(RULE)
    for kind in ("valid", "invalid"):
        for example in rule["examples"][kind]:
            assert example_problems(RULE, example, kind == "valid") == [], example["name"]


def test_parameters_are_validated_at_load_time():
    assert "expect" in validate_protocol_params(RULE, {"expect": ["r", "D"]})
    assert "symbols" in validate_protocol_params(RULE, {"expect": {"A": ["r"]}, "symbols": {"r": 4}})
    assert validate_protocol_params(RULE, {"expect": {"A": ["r", "D"]}, "symbols": {"r": "lora_rank"}}) is None


def test_adapter_linears_pass_with_both_tensors_as_evidence():
    result = run("""
        import torch.nn as nn

        class Adapter(nn.Module):
            def __init__(self, embed_dim, adapter_dim=16):
                super().__init__()
                self.adapter_down = nn.Linear(embed_dim, adapter_dim)
                self.adapter_up = nn.Linear(adapter_dim, embed_dim)
    """, ADAPTER)
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert lines(result) == [("train.py", 7), ("train.py", 8)]


def test_explicit_parameters_transposed_for_x_at_w_still_pass():
    # x @ A @ B with A (width, rank): the row-vector convention of the same map the paper writes as B A x
    result = run("""
        import torch, torch.nn as nn

        class LoRA(nn.Module):
            def __init__(self, dim, r):
                super().__init__()
                self.lora_A = nn.Parameter(torch.randn(dim, r) * 0.01)
                self.lora_B = nn.Parameter(torch.zeros((r, dim)))

            def forward(self, x):
                return x @ self.lora_A @ self.lora_B
    """, LORA)
    assert result.status.value == "pass"
    assert lines(result) == [("train.py", 7), ("train.py", 8)]


def test_rank_replaced_by_the_width_is_a_mismatch_at_the_tensor():
    result = run("""
        import torch, torch.nn as nn

        class LoRA(nn.Module):
            def __init__(self, dim, r):
                super().__init__()
                self.lora_A = nn.Parameter(torch.zeros(r, dim))
                self.lora_B = nn.Parameter(torch.zeros(dim, dim))
    """, LORA)
    assert (result.status.value, result.score) == ("mismatch", 0.0)
    assert lines(result) == [("train.py", 8)]
    assert "B D×r vs lora_B (dim, dim)" in result.message


@pytest.mark.parametrize(("ratio", "status"), [("4", "pass"), ("2", "mismatch")])
def test_expansion_factor_is_resolved_from_the_default(ratio, status):
    result = run(f"""
        import torch.nn as nn

        class Mlp(nn.Module):
            def __init__(self, dim, mlp_ratio={ratio}):
                super().__init__()
                hidden = int(dim * mlp_ratio)
                self.fc1 = nn.Linear(dim, hidden)
                self.fc2 = nn.Linear(hidden, dim)
    """, MLP_BIAS)
    assert result.status.value == status
    assert lines(result) == [("train.py", 8)]


def test_a_width_set_by_the_caller_is_unverified_not_a_mismatch():
    # timm's Mlp: hidden_features comes from Block(mlp_ratio=...): its relation to D is not in this class
    result = run("""
        import torch.nn as nn

        class Mlp(nn.Module):
            def __init__(self, in_features, hidden_features=None):
                super().__init__()
                hidden_features = hidden_features or in_features
                self.fc1 = nn.Linear(in_features, hidden_features)
    """, MLP_BIAS)
    assert result.status.value == "unverified"
    assert lines(result) == [("train.py", 8)]


def test_a_literal_rank_is_unverified():
    result = run("""
        import torch.nn as nn

        class Adapter(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.down = nn.Linear(dim, 8)
                self.up = nn.Linear(8, dim)
    """, ADAPTER)
    assert result.status.value == "unverified"


def test_one_tensor_absent_is_partial():
    result = run("""
        import torch, torch.nn as nn

        class LoRA(nn.Module):
            def __init__(self, dim, rank):
                super().__init__()
                self.lora_A = nn.Parameter(torch.zeros(rank, dim))
    """, LORA)
    assert (result.status.value, result.score) == ("partial", 0.5)
    assert lines(result) == [("train.py", 7)]
    assert "no tensor for B" in result.message


def test_value_projection_is_not_a_factor_v_and_backbone_down_proj_is_not_w_down():
    code = """
        import torch.nn as nn

        class Attention(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.v_proj = nn.Linear(dim, dim)
                self.v = nn.Linear(dim, dim)

        class LlamaMLP(nn.Module):
            def __init__(self, hidden_size, intermediate_size):
                super().__init__()
                self.down_proj = nn.Linear(intermediate_size, hidden_size)
    """
    factor = run(code, {"expect": {"V": ["D", "r"]}, "symbols": {"r": "lora_rank", "D": "hidden_size"}})
    assert factor.status.value == "missing"
    down = run(code, {"expect": {"W_down": ["r", "D"]}, "symbols": {"r": "lora_rank", "D": "hidden_size"}})
    assert down.status.value == "missing"


def test_no_tensor_in_a_repo_that_uses_peft_is_unverified():
    result = run("""
        from peft import LoraConfig
        config = LoraConfig(r=8, target_modules=["q_proj", "v_proj"])
    """, LORA)
    assert result.status.value == "unverified"
    assert "peft" in result.message


def test_two_candidates_in_one_class_are_ambiguous():
    result = run("""
        import torch.nn as nn

        class Adapter(nn.Module):
            def __init__(self, dim, r):
                super().__init__()
                self.down = nn.Linear(dim, r)
                self.down_gate = nn.Linear(dim, r)
                self.up = nn.Linear(r, dim)
    """, ADAPTER)
    assert result.status.value == "unverified"
    assert "several tensors" in result.message


def test_classes_that_disagree_leave_it_unverified():
    result = run("""
        import torch.nn as nn

        class Houlsby(nn.Module):
            def __init__(self, dim, r):
                super().__init__()
                self.down = nn.Linear(dim, r)
                self.up = nn.Linear(r, dim)

        class Wide(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.down = nn.Linear(dim, dim)
                self.up = nn.Linear(dim, dim)
    """, ADAPTER)
    assert result.status.value == "unverified"
    assert "disagree" in result.message


def test_a_shape_without_anchored_symbol_is_vacuous():
    result = run("""
        import torch, torch.nn as nn

        class M(nn.Module):
            def __init__(self, m, n):
                super().__init__()
                self.lora_A = nn.Parameter(torch.zeros(m, n))
    """, {"expect": {"A": ["m", "n"]}})
    assert result.status.value == "unverified"
    assert "anchored" in result.message


@pytest.mark.parametrize("shape", ["depth, num_tokens, embed_dim", "1, num_tokens, embed_dim"])
def test_prompts_stacked_per_layer_or_with_a_batch_axis_pass(shape):
    result = run(f"""
        import torch, torch.nn as nn

        class Prompted(nn.Module):
            def __init__(self, depth, num_tokens, embed_dim):
                super().__init__()
                self.prompt_embeddings = nn.Parameter(torch.zeros({shape}))
    """, {"expect": {"P": ["l", "D"]}, "symbols": {"l": "prompt_length", "D": "hidden_size"}, "names": {"P": ["prompt"]}})
    assert result.status.value == "pass"
    assert lines(result) == [("train.py", 7)]


def test_flax_param_and_haiku_get_parameter_shapes():
    flax = run("""
        import flax.linen as nn

        class LoRADense(nn.Module):
            features: int
            rank: int = 4

            @nn.compact
            def __call__(self, x):
                a = self.param("lora_a", nn.initializers.normal(0.02), (self.features, self.rank))
                b = self.param("lora_b", nn.initializers.zeros, (self.rank, self.features))
                return x @ a @ b
    """, LORA)
    assert flax.status.value == "pass"
    assert lines(flax) == [("train.py", 10), ("train.py", 11)]
    haiku = run("""
        import haiku as hk

        class Scale(hk.Module):
            def __call__(self, x):
                hidden_size = x.shape[-1]
                gamma_1 = hk.get_parameter("gamma_1", shape=[2 * hidden_size], init=hk.initializers.Constant(1.0))
                return x * gamma_1
    """, {"expect": {"gamma_1": ["D"]}, "symbols": {"D": "hidden_size"}})
    assert haiku.status.value == "mismatch"
    assert lines(haiku) == [("train.py", 7)]


def test_numbered_weight_and_bias_map_to_fc_layers():
    result = run("""
        import torch.nn as nn

        class Mlp(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.fc1 = nn.Linear(dim, 4 * dim)
                self.fc2 = nn.Linear(4 * dim, dim, bias=False)
    """, {"expect": {"W_1": ["D", "4*D"], "b_1": ["4*D"], "b_2": ["D"]}, "symbols": {"D": "hidden_size"}})
    assert (result.status.value, result.score) == ("partial", 0.5)  # fc2 has no bias
    assert lines(result) == [("train.py", 7)]


def test_no_tensor_of_those_names_is_missing():
    result = run("""
        import torch.nn as nn

        class Head(nn.Module):
            def __init__(self, dim, n):
                super().__init__()
                self.classifier = nn.Linear(dim, n)
    """, ADAPTER)
    assert (result.status.value, result.score) == ("missing", 0.0)


def test_lower_case_factors_after_a_method_prefix_but_not_a_projection_adapter():
    code = """
        import torch.nn as nn

        class FacT(nn.Module):
            def __init__(self, dim, r):
                super().__init__()
                self.FacT_u = nn.Linear(dim, r, bias=False)
                self.FacT_v = nn.Linear(r, dim, bias=False)
                self.lora_v = nn.Linear(dim, dim)
    """
    result = run(code, {"expect": {"U": ["D", "r"], "V": ["D", "r"]}, "symbols": {"r": "lora_rank", "D": "hidden_size"}})
    assert result.status.value == "pass"
    assert lines(result) == [("train.py", 7), ("train.py", 8)]  # lora_v (LoRA on the value projection) is not V


@pytest.mark.parametrize("dim", ["D/0", "0", "-r", "r**"])
def test_a_dimension_that_is_no_size_is_a_spec_error_naming_the_tensor(dim):
    problem = validate_protocol_params(RULE, {"expect": {"W_down": ["r", dim]}})
    assert problem is not None and problem.startswith("expect.W_down: dimension") and repr(dim) in problem


@pytest.mark.parametrize("dim", ["4*D", "D/G", "12M", 768, "P^2*C"])
def test_sizes_in_paper_symbols_are_accepted(dim):
    assert validate_protocol_params(RULE, {"expect": {"W": ["r", dim]}}) is None


@pytest.mark.parametrize("dim", ["2^(2^(2^(2^10)))", "D^(10^12)"])
def test_a_power_tower_dimension_is_refused_at_once(dim):
    """SymPy would build these numbers without end: the loader refuses them, the compiler emits no check."""
    from verifier.compiler import compile_claim
    from verifier.spec.model import SAU

    assert "is not a size" in validate_protocol_params(RULE, {"expect": {"W": ["r", dim]}})
    claim = f"Adapter: W_down ∈ ℝ^{{r×{dim}}} is learnable"
    assert not any(c.kind == "protocol" for c in compile_claim(SAU(id="p-D2-001", dimension="D2", claim=claim)).checks)
