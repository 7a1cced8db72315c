"""Every protocol rule's own valid/invalid examples (rules/protocol/*.yaml) hold, Fixit/semgrep style."""

from __future__ import annotations

import pytest

from verifier import rules as rule_data
from verifier.analysis.protocol import (
    IMPLEMENTATIONS,
    load_rule,
    rule_names,
    validate_protocol_params,
)
from verifier.analysis.protocol.examples import example_problems, run_example

CASES = [
    (rule, kind, i)
    for rule in rule_names()
    for kind in ("valid", "invalid")
    for i, _ in enumerate((load_rule(rule) or {}).get("examples", {}).get(kind, []))
]


def test_every_rule_file_is_implemented_and_documented():
    files = {p.stem for p in rule_data.list_dir("protocol")}
    assert files == set(IMPLEMENTATIONS)
    for rule in rule_names():
        data = load_rule(rule)
        assert data["id"] == rule
        assert data["summary"].strip() and len(data["documentation"]) > 100
        assert isinstance(data.get("parameters"), dict)
        examples = data["examples"]
        assert len(examples["valid"]) >= 2 and len(examples["invalid"]) >= 2, rule


@pytest.mark.parametrize(("rule", "kind", "i"), CASES, ids=[f"{r}-{k}-{i}" for r, k, i in CASES])
def test_rule_example(rule, kind, i):
    example = load_rule(rule)["examples"][kind][i]
    params = example.get("params") or {}
    assert validate_protocol_params(rule, params) is None
    problems = example_problems(rule, example, valid=(kind == "valid"))
    assert not problems, f"{rule} {kind} #{i} ({example.get('name')}): " + "; ".join(problems)


@pytest.mark.parametrize("rule", rule_names())
def test_rule_confusion_matrix_is_perfect(rule):
    """Per rule: valid examples are true negatives (pass), invalid ones true positives (flagged)."""
    data = load_rule(rule)
    tp = fn = fp = tn = 0
    for kind in ("valid", "invalid"):
        for example in data["examples"][kind]:
            result, _ = run_example(rule, example)
            flagged = result.status.value != "pass"
            if kind == "invalid":
                tp, fn = tp + flagged, fn + (not flagged)
            else:
                fp, tn = fp + flagged, tn + (not flagged)
    assert (fp, fn) == (0, 0), f"{rule}: tp={tp} fp={fp} fn={fn} tn={tn}"
    assert tp >= 2 and tn >= 2


def test_every_invalid_example_names_its_expected_status():
    for rule in rule_names():
        for example in load_rule(rule)["examples"]["invalid"]:
            assert example.get("status") in ("partial", "mismatch", "missing", "stub", "unverified"), (rule, example["name"])


@pytest.mark.parametrize(
    ("rule", "params", "field"),
    [
        ("no-such-rule", {}, "rule"),
        ("seeds", {}, "expect"),
        ("seeds", {"expect": "five"}, "expect"),
        ("seeds", {"expect": 5, "tolerance": 1}, "tolerance"),
        ("split-ratio", {"expect": {"train": 0.8, "holdout": 0.2}}, "expect"),
        ("split-ratio", {"expect": 0.8}, "expect"),
        ("dataset", {"expect": ""}, "expect"),
        ("frozen", {"expect": "x"}, "expect"),
        ("baseline", {"name": "LoRA", "aliases": "lora"}, "aliases"),
        ("eval-mode", {"strict": True}, "strict"),
    ],
)
def test_bad_rule_parameters_name_the_field(rule, params, field):
    problem = validate_protocol_params(rule, params)
    assert problem is not None
    assert problem.split(":", 1)[0] == field


def test_good_parameters_validate():
    assert validate_protocol_params("split-ratio", {"expect": {"train": 0.8, "val": 0.1, "test": 0.1}, "tolerance": 0.02}) is None
    assert validate_protocol_params("seeded", {}) is None
    assert validate_protocol_params("baseline", {"name": "LoRA", "aliases": ["lora", "low_rank"]}) is None


def test_protocol_checker_errors_on_a_bad_rule_instead_of_raising():
    from verifier.analysis.protocol.examples import context_for
    from verifier.checks.protocol import check_protocol
    from verifier.spec.model import ProtocolCheck

    ctx = context_for({"train.py": "x = 1\n"})
    result = check_protocol(ProtocolCheck(rule="seedz"), ctx)
    assert result.status.value == "error" and "seedz" in result.message
    result = check_protocol(ProtocolCheck(rule="seeds", expect=5), ctx)
    assert result.status.value == "missing" and result.details["rule"] == "seeds"


@pytest.mark.parametrize(
    ("code", "status", "line"),
    [
        ("import numpy as np\n\n\ndef evaluate(pred, y):\n    linf = np.abs(pred - y).max()\n    return linf\n", "pass", 5),
        ("from sklearn.metrics import max_error\n\n\ndef evaluate(pred, y):\n    return max_error(y, pred)\n", "pass", 5),
        ("def evaluate(pred, y):\n    mse = ((pred - y) ** 2).mean()\n    return mse\n", "missing", None),
    ],
)
def test_max_error_metric_is_found_by_its_code_names(code, status, line):
    """"Metrics: MSE, MAE, L_inf": the compiler's `max error` is the metric rule's entry of that name."""
    from verifier.analysis.protocol.examples import context_for
    from verifier.checks.protocol import check_protocol
    from verifier.spec.model import ProtocolCheck

    result = check_protocol(ProtocolCheck(rule="metric", expect="max error"), context_for({"eval.py": code}))
    assert (result.status.value, result.score) == (status, 1.0 if status == "pass" else 0.0)
    assert [(e.file, e.line) for e in result.evidence] == ([("eval.py", line)] if line else [])
