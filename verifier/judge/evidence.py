"""The evidence a judge sees for one claim: what the index knows about the names the claim uses.

Not grep hits: each token of the claim (and each name a compiled check uses) is looked up as a definition,
a call target and a config/parameter binding, and the matching lines are quoted with file:line. Ranked
definitions > bindings > calls, bounded, sorted: the same repo and claim always give the same evidence and
the same hash (which keys the lock file).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Iterable

from verifier.index.facts import FileRole
from verifier.index.repo import RepoIndex

_STOP = {
    "the", "and", "for", "with", "from", "that", "this", "each", "are", "is", "use", "uses", "used", "using",
    "into", "per", "all", "via", "not", "only", "over", "when", "where", "then", "than", "its", "their", "both",
    "after", "before", "step", "steps", "phase", "model", "models", "data", "training", "train", "loss", "value",
    "values", "compute", "computed", "set", "sets", "based", "which", "table", "section", "appendix", "figure",
}  # fmt: skip
_TOKEN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
MAX_SNIPPET_LINES = 12


@dataclass(frozen=True)
class Snippet:
    file: str
    line: int
    end_line: int
    kind: str  # definition | binding | call
    name: str
    text: str

    @property
    def ref(self) -> str:
        return f"{self.file}:{self.line}"

    def to_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "lines": [self.line, self.end_line], "kind": self.kind, "name": self.name, "code": self.text}


def claim_tokens(claim: str, extra: Iterable[str] = ()) -> list[str]:
    """Names worth looking up: identifiers from the claim and from its compiled checks, deduplicated."""
    seen: dict[str, None] = {}
    for raw in [*extra, *_TOKEN_RE.findall(claim)]:
        for token in {raw, raw.rsplit(".", 1)[-1]}:
            if len(token) < 3 or token.lower() in _STOP or token.isdigit():
                continue
            seen.setdefault(token, None)
    return list(seen)


def check_names(checks: Iterable[Any]) -> list[str]:
    """Names the compiled checks point at: parameters, call targets, formula symbols, order steps."""
    out: list[str] = []
    for check in checks:
        kind = getattr(check, "kind", "")
        if kind == "value":
            out.extend(check.all_names())
        elif kind == "call":
            out.extend(t.strip() for t in check.target.split("|") if t.strip())  # `a | b`: any of them
        elif kind == "order":
            out.extend(check.steps)
        elif kind == "formula":
            out.extend(check.symbols.values())
        elif kind == "exists":
            out.append(check.symbol)
        elif kind == "judge":
            out.extend(check.hints)
    return out


def gather(index: RepoIndex, tokens: Iterable[str], limit: int = 10) -> list[Snippet]:
    """Definitions, bindings and calls for the tokens in code files (tests and docs last), bounded."""
    found: dict[tuple[str, int], Snippet] = {}
    ranked: list[tuple[int, int, str, int, Snippet]] = []

    def role_rank(path: str) -> int:
        facts = index.files.get(path)
        return 0 if facts is None or facts.role == FileRole.code else 1

    for order, token in enumerate(tokens):
        for d in index.definitions_named(token)[:3]:
            end = min(d.span.end_line, d.span.line + MAX_SNIPPET_LINES - 1)
            ranked.append((0, role_rank(d.span.file), d.span.file, d.span.line, _snip(index, d.span.file, d.span.line, end, "definition", d.qualname)))
        for b in index.bindings_named([token])[:3]:
            ranked.append((1, role_rank(b.span.file), b.span.file, b.span.line, _snip(index, b.span.file, b.span.line, b.span.line, "binding", b.path)))
        for c in index.calls_to(token)[:3]:
            ranked.append((2, role_rank(c.span.file), c.span.file, c.span.line, _snip(index, c.span.file, c.span.line, c.span.end_line, "call", c.qualname)))
    ranked.sort(key=lambda r: (r[0], r[1], r[2], r[3]))
    for _, _, file, line, snippet in ranked:
        if (file, line) not in found:
            found[(file, line)] = snippet
        if len(found) >= limit:
            break
    return sorted(found.values(), key=lambda s: (s.file, s.line))


def checked_places(index: RepoIndex, evidence: Iterable[Any], limit: int = 6) -> list[Snippet]:
    """The lines the deterministic checks cite (a launch line, a config key, the function a formula matched):
    the judge reads what the checks read, which a name lookup misses for protocol checks that name nothing."""
    out: dict[tuple[str, int], Snippet] = {}
    for e in sorted(evidence, key=lambda e: (e.file, e.line, e.end_line, e.role)):
        if (e.file, e.line) in out or e.file not in index.files:
            continue
        out[(e.file, e.line)] = _snip(index, e.file, e.line, e.end_line, f"checked:{e.role}", e.note[:80])
        if len(out) >= limit:
            break
    return list(out.values())


def _snip(index: RepoIndex, file: str, line: int, end: int, kind: str, name: str) -> Snippet:
    end = max(line, min(end, line + MAX_SNIPPET_LINES - 1))
    try:
        text = index.lines(file, line, end)
    except (OSError, UnicodeDecodeError):
        text = ""
    return Snippet(file, line, end, kind, name, text[:1500])


def evidence_hash(snippets: Iterable[Snippet], partial: Iterable[dict[str, Any]] = ()) -> str:
    payload = json.dumps(
        {"snippets": [s.to_json() for s in snippets], "partial": list(partial)}, sort_keys=True, ensure_ascii=False
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
