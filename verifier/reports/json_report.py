"""The JSON report of the contract: stable key order, sorted lists, byte-identical for the same inputs."""

from __future__ import annotations

import json
from typing import Any

from verifier import __version__
from verifier.results import CheckResult, Verdict


def _check_json(r: CheckResult) -> dict[str, Any]:
    return {
        "kind": r.kind,
        "status": r.status.value,
        "score": r.score,
        "message": r.message,
        "deterministic": r.deterministic,
        "evidence": [e.to_json() for e in sorted(r.evidence, key=lambda e: e.sort_key())],
        "details": r.details,
    }


def verdict_json(v: Verdict) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": v.id,
        "dimension": v.dimension,
        "status": v.status.value,
        "score": v.score,
        "check": v.check,
        "deterministic": v.deterministic,
        "evidence": [e.to_json() for e in v.evidence],
        "message": v.message,
        "weight": v.weight,
    }
    if len(v.checks) > 1:
        out["checks"] = [_check_json(r) for r in v.checks]
    elif v.checks and v.checks[0].details:
        out["details"] = v.checks[0].details
    if v.accepted_deviation is not None:
        out["deviation"] = {"accepted": True, "reason": v.accepted_deviation}
    if v.judge:
        out["judge"] = v.judge
    return out


def report_to_json(report) -> dict[str, Any]:
    scores = dict(report.scores)
    taxonomy = scores.pop("taxonomy")
    out: dict[str, Any] = {
        "tool": {"name": "sau-verify", "version": __version__},
        "paper": report.paper,
        "spec": {"path": report.spec_path, "shape": report.spec_shape},
        "saus": [verdict_json(v) for v in report.verdicts],
        "scores": scores,
        "taxonomy": taxonomy,
        "notes": [
            {"file": n.file, "line": n.line, "reason": n.reason} for n in report.notes
        ],
    }
    out.update({k: report.extras[k] for k in sorted(report.extras)})
    return out


def render(report) -> str:
    return json.dumps(report_to_json(report), indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n"
