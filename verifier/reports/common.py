"""Helpers shared by the report formats: which verdicts fail, the primary location of a verdict."""

from __future__ import annotations

from verifier.results import Evidence, Status, Verdict

FAILING = (Status.partial, Status.mismatch, Status.stub, Status.missing)


def is_failing(v: Verdict) -> bool:
    if v.accepted_deviation is not None:
        return False
    if v.status == Status.judged:
        return v.score is not None and v.score < 1.0
    return v.status in FAILING


def primary_evidence(v: Verdict) -> Evidence | None:
    for role in ("effective", "stub", "call", "definition", "expression", "step"):
        for e in v.evidence:
            if e.role == role:
                return e
    return v.evidence[0] if v.evidence else None
