"""Sub-results of a compiled claim fold into one five-level score, and the `compile` command lists them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.cli import main
from verifier.compiler import aggregate, snap
from verifier.results import CheckResult, Status

PASS = CheckResult.passed("value", "ok")
NEAR = CheckResult.partial("value", 0.75, "3x off")
FAR = CheckResult.partial("value", 0.25, "10x off")
MISSING = CheckResult.failed("value", Status.missing, "nothing binds x")
STUB = CheckResult.failed("exists", Status.stub, "stub body")
UNVERIFIED = CheckResult.unverified("order", "no entry point")
ERROR = CheckResult.errored("formula", "timeout")


@pytest.mark.parametrize(
    "results, status, score",
    [
        ([PASS, PASS, PASS], Status.pass_, 1.0),
        ([PASS, PASS, PASS, NEAR], Status.partial, 0.75),  # one of four 3x off: a minor deviation
        ([PASS, MISSING], Status.partial, 0.5),
        ([PASS, MISSING, MISSING, MISSING], Status.partial, 0.25),
        ([MISSING, STUB], Status.missing, 0.0),
        ([FAR], Status.partial, 0.25),
        ([PASS, UNVERIFIED], Status.pass_, 1.0),
        ([UNVERIFIED], Status.unverified, None),
        ([ERROR], Status.error, None),
        ([ERROR, UNVERIFIED], Status.unverified, None),
    ],
)
def test_aggregate(results, status, score):
    got = aggregate(results, [])
    assert (got.status, got.score) == (status, score)


def test_leftover_marks_the_claim_incomplete_and_is_said():
    got = aggregate([PASS], ["uses 0.1% of the data: number(s) 0.1% with no parameter name"])
    assert got.status == Status.pass_ and got.score == 1.0
    assert not got.complete and "1 part(s) not typed" in got.message
    nothing = aggregate([], ["prose: no typed fact"])
    assert nothing.status == Status.unverified and nothing.score is None and "prose" in nothing.message


def test_undecided_checks_do_not_count_as_complete():
    assert aggregate([PASS, UNVERIFIED], []).complete is False
    assert aggregate([PASS, PASS], []).complete is True


@pytest.mark.parametrize("mean, level", [(0.99, 0.75), (0.75, 0.75), (0.7499999999, 0.75), (0.3, 0.25), (0.1, 0.0), (1.0, 1.0)])
def test_snap_floors_to_a_level(mean, level):
    assert snap(mean) == level


FIXTURE_SPEC = Path(__file__).resolve().parents[1] / "fixtures" / "claims-lora-torch" / "repo" / "sau.json"


def test_compile_command_lists_each_claim_and_the_coverage():
    result = CliRunner().invoke(main, ["compile", str(FIXTURE_SPEC)])
    assert result.exit_code == 0, result.output
    assert "lora-toy-D1-001  [full]" in result.output
    assert 'value: expect=0.0001, name="learning_rate"' in result.output
    assert "lora-toy-D2-002  [none]" in result.output and "! not typed:" in result.output
    assert "deterministic coverage: 86% of 7 SAUs fully typed" in result.output


def test_compile_command_json_is_stable():
    first = CliRunner().invoke(main, ["compile", str(FIXTURE_SPEC), "--format", "json"])
    second = CliRunner().invoke(main, ["compile", str(FIXTURE_SPEC), "--format", "json"])
    assert first.exit_code == 0 and first.output == second.output
    data = json.loads(first.output)
    assert data["summary"]["dimensions"]["numerical"] == {"full": 3, "none": 0, "partial": 0, "typed": 0}
    d4 = next(s for s in data["saus"] if s["id"] == "lora-toy-D4-001")
    assert d4["checks"] == [{"kind": "order", "relation": "phases", "steps": ["load_model", "train", "evaluate"]}]


def test_compile_command_bad_input_exits_2(tmp_path):
    missing = CliRunner().invoke(main, ["compile", str(tmp_path / "nope.json")])
    assert missing.exit_code == 2 and "no such file" in missing.output
    bad = tmp_path / "sau.json"
    bad.write_text("{not json")
    result = CliRunner().invoke(main, ["compile", str(bad)])
    assert result.exit_code == 2
