"""Reading one call site's arguments: bind them to parameter names, fold them to values, cite them.

Shared by the ``call`` and ``init`` checks. Folding never evaluates repo code: literals go through
:func:`verifier.analysis.fold.fold`, names through the run's :class:`verifier.analysis.values.ValueResolver`
(``lr=args.lr`` -> the argparse default, ``self.rate`` -> the dataclass field).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from verifier.analysis.fold import fold
from verifier.analysis.values import ValueResolver
from verifier.index.facts import CallSite, Span
from verifier.index.repo import RepoIndex
from verifier.results import Evidence

SNIPPET_LINES = 3
SNIPPET_WIDTH = 200


def bind_arguments(site: CallSite, params: Sequence[str]) -> dict[str, str]:
    """Argument source texts by parameter name: keywords as written, positionals through ``params``."""
    bound: dict[str, str] = {}
    for i, text in enumerate(site.args):
        if text.startswith("*"):
            break
        if i < len(params):
            bound[params[i]] = text
    for key, text in site.kwargs:
        if key != "**":
            bound[key] = text
    return bound


def fold_at(resolver: ValueResolver, span: Span, scope: str, expr: str) -> tuple[bool, Any]:
    """Fold ``expr`` as written at ``span``, following the names it reads through the value resolver."""
    direct = fold(expr)
    if direct.ok:
        return True, direct.value
    found = resolver.value_at(expr, span.file, scope, span.line)
    if found is None or not found.resolved:
        return False, None
    return True, found.value


def expected_value(value: Any) -> Any:
    """A claimed argument written as an expression (``"math.sqrt(5)"``, ``"1/3"``) is its value."""
    if isinstance(value, str):
        folded = fold(value)
        if folded.ok and not isinstance(folded.value, str):
            return folded.value
    return value


def snippet(index: RepoIndex, file: str, line: int, end_line: int | None = None) -> str:
    try:
        text = index.lines(file, line, min(end_line or line, line + SNIPPET_LINES - 1))
    except OSError:
        return ""
    lines = [t.strip() for t in text.splitlines() if t.strip()]
    joined = " ".join(lines)
    return joined if len(joined) <= SNIPPET_WIDTH else joined[: SNIPPET_WIDTH - 3] + "..."


def evidence_at(index: RepoIndex, span: Span, role: str, note: str = "", header_only: bool = False) -> Evidence:
    """Evidence for a record's span; ``header_only`` cites just the first line (a def's signature)."""
    end = span.line if header_only else max(span.end_line, span.line)
    return Evidence(span.file, span.line, end, snippet(index, span.file, span.line, end), role, note)


def sorted_unique(evidence) -> tuple[Evidence, ...]:
    return tuple(sorted(set(evidence), key=lambda e: e.sort_key()))
