"""Fragments of numerical claims that carry no value to check: a quantity named only by its symbol, a count the
paper leaves unsaid, the balance of a dataset. They are context (excused from coverage), never leftovers that
drag a claim's coverage down, and never a value check; a symbol given a value stays a typed check."""

from __future__ import annotations

import pytest

from verifier.compiler import compile_claim, context
from verifier.spec.model import SAU


def fragments(claim: str, dimension: str = "D1") -> list[tuple[str, str, str]]:
    result = compile_claim(SAU(id="p-D1-001", dimension=dimension, claim=claim))
    return [(f.text, f.outcome, f.reason) for f in result.fragments]


@pytest.mark.parametrize(
    ("claim", "fragment", "reason"),
    [
        ("Batch size 32; group-wise transformation with G groups", "group-wise transformation with G groups",
         "definition: a quantity named by its symbol, no value"),
        ("Batch size 32, each with independent advection alpha_i and forcing amplitude delta_i",
         "each with independent advection alpha_i and forcing amplitude delta_i",
         "definition: a quantity named by its symbol, no value"),
        ("Batch size 32, evaluated at multiple points for the trade-off analysis",
         "evaluated at multiple points for the trade-off analysis",
         "unstated: how many values is not said, so there is none to check"),
        ("Batch size 32; uniform category distribution", "uniform category distribution",
         "dataset statistic: a property of the data, not set by code"),
        ("Batch size 32, class-balanced", "class-balanced", "dataset statistic: a property of the data, not set by code"),
    ],
)
def test_a_fragment_without_a_value_is_context_and_the_claim_stays_fully_covered(claim, fragment, reason):
    found = fragments(claim)
    assert (fragment, "context", reason) in found
    assert ("Batch size 32", "typed", "") in found
    result = compile_claim(SAU(id="p-D1-001", dimension="D1", claim=claim))
    assert result.coverage == "full"
    assert [(c.kind, c.name, c.expect) for c in result.checks] == [("value", "minibatch_size", 32)]


def test_a_symbol_given_a_value_is_still_a_value_check():
    result = compile_claim(SAU(id="p-D1-001", dimension="D1", claim="Batch size 32, with G=4 groups"))
    assert [f.outcome for f in result.fragments] == ["typed", "typed"]
    assert ("value", "G", 4) in [(c.kind, c.name, c.expect) for c in result.checks]


def test_a_counted_evaluation_is_a_value_not_an_unstated_count():
    result = compile_claim(SAU(id="p-D1-001", dimension="D1", claim="evaluated at 5 points for the trade-off analysis"))
    assert [f.outcome for f in result.fragments] == ["typed"]


@pytest.mark.parametrize("text", ["with a learning rate", "with several hidden layers of 256 units"])
def test_a_named_setting_without_its_symbol_or_value_is_not_excused(text):
    assert all(outcome != "context" for _, outcome, _ in fragments(f"Batch size 32, {text}"))


def test_the_shapes_apply_to_numerical_claims_only():
    found = fragments("Features go through a group-wise transformation with G groups", dimension="D2")
    assert all(reason != "definition: a quantity named by its symbol, no value" for _, _, reason in found)


@pytest.mark.parametrize("text", ["uniform category distribution", "a balanced class distribution", "class-balanced"])
def test_data_balance_is_a_dataset_statistic(text):
    assert (context.classify(text) or "").startswith("dataset statistic")


@pytest.mark.parametrize("text", ["uniform sampling of 64 classes", "balanced batches of 32"])
def test_balance_words_next_to_a_setting_are_not_context(text):
    assert not (context.classify(text) or "").startswith("dataset statistic")


def test_the_targets_of_one_unpacking_assignment_stay_one_fragment():
    claim = "Initialization: U, S, Vᵀ = SVD(ΔW_avg); B_init = U[:, :r]. By Eckart-Young theorem, optimal. Uses torch.svd_lowrank."
    found = fragments(claim, "D2")
    texts = [text for text, _, _ in found]
    assert "Initialization: U, S, Vᵀ = SVD(ΔW_avg)" in texts
    assert ("By Eckart-Young theorem", "context",
            "citation: a named theorem or inequality the method rests on (what follows from it is checked)") in found
    result = compile_claim(SAU(id="p-D2-001", dimension="D2", claim=claim))
    assert any(c.kind == "call" and "svd" in c.target for c in result.checks)


@pytest.mark.parametrize("text", ["By Eckart-Young theorem", "from Jensen's inequality", "by the Cauchy-Schwarz inequality"])
def test_a_named_theorem_is_a_citation(text):
    assert context.classify(text).startswith("citation: a named theorem")


@pytest.mark.parametrize("text", ["by default", "By Adam optimizer", "batch size, learning rate = 3e-4"])
def test_words_that_only_look_like_a_named_result_are_not(text):
    assert not (context.classify(text) or "").startswith("citation: a named theorem")


def test_a_list_before_an_assignment_is_still_cut():
    texts = [text for text, _, _ in fragments("Batch size 32, lr = 3e-4")]
    assert texts == ["Batch size 32", "lr = 3e-4"]


def test_a_formula_variable_running_between_two_numbers_is_its_domain():
    result = compile_claim(SAU(id="p-D2-001", dimension="D2", claim="x_t = (1 - t) x_0 + t x_1, with t from 0 to 1"))
    values = [c for c in result.checks if c.kind == "value"]
    assert [(c.name, c.expect) for c in values] == [("t", [0, 1])] and result.coverage == "full"


def test_one_symbol_standing_for_another_is_a_definition():
    assert fragments("With l_0 = L (maximum level)", "D2") == [
        ("With l_0 = L (maximum level)", "context", "definition: one symbol of the formulas stands for another, no value")]
    assert fragments("With l_0 = 3", "D2")[0][1] == "typed"  # a value is a setting


@pytest.mark.parametrize("claim", ["trained on 50K and 10K images", "500 and 100 images"])
def test_a_list_of_data_sizes_is_context_as_a_whole(claim):
    # both numbers are the data's (not the first left out silently and the second read as a count to check)
    result = compile_claim(SAU(id="p-D1-001", dimension="D1", claim=claim))
    assert result.checks == [] and [f.outcome for f in result.fragments] == ["context"]


def test_a_setting_before_a_data_size_keeps_its_value():
    result = compile_claim(SAU(id="p-D1-001", dimension="D1", claim="batch size 64 and 1.2M images"))
    assert [(c.name, c.expect) for c in result.checks] == [("minibatch_size", 64)]
