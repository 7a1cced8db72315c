"""``sau-verify explain``: the full story of one verdict, for the person deciding whether code or claim is wrong."""

from __future__ import annotations

import json
from typing import Any

from verifier.reports.json_report import verdict_json
from verifier.results import CheckResult, Verdict
from verifier.spec.model import SAU


def _dump(value: Any, indent: str) -> list[str]:
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)
    return [indent + line for line in text.splitlines()]


def _check_block(i: int, spec_check: Any, result: CheckResult) -> list[str]:
    score = "n/a" if result.score is None else f"{result.score:.2f}"
    out = [f"Check {i + 1}: {result.kind} -> {result.status.value} ({score})", f"  why: {result.message}"]
    if spec_check is not None:
        out.append("  compiled check:")
        out += _dump(spec_check.model_dump(mode="json", by_alias=True, exclude_none=True), "    ")
    if result.evidence:
        out.append("  evidence:")
        for e in sorted(result.evidence, key=lambda e: e.sort_key()):
            span = f"{e.line}" if e.line == e.end_line else f"{e.line}-{e.end_line}"
            out.append(f"    {e.file}:{span} [{e.role}] {e.snippet.strip()}")
            if e.note:
                out.append(f"      {e.note}")
    if result.details:
        out.append("  details:")
        out += _dump(result.details, "    ")
    return out


def render_explain(sau: SAU, verdict: Verdict, fmt: str = "text") -> str:
    checks = sau.all_checks()
    if fmt == "json":
        data = verdict_json(verdict)
        data["claim"] = sau.claim
        data["source"] = sau.source
        data["spec_checks"] = [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in checks]
        data["checks"] = [
            {
                "kind": r.kind,
                "status": r.status.value,
                "score": r.score,
                "message": r.message,
                "evidence": [e.to_json() for e in sorted(r.evidence, key=lambda e: e.sort_key())],
                "details": r.details,
            }
            for r in verdict.checks
        ]
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n"
    score = "n/a" if verdict.score is None else f"{verdict.score:.2f}"
    out = [
        f"{sau.id} ({sau.dimension.value})",
        f"Claim: {sau.claim or '(none)'}" + (f"  [{sau.source}]" if sau.source else ""),
        f"Verdict: {verdict.status.value} {score} — {verdict.message}",
    ]
    if verdict.accepted_deviation is not None:
        out.append(f"Accepted deviation: {verdict.accepted_deviation}")
    if verdict.judge:
        out.append("Judge:")
        out += _dump(verdict.judge, "  ")
    for i, result in enumerate(verdict.checks):
        out.append("")
        out += _check_block(i, checks[i] if i < len(checks) else None, result)
    return "\n".join(out) + "\n"
