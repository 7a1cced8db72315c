"""Sub-results of a compiled claim -> the claim's one five-level score.

A bundled claim ("lr=1e-4, batch 256, AdamW") is one SA-Bench claim but several checks. The rule:

* score = mean of the decided sub-scores (pass 1, partial 0.75/0.5/0.25, mismatch/stub/missing 0), floored
  to a SA-Bench level (1, 0.75, 0.5, 0.25, 0): any deviation keeps a bundled claim below 1 (one of four
  values 3x off -> 0.75, as SA-Bench's "minor deviation"), and a claim is never rounded up;
* status follows the score: 1.0 -> pass; 0 -> the most severe failing status among the sub-results
  (missing > stub > mismatch); anything between -> partial;
* sub-results that are unverified or errored do not pull the mean down (they are not evidence of a
  deviation) but are listed in the message; when no sub-result is decided the claim is ``unverified``
  (or ``error`` if one errored and none is unverified);
* ``complete`` is False when some of the claim was not typed (leftover) or some check stayed undecided:
  such a claim goes to the judge when one is configured, with these partial results shown to it.
"""

from __future__ import annotations

from dataclasses import dataclass

from verifier.results import LEVELS, STATUS_SEVERITY, CheckResult, Status

_FAILING = (Status.missing, Status.stub, Status.mismatch)


@dataclass(frozen=True)
class ClaimScore:
    status: Status
    score: float | None
    message: str
    complete: bool  # every part typed and decided: nothing for the judge


def snap(score: float) -> float:
    """The highest SA-Bench level not above ``score`` (float noise tolerated)."""
    return max((level for level in LEVELS if level <= score + 1e-9), default=0.0)


def aggregate(results: list[CheckResult], leftover: list[str]) -> ClaimScore:
    """One status, score and message for a claim from its checks' results and what stayed untyped."""
    decided = [r for r in results if r.score is not None]
    undecided = [r for r in results if r.score is None]
    untyped = f"{len(leftover)} part(s) not typed" if leftover else ""
    if not decided:
        if not results:
            reason = leftover[0] if leftover else "nothing to check"
            return ClaimScore(Status.unverified, None, f"no deterministic check: {reason}", False)
        status = Status.error if all(r.status == Status.error for r in results) else Status.unverified
        first = next(r for r in results if r.status == status)
        extra = f"; {untyped}" if untyped else ""
        return ClaimScore(status, None, first.message + extra, False)
    mean = sum(r.score for r in decided) / len(decided)  # type: ignore[misc]
    score = snap(mean)
    if score >= 1.0:
        status = Status.pass_
    elif score <= 0.0:
        failing = [r.status for r in decided if r.status in _FAILING] or [Status.mismatch]
        status = max(failing, key=lambda s: STATUS_SEVERITY[s])
    else:
        status = Status.partial
    off = [r for r in decided if r.status != Status.pass_]
    parts = [f"{len(decided) - len(off)}/{len(decided)} checks pass"]
    parts.extend(r.message for r in off[:3])
    if undecided:
        parts.append(f"{len(undecided)} undecided ({undecided[0].message})")
    if untyped:
        parts.append(untyped)
    return ClaimScore(status, score, "; ".join(parts), not undecided and not leftover)
