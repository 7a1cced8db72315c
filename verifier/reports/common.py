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
    """The one location a row or a SARIF result shows: where a check that did not pass looked, if any did."""
    drifted = [e for c in v.checks if c.status in FAILING for e in c.evidence] if v.status in FAILING else []
    pool = drifted or list(v.evidence)
    for role in ("effective", "stub", "call", "definition", "expression", "step"):
        for e in pool:
            if e.role == role:
                return e
    return pool[0] if pool else None
