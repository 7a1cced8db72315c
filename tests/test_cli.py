"""The command line end to end: exit codes 0/1/2, formats and outputs, --only, --fail-under, explain."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from minirepo import TRAIN, write_repo
from verifier.cli import main


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture()
def repo(tmp_path):
    return write_repo(tmp_path / "mini")


def test_faithful_repo_exits_0_with_rows(repo):
    code, out = run(repo)
    assert code == 0, out
    assert "mini-D1-001" in out and "pass" in out and "train.py:10" in out
    assert "Macro 1.000" in out


def test_drift_exits_1_and_names_the_sau(repo):
    (repo / "train.py").write_text(TRAIN.replace("default=3e-4", "default=5e-4"), encoding="utf-8")
    code, out = run(repo, "--format", "json")
    assert code == 1
    data = json.loads(out)
    sau = next(s for s in data["saus"] if s["id"] == "mini-D1-001")
    assert sau["status"] == "partial" and sau["score"] == 0.75
    assert sau["evidence"][0]["file"] == "train.py" and sau["evidence"][0]["lines"][0] == 10


def test_fail_under_gates_on_the_score(repo):
    (repo / "train.py").write_text(TRAIN.replace("default=3e-4", "default=5e-4"), encoding="utf-8")
    assert run(repo, "--fail-under", "0.8")[0] == 0  # one value at 0.75 of four SAUs: macro_decided 0.97
    assert run(repo, "--fail-under", "0.99")[0] == 1


def test_several_formats_in_one_run(repo, tmp_path):
    out_json, out_sarif = tmp_path / "r.json", tmp_path / "r.sarif"
    code, out = run(repo, "--format", "json", "--output", out_json, "--format", "sarif", "--output", out_sarif,
                    "--format", "text")
    assert code == 0
    assert json.loads(out_json.read_text())["scores"]["macro"] == 1.0
    assert json.loads(out_sarif.read_text())["version"] == "2.1.0"
    assert "mini-D1-002" in out


def test_only_restricts_and_rejects_unknown_ids(repo):
    code, out = run(repo, "--only", "mini-D1-002", "--format", "json")
    assert code == 0 and [s["id"] for s in json.loads(out)["saus"]] == ["mini-D1-002"]
    code, out = run(repo, "--only", "nope")
    assert code == 2


def test_bad_input_is_one_line_exit_2(repo, tmp_path):
    code, out = run(tmp_path / "does-not-exist")
    assert code == 2 and "no such directory" in out and "Traceback" not in out
    (repo / "sau.yaml").write_text("version: 1\nsaus:\n  - id: a\n    dimension: D9\n", encoding="utf-8")
    code, out = run(repo)
    assert code == 2 and "sau.yaml:4" in out and "dimension" in out
    assert len(out.strip().splitlines()) == 1


def test_explain_shows_the_resolution_chain(repo):
    code, out = run("explain", repo, "mini-D1-001")
    assert code == 0
    assert "mini-D1-001" in out and "Check 1: value -> pass" in out and "train.py:10" in out


def test_console_script_and_version():
    proc = subprocess.run([sys.executable, "-m", "verifier.cli", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and "sau-verify" in proc.stdout
    assert run("--help")[0] == 0


def test_bad_protocol_rule_and_pattern_are_spec_errors(repo):
    (repo / "sau.yaml").write_text(
        "version: 1\nsaus:\n  - id: a\n    dimension: D3\n    check:\n      kind: protocol\n"
        "      rule: split-ratio\n      expct: {train: 0.8}\n",
        encoding="utf-8",
    )
    code, out = run(repo)
    assert code == 2 and "sau.yaml:8: saus[0].check.expct:" in out and "expect, tolerance" in out
    (repo / "sau.yaml").write_text(
        "version: 1\nsaus:\n  - id: a\n    dimension: D2\n    check: {kind: pattern, require: 'foo(('}\n",
        encoding="utf-8",
    )
    code, out = run(repo)
    assert code == 2 and "sau.yaml:5" in out and "saus[0].check" in out


def test_rules_lists_every_protocol_rule_and_shows_one():
    from verifier.analysis.protocol import rule_names

    listing = CliRunner().invoke(main, ["rules"])
    assert listing.exit_code == 0
    assert [line.split()[0] for line in listing.output.splitlines()] == rule_names()
    shown = CliRunner().invoke(main, ["rules", "target-modules", "--format", "json"])
    data = json.loads(shown.output)
    assert data["id"] == "target-modules" and data["parameters"]["expect"]["required"] is True
    assert "query" in data["parameters"]["expect"]["choices"] and "all-linear" in data["parameters"]["expect"]["choices"]
    assert data["examples"]["valid"] and data["examples"]["invalid"]
    text = CliRunner().invoke(main, ["rules", "seeds"])
    assert text.exit_code == 0 and "expect (integer, required)" in text.output
    unknown = CliRunner().invoke(main, ["rules", "strngs"])
    assert unknown.exit_code == 2 and "did you mean 'strings'?" in unknown.output


def test_a_check_that_cannot_run_fails_the_default_gate_and_says_so(repo, monkeypatch):
    """A broken install (a checker module that does not import) used to pass a pre-commit hook: every decided
    SAU passed, and the errored ones counted for nothing."""
    from verifier import checks

    checks.load_all()
    monkeypatch.delitem(checks.CHECKERS, "call")
    monkeypatch.setitem(checks.UNAVAILABLE, "call", "ImportError: No module named 'networkx'")
    result = CliRunner().invoke(main, [str(repo), "--format", "json"], catch_exceptions=False)
    assert result.exit_code == 1
    sau = next(s for s in json.loads(result.stdout)["saus"] if s["id"] == "mini-D2-001")
    assert sau["status"] == "error" and "the call checker cannot load: ImportError" in sau["message"]
    assert "sau-verify: 1 SAU(s) could not be checked (error): mini-D2-001" in result.stderr
    # A score threshold decides on the scores alone (an errored SAU is unscored): 3 decided SAUs all pass.
    assert CliRunner().invoke(main, [str(repo), "--fail-under", "0.9"]).exit_code == 0
