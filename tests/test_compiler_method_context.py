"""Rationale versus method facts in method (D2) claims: a "where ..." / "This is ..." / "Both ..." clause is
context only when it explains or glosses; a clause that states shapes, trainability, sharing or data flow
is something a repository implements and stays for the judge."""

from __future__ import annotations

import pytest

from verifier.compiler import compile_claim, context
from verifier.spec.model import SAU


def fragments(claim: str, dimension: str = "D2") -> list[tuple[str, str]]:
    compiled = compile_claim(SAU(id="p-D2-001", dimension=dimension, claim=claim))
    return [(f.text, f.outcome) for f in compiled.fragments]


@pytest.mark.parametrize(
    "fact",
    [
        "where U (d×k) and V (k×d) both trainable",
        "Both the reconstruction and the KL term use the same noise level t and padding mask",
        "This is used to compute the reward R on the denoised estimate rather than the noisy sample",
        "which the planner uses to produce the action a_t",
        "where z = Enc_phi(x)",
        "Since K' < n",
        "where the residual loss enforces the boundary condition at sampled points",
        "Computed as the product of frozen U and V",
        "Requires U full-rank",
        "Applied to the second stage only",
    ],
)
def test_a_clause_that_states_how_the_method_works_is_not_context(fact):
    category = context.classify(fact, result_allowed=False) or "explanation or rationale"
    assert context.method_fact(fact, category) != ""


@pytest.mark.parametrize(
    "rationale",
    [
        "where:",
        "where h_k are hidden states and c_k are cell states",
        "where each y_i is a label for one of the classes",
        "where γ is the discount factor (close to one)",
        "where τ(x, s) is monotonically non-decreasing in s and M is the largest possible score",
        "so the decoder sees every possible offset",
        "avoiding numerical overflow in the exponent",
        "Used to isolate the effect of the schedule from the architecture",
        "This is a model-agnostic procedure applicable to any simulator",
        "Since the stride is constant across levels",
    ],
)
def test_explanations_and_symbol_glosses_stay_context(rationale):
    assert context.method_fact(rationale, "rationale") == ""


def test_a_heading_that_sets_a_loop_bound_is_not_context_but_one_that_enumerates_is():
    assert context.method_fact("For j = 1 to n_samples (n=32):", "heading of the parts that follow").startswith("a heading that sets n")
    assert context.method_fact("For each step s (s = 0, 1, 2, ...):", "heading of the parts that follow") == ""


def test_hardware_and_citations_keep_their_reading():
    assert context.method_fact("where trained on 4 A100 GPUs", "hardware: what it ran on") == ""


def test_in_a_method_claim_the_shared_input_clause_is_left_for_the_judge_with_its_reason():
    claim = (
        "Joint objective: L = L_rec + L_kl, where:\n- Both L_rec and L_kl use the same timestep t and mask m\n"
        "- so the two terms stay comparable"
    )
    compiled = compile_claim(SAU(id="p-D2-001", dimension="D2", claim=claim))
    by_text = {f.text: f for f in compiled.fragments}
    shared = by_text["Both L_rec and L_kl use the same timestep t and mask m"]
    assert shared.outcome == "leftover"
    assert shared.reason.startswith("states how the method works ('Both ...')")
    assert by_text["so the two terms stay comparable"].outcome == "context"
    assert by_text["where:"].outcome == "context"
    assert compiled.coverage == "partial"


def test_a_trainability_clause_after_a_formula_is_typed_beside_the_formula():
    compiled = compile_claim(SAU(id="p-D2-001", dimension="D2", claim="Update: W = W_0 + P Q, where P (d×k) and Q (k×d) both trainable."))
    outcomes = [(f.text, f.outcome, f.reason) for f in compiled.fragments]
    assert outcomes == [("Update: W = W_0 + P Q", "typed", ""), ("where P (d×k) and Q (k×d) both trainable", "typed", "")]
    assert [c.model_dump(exclude_none=True, exclude_defaults=True) for c in compiled.checks] == [
        {"expect": "W_0 + matmul(P, Q)"}, {"rule": "trainable", "name": "P"}, {"rule": "trainable", "name": "Q"}]
    assert compiled.coverage == "full"


def test_the_same_clause_in_a_value_claim_keeps_the_generic_reading():
    """Only method claims are re-read: a numerical claim's "where ..." clause is not a method fact."""
    outcomes = dict(fragments("batch size 64, where the encoder weights are shared", dimension="D1"))
    assert outcomes["where the encoder weights are shared"] == "context"


@pytest.mark.parametrize(
    "explanation",
    [
        "This logistic function maps the score difference (s_i - s_j) to a probability in (0, 1)",
        "This squashes the logits into [0, 1]",
        "Same form as the PPO objective with policy pi and advantage A",
    ],
)
def test_the_range_of_a_formula_or_a_restatement_as_another_formula_is_context(explanation):
    assert fragments(explanation) == [(explanation, "context")]


@pytest.mark.parametrize(
    "fact",
    [
        "This function maps the logit with temperature 2 into (0, 1)",  # a number besides the range
        "The sigmoid maps the logit into (0, 1)",  # not an explanation's lead: how the method works
        "Same form as the PPO objective with clip 0.2",
        "Same architecture as the U-Net encoder with attention",  # a structure, not a formula
    ],
)
def test_a_range_or_restatement_that_says_more_is_not_context(fact):
    assert all(outcome != "context" for _, outcome in fragments(fact))


def test_what_a_method_amounts_to_is_an_interpretation():
    text = "WiSE functions as a feature ensemble where alpha controls how strongly adapter features blend with backbone features"
    assert fragments(text) == [(text, "context")]
    assert all(outcome != "context" for _, outcome in fragments("The gate acts as a switch between 2 paths"))


def test_two_symbols_glossed_together_are_a_glossary():
    assert context.method_fact(r"where \mu and \sigma are the channel-wise mean and standard deviation", "rationale") == ""
    assert context.method_fact("where U and V both trainable", "rationale") != ""  # a fact about them, not their meaning
