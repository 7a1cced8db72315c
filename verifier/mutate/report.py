"""Mutation reports: JSON for machines, text and Markdown for people."""

from __future__ import annotations

import json

from verifier.mutate.runner import MutationReport


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:.1f}%"


def to_json(report: MutationReport) -> str:
    data = {
        "repo": report.repo,
        "seed": report.seed,
        "summary": report.summary(),
        "mutants": [
            {
                "id": o.mutant.id,
                "file": o.mutant.file,
                "lines": [o.mutant.line, o.mutant.end_line],
                "operator": o.mutant.operator,
                "dimension": o.mutant.dimension,
                "description": o.mutant.description,
                "caught_by": o.caught_by,
                "changed": o.changed,
                "touched": o.touched,
                "false_alarms": o.false_alarms,
                "diff": o.mutant.diff,
            }
            for o in report.outcomes
        ],
    }
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def to_text(report: MutationReport, markdown: bool = False) -> str:
    s = report.summary()
    h = "## " if markdown else ""
    out = [
        f"{h}sau-verify mutate: {report.repo} (seed {report.seed})",
        "",
        f"Mutants {s['mutants']}, caught {s['killed']} ({_pct(s['kill_rate'])}); "
        f"touching a SAU's evidence {s['relevant_mutants']}, caught {s['relevant_killed']} ({_pct(s['relevant_kill_rate'])}); "
        f"false alarms {s['false_alarms']} ({_pct(s['false_alarm_rate'])} of mutant x SAU pairs)",
    ]
    if s["discarded"]:
        out.append("Discarded: " + ", ".join(f"{k} {v}" for k, v in s["discarded"].items()))
    out += ["", f"{h}Per operator" if markdown else "Per operator:"]
    if markdown:
        out += ["", "| operator | dim | mutants | caught | rate |", "|---|---|---|---|---|"]
    for op, row in s["per_operator"].items():
        if markdown:
            out.append(f"| {op} | {row['dimension']} | {row['mutants']} | {row['killed']} | {_pct(row['kill_rate'])} |")
        else:
            out.append(f"  {op:18} {row['dimension']}  {row['killed']:3}/{row['mutants']:<3} {_pct(row['kill_rate'])}")
    out += ["", f"{h}Per SAU (mutants caught)" if markdown else "Per SAU (mutants caught):"]
    out += [f"  {sid}: {n}" if not markdown else f"- `{sid}`: {n}" for sid, n in s["per_sau"].items()]
    if s["never_catching"]:
        out += ["", "SAUs that never catch anything: " + ", ".join(s["never_catching"])]
    survivors = [o for o in report.outcomes if not o.caught_by]
    if survivors:
        out += ["", f"{h}Surviving mutants ({len(survivors)})" if markdown else f"Surviving mutants ({len(survivors)}):"]
        for o in survivors:
            m = o.mutant
            out.append(f"{'### ' if markdown else ''}#{m.id} {m.operator} ({m.dimension}) {m.file}:{m.line}: {m.description}")
            out += ["```diff" if markdown else "", m.diff.rstrip("\n"), "```" if markdown else ""]
    return "\n".join(out).rstrip("\n") + "\n"
