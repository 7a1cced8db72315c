"""Combine check results into SAU verdicts, and verdicts into SA-Bench's paper scores.

SA-Bench reports the macro score (mean of the four dimension means); the per-claim micro mean differs, so
both are given, each with ``unverified``/``error`` counted as 0 and with them left out (``*_decided``).
SAUs with an accepted deviation are scored separately: shown, never hidden, never counted as a pass.
"""

from __future__ import annotations

from typing import Iterable

from verifier.results import STATUS_ORDER, STATUS_SEVERITY, CheckResult, Evidence, Status, Verdict

DIMENSIONS = ("numerical", "methodological", "protocol", "ordering")
UNSCORED = (Status.unverified, Status.error)


def r4(x: float) -> float:
    """Round for stable, readable JSON (and byte-identical re-runs)."""
    return round(x + 0.0, 4)


def combine(results: list[CheckResult]) -> tuple[Status, float | None, str, bool]:
    """A SAU with several checks: status = worst, score = mean (None once any check is unscored)."""
    if not results:
        return Status.unverified, None, "no check", True
    worst = max(results, key=lambda r: STATUS_SEVERITY[r.status])
    deterministic = all(r.deterministic for r in results)
    if any(r.score is None for r in results):
        unscored = next(r for r in results if r.score is None)
        status = worst.status if worst.status in UNSCORED else unscored.status
        return status, None, unscored.message if status == unscored.status else worst.message, deterministic
    score = r4(sum(r.score for r in results) / len(results))  # type: ignore[misc]
    status = worst.status
    if status == Status.pass_ and score < 1.0:
        status = Status.partial
    if len(results) == 1:
        return status, score, results[0].message, deterministic
    failing = [r for r in results if r.status != Status.pass_]
    parts = [r.message for r in (failing or results)]
    return status, score, "; ".join(parts), deterministic


def merged_evidence(results: Iterable[CheckResult]) -> tuple[Evidence, ...]:
    seen: dict[tuple, Evidence] = {}
    for r in results:
        for e in r.evidence:
            seen.setdefault(e.sort_key(), e)
    return tuple(seen[k] for k in sorted(seen))


def _mean(pairs: list[tuple[float, float]]) -> float | None:
    total = sum(w for _, w in pairs)
    if not pairs or total <= 0:
        return None
    return r4(sum(s * w for s, w in pairs) / total)


def aggregate(verdicts: list[Verdict]) -> dict:
    """Dimension means, macro, micro (with and without unverified), coverage, taxonomy."""
    scored = [v for v in verdicts if v.accepted_deviation is None]
    per_dim: dict[str, list[tuple[float, float]]] = {d: [] for d in DIMENSIONS}
    per_dim_decided: dict[str, list[tuple[float, float]]] = {d: [] for d in DIMENSIONS}
    all_pairs: list[tuple[float, float]] = []
    decided_pairs: list[tuple[float, float]] = []
    for v in scored:
        s = 0.0 if v.score is None else v.score
        per_dim[v.dimension].append((s, v.weight))
        all_pairs.append((s, v.weight))
        if v.score is not None:
            per_dim_decided[v.dimension].append((v.score, v.weight))
            decided_pairs.append((v.score, v.weight))
    dims = {d: m for d in DIMENSIONS if (m := _mean(per_dim[d])) is not None}
    dims_decided = {d: m for d in DIMENSIONS if (m := _mean(per_dim_decided[d])) is not None}
    macro = r4(sum(dims.values()) / len(dims)) if dims else 0.0
    macro_decided = r4(sum(dims_decided.values()) / len(dims_decided)) if dims_decided else 0.0
    deterministic = [v for v in scored if v.score is not None and v.status != Status.judged]
    taxonomy = {s: 0 for s in STATUS_ORDER}
    for v in scored:
        taxonomy[v.status.value] += 1
    return {
        "dimensions": dims,
        "dimensions_decided": dims_decided,
        "macro": macro,
        "micro": _mean(all_pairs) or 0.0,
        "macro_decided": macro_decided,
        "micro_decided": _mean(decided_pairs) or 0.0,
        "coverage": r4(len(deterministic) / len(scored)) if scored else 0.0,
        "taxonomy": taxonomy,
        "accepted_deviations": len(verdicts) - len(scored),
        "counts": {"saus": len(verdicts), "scored": len(scored), "decided": len(decided_pairs)},
    }


def gate(verdicts: list[Verdict], scores: dict, fail_under: float | None, metric: str) -> bool:
    """True when the run meets the bar: a score threshold, or by default every decided SAU passes and none
    errored (a check that could not run is no evidence of faithfulness: a broken install must not pass a gate)."""
    if fail_under is not None:
        return scores[metric] + 1e-12 >= fail_under
    for v in verdicts:
        if v.accepted_deviation is None and v.status is Status.error:
            return False
        if v.accepted_deviation is not None or v.score is None:
            continue
        if v.score < 1.0:
            return False
    return True
