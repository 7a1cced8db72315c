"""Quoted prompts, templates and labels in a claim compile to one ``strings`` check; other quotes do not."""

from __future__ import annotations

import pytest

from verifier.compiler import compile_claim
from verifier.compiler.quoted import find_quoted_strings
from verifier.spec.model import SAU


def compiled(claim: str, dimension: str = "D3"):
    return compile_claim(SAU(id="p-D3-001", dimension=dimension, claim=claim))


def strings_checks(claim: str, dimension: str = "D3") -> list[list[str]]:
    return [c.params["expect"] for c in compiled(claim, dimension).checks if c.kind == "protocol" and c.rule == "strings"]


def test_a_counted_prompt_list_keeps_its_count():
    result = compiled("Probing setup: 3 identity prompts ('Who made you?', 'What is your name?', 'Which lab trained you?')",
                      "D1")
    assert [(c.kind, getattr(c, "rule", None) or getattr(c, "name", None)) for c in result.checks] == [
        ("protocol", "strings"), ("value", "num_prompts")]
    assert result.checks[0].params == {"expect": ["Who made you?", "What is your name?", "Which lab trained you?"]}
    assert result.checks[1].expect == 3
    assert result.coverage == "full"


@pytest.mark.parametrize(("claim", "expect"), [
    ("Zero-shot labels come from the caption 'a photo of a c_k' for every class.", [["a photo of a c_k"]]),
    ("The system prompt is “You are a terse assistant.”", [["You are a terse assistant."]]),
    ("Sentiment uses the label words 'great' and 'terrible'.", [["great", "terrible"]]),
    ("We append 'Let's reason carefully' as the trigger phrase.", [["Let's reason carefully"]]),
    ("Each question is prompted with 'Answer with a single letter.'", [["Answer with a single letter."]]),
    ("Prompt templates (e.g., 'Describe the {object}.', 'What is in the image?') are sampled per step.",
     [["Describe the {object}.", "What is in the image?"]]),
])
def test_cued_quotations_become_one_check(claim, expect):
    assert strings_checks(claim) == expect


@pytest.mark.parametrize("claim", [
    "The DWT uses 'zero' padding mode on every axis.",
    "Following 'Scaling Laws for Neural Language Models', the width grows with depth.",
    "Questions come from 'TruthfulQA' and are scored by accuracy.",
    "Prompts are read from 'prompts/identity.txt' at start-up.",
    "The prompt file 'eval_prompts.jsonl' holds 500 prompts.",
    "The model's name (e.g., 'Mistral') is searched for in each reply.",
    "The 'empty' token marks the null condition.",
    "Eight prompt categories (Coding, Math, Writing, Roleplay) are used.",
    "Prompts (e.g., 'a red cube on top of a blue sphere') are drawn from PartiPrompts.",
    "Questions such as 'How many legs does a spider have?' test recall.",
    "NLI labels 'entailment' and 'contradiction' are predicted.",
])
def test_uncued_or_non_text_quotations_are_not_checks(claim):
    assert strings_checks(claim) == []


def test_a_pseudocode_list_is_read_with_its_newlines():
    found = find_quoted_strings('prompts = [\n    "Who made you?",\n    "What is your name?"\n]\nsample(prompts)')
    assert [q.strings for q in found] == [("Who made you?", "What is your name?")]


def test_the_quoted_list_span_covers_the_cue():
    text = "The caption 'a photo of a {c}' is used."
    (found,) = find_quoted_strings(text)
    assert text[found.span[0] : found.span[1]] == "caption 'a photo of a {c}'"
