"""A pull-request comment: scores per dimension, then the failing SAUs with file:line links."""

from __future__ import annotations

from verifier.reports.common import is_failing, primary_evidence
from verifier.results import STATUS_ORDER, Status
from verifier.scoring import DIMENSIONS
from verifier.spec.model import DIMENSION_CODES, Dimension


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(report) -> str:
    s = report.scores
    title = report.paper.get("title") or report.paper.get("id", "")
    out = [f"## sau-verify: {title}".rstrip(), ""]
    out.append(f"**Macro {s['macro']:.3f}** · micro {s['micro']:.3f} (unverified as 0) · "
               f"macro {s['macro_decided']:.3f} / micro {s['micro_decided']:.3f} on decided SAUs · "
               f"deterministic coverage {s['coverage'] * 100:.0f}%")
    out += ["", "| Dimension | Score |", "|---|---|"]
    for d in DIMENSIONS:
        if d in s["dimensions"]:
            out.append(f"| {DIMENSION_CODES[Dimension(d)]} {d} | {s['dimensions'][d]:.3f} |")
    tax = s["taxonomy"]
    out += ["", "Taxonomy: " + ", ".join(f"{k} {tax[k]}" for k in STATUS_ORDER if tax.get(k))]
    failing = [v for v in report.verdicts if is_failing(v)]
    if failing:
        out += ["", f"### {len(failing)} SAU(s) not faithful", "", "| SAU | Status | Score | Where | Why |", "|---|---|---|---|---|"]
        for v in failing:
            ev = primary_evidence(v)
            where = f"[{ev.file}:{ev.line}]({ev.file}#L{ev.line})" if ev else "—"
            score = "—" if v.score is None else f"{v.score:.2f}"
            out.append(f"| `{v.id}` | {v.status.value} | {score} | {where} | {_cell(v.message)} |")
    others = [v for v in report.verdicts if v.status in (Status.unverified, Status.error)]
    if others:
        out += ["", f"<details><summary>{len(others)} SAU(s) not decided</summary>", ""]
        out += [f"- `{v.id}` ({v.status.value}): {_cell(v.message)}" for v in others]
        out += ["", "</details>"]
    accepted = [v for v in report.verdicts if v.accepted_deviation is not None]
    if accepted:
        out += ["", "Accepted deviations: " + ", ".join(f"`{v.id}` ({_cell(v.accepted_deviation or '')})" for v in accepted)]
    return "\n".join(out) + "\n"
