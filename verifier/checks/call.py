"""`call`: the repo calls an API (import-resolved) with the claimed arguments, from code that runs.

A site counts when it is in code (not a test or doc) reachable from an entry point; several sites pass when
one matches. A repo class registered in an mmengine-style registry (``@SCHEDULERS.register_module("iddpm")``) is
built from its key in a config (``dict(type="iddpm")``, YAML ``type: iddpm``) with no call naming it: that key
is its construction site. A mismatch cites the closest site and the argument that differs. A call of an equivalent
substitute (Adam for AdamW, per rules/substitutes.yaml) scores 0.75.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from verifier.analysis.calibration import (
    compare,
    default_substitutes,
    fmt,
    normalise_text,
)
from verifier.analysis.callsite import (
    bind_arguments,
    evidence_at,
    expected_value,
    fold_at,
    sorted_unique,
)
from verifier.analysis.entry import CallGraph, call_graph
from verifier.analysis.imports import ModuleMap, module_map
from verifier.analysis.liveness import scope_may_run
from verifier.checks.base import Context, checker
from verifier.checks.value import resolver_for
from verifier.index.facts import CallSite, FileRole
from verifier.index.repo import looks_like_glob
from verifier.results import CheckResult, Status
from verifier.spec.model import CallCheck

KIND = "call"
EXCLUDED_ROLES = (FileRole.test, FileRole.doc)


@dataclass
class SiteOutcome:
    site: CallSite
    resolved: str
    status: Status
    score: float
    reasons: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    reachable: bool = True

    @property
    def matches(self) -> bool:
        return self.status is Status.pass_ and not self.unresolved

    def rank(self) -> tuple:
        return (self.reachable, not self.unresolved, self.score, -_loc(self.site)[1])


@checker(KIND)
def check_call(check: CallCheck, ctx: Context) -> CheckResult:
    try:
        return _check(check, ctx)
    except (OSError, ValueError, RecursionError) as exc:
        return CheckResult.errored(KIND, f"call check on {check.target} could not run: {exc}")


def _check(check: CallCheck, ctx: Context) -> CheckResult:
    if "|" in check.target:
        return _any_of(check, ctx)
    modules = module_map(ctx)
    target = check.target.strip()
    if not target or not all(target.split(".")):
        return CheckResult.errored(KIND, f"call check: {check.target!r} is not a dotted API name")
    sites, elsewhere = find_sites(ctx, modules, target, check.scope)
    substitute = False
    if not sites:
        sites = find_substitute_sites(ctx, modules, target, check.scope)
        substitute = bool(sites)
    named_after = False
    if not sites and "." not in target and not check.args and check.count is None:
        sites = _named_after_sites(ctx, modules, target, check.scope)  # a loss the repo writes by hand: soft_dice
        named_after = bool(sites)
    if not sites and not check.args and check.count is None and (built := _registry_builds(ctx, target, check.scope)):
        definition, key = built[0]
        ev = [evidence_at(ctx.index, key.span, "call", note=f"built by its registry key {key.value!r}"),
              evidence_at(ctx.index, definition.span, "definition", header_only=True)]
        return CheckResult.passed(KIND, f"{target} is built from its registry key {key.value!r} at "
                                        f"{key.span.file}:{key.span.line} (registered at {definition.span.file}:"
                                        f"{definition.span.line}).", sorted_unique(ev))
    if not sites:
        if elsewhere:
            ev = [evidence_at(ctx.index, s.span, "test") for s, _ in elsewhere[:3]]
            where = elsewhere[0][0].span
            return CheckResult.failed(
                KIND, Status.missing, f"{target} is called only in tests or docs ({where.file}:{where.line}).", ev
            )
        return CheckResult.failed(KIND, Status.missing, f"no call to {target} in the repo's code.")

    graph = call_graph(ctx)
    outcomes = [evaluate_site(ctx, graph, modules, site, resolved, check.args, substitute) for site, resolved in sites]
    matching = [o for o in outcomes if o.matches and o.reachable]
    if check.count is not None:
        counted = _count_result(check, ctx, target, matching)
        if counted is not None:
            return counted
    if matching:
        best = matching[0]
        ev = [evidence_at(ctx.index, best.site.span, "call")]
        where = f"{best.site.span.file}:{best.site.span.line}"
        if substitute:
            return CheckResult.partial(
                KIND, 0.75, f"{best.resolved} is called at {where}, an equivalent substitute for {target}.", ev
            )
        if named_after:
            return CheckResult.passed(KIND, f"{best.site.callee} is called at {where}: the repo's own {target}, named after it.", ev)
        args = f" with {_describe_args(check.args)}" if check.args else ""
        return CheckResult.passed(KIND, f"{target} is called{args} at {where}.", ev, sites=len(outcomes))
    best = max(outcomes, key=lambda o: o.rank())
    ev = [evidence_at(ctx.index, best.site.span, "call", note="; ".join(best.reasons + best.unresolved))]
    where = f"{best.site.span.file}:{best.site.span.line}"
    if best.matches and not best.reachable:
        return CheckResult.partial(
            KIND, 0.75, f"{target} is called at {where} but that code is never run from an entry point.", ev
        )
    if best.unresolved and best.score >= 1.0:
        return CheckResult.unverified(
            KIND, f"{target} is called at {where} but {best.unresolved[0]} could not be resolved to a value.", ev
        )
    reason = best.reasons[0] if best.reasons else (best.unresolved[0] if best.unresolved else "arguments differ")
    if not best.reachable:
        reason += "; and that code is never run from an entry point"
    if best.status is Status.mismatch or best.score <= 0:
        return CheckResult.failed(KIND, Status.mismatch, f"{target} at {where}: {reason}.", ev)
    score = min(best.score, 0.75) if not best.reachable or substitute else best.score
    return CheckResult.partial(KIND, score, f"{target} at {where}: {reason}.", ev)


def _any_of(check: CallCheck, ctx: Context) -> CheckResult:
    """``target: torch.linalg.svd | torch.svd_lowrank``: equivalent APIs for one operation; each alternative is
    checked as its own call check (same args, count, scope) and the best verdict is the claim's."""
    alternatives = [t.strip() for t in check.target.split("|") if t.strip()]
    if not alternatives:
        return CheckResult.errored(KIND, f"call check: {check.target!r} names no API")
    results = [(_check(check.model_copy(update={"target": alt}), ctx), alt) for alt in alternatives]  # in the order given
    rank = {Status.pass_: 4, Status.partial: 3, Status.mismatch: 2, Status.stub: 2, Status.unverified: 1, Status.missing: 0}
    order = max(range(len(results)), key=lambda i: (rank.get(results[i][0].status, -1), results[i][0].score or 0.0, -i))
    best = results[order][0]
    if best.status is Status.missing:
        names = ", ".join(alternatives)
        return CheckResult.failed(KIND, Status.missing, f"no call to any of {names} in the repo's code.")
    return best


# ----- finding call sites -----------------------------------------------------------------------------
def find_sites(ctx: Context, modules: ModuleMap, target: str, scope: str | None):
    """(code sites, test/doc sites) calling ``target``, each with its import-resolved qualified name."""
    leaf = target.rsplit(".", 1)[-1]
    code, elsewhere = [], []
    for site in ctx.index.calls_to(leaf):
        resolved = resolve_callee(modules, site)
        if not target_matches(target, site, resolved, modules):
            continue
        if not in_scope(ctx, site, scope):
            continue
        role = ctx.index.files[site.span.file].role
        (elsewhere if role in EXCLUDED_ROLES else code).append((site, resolved))
    return sorted(code, key=lambda p: _loc(p[0])), sorted(elsewhere, key=lambda p: _loc(p[0]))


_REGISTER = re.compile(r"^[\w.]*\bregister(?:_module)?\s*\((?P<args>.*)\)\s*$", re.DOTALL)
_KEY_FIELDS = ("type",)  # mmengine / mmcv / mmdet configs select a registered class by `type=`


def _registry_builds(ctx: Context, target: str, scope: str | None) -> list:
    """(the registered class, the config binding of its key) for a repo class ``target`` names: decorated with
    ``X.register_module("key")`` / ``register_module()`` (the key is the class name) and selected by a constant
    ``type="key"`` in code or a config file; nothing when the class is not registered or its key is never used."""
    if scope and not looks_like_glob(scope):
        return []  # a config key belongs to no function scope
    leaf = target.rsplit(".", 1)[-1]
    out = []
    for definition in ctx.index.definitions_named(leaf):
        if definition.kind != "class" or ctx.index.files[definition.span.file].role in EXCLUDED_ROLES:
            continue
        keys: set[str] = set()
        for decorator in definition.decorators:
            registered = _REGISTER.match(decorator)
            if registered:
                keys.update(re.findall(r"""["']([^"']+)["']""", registered.group("args")) or [definition.name])
        if not keys:
            continue
        for binding in ctx.index.bindings_named(_KEY_FIELDS):
            if binding.constant and isinstance(binding.value, str) and binding.value in keys and \
                    ctx.index.files[binding.span.file].role not in EXCLUDED_ROLES and \
                    (not scope or ctx.index.in_scope(binding.span.file, scope)):
                out.append((definition, binding))
    return sorted(out, key=lambda p: (p[1].span.file, p[1].span.line))


# words a hand-written implementation's name adds to, or leaves out of, the method's own ("compute_dice_loss",
# "DiceLoss", "soft_dice" for dice_loss; "FocalLoss" for sigmoid_focal_loss)
_NAME_FILLERS = frozenset("loss losses fn func function compute calc calculate get criterion module layer sigmoid softmax "
                          "soft torch nn f my custom".split())


def _named_after_sites(ctx: Context, modules: ModuleMap, target: str, scope: str | None):
    """Calls of a repo function or class named after a method the paper names, which repos write by hand
    (rules/claim_apis.yaml lists such methods by a bare name, ``dice_loss``): every word of the method's name
    beyond the fillers is in the callee's name (``soft_dice``, ``DiceLoss``, ``compute_info_nce``)."""
    stems = [w for w in re.split(r"[_\W]+", target.lower()) if w and w not in _NAME_FILLERS]
    if not stems:
        return []
    code = []
    joined = "".join(stems)
    for pieces, sites in _calls_by_name_pieces(ctx):
        if not (all(stem in pieces for stem in stems) or joined in pieces):  # not "lamb" in LambdaLR
            continue
        for position, site in sites:
            if ctx.index.files[site.span.file].role not in EXCLUDED_ROLES and in_scope(ctx, site, scope):
                code.append((position, site, resolve_callee(modules, site)))
    return [(site, resolved) for _, site, resolved in sorted(code, key=lambda p: (_loc(p[1]), p[0]))]


def _calls_by_name_pieces(ctx: Context) -> list[tuple[frozenset[str], list[tuple[int, CallSite]]]]:
    """Call sites grouped by the lower-cased words of the callee's leaf (``DiceLoss`` -> dice, loss): split once
    per distinct leaf and run, not once per call site and check (a large repo has 10^5 sites)."""

    def build() -> list[tuple[frozenset[str], list[tuple[int, CallSite]]]]:
        by_leaf: dict[str, list[tuple[int, CallSite]]] = {}
        for position, site in enumerate(ctx.index.all_calls()):
            by_leaf.setdefault(site.callee.rsplit(".", 1)[-1], []).append((position, site))
        return [
            (frozenset(p.lower() for p in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", leaf)), sites)
            for leaf, sites in sorted(by_leaf.items())
        ]

    return ctx.memo("call.sites-by-name-pieces", build)


def find_substitute_sites(ctx: Context, modules: ModuleMap, target: str, scope: str | None):
    """Calls of an equivalent substitute of ``target`` in the same namespace (``torch.optim.Adam``)."""
    subs = default_substitutes()
    head, _, leaf = target.rpartition(".")
    wanted = normalise_text(leaf)
    code = []
    for site_leaf, sites in _calls_by_normalised_leaf(ctx).items():
        if subs.relation(wanted, site_leaf) != "substitute":
            continue
        for position, site in sites:
            resolved = resolve_callee(modules, site)
            same_namespace = f"{resolved.rpartition('.')[0]}.{leaf}".lstrip(".")
            if head and not target_matches(target, site, same_namespace, modules):
                continue
            role = ctx.index.files[site.span.file].role
            if role not in EXCLUDED_ROLES and in_scope(ctx, site, scope):
                code.append((position, site, resolved))
    return [(site, resolved) for _, site, resolved in sorted(code, key=lambda p: (_loc(p[1]), p[0]))]


def _calls_by_normalised_leaf(ctx: Context) -> dict[str, list[tuple[int, CallSite]]]:
    """Every call site under its normalised leaf name, with its place in the index's order: a spec with many
    call checks asks the substitutes table once per distinct name, not once per call site and check."""

    def build() -> dict[str, list[tuple[int, CallSite]]]:
        out: dict[str, list[tuple[int, CallSite]]] = {}
        for position, site in enumerate(ctx.index.all_calls()):
            out.setdefault(normalise_text(site.callee.rsplit(".", 1)[-1]), []).append((position, site))
        return out

    return ctx.memo("call.sites-by-normalised-leaf", build)


def resolve_callee(modules: ModuleMap, site: CallSite) -> str:
    resolved = modules.qualify(site.span.file, site.callee)
    if resolved == site.callee and site.qualname != site.callee:
        return site.qualname
    return resolved


def target_matches(target: str, site: CallSite, resolved: str, modules: ModuleMap) -> bool:
    for name in {resolved, site.qualname, site.callee}:
        if name == target or name.endswith("." + target):
            return True
    # Written without a resolvable import (`optim.AdamW` with a star import): match as a suffix of the target.
    head = site.callee.split(".", 1)[0]
    unresolved = resolved == site.callee and modules.import_named(site.span.file, head) is None
    return unresolved and head not in ("self", "cls") and target.endswith("." + site.callee)


def in_scope(ctx: Context, site: CallSite, scope: str | None) -> bool:
    if not scope:
        return True
    if looks_like_glob(scope):
        return ctx.index.in_scope(site.span.file, scope)
    return site.scope == scope or site.scope.startswith(scope + ".") or site.scope.endswith("." + scope)


# ----- judging one site -------------------------------------------------------------------------------
def evaluate_site(
    ctx: Context,
    graph: CallGraph,
    modules: ModuleMap,
    site: CallSite,
    resolved: str,
    expected: dict[str, Any],
    substitute: bool = False,
) -> SiteOutcome:
    params, defaults, is_library = signature(ctx, modules, site, resolved)
    bound = bind_arguments(site, params)
    outcome = SiteOutcome(site, resolved, Status.pass_, 1.0)
    outcome.reachable = scope_may_run(ctx, site.span.file, site.scope)
    for name in sorted(expected, key=str):
        want = expected[name]
        key = str(name)
        if substitute and params and key not in params and key not in bound:
            continue  # Adam has no weight_decay of AdamW's kind: the substitution itself is what is graded
        if key in bound:
            ok, actual = fold_at(resolver_for(ctx), site.span, site.scope, bound[key])
            if not ok:
                outcome.unresolved.append(f"{key}={bound[key]}")
                continue
            status, score, reason = compare(expected_value(want), _squeeze(want, actual))
            reason = f"{key}: {reason}"
        elif key in defaults:
            status, score, reason = compare(expected_value(want), defaults[key], library_default=is_library)
            reason = f"{key} not passed, default {fmt(defaults[key])} ({reason})"
        elif site.args and not params and not any(k == "**" for k, _ in site.kwargs):
            outcome.unresolved.append(f"{key} (positional order of {resolved} unknown)")
            continue
        elif any(k == "**" for k, _ in site.kwargs) or any(a.startswith("*") for a in site.args):
            outcome.unresolved.append(f"{key} (passed through **kwargs)")
            continue
        else:
            status, score, reason = Status.mismatch, 0.0, f"{key} is not passed"
        if score < outcome.score:
            outcome.score = score
            outcome.status = status
        if status is not Status.pass_:
            outcome.reasons.append(reason)
    if outcome.score < 1.0 and outcome.status is Status.pass_:
        outcome.status = Status.partial
    return outcome


def signature(ctx: Context, modules: ModuleMap, site: CallSite, resolved: str):
    """(positional parameter order, defaults, defaults-are-a-library's) for the called API."""
    library = resolver_for(ctx).library
    api = library.lookup(resolved) or library.lookup(site.qualname)
    if api is not None:
        return list(api.params), dict(api.defaults), True
    target = modules.resolve_in_file(site.span.file, site.callee) or modules.resolve_qualified(resolved)
    if target is None:
        return [], {}, False
    if target.kind == "class":
        ctor = modules.local_definition(target.span.file, f"{target.qualname}.__init__") or modules.local_definition(
            target.span.file, f"{target.qualname}.__new__"
        )
        if ctor is None:
            return [], {}, False
        target = ctor
    params = [p for p in target.params if p not in ("self", "cls") and not p.startswith("*")]
    defaults = {}
    facts = ctx.index.files.get(target.span.file)
    for b in facts.bindings if facts else ():
        if b.kind.value == "default" and b.owner == target.qualname and b.constant:
            defaults[b.name] = b.value
    return params, defaults, False


def _count_result(check: CallCheck, ctx: Context, target: str, matching) -> CheckResult | None:
    low, high = check.count.min, check.count.max
    n = len(matching)
    if n == 0 or ((low is None or n >= low) and (high is None or n <= high)):
        return None  # none at all: the site-by-site verdict below says why
    bounds = f"at least {low}" if high is None else (f"at most {high}" if low is None else f"{low} to {high}")
    ev = [evidence_at(ctx.index, o.site.span, "call") for o in matching[:5]]
    message = f"{target} is called {n} time(s) with the claimed arguments from running code; the claim says {bounds}."
    return CheckResult.failed(KIND, Status.mismatch, message, sorted_unique(ev))


def _squeeze(expected: Any, actual: Any) -> Any:
    """kernel_size=(3, 3) is the claimed 3."""
    scalar_claim = not isinstance(expected, (list, tuple))
    if scalar_claim and isinstance(actual, (list, tuple)) and actual and all(a == actual[0] for a in actual):
        return actual[0]
    return actual


def _describe_args(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={fmt(v)}" for k, v in sorted(args.items(), key=lambda kv: str(kv[0])))


def _loc(site: CallSite) -> tuple[str, int]:
    return (site.span.file, site.span.line)

