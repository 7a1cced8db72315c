"""SARIF 2.1.0 for code scanning: one rule per SAU, one result per SAU that is not faithful.

Locations are repo-relative under ``%SRCROOT%``; a SAU with no evidence (nothing implements it) points at the
spec file so code scanning still shows it. ``partialFingerprints`` keep an alert stable across commits.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from verifier import __version__
from verifier.reports.common import is_failing, primary_evidence
from verifier.results import Status, Verdict

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {
    Status.partial: "warning",
    Status.mismatch: "error",
    Status.stub: "error",
    Status.missing: "error",
    Status.judged: "warning",
    Status.unverified: "note",
    Status.error: "note",
}


def _spec_location(report) -> tuple[str, int]:
    spec = Path(report.spec_path)
    try:
        return spec.resolve().relative_to(Path(report.repo).resolve()).as_posix(), 1
    except ValueError:
        return os.path.basename(report.spec_path), 1


def _fingerprint(v: Verdict, file: str) -> str:
    return hashlib.sha256(f"{v.id}\0{v.status.value}\0{file}".encode()).hexdigest()[:32]


def _result(v: Verdict, report) -> dict:
    ev = primary_evidence(v)
    file, line, end = (ev.file, ev.line, ev.end_line) if ev else (*_spec_location(report), 1)
    end = max(end, line)
    region: dict = {"startLine": max(line, 1), "endLine": max(end, 1)}
    if ev and ev.snippet:
        region["snippet"] = {"text": ev.snippet}
    score = "n/a" if v.score is None else f"{v.score:.2f}"
    result = {
        "ruleId": v.id,
        "level": _LEVEL.get(v.status, "warning"),
        "kind": "fail" if is_failing(v) else "review",
        "message": {"text": f"[{v.status.value} {score}] {v.message}"},
        "locations": [
            {"physicalLocation": {"artifactLocation": {"uri": file, "uriBaseId": "%SRCROOT%"}, "region": region}}
        ],
        "partialFingerprints": {"sauVerdict/v1": _fingerprint(v, file)},
        "properties": {"dimension": v.dimension, "status": v.status.value, "score": v.score},
    }
    related = [e for e in v.evidence if e is not ev][:10]
    if related:
        result["relatedLocations"] = [
            {
                "id": i,
                "physicalLocation": {
                    "artifactLocation": {"uri": e.file, "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": max(e.line, 1), "endLine": max(e.end_line, e.line, 1)},
                },
                "message": {"text": e.role},
            }
            for i, e in enumerate(related)
        ]
    if v.accepted_deviation is not None:
        result["suppressions"] = [{"kind": "external", "justification": v.accepted_deviation}]
    return result


def render(report) -> str:
    rules = [
        {
            "id": v.id,
            "name": v.id.replace("-", "_"),
            "shortDescription": {"text": (v.claim or v.id).splitlines()[0][:200] or v.id},
            "fullDescription": {"text": v.claim or v.id},
            "defaultConfiguration": {"level": "error"},
            "properties": {"tags": ["sau", v.dimension]},
        }
        for v in report.verdicts
    ]
    results = [
        _result(v, report)
        for v in report.verdicts
        if v.status != Status.pass_ and not (v.status == Status.judged and v.score == 1.0)
    ]
    sarif = {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "sau-verify",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": "https://pypi.org/project/sau-verify/",
                        "rules": rules,
                    }
                },
                "results": results,
                "properties": {"scores": {k: v for k, v in report.scores.items() if k != "taxonomy"}},
            }
        ],
    }
    return json.dumps(sarif, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
