"""`exists`: the component is defined in code, is not a placeholder, and (``reachable: true``) runs.

Definitions in tests or docs do not count. Among several definitions of the name the best one decides
(implemented over stub, reached over unwired), so a stub left beside a real implementation is not a failure.
"""

from __future__ import annotations

import re

from verifier.analysis.callsite import evidence_at, sorted_unique
from verifier.analysis.entry import call_graph, describe_path
from verifier.analysis.imports import module_map
from verifier.analysis.liveness import definition_may_run
from verifier.analysis.stubs import stub_finding
from verifier.checks.base import Context, checker
from verifier.index.facts import BindingKind, Definition, FileRole, Span
from verifier.index.repo import looks_like_glob
from verifier.results import CheckResult, Evidence, Status
from verifier.spec.model import ExistsCheck

KIND = "exists"
_DOTTED = re.compile(r"^\s*[A-Za-z_][\w.]*\s*$")
EXCLUDED_ROLES = (FileRole.test, FileRole.doc)
MAX_LISTED_ENTRIES = 20  # in the details of an unwired verdict


@checker(KIND)
def check_exists(check: ExistsCheck, ctx: Context) -> CheckResult:
    try:
        return _check(check, ctx)
    except (OSError, ValueError, RecursionError) as exc:
        return CheckResult.errored(KIND, f"exists check on {check.symbol} could not run: {exc}")


def _check(check: ExistsCheck, ctx: Context) -> CheckResult:
    symbol = check.symbol.strip()
    defs = ctx.index.definitions_named(symbol) or _aliased(ctx, symbol)
    defs = [d for d in defs if _in_scope(ctx, d, check.scope)]
    code = [d for d in defs if ctx.index.files[d.span.file].role not in EXCLUDED_ROLES]
    if not code:
        if defs:
            where = defs[0].span
            ev = [evidence_at(ctx.index, where, "test", header_only=True)]
            return CheckResult.failed(
                KIND, Status.missing, f"{symbol} is defined only in tests or docs ({where.file}:{where.line}).", ev
            )
        return CheckResult.failed(KIND, Status.missing, f"{symbol} is not defined anywhere in the repo's code.")

    stubs = {id(d): stub_finding(ctx.index, d) for d in code}
    implemented = [d for d in code if stubs[id(d)] is None]
    if not implemented:
        d = code[0]
        finding = stubs[id(d)]
        span = Span(d.span.file, finding.line, finding.line)
        ev = [evidence_at(ctx.index, span, "stub", note=finding.reason)]
        return CheckResult.failed(
            KIND, Status.stub, f"{symbol} at {d.span.file}:{d.span.line} is a placeholder: {finding.reason}.", ev
        )
    if not check.reachable:
        d = implemented[0]
        ev = [evidence_at(ctx.index, d.span, "definition", header_only=True)]
        return CheckResult.passed(KIND, f"{symbol} is implemented at {d.span.file}:{d.span.line}.", ev)

    graph = call_graph(ctx)
    for d in implemented:
        path = graph.reachable(d)
        if path is None:
            continue
        entry = graph.entry_for(path[0])
        ev = [evidence_at(ctx.index, d.span, "definition", header_only=True)]
        if entry is not None:
            ev.append(_entry_evidence(ctx, entry.span, entry.kind))
        origin = f"{entry.kind} {entry.span.file}:{entry.span.line}" if entry is not None else path[0].label()
        return CheckResult.passed(
            KIND,
            f"{symbol} is implemented at {d.span.file}:{d.span.line} and reached from the {origin} entry point.",
            sorted_unique(ev),
            path=describe_path(path),
        )
    for d in implemented if graph.entries else ():
        if definition_may_run(ctx, d):
            ev = [evidence_at(ctx.index, d.span, "definition", header_only=True)]
            return CheckResult.passed(
                KIND,
                f"{symbol} is implemented at {d.span.file}:{d.span.line} and may run: no call path from an entry point "
                "reaches it, but it is decorated, read by name or named in a config, which the call graph does not follow.",
                ev,
            )
    d = implemented[0]
    ev = [evidence_at(ctx.index, d.span, "definition", header_only=True)]
    if not graph.entries:
        message = f"{symbol} is implemented at {d.span.file}:{d.span.line} but the repo has no entry point that could call it."
    else:
        message = f"{symbol} is implemented but never called from an entry point ({d.span.file}:{d.span.line})."
    return CheckResult.partial(KIND, 0.75, message, ev, entries=[e.node.label() for e in graph.entries[:MAX_LISTED_ENTRIES]])


def _aliased(ctx: Context, symbol: str) -> list[Definition]:
    """``Matrix = MutableDenseMatrix`` at module level: the symbol is that definition under another name."""
    modules = module_map(ctx)
    leaf = symbol.rsplit(".", 1)[-1]
    out = []
    for b in ctx.index.bindings_named([leaf]):
        if b.kind is BindingKind.assign and b.scope == "<module>" and b.path == leaf and _DOTTED.match(b.expr or ""):
            target = modules.resolve_in_file(b.span.file, b.expr.strip())
            if target is not None:
                out.append(target)
    return sorted(set(out), key=lambda d: (d.span.file, d.span.line, d.qualname, d.kind))


def _in_scope(ctx: Context, d: Definition, scope: str | None) -> bool:
    if not scope:
        return True
    if looks_like_glob(scope):
        return ctx.index.in_scope(d.span.file, scope)
    full = f"{d.module}.{d.qualname}"
    return d.qualname.startswith(scope + ".") or full.startswith(scope + ".") or d.module == scope


def _entry_evidence(ctx: Context, span: Span, kind: str) -> Evidence:
    return evidence_at(ctx.index, Span(span.file, span.line, span.line), "entry", note=kind)
