"""The terminal report: one row per SAU, then scores, coverage and the failure taxonomy."""

from __future__ import annotations

import click

from verifier.reports.common import primary_evidence
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
    primary = primary_evidence(v)
    return f"{primary.file}:{primary.line}" if primary else "-"


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
        why = v.message if not v.accepted_deviation else f"{v.message} [accepted deviation: {v.accepted_deviation}]"
        lines.append(f"{' ' * (width_id + 7)}{why}")
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
    if report.extras.get("judge"):
        lines.append(judge_line(report.extras["judge"]))
    if report.notes:
        lines.append(f"Notes: {len(report.notes)} file(s) skipped or partly read")
        for n in report.notes[:10]:
            where = f"{n.file}:{n.line}" if n.line else n.file
            lines.append(f"  {where}: {n.reason}")
        if len(report.notes) > 10:
            lines.append(f"  ... {len(report.notes) - 10} more (see --format json)")
    return "\n".join(lines) + "\n"


# ----- the LLM judge's usage (issue 6: verifier/judge) ------------------------------------------------------------
def judge_line(j: dict) -> str:
    cost = f", ${j['cost_usd']:.4f}" if j.get("cost_usd") is not None else ""
    mode = " (cache only)" if j.get("cache_only") else ""
    return (
        f"Judge {j.get('model')}{mode}: {j.get('judged', 0)} judged, {j.get('cached', 0)} from {j.get('lock_file')}, "
        f"{j.get('errors', 0)} errors, {j.get('uncached', 0)} without a cached verdict; {j.get('calls', 0)} calls, "
        f"{j.get('prompt_tokens', 0)}+{j.get('completion_tokens', 0)} tokens{cost}"
    )
