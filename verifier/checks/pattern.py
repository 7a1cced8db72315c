"""``pattern`` checks: require / forbid structural code patterns, optionally ``inside`` another pattern or a
scope, filtered by ``where`` comparisons on folded values of the bound ``$METAVARS``."""

from __future__ import annotations

from verifier.analysis.fold import fold
from verifier.analysis.pattern import (
    SCOPE_NAME,
    Match,
    Unknown,
    as_list,
    compile_pattern,
    compile_where,
    evaluate_where,
    find_matches,
    validate_pattern_fields,
)
from verifier.analysis.protocol.common import (
    file_view,
    python_paths,
    scope_admits,
    text_of,
)
from verifier.analysis.protocol.values import Resolver
from verifier.checks.base import checker
from verifier.results import CheckResult, Evidence, Status

KIND = "pattern"


def validate_pattern_check(check) -> str | None:
    """The spec error for a pattern check (bad pattern/where syntax), or None."""
    return validate_pattern_fields(check.require, check.forbid, check.inside, check.where)


def _folder(ctx, match: Match):
    """Fold a bound expression: constants and arithmetic first, then names through the scope, argparse/click
    defaults, configs and launch flags (the effective value at run time)."""

    def fold_source(text: str, node):
        result = fold(text)
        if result.ok:
            return True, result.value
        view = file_view(ctx, match.file)
        if view is None:
            return False, None
        qual = _enclosing_qualname(view, match.line)
        fn = view.functions.get(qual)
        value = Resolver(ctx, view, fn.node.body if fn else view.tree.body).value(node, line=match.line + 1)
        return value is not None, value

    return fold_source


def _enclosing_qualname(view, line: int) -> str:
    best, width = "<module>", None
    for qual, fn in view.functions.items():
        start, end = fn.node.lineno, fn.node.end_lineno or fn.node.lineno
        if start <= line <= end and (width is None or end - start < width):
            best, width = qual, end - start
    return best


def _matches(ctx, text: str, check) -> list[Match]:
    pattern = compile_pattern(text)
    inside = None
    inside_scope = None
    if check.inside:
        if SCOPE_NAME.match(check.inside):
            inside_scope = check.inside
        else:
            inside = compile_pattern(check.inside)
    out: list[Match] = []
    for path in python_paths(ctx, check.scope):
        source = text_of(ctx, path)
        if pattern.words and not all(w in source for w in pattern.words):
            continue
        view = file_view(ctx, path)
        if view is None:
            continue
        found = find_matches(pattern, path, view.tree, view.imports)
        if not found:
            continue
        if check.scope and "/" not in check.scope and not check.scope.endswith(".py"):
            found = [m for m in found if scope_admits(check.scope, _enclosing_qualname(view, m.line))]
        if inside_scope:
            found = [m for m in found if scope_admits(inside_scope, _enclosing_qualname(view, m.line))]
        if inside is not None:
            containers = find_matches(inside, path, view.tree, view.imports)
            found = [m for m in found if any(c.line <= m.line and m.end_line <= c.end_line and c.node is not m.node
                                             for c in containers)]
        out.extend(found)
    return out


def _evidence(ctx, m: Match, role: str, note: str = "") -> Evidence:
    snippet = text_of(ctx, m.file).splitlines()[m.line - 1].strip()[:160] if m.line else ""
    return Evidence(m.file, m.line, m.end_line, snippet, role, note)


def _filter_where(ctx, matches: list[Match], wheres) -> tuple[list[Match], list[Match], list[str]]:
    """(matches satisfying every where, matches failing one, reasons some could not be decided)."""
    good, bad, unknown = [], [], []
    for m in matches:
        verdict = True
        for expr in wheres:
            try:
                if not evaluate_where(expr, m.bindings, _folder(ctx, m)):
                    verdict = False
                    break
            except Unknown as exc:
                verdict = None
                unknown.append(f"{m.file}:{m.line}: {exc}")
                break
        if verdict is True:
            good.append(m)
        elif verdict is False:
            bad.append(m)
    return good, bad, unknown


@checker("pattern")
def check_pattern(check, ctx) -> CheckResult:
    problem = validate_pattern_check(check)
    if problem:
        return CheckResult.errored(KIND, problem)
    try:
        return _run(check, ctx)
    except RecursionError:
        return CheckResult.unverified(KIND, "code nested too deeply for the pattern matcher")


def _run(check, ctx) -> CheckResult:
    wheres = [compile_where(w) for w in as_list(check.where)]
    requires, forbids = as_list(check.require), as_list(check.forbid)
    evidence: list[Evidence] = []
    for text in forbids:
        good, _bad, unknown = _filter_where(ctx, _matches(ctx, text, check), wheres)
        if good:
            ev = [_evidence(ctx, m, "rule", f"forbidden: {text}") for m in good[:5]]
            return CheckResult.failed(KIND, Status.mismatch, f"forbidden pattern `{text}` found at {good[0].file}:{good[0].line}"
                                      + (f" (+{len(good) - 1} more)" if len(good) > 1 else ""), ev, matches=len(good))
        if unknown and not requires:
            return CheckResult.unverified(KIND, f"forbidden pattern `{text}` matched but `where` could not be decided: {unknown[0]}")
    found, failing, undecided = 0, [], []
    for text in requires:
        matches = _matches(ctx, text, check)
        good, bad, unknown = _filter_where(ctx, matches, wheres)
        if good:
            found += 1
            evidence.extend(_evidence(ctx, m, "rule", f"required: {text}") for m in good[:3])
        elif bad:
            failing.append((text, bad))
        elif unknown:
            undecided.append((text, unknown))
    evidence.sort(key=lambda e: e.sort_key())
    if not requires:
        return CheckResult.passed(KIND, "no forbidden pattern found", [])
    if found == len(requires):
        return CheckResult.passed(KIND, f"{found} required pattern(s) found", evidence)
    if failing and not found:
        text, bad = failing[0]
        ev = [_evidence(ctx, m, "rule", "matches, but the where clause fails") for m in bad[:5]]
        return CheckResult.failed(KIND, Status.mismatch, f"`{text}` occurs ({bad[0].file}:{bad[0].line}) but not with "
                                  f"{' and '.join(as_list(check.where))}", ev)
    if undecided and not found:
        text, unknown = undecided[0]
        return CheckResult.unverified(KIND, f"`{text}` matched but `where` could not be decided: {unknown[0]}")
    if found:
        missing = [t for t in requires if not any(t in e.note for e in evidence)]
        return CheckResult.partial(KIND, 0.5, f"{found} of {len(requires)} required patterns found; missing: "
                                   f"{', '.join(missing)}", evidence)
    return CheckResult.failed(KIND, Status.missing, f"required pattern `{requires[0]}` not found", [])
