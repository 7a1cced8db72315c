"""Reading one call site's arguments: bind them to parameter names, fold them to values, cite them.

Shared by the ``call`` and ``init`` checks. Folding never evaluates repo code: it goes through
:func:`verifier.analysis.fold.fold`, with an environment of the constants visible at the call (module
constants of the file, defaults of the enclosing function's parameters, assignments in the same scope).
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

from verifier import rules
from verifier.analysis.fold import fold, references
from verifier.index.facts import BindingKind, CallSite, Span
from verifier.index.repo import RepoIndex
from verifier.results import Evidence

SNIPPET_LINES = 3
SNIPPET_WIDTH = 200
_CONSTANT_KINDS = (BindingKind.assign, BindingKind.default, BindingKind.field, BindingKind.argparse)


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


def fold_at(index: RepoIndex, span: Span, scope: str, expr: str) -> tuple[bool, Any]:
    """Fold ``expr`` as written at ``span``; names resolve to constants bound in the same file."""
    result = fold(expr)
    if result.ok:
        return True, result.value
    env: dict[str, Any] = {}
    facts = index.files.get(span.file)
    if facts is None:
        return False, None
    wanted = set(references(expr))
    if not wanted:
        return False, None
    scopes = _enclosing_scopes(scope)
    best: dict[str, tuple[int, int]] = {}
    for b in facts.bindings:
        if not b.constant or b.kind not in _CONSTANT_KINDS:
            continue
        for name in _names_for(b):
            if name not in wanted:
                continue
            rank = _scope_rank(b, scopes)
            if rank is None:
                continue
            # Nearest scope wins; within it, the last binding before the call.
            key = (rank, b.span.line if b.span.line <= span.line else -1)
            if name not in best or key > best[name]:
                best[name] = key
                env[name] = b.value
    result = fold(expr, env)
    return (True, result.value) if result.ok else (False, None)


def _names_for(binding) -> tuple[str, ...]:
    names = {binding.path, binding.name}
    if binding.kind == BindingKind.argparse:
        dest = binding.dest or binding.name
        names.update({f"args.{dest}", f"opt.{dest}", f"opts.{dest}", f"config.{dest}", f"cfg.{dest}"})
    return tuple(sorted(names))


def _enclosing_scopes(scope: str) -> list[str]:
    parts = scope.split(".") if scope and scope != "<module>" else []
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)] + ["<module>"]


def _scope_rank(binding, scopes: list[str]) -> int | None:
    if binding.kind == BindingKind.argparse:
        return 0
    if binding.kind == BindingKind.default:
        owner = binding.owner or binding.scope
        return len(scopes) - scopes.index(owner) if owner in scopes else None
    if binding.scope in scopes:
        return len(scopes) - scopes.index(binding.scope)
    return None


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


def library_api(qualified: str) -> dict | None:
    """The rules/library_defaults.yaml entry of an import-resolved API (``params`` order, ``defaults``)."""
    table = _library_table()
    return table.get(qualified)


@functools.cache
def _library_table() -> dict[str, dict]:
    try:
        data = rules.load("library_defaults.yaml") or {}
    except (OSError, ValueError):
        data = {}
    table: dict[str, dict] = {}
    for name, entry in data.items():
        if isinstance(entry, dict):
            table[name] = entry
            for alias in entry.get("aliases") or ():
                table.setdefault(str(alias), entry)
    return table
