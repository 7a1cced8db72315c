"""A list whose last item carries a qualifier for every item ("English, Chinese, Spanish (source: LMSYS-Chat-1M)")
and an opening sentence that names the topics a claim goes on to list: their bare names are context, the
qualifier's check types the list; without the list shape (no label before the colon, no possessive topic, a
setting among the names) nothing is excused."""

from __future__ import annotations

import pytest

from verifier.compiler import compile_claim
from verifier.spec.model import SAU


def compiled(claim: str):
    return compile_claim(SAU(id="p-D1-001", dimension="D1", claim=claim))


def outcomes(claim: str) -> list[tuple[str, str, str]]:
    return [(f.text, f.outcome, f.reason) for f in compiled(claim).fragments]


def test_the_names_before_a_qualified_last_item_are_context_and_its_check_types_the_list():
    claim = ("8 prompt categories. Normal chats in high-resource languages: English, Chinese, Spanish (source: "
             "LMSYS-Chat-1M). Specialty chats: Coding (source: Alpaca Code), Math (source: MATH).")
    result = compiled(claim)
    assert result.coverage == "full"
    got = outcomes(claim)
    assert ("Normal chats in high-resource languages: English", "context",
            "names only: items of a list whose last item's qualifier (a source, a dataset) holds for them all") in got
    assert ("Chinese", "context",
            "names only: items of a list whose last item's qualifier (a source, a dataset) holds for them all") in got
    assert ("Spanish (source: LMSYS-Chat-1M)", "typed", "") in got
    assert [c.params["expect"] for c in result.checks if getattr(c, "rule", None) == "dataset"] == \
        ["LMSYS-Chat-1M", "Alpaca", "MATH"]


@pytest.mark.parametrize("claim", [
    "Languages English, Chinese, Spanish (source: LMSYS-Chat-1M)",  # no label before a colon: not a list's head
    "Setup: English, lr=0.1, Spanish (source: LMSYS-Chat-1M)",  # a setting among the names ends the run
])
def test_without_the_list_shape_the_names_stay_leftovers(claim):
    assert not any(f.reason.startswith("names only: items of a list") for f in compiled(claim).fragments)


def test_an_opening_sentence_naming_the_topics_is_a_heading():
    claim = ("Eight prompt categories used to build the detector, their sources, and categories. Coding (source: "
             "Alpaca Code), Math (source: MATH).")
    got = outcomes(claim)
    heading = "heading: the opening sentence names what the claim goes on to list"
    assert ("their sources", "context", heading) in got and ("and categories", "context", heading) in got
    assert compiled(claim).coverage == "full"


@pytest.mark.parametrize("claim", [
    "Learning rate 0.1, cosine decay. Batch size 32.",  # a method fact, not a topic: no possessive topic beside it
    "Eight prompt categories, their sources, cosine decay, lr=0.1. Coding (source: Alpaca Code).",  # a setting among them
])
def test_bare_nouns_of_a_first_sentence_are_not_excused_without_the_topic_shape(claim):
    assert not any(f.reason.startswith("heading: the opening sentence") for f in compiled(claim).fragments)
