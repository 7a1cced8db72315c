"""Which parameters a claim says are trained or frozen: the part's own word for its parameters ("the adapter
weights"), a verb with no subject ("fine-tunes only bias terms b"), and a layer type named in such a statement,
which must not become a call check (every ViT calls LayerNorm, the drifted repo that trains everything too)."""

from __future__ import annotations

from pathlib import Path

import pytest
from compiler_helpers import compiled, dumps
from values_helpers import indexed_repo as repo

from verifier.checks.base import Context
from verifier.checks.protocol import check_protocol
from verifier.results import Status
from verifier.spec.model import Spec


@pytest.mark.parametrize(
    "text, dimension, checks",
    [
        ("Only the adapter weights are updated.", "D1", [{"rule": "trainable", "name": "adapter", "only": True}]),
        ("The head parameters are trained.", "D3", [{"rule": "trainable", "name": "head"}]),
        ("The prompt parameters are frozen.", "D2", [{"rule": "frozen", "name": "prompt"}]),
        ("BitFit: fine-tunes only bias terms b in all network components", "D2", [{"rule": "trainable", "name": "bias", "only": True, "besides": ["head"]}]),
        ("Updates only the classification head.", "D2", [{"rule": "trainable", "name": "head", "only": True}]),
        ("Decoder layers are frozen.", "D2", [{"rule": "frozen", "name": "decoder"}]),
        ("The ViT backbone is frozen.", "D2", [{"target": "VisionTransformer | ViT | ViTModel | vit_b_16"}, {"rule": "frozen", "name": "backbone"}]),
        ("Optimizer: AdamW, only the adapter weights are updated", "D2",
         [{"target": "torch.optim.AdamW | optax.adamw | tensorflow.keras.optimizers.AdamW | transformers.AdamW"}, {"rule": "trainable", "name": "adapter", "only": True}]),
    ],
)
def test_trainability_statements_compile_to_the_rules(text: str, dimension: str, checks: list[dict]) -> None:
    result = compiled(text, dimension)
    assert dumps(result) == checks and result.coverage == "full"


@pytest.mark.parametrize(
    "text, checks",
    [
        # the norm layers and the biases are parameter kinds the trainable rule reads: a trainable check, no call
        ("Only the LayerNorm parameters are trained.", [{"rule": "trainable", "name": "norm", "only": True, "besides": ["head"]}]),
        ("Combined with LayerNorm tuning (LN weights and biases)", [{"rule": "trainable", "name": "norm"}]),
        ("Also tunes bias in patch embedding projection", [{"rule": "trainable", "name": "bias"}]),
    ],
)
def test_a_layer_type_in_a_trainability_statement_is_a_kind_not_a_call_check(text: str, checks: list[dict]) -> None:
    result = compiled(text, "D2")
    assert dumps(result) == checks and result.coverage == "full"


@pytest.mark.parametrize(
    "text, layer",
    [
        ("The dropout layer weights are trained.", "dropout layer"),
        ("Only the GELU layers are frozen.", "GELU"),
    ],
)
def test_a_layer_type_that_is_no_parameter_kind_stays_with_the_judge(text: str, layer: str) -> None:
    result = compiled(text, "D2")
    assert not [c for c in dumps(result) if "target" in c]  # never a call check on the layer
    assert any(f"({layer}'s)" in f.reason for f in result.fragments)


@pytest.mark.parametrize(
    "text, targets",
    [
        ("Pre-LayerNorm transformer blocks with GELU activations", ["torch.nn.LayerNorm | torch.nn.functional.layer_norm | flax.linen.LayerNorm", "torch.nn.GELU | torch.nn.functional.gelu | flax.linen.gelu | jax.nn.gelu"]),
        ("Fine-tuning a ViT with AdamW", ["VisionTransformer | ViT | ViTModel | vit_b_16", "torch.optim.AdamW | optax.adamw | tensorflow.keras.optimizers.AdamW | transformers.AdamW"]),
    ],
)
def test_layers_named_outside_a_trainability_statement_stay_call_checks(text: str, targets: list[str]) -> None:
    assert [c["target"] for c in dumps(compiled(text, "D2"))] == targets


def test_the_adapter_weights_claim_decides_an_adapter_repo(tmp_path: Path) -> None:
    (check,) = compiled("Only the adapter weights are updated.", "D1").checks
    code = (
        "import torch\nfrom torch import nn\n\n\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.backbone = nn.Linear(8, 8)\n"
        "        self.adapter = nn.Linear(8, 8)\n\n\n"
        "def build():\n"
        "    model = Net()\n"
        "    model.backbone.requires_grad_(False)\n"
        "    return torch.optim.AdamW({params}, lr=1e-3)\n"
    )
    faithful = check_protocol(check, Context(index=repo(tmp_path / "f", {"train.py": code.format(params="model.adapter.parameters()")}), spec=Spec()))
    assert (faithful.status, faithful.score) == (Status.pass_, 1.0)
    assert [(e.file, e.line) for e in faithful.evidence] == [("train.py", 15)]  # the optimizer
    both = "list(model.adapter.parameters()) + list(model.backbone.parameters())"
    drifted = check_protocol(check, Context(index=repo(tmp_path / "d", {"train.py": code.format(params=both)}), spec=Spec()))
    assert (drifted.status, drifted.score) == (Status.mismatch, 0.0)
    assert [(e.file, e.line) for e in drifted.evidence] == [("train.py", 15)]  # the optimizer that takes the backbone too
    assert "other parameters than `adapter`" in drifted.message  # not "adapter frozen with model.backbone": a sibling


def test_a_claim_cut_mid_expression_ends_in_a_truncated_context_fragment() -> None:
    result = compiled("Vote simulation: ranks = rank_by_bt(coefficients); initial_rank = ranks[t", "D2")
    last = result.fragments[-1]
    assert last.outcome == "context" and last.reason.startswith("truncated")
    closed = compiled("Vote simulation: ranks = rank_by_bt(coefficients); initial = ranks[target]", "D2")
    assert not closed.fragments[-1].reason.startswith("truncated")


@pytest.mark.parametrize(
    "text, kept, ruled_out",
    [
        ("Eliminates matrix inversion at each optimizer step", [], "matrix inversion"),
        ("Trained without gradient clipping", [], "gradient clipping"),
        ("Uses AdamW instead of SGD", ["torch.optim.AdamW | optax.adamw | tensorflow.keras.optimizers.AdamW | transformers.AdamW"], "SGD"),
    ],
)
def test_an_api_the_claim_rules_out_is_not_a_call_check(text: str, kept: list[str], ruled_out: str) -> None:
    result = compiled(text, "D2")
    assert [c["target"] for c in dumps(result)] == kept
    assert any(f"does without {ruled_out}:" in f.reason for f in result.fragments)


PEFT_METHODS = '''import torch
from torch import nn
from peft import LoraConfig, get_peft_model


class Adapter(nn.Module):
    def __init__(self, layer, r=8):
        super().__init__()
        self.layer = layer
        self.down = nn.Linear(layer.in_features, r)
        self.up = nn.Linear(r, layer.out_features)

    def forward(self, x):
        return self.layer(x) + self.up(self.down(x))


def add_adapters(model):
    for block in model.blocks:
        block.attn.q_proj = Adapter(block.attn.q_proj)
        block.attn.v_proj = Adapter(block.attn.v_proj)


def add_lora(model):
    return get_peft_model(model, LoraConfig(r=8, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]))
'''


@pytest.mark.parametrize(
    "claim, method",
    [("LoRA applied to W_Q and W_V", "lora"), ("Adapters inserted into the query and value projections", "adapter"),
     ("Both LoRA and adapters applied to query and value", None), ("Target modules: q_proj, v_proj", None)],
)
def test_a_placement_names_the_method_it_places(claim: str, method: str | None) -> None:
    (check,) = dumps(compiled(claim, "D2"))
    assert check["rule"] == "target-modules" and check.get("method") == method


def test_an_adapter_placement_does_not_answer_a_lora_claim(tmp_path: Path) -> None:
    """A repo comparing PEFT methods: adapters on query and value, LoRA on all four attention projections."""
    index = repo(tmp_path, {"peft_methods.py": PEFT_METHODS})
    (lora,) = compiled("LoRA applied to W_Q and W_V", "D2").checks
    result = check_protocol(lora, Context(index=index, spec=Spec()))
    assert (result.status, result.score) == (Status.partial, 0.75)  # LoRA has every claimed family and more
    assert [(e.file, e.line) for e in result.evidence] == [("peft_methods.py", 24)]
    (adapter,) = compiled("Adapters inserted into the query and value projections", "D2").checks
    placed = check_protocol(adapter, Context(index=index, spec=Spec()))
    assert (placed.status, placed.score) == (Status.pass_, 1.0)
    assert [(e.file, e.line) for e in placed.evidence] == [("peft_methods.py", 19)]


def test_lora_adapters_and_a_bottleneck_rank_are_lora() -> None:
    assert dumps(compiled("LoRA adapters applied to the query and value projections", "D2"))[0]["method"] == "lora"
    assert dumps(compiled("LoRA: bottleneck rank r = 8, applied to W_Q and W_V matrices", "D1"))[-1]["method"] == "lora"


def test_a_method_named_before_the_verb_and_prompt_tokens() -> None:
    result = compiled("Prompt tuning fine-tunes only the prompt tokens P; the encoder parameters are frozen.", "D2")
    assert dumps(result) == [{"rule": "trainable", "name": "prompt", "only": True}, {"rule": "frozen", "name": "encoder"}]
    assert result.coverage == "full"  # "prompt tuning" alone is no PEFT call: VPT-style prompts are written by hand
