"""Placement statements compile to exactly one ``placement`` check, and nothing else does (precision first)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.compiler import compile_claim
from verifier.spec.model import SAU, ProtocolCheck

DEV = Path(__file__).resolve().parents[2] / "shared" / "sabench-dev"


def placement_checks(claim: str, dimension: str = "D2") -> list[dict]:
    result = compile_claim(SAU(id="t-D2-001", dimension=dimension, claim=claim))
    return [c.model_dump(exclude_none=True, exclude={"scope", "kind"}) for c in result.checks
            if isinstance(c, ProtocolCheck) and c.rule == "placement"]


@pytest.mark.parametrize(("claim", "expected"), [
    ("Pfeiffer configuration: a single adapter is placed only after the MLP block.",
     {"rule": "placement", "after": ["mlp"]}),
    ("Two adapter modules per layer, placed at h_a (after MSA) and h_b (after MLP).",
     {"rule": "placement", "after": ["attention", "mlp"]}),
    ("Adapters are inserted after the attention and the feed-forward sublayers in every transformer layer.",
     {"rule": "placement", "after": ["attention", "mlp"]}),
    ("The adapter runs alongside (not after) the FFN block.", {"rule": "placement", "parallel_to": ["mlp"]}),
    ("The adapter runs in parallel to the MLP block, reading the same input.",
     {"rule": "placement", "parallel_to": ["mlp"]}),
    ("Bottleneck adapters placed before the MLP block.", {"rule": "placement", "before": ["mlp"]}),
    ("Learnable scale factors applied after MSA and MLP blocks respectively.",
     {"rule": "placement", "after": ["attention", "mlp"], "module": "scale"}),
])
def test_placement_statements_compile_to_one_check(claim, expected):
    assert placement_checks(claim) == [expected]


def test_the_whole_statement_is_typed_and_a_number_beside_it_is_not_swallowed():
    result = compile_claim(SAU(id="t-D2-001", dimension="D2", claim="Scale 0.1, adapters placed after the MLP."))
    outcomes = [(f.text, f.outcome) for f in result.fragments]
    assert outcomes == [("Scale 0.1", "leftover"), ("adapters placed after the MLP", "typed")]
    full = compile_claim(SAU(id="t-D2-002", dimension="D2",
                             claim="Houlsby-style tuning: two adapter modules per block, placed after the MSA and after the MLP."))
    assert full.coverage == "full"


@pytest.mark.parametrize("claim", [
    "LayerNorm is applied before the MLP.",  # another module is placed
    "Dropout is applied after the MLP in the adapter model.",
    "LoRA adapters inserted after the attention block.",  # LoRA is attached to projections, not placed in the flow
    "The adapter is placed after the LayerNorm.",  # a position the rule does not judge
    "Unlike Houlsby, the adapter is placed after the MLP.",  # a comparison
    "The adapter is not placed after the MLP.",  # a negation
    "Adapters are placed after the MLP block of the teacher network.",  # a qualifier that changes whose MLP
    "Adapters placed after the MLP, except in the last block.",
    "The adapter output is added to the MLP output.",  # no position word
    "Prompt tokens are prepended at the first layer input.",
])
def test_other_statements_compile_to_no_placement_check(claim):
    assert placement_checks(claim) == []


def test_a_baseline_description_is_not_the_methods_placement():
    assert placement_checks("Pfeiffer adapter (baseline): a single adapter placed after the MLP block.") == []


@pytest.mark.skipif(not DEV.is_dir(), reason="SA-Bench dev data not present")
def test_dev_placement_claims():
    claims = {c["id"]: c for c in json.loads((DEV / "petl-visual-recognition.json").read_text())["claims"]}
    got = {}
    for sau_id in ("petl-visual-recognition-D2-008", "petl-visual-recognition-D2-009",
                   "petl-visual-recognition-D2-010", "petl-visual-recognition-D2-016"):
        c = claims[sau_id]
        got[sau_id] = placement_checks(c["claim"], c["dimension"])
    assert got == {
        "petl-visual-recognition-D2-008": [{"rule": "placement", "after": ["attention", "mlp"]}],
        "petl-visual-recognition-D2-009": [{"rule": "placement", "after": ["mlp"]}],
        "petl-visual-recognition-D2-010": [{"rule": "placement", "parallel_to": ["mlp"]}],
        "petl-visual-recognition-D2-016": [{"rule": "placement", "after": ["attention", "mlp"], "module": "scale"}],
    }
