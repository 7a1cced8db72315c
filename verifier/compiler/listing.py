"""``sau-verify compile SPEC``: what each claim became, and the deterministic coverage of the spec."""

from __future__ import annotations

import json
from typing import Any

from verifier.compiler.claims import CompiledClaim, compile_claim
from verifier.spec.model import Spec

_DIMS = ("numerical", "methodological", "protocol", "ordering")


def describe(check: Any) -> str:
    """One line per check, in the spec's own words."""
    data = check.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True)
    kind = check.kind
    body = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, sort_keys=True)}" for k, v in sorted(data.items()))
    return f"{kind}: {body}" if body else kind


def compile_spec(spec: Spec) -> list[tuple[Any, CompiledClaim | None]]:
    """Every SAU with its compilation (None for SAUs whose checks the spec already types)."""
    out = []
    for sau in sorted(spec.saus, key=lambda s: s.id):
        out.append((sau, None if sau.all_checks() else compile_claim(sau, dict(spec.aliases))))
    return out


def coverage_table(rows: list[tuple[Any, CompiledClaim | None]]) -> dict[str, Any]:
    per_dim: dict[str, dict[str, int]] = {d: {"full": 0, "partial": 0, "none": 0, "typed": 0} for d in _DIMS}
    for sau, compiled in rows:
        bucket = per_dim[sau.dimension.value]
        bucket["typed" if compiled is None else compiled.coverage] += 1
    total = len(rows)
    deterministic = sum(b["full"] + b["typed"] for b in per_dim.values())
    strict = sum(1 for _, c in rows if c is None or c.strict_coverage == "full")
    return {
        "strict_coverage": round(strict / total, 4) if total else 0.0,
        "dimensions": {d: b for d, b in per_dim.items() if sum(b.values())},
        "saus": total,
        "coverage": round(deterministic / total, 4) if total else 0.0,
        "checks": sum(len(c.checks) for _, c in rows if c is not None),
    }


def render_compiled(spec: Spec, fmt: str = "text") -> str:
    rows = compile_spec(spec)
    table = coverage_table(rows)
    if fmt == "json":
        body = {
            "saus": [
                {"id": sau.id, "dimension": sau.dimension.value, "typed_in_spec": True}
                if compiled is None
                else {"dimension": sau.dimension.value, **compiled.to_json()}
                for sau, compiled in rows
            ],
            "summary": table,
        }
        return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    lines: list[str] = []
    for sau, compiled in rows:
        if compiled is None:
            lines.append(f"{sau.id}  [typed in spec]  {len(sau.all_checks())} check(s)")
            continue
        lines.append(f"{sau.id}  [{compiled.coverage}]  {sau.claim[:100]}{'...' if len(sau.claim) > 100 else ''}")
        for frag in compiled.fragments:
            text = frag.text if len(frag.text) <= 70 else frag.text[:67] + "..."
            if frag.outcome == "typed":
                made = "; ".join(describe(compiled.checks[i]) for i in frag.checks) or "part of the sequence"
                lines.append(f"  + {text}\n      -> {made}")
                if frag.reason:
                    lines.append(f"      ! not typed: {frag.reason}")
            elif frag.outcome == "context":
                lines.append(f"  . {text}  (context: {frag.reason})")
            else:
                lines.append(f"  - {text}\n      ! not typed: {frag.reason}")
    lines.append("")
    lines.append("coverage by dimension (claims: full / partial / none / typed in spec):")
    for dim, b in table["dimensions"].items():
        lines.append(f"  {dim:<15} {b['full']:>4} / {b['partial']:>4} / {b['none']:>4} / {b['typed']:>4}")
    lines.append(
        f"strict coverage (context parts counted as untyped): {table['strict_coverage']:.0%} of {table['saus']} SAUs"
    )
    lines.append(
        f"deterministic coverage: {table['coverage']:.0%} of {table['saus']} SAUs fully typed "
        f"({table['checks']} compiled checks); the rest go to the judge, or stay unverified without one"
    )
    return "\n".join(lines) + "\n"
