"""A setting the claim leaves at its default ("Adam with default betas", "default decoding hyperparameters
(temperature)") is a value: the named API's documented default, else the one every common library uses. The
repo passes where nothing sets it and fails where something sets another value."""

from __future__ import annotations

import pytest

from verifier.compiler import compile_claim
from verifier.engine import run_repo
from verifier.spec.model import SAU


def values(claim: str) -> list[tuple[str, object]]:
    result = compile_claim(SAU(id="d-D1-001", dimension="D1", claim=claim))
    return [(c.name, c.expect) for c in result.checks if c.kind == "value"]


@pytest.mark.parametrize(("claim", "expected"), [
    ("Adam optimizer with default betas, lr 1e-3", [("betas", [0.9, 0.999]), ("learning_rate", 0.001)]),
    ("AdamW (default betas and eps)", [("betas", [0.9, 0.999]), ("adam_epsilon", 1e-08)]),
    ("SGD with default momentum", [("momentum", 0)]),  # torch's SGD has none unless asked
    ("All models use default decoding hyperparameters (temperature, etc.)", [("temperature", 1.0)]),
    ("Sampling uses the default temperature and top-p", [("temperature", 1.0), ("top_p", 1.0)]),
    ("temperature left at its default", [("temperature", 1.0)]),
])
def test_a_default_is_the_api_s_or_the_common_default(claim, expected):
    assert values(claim) == expected


@pytest.mark.parametrize(("claim", "expected"), [
    ("the default temperature of 0.07", [("temperature", 0.07)]),  # a default given with its number is that number
    ("by default we use temperature 0.5", [("temperature", 0.5)]),  # a choice the paper makes
    ("Default hyperparameters are used for the baselines", []),  # no parameter named
    ("dropout left at its default", []),  # no default every library shares (HF configs 0.1, torch layers 0.5)
])
def test_no_default_value_without_a_named_parameter_and_a_known_default(claim, expected):
    assert values(claim) == expected


def _repo(tmp_path, code: str):
    (tmp_path / "sample.py").write_text(code)
    (tmp_path / "sau.yaml").write_text(
        "version: 1\npaper: {id: t, title: t}\nsaus:\n  - id: t-D1-001\n    dimension: numerical\n"
        "    claim: \"Replies use the default temperature.\"\n")
    return run_repo(tmp_path, use_cache=False).verdicts[0]


def test_a_repo_that_never_sets_the_temperature_has_the_default(tmp_path):
    verdict = _repo(tmp_path, "import openai\nclient = openai.OpenAI()\n"
                              "out = client.chat.completions.create(model='m', messages=[], max_tokens=512)\n")
    assert (verdict.status.value, verdict.score) == ("pass", 1.0)
    assert "not set, so its default, as claimed (1" in verdict.checks[0].message


def test_a_temperature_set_elsewhere_is_a_deviation_at_its_line(tmp_path):
    verdict = _repo(tmp_path, "import openai\nclient = openai.OpenAI()\n"
                              "out = client.chat.completions.create(model='m', messages=[], temperature=0.0)\n")
    assert (verdict.status.value, verdict.score) == ("partial", 0.25)  # greedy decoding where sampling is claimed
    assert [(e.file, e.line) for e in verdict.evidence] == [("sample.py", 3)]


@pytest.mark.parametrize(("claim", "within"), [
    ("hyperparameter search: learning_rate range [0.001, 0.01]", ("learning_rate", [0.001, 0.01])),
    ("weight decay in [0.01, 0.1]", ("weight_decay", [0.01, 0.1])),
    ("lr range [0.0005, 0.001]", ("learning_rate", [0.0005, 0.001])),
])
def test_a_range_of_a_one_number_setting_bounds_its_value(claim, within):
    result = compile_claim(SAU(id="d-D1-001", dimension="D1", claim=claim))
    assert [(c.name, c.within) for c in result.checks if c.kind == "value"] == [within]


@pytest.mark.parametrize(("claim", "expect"), [
    ("betas in [0.9, 0.999]", ("betas", [0.9, 0.999])),  # a pair setting: the pair is its value
    ("epsilon in [0.0, 0.2] (initial position)", ("epsilon", [0, 0.2])),  # a symbol's sampling domain
])
def test_a_pair_setting_or_a_symbol_s_domain_keeps_the_pair(claim, expect):
    result = compile_claim(SAU(id="d-D1-001", dimension="D1", claim=claim))
    assert [(c.name, c.expect) for c in result.checks if c.kind == "value"] == [expect]


def test_a_searched_range_passes_a_value_inside_it_and_the_search_wording_is_covered(tmp_path):
    claim = "Search: learning_rate range [0.001, 0.01], weight_decay range [0.0001, 0.001], grid search over method-specific ranges"
    result = compile_claim(SAU(id="d-D1-001", dimension="D1", claim=claim))
    assert result.coverage == "full" and result.fragments[-1].checks == (0, 1)
    (tmp_path / "train.py").write_text("learning_rate = 0.005\nweight_decay = 0.05\n")
    (tmp_path / "sau.yaml").write_text(
        f"version: 1\npaper: {{id: t, title: t}}\nsaus:\n  - id: t-D1-001\n    dimension: numerical\n    claim: \"{claim}\"\n")
    verdict = run_repo(tmp_path, use_cache=False).verdicts[0]
    statuses = [(c.status.value, [(e.file, e.line) for e in c.evidence]) for c in verdict.checks]
    assert statuses[0] == ("pass", [("train.py", 1)])  # 0.005 lies in [0.001, 0.01]
    assert statuses[1][0] != "pass" and statuses[1][1] == [("train.py", 2)]  # 0.05 is outside [1e-4, 1e-3]
