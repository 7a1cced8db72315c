"""The `value` check (D1): the effective value of a parameter, or the value reaching a call, equals the claim;
with `sweep`, every swept value is among the values the repo's runs take.

Resolution (lexicon, precedence, folding, library defaults) lives in :mod:`verifier.analysis.values`;
grading on SA-Bench's levels in :mod:`verifier.analysis.calibration`. This module only turns their answers
into a verdict with evidence and a one-sentence message.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from collections.abc import Callable
from typing import Any

from verifier.analysis.calibration import as_number, compare, fmt
from verifier.analysis.liveness import UNUSED_CAP, Unused, setting_reader, unused_by_runs
from verifier.analysis.values import (
    KIND_LABEL,
    CallArg,
    Candidate,
    Link,
    Resolution,
    SweepResolution,
    ValueResolver,
)
from verifier.checks.base import Context, checker
from verifier.index.facts import Binding, BindingKind, FileRole
from verifier.results import CheckResult, Evidence, Status
from verifier.spec.model import ValueCheck

KIND = "value"
MAX_CONTEXT_EVIDENCE = 4
MAX_DETAILS = 20  # chain/alternative entries kept for `explain`: enough to see why, small enough to read
# Share of the swept values found -> SA-Bench level (floored, as a claim's mean is): all = 1.0, none = missing.
SWEEP_LEVELS = (0.75, 0.5, 0.25)
_ROLE_WORDS = {"comment": "a comment or doc", "test": "tests", "dead": "dead code (never read)"}


def resolver_for(ctx: Context) -> ValueResolver:
    """One resolver per run, shared by every value/call/init check (it memoises bindings it folded)."""
    return ctx.memo("analysis.values.resolver", lambda: ValueResolver(ctx.index, ctx.aliases))


@checker(KIND)
def check_value(check: ValueCheck, ctx: Context) -> CheckResult:
    try:
        resolver = resolver_for(ctx)
        if check.sweep is not None:
            return _check_sweep(check, ctx, resolver)
        if check.call and check.arg is not None:
            return _check_call_arg(check, ctx, resolver)
        if check.within is not None:
            return _check_names(check, ctx, resolver, _within_grader(check.within, check.tolerance), check.within)
        if check.same_as is not None:
            return _check_same_as(check, ctx, resolver)
        return _check_names(check, ctx, resolver)
    except (RecursionError, MemoryError):
        return CheckResult.errored(KIND, "value resolution exceeded its depth or memory bound")
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, OSError) as exc:
        return CheckResult.errored(KIND, f"value resolution failed: {type(exc).__name__}: {exc}"[:200])


# ----- by name ----------------------------------------------------------------------------------------------
Grader = Callable[..., tuple[Status, float, str]]


def _check_names(
    check: ValueCheck, ctx: Context, resolver: ValueResolver, grade: Grader | None = None, claimed: Any = None
) -> CheckResult:
    """``grade(actual, library_default=False)`` decides a found value (default: equals ``expect``); ``claimed`` is
    what the message says was claimed."""
    names = check.all_names()
    label = names[0]
    res = resolver.resolve(names, check.scope)
    if not (res.top or res.unresolved) and resolver.lexicon.describe(label) == "global_batch_size":
        names = [*names, "minibatch_size"]  # no global batch in the code: the batch a step sees, times its accumulation
        res = resolver.resolve(names, check.scope)
    res, unread = _without_unread_settings(ctx, resolver, res, names, check.scope)
    grade_is_default = grade is None
    if grade is None:
        grade = lambda actual, library_default=False: compare(  # noqa: E731
            check.expect, _square_size(names, check.expect, actual), check.tolerance, library_default=library_default
        )
        claimed = check.expect
    details: dict[str, Any] = {"names": list(res.names), "expected": _plain(claimed)}
    context = _context_evidence(ctx, res) + [_unread_evidence(ctx, cand) for cand, _ in unread]
    not_in_effect = "".join(
        f"; {cand.binding.path}: {fmt(cand.value)} at {cand.binding.span.file}:{cand.binding.span.line} is not in "
        f"effect ({why.reason})" for cand, why in unread)  # the settings that would have won, had anything read them
    details["excluded"] = [link.to_json() for link in sorted(res.excluded + res.stubs, key=_link_key)[:MAX_DETAILS]]

    if res.top:
        graded = [(c, grade(c.value)) for c in res.top]
        best, (status, score, reason) = max(graded, key=lambda g: g[1][1])
        message = f"{best.binding.name} = {fmt(best.value)} ({_provenance(ctx, best, res.overridden)})"
        accumulated = _accumulated_batch(names, check, resolver, best) if status is not Status.pass_ and grade_is_default else None
        if accumulated is not None:  # 64 per step x 8 accumulated steps is the 512 claimed: the effective batch is graded
            effective = best.value * accumulated.value
            status, score, reason = grade(effective)
            message += (f" x {accumulated.binding.name} = {fmt(accumulated.value)} ({_provenance(ctx, accumulated, [])}) "
                        f"= {fmt(effective)}" + (", the effective batch claimed" if status is Status.pass_ else " in effect"))
            context = context + [_evidence(ctx, _source_link(accumulated), "effective")]
        others = sorted({fmt(c.value) for c, _ in graded if c is not best and not _same(c.value, best.value)})
        if status is not Status.pass_:
            message += f"; claimed {_claimed_text(check, claimed)}: {reason}"
        message += not_in_effect
        unused = unused_by_runs(ctx, best.binding) if score > UNUSED_CAP else None
        if unused is not None:  # the value is right, but no run uses it
            status, score = Status.partial, UNUSED_CAP
            clause, cited = unused.cited(lambda file, line: _snippet(ctx, file, line, line))
            message += clause
            context = context + cited
        if others:
            shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
            message += f"; other values at the same precedence: {shown}"
        evidence = [_evidence(ctx, _source_link(best), "effective")]
        reader = setting_reader(ctx, best.binding) if unused is None else None
        if reader is not None:  # the code that reads the setting: what makes it a setting of the run
            evidence.append(_at(ctx, reader[0], reader[1], reader[1], "read", f"reads `{best.binding.name}`"))
        evidence += [
            _evidence(ctx, _source_link(c), "overridden")
            for c in _differing(res.overridden, best)[:MAX_CONTEXT_EVIDENCE]
        ]
        evidence += context
        details.update(
            actual=_plain(best.value),
            effective=_source_link(best).to_json(),
            chain=[link.to_json() for link in best.chain]
            + [_role(c.chain[0], "overridden").to_json() for c in res.overridden[:MAX_DETAILS]],
            alternatives=[
                {"value": _plain(c.value), "at": _source_link(c).where()} for c, _ in graded if c is not best
            ][:MAX_DETAILS],
        )
        return _result(status, score, message, evidence, details)

    if res.unresolved:
        details["chain"] = [link.to_json() for c in res.unresolved for link in c.chain][:MAX_DETAILS]
        return _unresolved(ctx, label, res, context, details)

    if res.stubs:
        stub = res.stubs[0]
        message = (
            f"{label}: the only binding ({stub.name} at {stub.where()}) sits in a placeholder body"
            + (f" ({stub.note})" if stub.note else "")
        )
        return CheckResult.failed(KIND, Status.stub, message, _sorted(context), **details)

    if res.library_default is not None:
        link = res.library_default
        status, score, reason = grade(link.value, library_default=True)
        message = f"{link.name} = {fmt(link.value)} ({link.note}: {link.expr} at {link.where()})"
        if status is not Status.pass_:
            message += f"; claimed {_claimed_text(check, claimed)}: {reason}"
        message += not_in_effect
        details.update(actual=_plain(link.value), effective=link.to_json(), chain=[link.to_json()])
        return _result(status, score, message, [_evidence(ctx, link, "library-default")] + context, details)

    if res.excluded:
        kinds = sorted({_ROLE_WORDS.get(link.role, link.role) for link in res.excluded})
        first = min(res.excluded, key=_link_key)
        message = (
            f"{label} is bound only in {' and '.join(kinds)} ({first.name} = {_short(first.expr)} at {first.where()}); "
            "no live binding in the code"
        )
        return CheckResult.failed(KIND, Status.missing, message, _sorted(context), **details)

    off = _off_in_repo(check, ctx, resolver, label, res, grade, details)
    return off if off is not None else _no_binding(label, res, details)


# What a run reads a value from, rather than what sets it in code: one nothing reads sets nothing.
_SETTINGS = frozenset({BindingKind.config, BindingKind.argparse, BindingKind.click})


def _unread_evidence(ctx: Context, cand: Candidate) -> Evidence:
    span = cand.binding.span
    return _at(ctx, span.file, span.line, span.end_line, "unread", "no code reads this setting")


def _at(ctx: Context, file: str, line: int, end_line: int, role: str, note: str) -> Evidence:
    return Evidence(file, line, end_line, _snippet(ctx, file, line, end_line), role, note)


def _without_unread_settings(
    ctx: Context, resolver: ValueResolver, res: Resolution, names: list[str], scope: str | None
) -> tuple[Resolution, list[tuple[Candidate, Unused]]]:
    """Settings no run reads do not override the code: with ``optim.lr: 3e-4`` in a YAML nothing reads (or an
    ``--lr 3e-4`` option nothing reads), ``AdamW(lr=1e-3)`` is what a run uses, and with ``CrossEntropyLoss()`` its
    default ``label_smoothing=0.0`` is. Returns the resolution with such settings out of the winners (when a binding
    or a library default is left to win) and the settings taken out, each with why it is unread. A setting that is
    all there is stays: the check then says no run uses it."""
    if not any(c.binding.kind in _SETTINGS for c in res.top):
        return res, []

    def unread(c: Candidate) -> Unused | None:
        return unused_by_runs(ctx, c.binding) if c.binding.kind in _SETTINGS else None
    dead = {c.key: why for c in res.top if (why := unread(c)) is not None}
    if not dead:
        return res, []
    top = [c for c in res.top if c.key not in dead]
    if not top:
        live = [c for c in res.overridden if unread(c) is None]
        if not live:
            default = resolver.library_default(names, scope)
            if default is None:
                return res, []
            moved = sorted(res.top, key=lambda c: c.source_key)
            return replace(res, top=[], overridden=[], library_default=default), [(c, dead[c.key]) for c in moved]
        tier = max(c.tier for c in live)
        top = [c for c in live if c.tier == tier]
    kept = {c.key for c in top}
    overridden = [c for c in res.overridden if c.key not in kept]
    moved = sorted((c for c in res.top if c.key in dead), key=lambda c: c.source_key)
    return replace(res, top=top, overridden=overridden), [(c, dead[c.key]) for c in moved]


def _off_in_repo(check: ValueCheck, ctx: Context, resolver: ValueResolver, label: str, res, grade: Grader,
                 details: dict[str, Any]) -> CheckResult | None:
    """"no dropout" on a repo with no dropout at all: nothing binds the name and nothing calls what would apply it
    (rules/lexicon.yaml `off_when_absent`), so the setting is off, as claimed. Any call of those APIs leaves the
    verdict to the usual missing, and so does an identifier naming it (`warmup_iters`): the repo may apply it with a
    value no name the lexicon knows carries."""
    off = resolver.lexicon.off_when_absent(label)
    if off is None or check.call:
        return None
    value, uses, mentions = off
    status, score, _reason = grade(value)
    if status is not Status.pass_:
        return None
    if resolver.live_calls(uses, check.scope) or ctx.index.names_containing(mentions, (FileRole.test, FileRole.doc)):
        return None  # `nn.Dropout(cfg.p)`, `lr * min(1, step / warmup_iters)`: it may be applied, with a value not read
    apis = ", ".join(sorted({u.split(".")[-1] for u in uses})[:4])
    state = "off" if value in (0, False) else "not set, so its default"
    message = f"no binding of {label} ({_shown_names(res, 4)})" + (f" and no call of {apis}" if apis else "") + f" in the repo: {state}, as claimed ({fmt(value)})"
    details.update(actual=_plain(value), absent=True)
    return _result(status, score, message, [], details)


def _claimed_text(check: ValueCheck, claimed: Any) -> str:
    if check.within is not None:
        return f"within [{fmt(check.within[0])}, {fmt(check.within[1])}]"
    if check.same_as is not None:
        return f"equal to {check.same_as} ({fmt(claimed)})"
    return fmt(claimed)


# ----- an interval ------------------------------------------------------------------------------------------
def _within_grader(bounds: list[float], tolerance: float | None) -> Grader:
    """Inside [low, high] passes; outside, the value is graded against the nearer bound as an ``expect`` would be
    (just past the bound is a minor deviation, far past it a contradiction)."""
    low, high = bounds

    def grade(actual: Any, library_default: bool = False) -> tuple[Status, float, str]:
        number = as_number(actual)
        if number is None:
            return compare(low, actual, tolerance, library_default=library_default)
        if low <= number <= high:
            return Status.pass_, 1.0, "inside the interval"
        nearer = low if number < low else high
        status, score, reason = compare(nearer, actual, tolerance, library_default=library_default)
        if status is Status.pass_:  # within the tolerance of a bound
            return status, score, f"at the bound {fmt(nearer)} within tolerance"
        return status, score, f"outside the interval ({reason})"

    return grade


# ----- equal to another parameter ---------------------------------------------------------------------------
def _check_same_as(check: ValueCheck, ctx: Context, resolver: ValueResolver) -> CheckResult:
    """``alpha`` bound to ``r`` (its chain reads r) passes whatever r is; otherwise both must resolve and be equal.
    The other parameter missing or unresolved leaves nothing to compare: missing / unverified, never a guess."""
    other = resolver.resolve([check.same_as], check.scope)
    reads_other = set(other.names)
    mine = resolver.resolve(check.all_names(), check.scope)
    for cand in mine.top:
        read = next((link for link in cand.chain[1:] if link.name.rsplit(".", 1)[-1] in reads_other), None)
        if read is not None:
            message = (
                f"{cand.binding.name} is bound to {read.name} ({cand.binding.span.file}:{cand.binding.span.line} "
                f"reads {read.name} at {read.where()})"
            )
            evidence = [_evidence(ctx, cand.chain[0], "effective"), _evidence(ctx, read, "input")]
            details = {"names": list(mine.names), "expected": check.same_as, "actual": _plain(cand.value),
                       "chain": [link.to_json() for link in cand.chain][:MAX_DETAILS]}
            return _result(Status.pass_, 1.0, message, evidence, details)
    target = _one_value(other)
    if target is None:
        label = check.same_as
        details = {"names": list(other.names), "expected": check.same_as}
        if other.unresolved:
            return _unresolved(ctx, label, other, [], details)
        if not other.found:
            result = _no_binding(label, other, details)
            return CheckResult.failed(KIND, Status.missing, f"nothing to compare with: {result.message}", (), **details)
        values = sorted({fmt(c.value) for c in other.top})
        return CheckResult.unverified(
            KIND, f"{label} takes several values ({', '.join(values[:5])}): which one is compared is not decided", (), **details
        )
    value, link = target
    result = _check_names(
        check,
        ctx,
        resolver,
        lambda actual, library_default=False: compare(value, actual, check.tolerance, library_default=library_default),
        value,
    )
    if result.status in (Status.unverified, Status.error):
        return result
    source = _evidence(ctx, link, "compared-with")
    return replace(result, evidence=_sorted([*result.evidence, source]), details={**result.details, "same_as": link.to_json()})


def _one_value(res: Resolution) -> tuple[Any, Link] | None:
    """The other parameter's effective value when it has exactly one (its top candidates agree, or the library
    default), with where it is set."""
    if res.top:
        values = {repr(_plain(c.value)) for c in res.top}
        if len(values) != 1:
            return None
        best = min(res.top, key=lambda c: _link_key(_source_link(c)))
        return best.value, _source_link(best)
    if res.library_default is not None:
        return res.library_default.value, res.library_default
    return None


# Settings whose one number means a square: ``image_size = 256`` is a 256×256 image.
SQUARE_SIZE_NAMES = frozenset({"image_size", "img_size", "resolution", "crop_size", "input_size"})


_BATCH_NAMES = frozenset({"minibatch_size", "global_batch_size"})


def _accumulated_batch(names: list[str], check: ValueCheck, resolver: ValueResolver, best: Any) -> Any:
    """The accumulation steps (a candidate whose value is the factor) that turn the batch a step sees into the
    batch in effect, which is what a paper's batch size means (``batch_size=64`` with ``gradient_accumulation_steps=8``
    is 512), or None. Devices are not counted: how many a run gets is a launch fact, not a setting the code holds."""
    expect, actual = check.expect, best.value
    if not (isinstance(expect, int) and isinstance(actual, int)) or isinstance(expect, bool) or isinstance(actual, bool):
        return None
    if not 0 < actual < expect or resolver.lexicon.describe(names[0]) not in _BATCH_NAMES:
        return None
    steps = resolver.resolve(["gradient_accumulation_steps"], check.scope).top
    if len({repr(c.value) for c in steps}) != 1:
        return None  # none, or several values at one precedence: which one a run uses is not known
    factor = steps[0].value
    return steps[0] if isinstance(factor, int) and not isinstance(factor, bool) and factor > 1 else None


def _square_size(names: list[str], expect: Any, actual: Any) -> Any:
    """A scalar size read as the square the claim states ([N, N]) when the setting is a square-size name; any
    other value, or a non-square claim, is compared as it is (``image_size = 224`` still differs from 256×256)."""
    square = isinstance(expect, (list, tuple)) and len(expect) == 2 and expect[0] == expect[1]
    scalar = isinstance(actual, (int, float)) and not isinstance(actual, bool)
    if square and scalar and names and names[0].lower() in SQUARE_SIZE_NAMES:
        return [actual, actual]
    return actual


def _unresolved(ctx: Context, label: str, res, context: list, details: dict[str, Any]) -> CheckResult:
    """The first binding found does not fold to a constant: unverified, citing the unresolved bindings."""
    first = res.unresolved[0]
    message = f"{label}: {first.binding.name} at {first.binding.span.file}:{first.binding.span.line} " + (
        f"does not fold to a constant ({first.reason})" if first.reason else "does not fold to a constant"
    )
    evidence = [_evidence(ctx, c.chain[0], "effective") for c in res.unresolved[:MAX_CONTEXT_EVIDENCE]]
    return CheckResult.unverified(KIND, message, _sorted(evidence + context), **details)


def _no_binding(label: str, res, details: dict[str, Any]) -> CheckResult:
    return CheckResult.failed(KIND, Status.missing, f"no binding of {label} ({_shown_names(res, 6)}) in the repo", (), **details)


def _shown_names(res, limit: int) -> str:
    return ", ".join(res.names[:limit]) + (", ..." if len(res.names) > limit else "")


# ----- a sweep ----------------------------------------------------------------------------------------------
def sweep_score(found: int, claimed: int) -> float:
    """The SA-Bench level for ``found`` of ``claimed`` swept values: the share floored to 0.75 / 0.5 / 0.25."""
    if claimed <= 0 or found >= claimed:
        return 1.0
    share = found / claimed
    return next((level for level in SWEEP_LEVELS if share >= level), SWEEP_LEVELS[-1]) if found else 0.0


def _check_sweep(check: ValueCheck, ctx: Context, resolver: ValueResolver) -> CheckResult:
    names = check.all_names()
    label = names[0]
    swept = list(check.sweep or ())
    found_sweep: SweepResolution = resolver.resolve_sweep(names, check.scope)
    res = found_sweep.resolution
    runs = found_sweep.values
    details: dict[str, Any] = {"names": list(res.names), "sweep": _plain(swept)}
    context = _context_evidence(ctx, res)
    matched: list[tuple[Any, Any]] = []  # (claimed value, the run value that equals it)
    missing: list[Any] = []
    for claimed in swept:
        hit = next((r for r in runs if compare(claimed, r.value, check.tolerance)[0] is Status.pass_), None)
        if hit is None:
            missing.append(claimed)
        else:
            matched.append((claimed, hit))
    used = {id(r) for _, r in matched}
    extra = [r for r in runs if id(r) not in used]
    details.update(
        found=[{"value": _plain(c), "at": r.link.where(), "how": r.how} for c, r in matched][:MAX_DETAILS],
        missing=_plain(missing),
        other_values=[{"value": _plain(r.value), "at": r.link.where()} for r in extra][:MAX_DETAILS],
        chain=[link.to_json() for _, r in matched for link in r.candidate.chain][:MAX_DETAILS],
    )
    if runs:
        evidence = [_evidence(ctx, r.link, "effective") for _, r in matched]
        evidence += [_loop_evidence(ctx, loop) for loop in sorted({r.loop for _, r in matched if r.loop})]
        parts = []
        if matched:
            parts.append("runs take " + ", ".join(f"{fmt(c)} ({_sweep_where(r)})" for c, r in matched[:8])
                         + (f" and {len(matched) - 8} more" if len(matched) > 8 else ""))
        if missing:
            parts.append(f"no run takes {_listing(missing)}")
        if extra:
            parts.append(f"other values: {_listing([r.value for r in extra])}")
        message = f"{label} swept over {_listing(swept)}: " + "; ".join(parts)
        if not matched:
            evidence = [_evidence(ctx, r.link, "effective") for r in runs[:MAX_CONTEXT_EVIDENCE]]
            return CheckResult.failed(KIND, Status.missing, message, _sorted(evidence + context), **details)
        score = sweep_score(len(matched), len(swept))
        return _result(Status.pass_ if score == 1.0 else Status.partial, score, message, evidence, details)

    if found_sweep.uniterated:
        cand = found_sweep.uniterated[0]
        link = _source_link(cand)
        message = (
            f"{label}: {cand.binding.name} = {fmt(cand.value)} at {link.where()} lists values, but no loop in the "
            f"code iterates it; claimed a sweep over {_listing(swept)}"
        )
        evidence = _sorted([_evidence(ctx, link, "missing-near")] + context)
        return CheckResult.failed(KIND, Status.missing, message, evidence, **details)
    if res.unresolved:
        return _unresolved(ctx, label, res, context, details)
    if res.stubs:
        stub = res.stubs[0]
        message = f"{label}: the only binding ({stub.name} at {stub.where()}) sits in a placeholder body"
        return CheckResult.failed(KIND, Status.stub, message, _sorted(context), **details)
    if res.excluded:
        first = min(res.excluded, key=_link_key)
        message = f"{label} is bound only outside live code ({first.name} at {first.where()}); no run sets it"
        return CheckResult.failed(KIND, Status.missing, message, _sorted(context), **details)
    return _no_binding(label, res, details)


def _loop_evidence(ctx: Context, loop: str) -> Evidence:
    """The loop that makes a list-valued setting a sweep: what the verdict rests on besides the list."""
    file, _, line = loop.rpartition(":")
    at = int(line)
    return Evidence(file, at, at, _snippet(ctx, file, at, at), "source", "iterates the list")


def _sweep_where(run: Any) -> str:
    """`launch flag, sweep.sh:3`, `configs/base.yaml:2, list iterated at train.py:9`, `train.py:5, default (...)`."""
    where = run.link.where()
    if not run.how:
        return where
    return f"{where}, {run.how}" if run.how.startswith(("list iterated", "default")) else f"{run.how}, {where}"


def _listing(values: list[Any], limit: int = 8) -> str:
    shown = ", ".join(fmt(v) for v in values[:limit])
    return "{" + shown + (f", ... ({len(values)} in all)" if len(values) > limit else "") + "}"


# ----- value reaching a call --------------------------------------------------------------------------------
def _check_call_arg(check: ValueCheck, ctx: Context, resolver: ValueResolver) -> CheckResult:
    arg = check.arg
    call = check.call or ""
    results = resolver.resolve_call_arg(call, arg, check.scope)
    details: dict[str, Any] = {"call": call, "arg": arg, "expected": _plain(check.expect)}
    details["sites"] = [_site_json(a) for a in results[:MAX_DETAILS]]
    live = [a for a in results if a.status in ("passed", "default")]
    if live:
        graded = [
            (a, compare(check.expect, a.value, check.tolerance, library_default=a.status == "default")) for a in live
        ]
        best, (status, score, reason) = max(graded, key=lambda g: g[1][1])
        site = best.site
        where = f"{site.span.file}:{site.span.line}"
        if best.status == "default":
            message = f"{site.callee} at {where} omits {best.arg}: library default {fmt(best.value)} ({best.library})"
            evidence = [_evidence(ctx, best.default, "library-default")] if best.default else []
            details.update(actual=_plain(best.value), chain=[best.default.to_json()] if best.default else [])
        else:
            cand = best.candidate
            assert cand is not None
            beaten: list[Candidate] = []
            if cand.source.kind in (BindingKind.launch, BindingKind.config):
                beaten = resolver.resolve([cand.source.name]).overridden
            provenance = _provenance(ctx, cand, beaten) if cand.chain else "literal"
            message = f"{site.callee} at {where} gets {best.arg} = {fmt(best.value)} ({provenance})"
            evidence = [Evidence(site.span.file, site.span.line, site.span.end_line, _snippet(ctx, site.span.file, site.span.line, site.span.end_line), "call")]
            if cand.chain:
                evidence.append(_evidence(ctx, _source_link(cand), "effective"))
                evidence += [_evidence(ctx, _source_link(c), "overridden") for c in _differing(beaten, cand)[:1]]
            details.update(actual=_plain(best.value), chain=[link.to_json() for link in cand.chain])
        if status is not Status.pass_:
            message += f"; claimed {fmt(check.expect)}: {reason}"
        others = sorted({fmt(a.value) for a, _ in graded if a is not best and not _same(a.value, best.value)})
        if others:
            message += f"; other call sites pass {', '.join(others)}"
        return _result(status, score, message, evidence, details)

    unknown = [a for a in results if a.status == "unknown"]
    if unknown:
        a = unknown[0]
        where = f"{a.site.span.file}:{a.site.span.line}"
        evidence = [
            Evidence(u.site.span.file, u.site.span.line, u.site.span.end_line, _snippet(ctx, u.site.span.file, u.site.span.line, u.site.span.end_line), "call")
            for u in unknown[:MAX_CONTEXT_EVIDENCE]
        ]
        return CheckResult.unverified(KIND, f"{a.site.callee} at {where}: {a.arg} {a.reason}", _sorted(evidence), **details)
    stubs = [a for a in results if a.status == "stub"]
    site_evidence = [
        Evidence(a.site.span.file, a.site.span.line, a.site.span.end_line, _snippet(ctx, a.site.span.file, a.site.span.line, a.site.span.end_line), a.reason or "call")
        for a in results[:MAX_CONTEXT_EVIDENCE]
    ]
    if stubs:
        where = f"{stubs[0].site.span.file}:{stubs[0].site.span.line}"
        return CheckResult.failed(KIND, Status.stub, f"the only call to {call} ({where}) sits in a placeholder body", _sorted(site_evidence), **details)
    if results:
        where = f"{results[0].site.span.file}:{results[0].site.span.line}"
        return CheckResult.failed(
            KIND, Status.missing, f"{call} is called only from tests or docs ({where})", _sorted(site_evidence), **details
        )
    return CheckResult.failed(KIND, Status.missing, f"no call to {call} in the repo", (), **details)


# ----- messages and evidence --------------------------------------------------------------------------------
def _provenance(ctx: Context, cand: Candidate, overridden: list[Candidate]) -> str:
    """`dataclass default, ppo/config.py:12` or `scripts/train.sh:4 --lr 1e-4 overrides train.py:31 default=3e-4`."""
    source = cand.source
    beaten = _differing(overridden, cand)
    if beaten:
        loser = beaten[0].source
        return (
            f"{source.span.file}:{source.span.line} {_written(ctx, source, cand.value)} overrides "
            f"{loser.span.file}:{loser.span.line} {_written(ctx, loser, beaten[0].value)}"
        )
    label = KIND_LABEL.get(source.kind, source.kind.value)
    if source.kind is BindingKind.assign and source.scope == "<module>" and "." not in source.path:
        label = "module constant"
    text = f"{label}, {source.span.file}:{source.span.line}"
    if source.kind is BindingKind.launch:
        text = f"{label} {_written(ctx, source, cand.value)}, {source.span.file}:{source.span.line}"
    return text


def _written(ctx: Context, b: Binding, value: Any = None) -> str:
    """How a binding reads in the source, briefly: `--lr 1e-4`, `default=3e-4`, `optim.lr: 3e-4`."""
    expr = _short(b.expr)
    if value is not None and not b.constant and b.kind not in (BindingKind.launch, BindingKind.env):
        expr = f"{expr} (= {fmt(value)})"
    if b.kind is BindingKind.launch:
        if "." in b.path:
            return f"{b.path}={expr}"
        line = ctx.index.lines(b.span.file, b.span.line) if b.span.file in ctx.index.files else ""
        pattern = re.compile(r"(--?" + re.escape(b.name).replace("_", "[-_]") + r")\b", re.IGNORECASE)
        match = pattern.search(line)
        return f"{match.group(1) if match else '--' + b.name} {expr}"
    if b.kind in (BindingKind.argparse, BindingKind.click):
        return f"default={expr}"
    if b.kind is BindingKind.config:
        return f"{b.path or b.name}: {expr}"
    if b.kind is BindingKind.kwarg:
        owner = b.owner.rsplit(".", 1)[-1] if b.owner else ""
        return f"{owner}({b.name}={expr})" if owner else f"{b.name}={expr}"
    if b.kind is BindingKind.assign:
        return f"{b.path or b.name} = {expr}"
    return f"{b.name}={expr}"


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _differing(cands: list[Candidate], best: Candidate) -> list[Candidate]:
    """Lower-precedence bindings of the same parameter (same name or argparse dest) with another value."""
    names = _aka(best.source) | _aka(best.binding)
    return [
        c
        for c in cands
        if c.source != best.source and (_aka(c.source) | _aka(c.binding)) & names and not _same(c.value, best.value)
    ]


def _aka(b: Binding) -> set[str]:
    return {n.lower() for n in (b.name, b.dest) if n}


def _same(a: Any, b: Any) -> bool:
    return compare(a, b)[0] is Status.pass_ if a is not None and b is not None else a is b


def _source_link(cand: Candidate) -> Link:
    for link in cand.chain:
        if (link.file, link.line, link.name) == (cand.source.span.file, cand.source.span.line, cand.source.name):
            return link
    b = cand.source
    return Link(b.span.file, b.span.line, b.span.end_line, b.kind.value, b.name, b.expr, cand.value)


def _context_evidence(ctx: Context, res: Resolution) -> list[Evidence]:
    links = sorted(res.excluded + res.stubs, key=_link_key)[:MAX_CONTEXT_EVIDENCE]
    return [_evidence(ctx, link, link.role or "context") for link in links]


def _evidence(ctx: Context, link: Link, role: str) -> Evidence:
    note = ""
    if link.value is not None:
        note = f"{link.name} = {fmt(link.value)}"
    return Evidence(link.file, link.line, link.end_line, _snippet(ctx, link.file, link.line, link.end_line), role, note)


def _snippet(ctx: Context, file: str, line: int, end_line: int) -> str:
    if file not in ctx.index.files:
        return ""
    try:
        text = ctx.index.lines(file, line, min(end_line, line + 4))
    except OSError:
        return ""
    text = text.strip()
    return text if len(text) <= 240 else text[:237] + "..."


def _result(status: Status, score: float, message: str, evidence: list[Evidence], details: dict) -> CheckResult:
    evidence = _sorted(evidence)
    if status is Status.pass_:
        return CheckResult.passed(KIND, message, evidence, **details)
    if status is Status.partial:
        return CheckResult.partial(KIND, score, message, evidence, **details)
    return CheckResult.failed(KIND, status, message, evidence, **details)


def _sorted(evidence: list[Evidence]) -> tuple[Evidence, ...]:
    unique = {e.sort_key(): e for e in evidence}
    return tuple(unique[k] for k in sorted(unique))


def _role(link: Link, role: str) -> Link:
    return Link(link.file, link.line, link.end_line, link.kind, link.name, link.expr, link.value, role, link.note)


def _link_key(link: Link) -> tuple:
    return (link.file, link.line, link.name, link.role)


def _site_json(a: CallArg) -> dict[str, Any]:
    out: dict[str, Any] = {
        "file": a.site.span.file,
        "line": a.site.span.line,
        "callee": a.site.callee,
        "arg": a.arg,
        "status": a.status,
        "value": _plain(a.value),
    }
    if a.reason:
        out["reason"] = a.reason
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, (int, float, str, bool)) or value is None:
        if isinstance(value, float) and math.isnan(value):
            return "nan"
        return value
    return repr(value)
