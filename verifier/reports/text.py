"""The terminal report: one row per SAU, then scores, coverage and the failure taxonomy."""

from __future__ import annotations

import click

from verifier.results import STATUS_ORDER, Status, Verdict
from verifier.scoring import DIMENSIONS
from verifier.spec.model import DIMENSION_CODES, Dimension

_COLORS = {
    Status.pass_: "green",
    Status.partial: "yellow",
    Status.mismatch: "red",
    Status.stub: "red",
    Status.missing: "red",
    Status.judged: "cyan",
    Status.unverified: "bright_black",
    Status.error: "magenta",
}


def _where(v: Verdict) -> str:
    if not v.evidence:
        return "-"
    primary = next((e for e in v.evidence if e.role == "effective"), v.evidence[0])
    return f"{primary.file}:{primary.line}"


def _fmt_score(score: float | None) -> str:
    return "  -  " if score is None else f"{score:.2f}"


def render(report, *, color: bool = False) -> str:
    def style(text: str, status: Status) -> str:
        return click.style(text, fg=_COLORS[status]) if color else text

    lines: list[str] = []
    title = report.paper.get("title") or report.paper.get("id", "")
    lines.append(f"sau-verify: {report.repo}  (spec {report.spec_path}, {len(report.verdicts)} SAUs)  {title}".rstrip())
    lines.append("")
    width_id = max([len(v.id) for v in report.verdicts] + [2])
    header = f"{'ID'.ljust(width_id)}  DIM  {'STATUS'.ljust(10)}  SCORE  WHERE / WHY"
    lines.append(header)
    for v in report.verdicts:
        code = DIMENSION_CODES[Dimension(v.dimension)]
        status = v.status.value if v.accepted_deviation is None else "accepted"
        row = f"{v.id.ljust(width_id)}  {code}   {style(status.ljust(10), v.status)}  {_fmt_score(v.score)}  {_where(v)}"
        lines.append(row)
        lines.append(f"{' ' * width_id}             {v.message}" if not v.accepted_deviation else
                     f"{' ' * width_id}             {v.message} [accepted deviation: {v.accepted_deviation}]")
    s = report.scores
    lines.append("")
    dim_parts = []
    for d in DIMENSIONS:
        if d in s["dimensions"]:
            code = DIMENSION_CODES[Dimension(d)]
            dim_parts.append(f"{code} {d} {s['dimensions'][d]:.3f}")
    lines.append("Dimensions: " + (", ".join(dim_parts) if dim_parts else "none"))
    lines.append(
        f"Macro {s['macro']:.3f}  Micro {s['micro']:.3f}   (unverified as 0)"
    )
    lines.append(
        f"Macro {s['macro_decided']:.3f}  Micro {s['micro_decided']:.3f}   (decided SAUs only)"
    )
    lines.append(f"Deterministic coverage {s['coverage'] * 100:.1f}%")
    tax = s["taxonomy"]
    lines.append("Taxonomy: " + ", ".join(f"{k} {tax[k]}" for k in STATUS_ORDER if tax.get(k)))
    if s.get("accepted_deviations"):
        lines.append(f"Accepted deviations (scored separately): {s['accepted_deviations']}")
    if report.notes:
        lines.append(f"Notes: {len(report.notes)} file(s) skipped or partly read")
        for n in report.notes[:10]:
            where = f"{n.file}:{n.line}" if n.line else n.file
            lines.append(f"  {where}: {n.reason}")
        if len(report.notes) > 10:
            lines.append(f"  ... {len(report.notes) - 10} more (see --format json)")
    return "\n".join(lines) + "\n"
