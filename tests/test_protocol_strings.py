"""Rule ``strings`` on small repos (verdict, score, evidence line), its token matching, and prompt-file indexing."""

from __future__ import annotations

import textwrap

import pytest

from verifier.analysis.protocol import validate_protocol_params
from verifier.analysis.protocol.examples import run_example
from verifier.analysis.protocol.strings import SLOT, Wanted, near_limit, tokens
from verifier.index.build import build_index
from verifier.index.facts import FileRole, Language


def run(code: str, expect, files: dict[str, str] | None = None, **options):
    params = {"expect": expect, **options}
    assert validate_protocol_params("strings", params) is None
    example = {"code": textwrap.dedent(code), "files": {k: textwrap.dedent(v) for k, v in (files or {}).items()},
               "params": params}
    result, _ = run_example("strings", example)
    return result


def lines(result) -> list[tuple[str, int]]:
    return sorted((e.file, e.line) for e in result.evidence)


# ----- tokens ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("paper", "repo"), [
    ("a photo of a {c}", "a photo of a {}."),
    ("a photo of a c_k", "A photo of a {label}"),
    ("a photo of a [CLASS]", "a photo of a %s"),
    ("a photo of a <label>", "a photo of a [CLASS]."),
    ("Who made you?", "who made you"),
    ("Don’t guess.", "Don't guess"),
])
def test_normalized_tokens_agree(paper, repo):
    assert tokens(paper, paper=True) == tokens(repo)


def test_a_math_placeholder_is_a_slot_only_on_the_papers_side():
    assert tokens("x_1 equals", paper=True) == (SLOT, "equals")
    assert tokens("x_1 equals") == ("x_1", "equals")


def test_exact_keeps_case_and_punctuation():
    assert tokens("Who made you?", exact=True) == ("Who", "made", "you", "?")
    assert tokens("who made you", exact=True) != tokens("Who made you?", exact=True)


def test_near_limits_grow_with_length():
    assert [near_limit(n) for n in (3, 4, 7, 8, 12, 20)] == [0, 1, 1, 2, 2, 3]
    assert Wanted.of("Please describe your main purpose.", False).near_miss(tokens("Please explain your main purpose")) == 1
    assert Wanted.of("Who made you?", False).near_miss(tokens("Who paid you?")) is None  # three words: never near


# ----- verdicts ------------------------------------------------------------------------------------------------
def test_all_prompts_in_a_python_list_pass_with_each_line():
    result = run('''\
        PROMPTS = [
            "Who made you?",
            "What is your name?",
        ]
    ''', ["Who made you?", "What is your name?"])
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert lines(result) == [("train.py", 2), ("train.py", 3)]


def test_implicit_concatenation_and_a_concatenated_slot():
    result = run('''\
        SYSTEM = ("You are a careful assistant. "
                  "Answer in one word.")
        def ask(q):
            return "Question: " + q + " Answer:"
    ''', ["You are a careful assistant. Answer in one word.", "Question: {q} Answer:"])
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert lines(result) == [("train.py", 1), ("train.py", 4)]


def test_a_sentence_inside_a_longer_prompt_counts():
    result = run('''\
        def build(question):
            return f"Q: {question}\\nA: Let's think step by step. Then answer."
    ''', "Let's think step by step")
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert lines(result) == [("train.py", 2)]


def test_share_levels():
    code = 'PROMPTS = ["alpha beta gamma", "delta epsilon zeta", "eta theta iota"]\n'
    four = ["alpha beta gamma", "delta epsilon zeta", "eta theta iota", "kappa lambda mu"]
    result = run(code, four)
    assert (result.status.value, result.score) == ("partial", 0.75)
    result = run(code, four[:2] + ["nu xi omicron", "pi rho sigma"])
    assert (result.status.value, result.score) == ("partial", 0.5)
    result = run(code, four[:1] + ["nu xi omicron", "pi rho sigma", "tau upsilon phi"])
    assert (result.status.value, result.score) == ("partial", 0.25)
    assert lines(result) == [("train.py", 1)]


def test_all_false_accepts_one_example_of_a_longer_list():
    result = run('PROMPTS = ["Who made you?"]\n', ["Who made you?", "Who trained you?"], all=False)
    assert (result.status.value, result.score) == ("pass", 1.0)


def test_exact_match_rejects_another_case():
    result = run('LABELS = ["Positive", "Negative"]\n', ["positive", "negative"], match="exact")
    assert result.status.value == "missing"
    result = run('LABELS = ["positive", "negative"]\n', ["positive", "negative"], match="exact")
    assert (result.status.value, lines(result)) == ("pass", [("train.py", 1)])


def test_a_template_slot_is_not_literal_text():
    result = run('CAPTION = "a photo of a dog"\n', "a photo of a {c}")
    assert result.status.value == "missing"


def test_help_texts_comments_and_tests_are_mentions():
    result = run('''\
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--template", default="{}", help="a photo of a {}")
        # captions: 'a photo of a {c}'
    ''', "a photo of a {c}", files={"tests/test_prompts.py": 'T = "a photo of a {}"\n'})
    assert result.status.value == "missing"
    assert result.details.get("taxonomy") == "mention"
    assert all(e.role == "mention" for e in result.evidence) and result.evidence


def test_json_config_and_jsonl_csv_prompt_files():
    result = run("import json\n", ["Summarise the article.", "Translate to French:", "Rate the answer from 1 to 5."],
                 files={"configs/task.json": '{\n  "instruction": "Summarise the article."\n}\n',
                        "prompts/translate.jsonl": '{"id": 1, "prompt": "Translate to French:"}\n',
                        "prompts/judge.csv": 'id,template\n7,"Rate the answer from 1 to 5."\n'})
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert lines(result) == [("configs/task.json", 2), ("prompts/judge.csv", 2), ("prompts/translate.jsonl", 1)]


def test_a_placeholder_only_string_is_unverified():
    assert run("x = 1\n", "{c}").status.value == "unverified"


# ----- index -------------------------------------------------------------------------------------------------------
def test_prompt_files_are_indexed_as_text_and_other_text_files_are_not(tmp_path):
    files = {"prompts/identity.txt": "Who made you?\n", "eval_questions.jsonl": '{"q": "Why?"}\n',
             "requirements.txt": "torch\n", "notes.txt": "lr = 1\n", "data/train.csv": "a,b\n1,2\n",
             "docs/prompt_guide.txt": "Write prompts.\n", "big_prompts.csv": "x" * 300_000}
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    index = build_index(tmp_path, use_cache=False)
    assert sorted(index.files) == ["docs/prompt_guide.txt", "eval_questions.jsonl", "prompts/identity.txt"]
    assert {p: f.role for p, f in index.files.items()} == {
        "docs/prompt_guide.txt": FileRole.doc, "eval_questions.jsonl": FileRole.code, "prompts/identity.txt": FileRole.code}
    assert all(f.language is Language.text and not f.bindings for f in index.files.values())
    assert any(n.file == "big_prompts.csv" and "larger than" in n.reason for n in index.notes)


def test_a_function_scope_reads_only_that_function():
    code = textwrap.dedent('''\
        def train_prompt(x):
            return f"Summarise: {x}"
        def eval_prompt(x):
            return f"Summarize briefly: {x}"
    ''')
    params = {"expect": "Summarise: {text}"}
    result, _ = run_example("strings", {"code": code, "params": params, "in": "eval_prompt"})
    assert result.status.value == "missing"
    result, _ = run_example("strings", {"code": code, "params": params, "in": "train_prompt"})
    assert (result.status.value, lines(result)) == ("pass", [("train.py", 2)])


def test_toml_strings_and_a_reworded_long_prompt():
    result = run("x = 1\n", ["You are a grader who checks each step of the proof carefully."],
                 files={"configs/judge.toml": '[judge]\nsystem = "You are a grader who checks every step of the proof carefully."\n'})
    assert (result.status.value, result.score, lines(result)) == ("partial", 0.75, [("configs/judge.toml", 2)])


def test_the_prefilter_skips_files_whose_words_are_only_scattered():
    """A file is parsed only where the string's words occur close together (a literal holds them contiguously,
    or split over a few concatenated lines); scattered words cannot be the prompt."""
    from verifier.analysis.protocol.strings import Wanted

    wanted = Wanted.of("Let's think step by step", exact=False)
    scattered = "let us begin.\n" + "x = 1\n" * 400 + "# think about it\n" + "y = 2\n" * 400 + "step = 3\n"
    together = 'PROMPT = ("Q: {q}\\nA: Let\'s think "\n          "step by step.")\n'
    assert not wanted.in_text(scattered.lower())
    assert wanted.in_text(together.lower())
