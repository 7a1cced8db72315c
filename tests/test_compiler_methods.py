"""Method statements in free-text claims (verifier/compiler/method_claims.py): initialisation -> `init`, frozen
parts -> `frozen` protocol checks, adapter placement in code names -> `target_modules`; and those checks run on
small LoRA-style repos where the paper's symbols (R, B, A) are the code's word pieces (lora_R, lora_B, lora_A)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from verifier.analysis.protocol import implementation, load_rule, with_defaults
from verifier.analysis.protocol.examples import context_for
from verifier.compiler import compile_claim
from verifier.engine import run_repo
from verifier.spec.model import SAU


def compiled(claim: str, dimension: str = "D2", aliases: dict | None = None):
    return compile_claim(SAU(id="m-D2-001", dimension=dimension, claim=claim), aliases)


def dumps(result) -> list[dict]:
    return [{"kind": c.kind, **c.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True)} for c in result.checks]


# ----- what the compiler makes of a statement -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("claim", "checks"),
    [
        (
            "Adapter update: R is initialized to zero, B and A remain frozen throughout training",
            [{"kind": "init", "name": "R", "expect": "zeros"},
             {"kind": "protocol", "rule": "frozen", "name": "B"},
             {"kind": "protocol", "rule": "frozen", "name": "A"}],
        ),
        (
            "The gate is zero-initialized; the text encoder is kept frozen",
            [{"kind": "init", "name": "gate", "expect": "zeros"}, {"kind": "protocol", "rule": "frozen", "name": "text_encoder"}],
        ),
        ("Q is initialized to the identity matrix", [{"kind": "init", "name": "Q", "expect": "identity"}]),
        ("lora_A is initialized with Kaiming uniform initialization", [{"kind": "init", "name": "lora_A", "expect": "kaiming_uniform"}]),
        ("the classification head is initialized to zeros before fine-tuning", [{"kind": "init", "name": "head", "expect": "zeros"}]),
        (
            "B (d×r) and A (r×k) fixed after initialization",
            [{"kind": "protocol", "rule": "frozen", "name": "B"}, {"kind": "protocol", "rule": "frozen", "name": "A"}],
        ),
        ("freeze the backbone", [{"kind": "protocol", "rule": "frozen", "name": "backbone"}]),
        ("Only R is trained", [{"kind": "protocol", "rule": "trainable", "name": "R", "only": True}]),
        ("Only R updated during training", [{"kind": "protocol", "rule": "trainable", "name": "R", "only": True}]),
        ("R is the sole trainable parameter", [{"kind": "protocol", "rule": "trainable", "name": "R", "only": True}]),
        ("R (r×r) sole trainable", [{"kind": "protocol", "rule": "trainable", "name": "R", "only": True}]),
        # several parts alone: each trains, and `only` is over their union (the first, `besides` the others)
        ("Only A and B are trained", [{"kind": "protocol", "rule": "trainable", "name": "A", "only": True, "besides": ["B"]},
                                      {"kind": "protocol", "rule": "trainable", "name": "B"}]),
        ("BitFit tunes only the bias terms", [{"kind": "protocol", "rule": "trainable", "name": "bias", "only": True, "besides": ["head"]}]),
        ("We train only the classification head", [{"kind": "protocol", "rule": "trainable", "name": "head", "only": True}]),
        ("R ∈ ℝ^{r×r} (trainable)", [{"kind": "protocol", "rule": "trainable", "name": "R"},
                                      {"kind": "protocol", "rule": "shape", "expect": {"R": ["r", "r"]}, "symbols": {"r": "lora_rank"}}]),
        (
            "B and A are trainable",
            [{"kind": "protocol", "rule": "trainable", "name": "B"}, {"kind": "protocol", "rule": "trainable", "name": "A"}],
        ),
        (
            "where B and A are both trainable",
            [{"kind": "protocol", "rule": "trainable", "name": "B"}, {"kind": "protocol", "rule": "trainable", "name": "A"}],
        ),
        ("U and V all learned", [{"kind": "protocol", "rule": "trainable", "name": "U"}, {"kind": "protocol", "rule": "trainable", "name": "V"}]),
        ("the adapters are updated", [{"kind": "protocol", "rule": "trainable", "name": "adapter"}]),
        # a matrix held fixed is not trained; a plural noun after the symbols says what they are
        ("B and A are fixed matrices", [{"kind": "protocol", "rule": "frozen", "name": "B"}, {"kind": "protocol", "rule": "frozen", "name": "A"}]),
        ("the A and B matrices are trainable",
         [{"kind": "protocol", "rule": "trainable", "name": "A"}, {"kind": "protocol", "rule": "trainable", "name": "B"}]),
        ("The R matrix is trainable", [{"kind": "protocol", "rule": "trainable", "name": "R"}]),
        # a part the method adds as a learned parameter
        ("A learnable class token x_0^{(Class)} is prepended", [{"kind": "protocol", "rule": "trainable", "name": "cls_token"}]),
        ("learnable prompts are prepended to the input sequence", [{"kind": "protocol", "rule": "trainable", "name": "prompt"}]),
        # code names become families, so a check holds on Llama (q_proj), BERT (query) or a fused qkv alike; a
        # claim naming LoRA alone reads only LoRA placements (a repo comparing PEFT methods has adapters too)
        ("LoRA applied to q_proj and v_proj", [{"kind": "protocol", "rule": "target-modules", "expect": ["query", "value"], "method": "lora"}]),
        (
            "LoRA applied to q_proj, k_proj and v_proj",
            [{"kind": "protocol", "rule": "target-modules", "expect": ["query", "key", "value"], "method": "lora"}],
        ),
        ("LoRA applied to attn.c_attn and attn.c_proj",
         [{"kind": "protocol", "rule": "target-modules", "expect": ["query", "key", "value", "attention-output"], "method": "lora"}]),
        # a code name the family table lacks keeps the exact value check on the setting
        ("LoRA applied to lora_x_proj and v_proj", [{"kind": "value", "name": "target_modules", "expect": ["lora_x_proj", "v_proj"]}]),
        ("LoRA applied to the query and value projections",
         [{"kind": "protocol", "rule": "target-modules", "expect": ["query", "value"], "method": "lora"}]),
        ("Low-rank updates applied to W_Q and W_V matrices only",
         [{"kind": "protocol", "rule": "target-modules", "expect": ["query", "value"], "method": "lora"}]),
        ("LoRA applied to W_{Q/V}", [{"kind": "protocol", "rule": "target-modules", "expect": ["query", "value"], "method": "lora"}]),
        ("LoRA modifies the Q/K/V projections within the attention block",
         [{"kind": "protocol", "rule": "target-modules", "expect": ["query", "key", "value"], "method": "lora"}]),
        ("LoRA applied to self-attention layers only", [{"kind": "protocol", "rule": "target-modules", "expect": ["attention"], "method": "lora"}]),
        ("LoRA applied to all linear layers", [{"kind": "protocol", "rule": "target-modules", "expect": ["all-linear"], "method": "lora"}]),
    ],
)
def test_whole_statements_become_exact_checks(claim, checks):
    result = compiled(claim)
    assert dumps(result) == checks
    assert result.coverage == "full" and result.leftover == []


@pytest.mark.parametrize(
    ("claim", "reason"),
    [
        ("Linear probing (baseline): only the head is trained", "describes a baseline or an ablation"),
        ("Linear probing (baseline): the backbone is frozen", "describes a baseline or an ablation"),
        ("W_0 frozen", "the paper symbol W_0 names no code object (add an alias)"),
        ("moments initialized to zero", "'moments' is optimiser or runtime state, not a parameter"),
        ("biases initialized to zero", "an initialisation of every layer's weights or biases"),
        ("LoRA applied to the gating projections", "placement (which modules the method is attached to) in plain words"),
        ("LoRA applied to query and the router layers", "placement (which modules the method is attached to) in plain words"),
        # (after the MLP or the attention is the `placement` rule's: tests/test_placement_claims.py)
        ("Adapters inserted after the embedding layer", "placement by position in the block"),
        ("Dropout applied to the attention weights", "placement of something no adaptation method names"),
        ("Standard LoRA (baseline): applied to the query and value projections", "describes a baseline or an ablation"),
        ("the prediction head is initialized from the text embeddings", "initialised from another tensor or model"),
    ],
)
def test_recognised_but_uncheckable_statements_are_left_with_their_reason(claim, reason):
    result = compiled(claim)
    assert result.checks == [] and result.coverage == "none"
    (fragment,) = result.fragments
    assert fragment.outcome == "leftover" and fragment.reason.startswith(reason)


@pytest.mark.parametrize(
    "claim",
    [
        "a_1 and a_2 are fixed",  # constants, not frozen tensors: "fixed" needs "after initialization"/"during training"
        "a_1 and a_2 are fixed constants",  # constants are not matrices: no frozen check
        "a class token is prepended",  # nothing says it is learned
        "adapters are inserted after each block of the frozen backbone",  # a method sentence saying more than "frozen"
        "The method is applied to ODE1 and ODE2",  # where an experiment runs, not where a module goes
    ],
)
def test_no_frozen_or_placement_check_from_sentences_that_are_not_such_statements(claim):
    kinds = {(c.kind, getattr(c, "rule", None)) for c in compiled(claim).checks}
    assert ("protocol", "frozen") not in kinds and not any(c.kind == "value" for c in compiled(claim).checks)


def test_baseline_frozen_parts_are_not_checked_in_protocol_claims_either():
    assert ("protocol", "frozen") not in {(c.kind, getattr(c, "rule", None)) for c in compiled("Linear probing baseline: the backbone is kept frozen", "D3").checks}
    assert dumps(compiled("the backbone is kept frozen", "D3")) == [{"kind": "protocol", "rule": "frozen", "name": "backbone"}]


@pytest.mark.parametrize(
    ("claim", "checks"),
    [
        ("The pretrained weights remain frozen", [{"kind": "protocol", "rule": "frozen", "name": "base_weights"}]),
        ("the pre-trained parameters stay frozen during fine-tuning", [{"kind": "protocol", "rule": "frozen", "name": "base_weights"}]),
        ("Adapter tuning: the base model is frozen", [{"kind": "protocol", "rule": "frozen", "name": "base_weights"}]),
        ("LoRA: h = W₀x + BAx, where W₀ frozen",
         [{"kind": "formula", "expect": "W0x + BAx"}, {"kind": "protocol", "rule": "frozen", "name": "base_weights"}]),
        ("Low-rank adaptation: W_0 is frozen", [{"kind": "protocol", "rule": "frozen", "name": "base_weights"}]),
        ("Visual prompt tuning: frozen pre-trained model", [{"kind": "protocol", "rule": "frozen", "name": "base_weights"}]),
        ("Fine-tuning: the backbone weights are frozen", [{"kind": "protocol", "rule": "frozen", "name": "backbone"}]),
    ],
)
def test_the_pretrained_base_of_an_adaptation_is_the_semantic_name_base_weights(claim, checks):
    result = compiled(claim)
    assert dumps(result) == checks
    assert result.coverage == "full" and result.leftover == []


@pytest.mark.parametrize(
    ("claim", "reason"),
    [
        ("Gradient flow from the initial point: W_0 frozen", "the paper symbol W_0 names no code object"),
        ("The pretrained model is frozen", "'pretrained model' of a claim that names no adaptation method"),
    ],
)
def test_w0_and_a_pretrained_model_outside_an_adaptation_claim_are_left(claim, reason):
    result = compiled(claim)
    assert not any(getattr(c, "name", None) == "base_weights" for c in result.checks)
    assert any(f.outcome == "leftover" and f.reason.startswith(reason) for f in result.fragments)


def test_the_base_model_of_a_claim_about_no_adaptation_keeps_its_part_name():
    assert dumps(compiled("DPO: the base model is kept frozen")) == [{"kind": "protocol", "rule": "frozen", "name": "base_model"}]


def test_an_aliased_paper_symbol_is_named_as_written():
    assert dumps(compiled("W_0 frozen", aliases={"base_weight": ["W_0"]})) == [{"kind": "protocol", "rule": "frozen", "name": "W_0"}]


# ----- the checks on small repos ---------------------------------------------------------------------------------
LORA_SB = """\
import torch
from torch import nn


class LoRASBLinear(nn.Module):
    def __init__(self, base, rank):
        super().__init__()
        self.base = base
        self.lora_A = nn.Parameter(torch.randn(rank, base.in_features))
        self.lora_B = nn.Parameter(torch.randn(base.out_features, rank))
        self.lora_R = nn.Parameter(torch.zeros(rank, rank))
        self.lora_A.requires_grad_(False)
        self.lora_B.requires_grad_(False)

    def forward(self, x):
        return self.base(x) + x @ self.lora_A.T @ self.lora_R.T @ self.lora_B.T


def main():
    layer = LoRASBLinear(nn.Linear(16, 16), 4)
    optimizer = torch.optim.AdamW([p for p in layer.parameters() if p.requires_grad], lr=1e-4)
    print(optimizer)


if __name__ == "__main__":
    main()
"""
CLAIM = "Adapter update: R is initialized to zero, B and A remain frozen throughout training"


def _verdict(tmp_path: Path, source: str, claim: str = CLAIM, aliases: dict | None = None):
    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    (repo / "model.py").write_text(source)
    spec = {"version": 1, "paper": {"id": "m"}, "saus": [{"id": "m-D2-001", "dimension": "methodological", "claim": claim}]}
    if aliases:
        spec["aliases"] = aliases
    (repo / "sau.yaml").write_text(yaml.safe_dump(spec))
    (verdict,) = run_repo(repo, use_cache=False).verdicts
    return verdict


def _where(result) -> list[tuple[str, int, str]]:
    return [(e.file, e.line, e.role) for e in result.evidence]


def test_faithful_lora_sb_repo_passes_with_the_symbols_resolved_to_its_code_names(tmp_path):
    verdict = _verdict(tmp_path, LORA_SB)
    assert (verdict.status.value, verdict.score) == ("pass", 1.0)
    init, frozen_b, frozen_a = verdict.checks
    assert init.message == "R (lora_R) is initialised with zeros at model.py:11."
    assert _where(init) == [("model.py", 11, "init")]
    assert frozen_b.message == "`B` is `lora_B` in the code: `lora_B` is frozen: requires_grad_(False) (model.py:13)"
    assert _where(frozen_b) == [("model.py", 13, "rule")] and _where(frozen_a) == [("model.py", 12, "rule")]


def test_random_initialised_r_fails_its_init_check(tmp_path):
    verdict = _verdict(tmp_path, LORA_SB.replace("torch.zeros(rank, rank)", "torch.randn(rank, rank) * 0.02"))
    assert (verdict.status.value, verdict.score) == ("partial", 0.5)
    init = verdict.checks[0]
    assert (init.status.value, init.score) == ("mismatch", 0.0)
    assert "normal where zeros is claimed" in init.message and _where(init) == [("model.py", 11, "init")]


def test_trainable_b_fails_its_frozen_check(tmp_path):
    verdict = _verdict(tmp_path, LORA_SB.replace("        self.lora_B.requires_grad_(False)\n", ""))
    assert (verdict.status.value, verdict.score) == ("partial", 0.5)
    frozen_b = verdict.checks[1]
    assert (frozen_b.status.value, frozen_b.score) == ("mismatch", 0.0)
    assert frozen_b.message == "`B` is `lora_B` in the code: `lora_B` is used but nothing stops gradients reaching it"
    assert _where(frozen_b) == [("model.py", 10, "missing-near")]


def test_buffers_and_parameters_without_grad_are_frozen(tmp_path):
    source = LORA_SB.replace(
        "        self.lora_B = nn.Parameter(torch.randn(base.out_features, rank))\n",
        '        self.register_buffer("lora_B", torch.randn(base.out_features, rank))\n',
    ).replace("nn.Parameter(torch.randn(rank, base.in_features))", "nn.Parameter(torch.randn(rank, base.in_features), requires_grad=False)")
    source = source.replace("        self.lora_A.requires_grad_(False)\n        self.lora_B.requires_grad_(False)\n", "")
    verdict = _verdict(tmp_path, source)
    assert (verdict.status.value, verdict.score) == ("pass", 1.0)
    _, frozen_b, frozen_a = verdict.checks
    assert "a registered buffer (no gradient)" in frozen_b.message and _where(frozen_b) == [("model.py", 10, "rule")]
    assert "nn.Parameter(..., requires_grad=False)" in frozen_a.message and _where(frozen_a) == [("model.py", 9, "rule")]


def test_a_symbol_no_code_name_ends_in_is_unverified_not_a_failure(tmp_path):
    source = LORA_SB.replace("lora_A", "down").replace("lora_B", "up").replace("lora_R", "core")
    source = source.replace("    def forward(self, x):\n", "    def forward(self, x):\n        B, T = x.shape\n")
    verdict = _verdict(tmp_path, source)
    assert (verdict.status.value, verdict.score) == ("unverified", None)
    assert [c.status.value for c in verdict.checks] == ["unverified", "unverified", "unverified"]
    assert "the paper symbol `B` names no code object" in verdict.checks[1].message


def test_spec_aliases_name_the_code_object(tmp_path):
    source = LORA_SB.replace("lora_A", "down").replace("lora_B", "up").replace("lora_R", "core")
    verdict = _verdict(tmp_path, source, aliases={"core": ["R"], "up": ["B"], "down": ["A"]})
    assert (verdict.status.value, verdict.score) == ("pass", 1.0)
    assert verdict.checks[0].message == "R (core) is initialised with zeros at model.py:11."


def test_frozen_rule_symbol_prefers_the_code_name_to_a_bare_variable():
    files = {"m.py": "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        self.lora_B = torch.nn.Parameter(torch.zeros(2, 2))\n"
                     "        self.lora_B.requires_grad_(False)\n    def forward(self, x):\n        B, T = x.shape\n        return x\n"}
    result = implementation("frozen")(with_defaults("frozen", {"name": "B"}), context_for(files), None, load_rule("frozen"))
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert [(e.file, e.line) for e in result.evidence] == [("m.py", 5)]


def test_no_trainable_check_from_sentences_that_say_more():
    for claim in ["The model is trained", "the encoder is trained end-to-end with the decoder", "we train only on CIFAR-10"]:
        assert not [c for c in compiled(claim).checks if getattr(c, "rule", None) == "trainable"], claim


TRAINED_R = "Adapter update: R is initialized to zero; only R is trained"


def test_only_r_is_trained_passes_on_an_optimizer_over_r_alone(tmp_path):
    source = LORA_SB.replace("[p for p in layer.parameters() if p.requires_grad]",
                             '[p for n, p in layer.named_parameters() if "lora_R" in n]')
    verdict = _verdict(tmp_path, source, claim=TRAINED_R)
    assert (verdict.status.value, verdict.score) == ("pass", 1.0)
    trained = verdict.checks[1]
    assert trained.message == "`R` is `lora_R` in the code: only `lora_R` reaches the optimizer at model.py:21"
    assert _where(trained) == [("model.py", 21, "rule")]


def test_only_r_is_trained_fails_when_the_optimizer_also_takes_the_base(tmp_path):
    source = LORA_SB.replace("[p for p in layer.parameters() if p.requires_grad]",
                             '[p for n, p in layer.named_parameters() if "lora_R" in n] + list(layer.base.parameters())')
    verdict = _verdict(tmp_path, source, claim=TRAINED_R)
    trained = verdict.checks[1]
    assert (trained.status.value, trained.score) == ("mismatch", 0.0)
    assert _where(trained) == [("model.py", 21, "rule")]


def test_r_trainable_through_its_class_and_only_unverified_while_the_base_may_train(tmp_path):
    verdict = _verdict(tmp_path, LORA_SB, claim="R ∈ ℝ^{r×r} (trainable)")
    assert (verdict.status.value, verdict.score) == ("pass", 1.0)
    assert _where(verdict.checks[0]) == [("model.py", 21, "rule")]
    only = _verdict(tmp_path / "only", LORA_SB, claim="R is the sole trainable parameter")
    assert (only.status.value, only.score) == ("unverified", None)
    assert "nothing shows the parts other than `lora_R` are frozen" in only.checks[0].message


def test_placement_in_code_names_is_checked_against_the_lora_config(tmp_path):
    source = 'from peft import LoraConfig\n\n\ndef build():\n    return LoraConfig(r=8, target_modules=["q_proj", "v_proj"])\n'
    good = _verdict(tmp_path / "a", source, claim="LoRA applied to q_proj and v_proj")
    assert (good.status.value, good.score) == ("pass", 1.0) and _where(good.checks[0])[0][:2] == ("model.py", 5)
    drifted = _verdict(tmp_path / "b", source.replace('"v_proj"', '"o_proj"'), claim="LoRA applied to q_proj and v_proj")
    assert (drifted.status.value, drifted.score) == ("partial", 0.5)
    assert "attached to query, attention-output" in drifted.checks[0].message
    assert _where(drifted.checks[0])[0][:2] == ("model.py", 5)


def test_a_target_list_cut_at_its_commas_compiles_once_per_heading_segment():
    claim = ("LoRA target modules: key, value, query, attention output, all FC layers (7B models); "
             "self-attention layers only (the encoder runs).")
    result = compiled(claim)
    assert dumps(result) == [
        {"kind": "protocol", "rule": "target-modules", "expect": ["query", "key", "value", "attention-output", "mlp"], "method": "lora"},
        {"kind": "protocol", "rule": "target-modules", "expect": ["attention"], "method": "lora"},
    ]
    assert result.coverage == "full"


def test_a_placement_in_plain_words_is_checked_on_a_fused_qkv(tmp_path):
    source = (
        "import torch.nn as nn\n\n\n"
        "class LoRAQKV(nn.Module):\n"
        "    def __init__(self, qkv, r):\n"
        "        super().__init__()\n"
        "        self.qkv, self.dim = qkv, qkv.in_features\n"
        "        self.q = nn.Sequential(nn.Linear(self.dim, r), nn.Linear(r, self.dim))\n"
        "        self.v = nn.Sequential(nn.Linear(self.dim, r), nn.Linear(r, self.dim))\n\n"
        "    def forward(self, x):\n"
        "        out = self.qkv(x)\n"
        "        out[:, :, : self.dim] += self.q(x)\n"
        "        out[:, :, -self.dim :] += self.v(x)\n"
        "        return out\n\n\n"
        "def add_lora(vit):\n"
        "    for blk in vit.blocks:\n"
        "        blk.attn.qkv = LoRAQKV(blk.attn.qkv, 4)\n"
    )
    good = _verdict(tmp_path / "a", source, claim="LoRA applied to W_Q and W_V only")
    assert (good.status.value, good.score) == ("pass", 1.0)
    assert [(f, n) for f, n, _ in _where(good.checks[0])] == [("model.py", 11), ("model.py", 13), ("model.py", 14), ("model.py", 20)]
    whole = source.replace("        out[:, :, : self.dim] += self.q(x)\n        out[:, :, -self.dim :] += self.v(x)\n",
                           "        out = out + self.v(x).repeat(1, 1, 3)\n")
    drifted = _verdict(tmp_path / "b", whole, claim="LoRA applied to W_Q and W_V only")
    assert (drifted.status.value, drifted.score) == ("partial", 0.75)
    assert "attached to query, key, value" in drifted.checks[0].message
