"""`init`: how a named parameter or tensor is initialised, compared with the claimed scheme and arguments.

Sources, strongest first (the one that runs last in practice wins):
  3 explicit: ``nn.init.zeros_(self.lora_B.weight)``, ``self.w.data.normal_(std=0.02)``, Flax
    ``kernel_init=`` on the layer named so, ``self.param("pos_embed", init, shape)``;
  2 construction: ``nn.Parameter(torch.zeros(...))``, ``torch.randn(...) * 0.02``;
  1 a generic hook: ``_init_weights(m)`` initialising ``m.weight`` under ``isinstance(m, nn.Linear)``;
  0 the library default of the layer the name is bound to (torch Linear: kaiming_uniform a=sqrt(5)).
Scheme names and API signatures are data in rules/init_schemes.yaml.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from verifier.analysis.calibration import compare, fmt
from verifier.analysis.callsite import (
    evidence_at,
    expected_value,
    fold_at,
    sorted_unique,
)
from verifier.analysis.imports import ModuleMap, module_map
from verifier.analysis.liveness import scope_may_run
from verifier.analysis.initializers import (
    PRIMARY_SLOTS,
    Target,
    bind_init_args,
    scheme_of_expr,
    schemes,
    string_literal,
    tensor_parts,
)
from verifier.checks.base import Context, checker
from verifier.checks.call import in_scope as call_in_scope
from verifier.checks.value import resolver_for
from verifier.index.facts import BindingKind, CallSite, FileRole, Span
from verifier.index.repo import looks_like_glob
from verifier.results import CheckResult, Status
from verifier.spec.model import InitCheck

KIND = "init"
ARG_TOLERANCE = 1e-6  # claims write sqrt(5) as 2.236068
MAX_STATEMENT_LINES = 60  # an assignment spanning more lines is not a layer definition we attribute names from
EXCLUDED_ROLES = (FileRole.test, FileRole.doc)


@dataclass
class InitSite:
    scheme: str
    args: dict[str, Any]
    span: Span
    scope: str
    tier: int
    how: str
    unresolved: list[str] = field(default_factory=list)
    reachable: bool = True
    extra: list[Span] = field(default_factory=list)  # more places worth citing (the layer a hook initialises)

    def unresolved_keys(self) -> set[str]:
        return {u.split("=", 1)[0] for u in self.unresolved}


@checker(KIND)
def check_init(check: InitCheck, ctx: Context) -> CheckResult:
    try:
        return _check(check, ctx)
    except (OSError, ValueError, RecursionError) as exc:
        return CheckResult.errored(KIND, f"init check on {check.name} could not run: {exc}")


def _check(check: InitCheck, ctx: Context) -> CheckResult:
    target = Target.parse(check.name)
    if not target.base:
        return CheckResult.errored(KIND, f"init check: cannot read a tensor name from {check.name!r}")
    modules = module_map(ctx)
    sites, label = _resolved_sites(ctx, modules, check)
    if not sites and _SYMBOL.fullmatch(check.name) and check.name[0].isupper():  # a matrix symbol (R), not w
        return CheckResult.unverified(
            KIND, f"the paper symbol {check.name} names nothing created or initialised in the repo (no name ends in "
            f"_{check.name}); an alias in the spec says which tensor it is."
        )
    if not sites:
        return CheckResult.failed(KIND, Status.missing, f"nothing named {check.name} is created or initialised in the repo.")
    for site in sites:
        site.reachable = scope_may_run(ctx, site.span.file, site.scope)
    # Code that never runs does not initialise anything, unless nothing about the tensor runs at all.
    live = [s for s in sites if s.reachable] or sites
    top = max(s.tier for s in live)
    candidates = [s for s in live if s.tier == top]
    graded = [(grade(check.expect, check.args, s), s) for s in candidates]
    (status, score, reason), site = max(graded, key=lambda g: (g[0][1], -g[1].span.line))
    ev = [evidence_at(ctx.index, site.span, "init", note=site.how)]
    ev += [evidence_at(ctx.index, extra, "definition") for extra in site.extra]
    where = f"{site.span.file}:{site.span.line}"
    described = describe(site, check.args)
    asked = {(schemes().get("arg_aliases") or {}).get(k, k) for k in check.args}
    pending = [u for u in site.unresolved if u.split("=", 1)[0] in asked]
    if pending and status is Status.pass_:
        return CheckResult.unverified(
            KIND, f"{label} is initialised with {described} at {where}, but {pending[0]} could not be resolved.", ev
        )
    if status is Status.pass_:
        source = " (the library default)" if site.tier == 0 else ""
        return CheckResult.passed(KIND, f"{label} is initialised with {described}{source} at {where}.", sorted_unique(ev))
    if site.tier == 0:
        return CheckResult.partial(
            KIND, 0.25, f"{label} is left at the library default {described} ({where}), not {check.expect}.", sorted_unique(ev)
        )
    message = f"{label} is initialised with {described} at {where}: {reason}."
    if status is Status.mismatch:
        return CheckResult.failed(KIND, Status.mismatch, message, sorted_unique(ev))
    return CheckResult.partial(KIND, score, message, sorted_unique(ev))


_SYMBOL = re.compile(r"[A-Za-z][0-9]?")


def _resolved_sites(ctx: Context, modules: ModuleMap, check: InitCheck) -> tuple[list[InitSite], str]:
    """Sites of the name as written, else of its other spellings; for a one-letter paper symbol (``R``) the
    code names ending in it (``lora_R``) first: a bare ``R`` is more often a local than the parameter."""
    alternates = other_spellings(ctx, check.name)
    groups = [[check.name], alternates]
    if _SYMBOL.fullmatch(check.name) and alternates:
        groups.reverse()
    for names in groups:
        found = {n: find_init_sites(ctx, modules, Target.parse(n), check.scope) for n in names}
        used = [n for n in names if found[n]]
        if used:
            sites = sorted((s for n in used for s in found[n]), key=lambda s: (s.span.file, s.span.line, s.tier))
            label = check.name if used == [check.name] else f"{check.name} ({', '.join(used)})"
            return sites, label
    return [], check.name


def other_spellings(ctx: Context, name: str) -> list[str]:
    """The spec's aliases of ``name``, then for a one-letter paper symbol the assigned names that end in it
    as a word piece, case kept (``lora_R``, ``W_R`` for ``R``; not ``bias_r``)."""
    aliases = ctx.aliases
    out = list(aliases.get(name, []))
    for key, spellings in sorted(aliases.items()):
        if name in spellings:
            out += [key, *spellings]
    if _SYMBOL.fullmatch(name):
        ending = re.compile(rf"^[A-Za-z][A-Za-z0-9]*_{re.escape(name)}$")
        for path in sorted(ctx.index.files):
            facts = ctx.index.files[path]
            if facts.role in EXCLUDED_ROLES:
                continue
            out += [b.name for b in facts.bindings if b.kind == BindingKind.assign and ending.match(b.name)]
    return list(dict.fromkeys(n for n in out if n != name))  # first spelling first


def describe(site: InitSite, claimed: dict[str, Any] | None = None) -> str:
    """``normal(std=0.02)``: the scheme with the arguments the claim is about (or its scale, if any)."""
    aliases = schemes().get("arg_aliases") or {}
    keys = {aliases.get(k, k) for k in claimed or {}} or {"std", "val"}
    shown = {k: v for k, v in sorted(site.args.items()) if k in keys}
    if not shown:
        return site.scheme
    return f"{site.scheme}({', '.join(f'{k}={fmt(v)}' for k, v in shown.items())})"


# ----- grading ----------------------------------------------------------------------------------------
def grade(expect: str, expected_args: dict[str, Any], site: InitSite) -> tuple[Status, float, str]:
    data = schemes()
    as_constant = data.get("as_constant") or {}
    aliases = data.get("arg_aliases") or {}
    actual_scheme, actual_args = site.scheme, dict(site.args)
    wanted = {aliases.get(k, k): v for k, v in (expected_args or {}).items()}
    if site.scheme == "uninitialised":
        return Status.mismatch, 0.0, "it is created uninitialised (empty) and never initialised"
    # zeros == constant(0), ones == constant(1)
    if expect == "constant" and actual_scheme in as_constant:
        actual_scheme, actual_args = "constant", {"val": as_constant[actual_scheme], **actual_args}
    elif expect in as_constant and actual_scheme == "constant":
        wanted.setdefault("val", as_constant[expect])
        expect = "constant"
    if actual_scheme == expect:
        base = (Status.pass_, 1.0, "same scheme")
    elif any({expect, actual_scheme} == set(pair) for pair in data.get("near") or ()):
        base = (Status.partial, 0.75, f"{actual_scheme} instead of {expect}")
    else:
        return Status.mismatch, 0.0, f"{actual_scheme} where {expect} is claimed"
    status, score, reason = base
    for key in sorted(wanted):
        if key not in actual_args:
            if key in site.unresolved_keys():
                continue
            return Status.mismatch, 0.0, f"{key} is not set"
        s, sc, r = compare(expected_value(wanted[key]), actual_args[key], ARG_TOLERANCE)
        if sc < score:
            status, score, reason = s, sc, f"{key}={fmt(actual_args[key])}: {r}"
    return status, score, reason


# ----- finding how the tensor is initialised ----------------------------------------------------------
def find_init_sites(ctx: Context, modules: ModuleMap, target: Target, scope: str | None) -> list[InitSite]:
    sites: list[InitSite] = []
    sites += _explicit_calls(ctx, modules, target, scope)
    sites += _layer_kwargs(ctx, modules, target, scope)
    sites += _constructions(ctx, modules, target, scope)
    layers = _layers_named(ctx, modules, target, scope)
    if not any(s.tier >= 2 for s in sites):
        sites += _hooks(ctx, modules, target, scope, layers)
        sites += _library_defaults(target, layers)
    return sorted(sites, key=lambda s: (s.span.file, s.span.line, s.tier))


def _admitted(ctx: Context, site: CallSite, scope: str | None) -> bool:
    facts = ctx.index.files.get(site.span.file)
    return facts is not None and facts.role not in EXCLUDED_ROLES and call_in_scope(ctx, site, scope)


def _explicit_calls(ctx: Context, modules: ModuleMap, target: Target, scope: str | None) -> list[InitSite]:
    data = schemes()
    functions, inplace = data["functions"], data["inplace"]
    namespaces = tuple(data.get("function_namespaces") or ())
    out: list[InitSite] = []
    seen: set[tuple] = set()
    for leaf in sorted(set(functions) | set(inplace) | {"param", "register_parameter"}):
        for site in ctx.index.calls_to(leaf):
            key = (site.span.file, site.span.line, site.callee)
            if key in seen or not _admitted(ctx, site, scope):
                continue
            seen.add(key)
            found = _explicit_site(modules, site, leaf, target, functions, inplace, namespaces)
            if found is not None:
                out.append(found)
    for site in out:
        site.args, site.unresolved = _fold_args(ctx, site, site.args)
    return out


def _explicit_site(modules, site: CallSite, leaf, target, functions, inplace, namespaces) -> InitSite | None:
    parts = site.callee.split(".")
    resolved = modules.qualify(site.span.file, site.callee)
    prefix = resolved.rpartition(".")[0]
    if leaf in ("param", "register_parameter"):
        return _named_param(modules, site, leaf, target)
    is_function = leaf in functions and (len(parts) == 1 or any(prefix == ns or prefix.endswith("." + ns) for ns in namespaces))
    if is_function:
        tensor = site.args[0] if site.args else dict(site.kwargs).get("tensor")
        if tensor is None or not target.matches(tensor_parts(tensor)):
            return None
        spec = functions[leaf]
        raw = bind_init_args(spec, list(site.args[1:]), site.kwargs, skip=("tensor",))
        return InitSite(spec["scheme"], raw, site.span, site.scope, 3, f"{site.callee}({tensor}, ...)")
    if leaf in inplace and len(parts) > 1:
        receiver = ".".join(parts[:-1])
        if not target.matches(tensor_parts(receiver)):
            return None
        spec = inplace[leaf]
        raw = bind_init_args(spec, list(site.args), site.kwargs)
        return InitSite(spec["scheme"], raw, site.span, site.scope, 3, f"{receiver}.{leaf}(...)")
    return None


def _named_param(modules, site: CallSite, leaf: str, target: Target) -> InitSite | None:
    """Flax ``self.param("pos_embed", init_fn, shape)`` / torch ``register_parameter("w", Parameter(...))``."""
    if len(site.args) < 2:
        return None
    name = string_literal(site.args[0])
    if name is None or not target.matches([name]):
        return None
    parsed = scheme_of_expr(modules, site.span.file, site.args[1])
    if parsed is None:
        return None
    scheme, raw = parsed
    tier = 3 if leaf == "param" else 2
    return InitSite(scheme, raw, site.span, site.scope, tier, f"{site.callee}({site.args[0]}, {site.args[1]}, ...)")


def _layer_kwargs(ctx: Context, modules: ModuleMap, target: Target, scope: str | None) -> list[InitSite]:
    """Flax/Haiku layers built with ``kernel_init=`` / ``bias_init=``, named like the target."""
    init_kwargs = schemes().get("init_kwargs") or {}
    out: list[InitSite] = []
    for site in _calls_with_kwargs(ctx, tuple(sorted(init_kwargs))):
        if not _admitted(ctx, site, scope):
            continue
        name = layer_name(ctx, site)
        if name is None or not _names_layer(target, name):
            continue
        for key, text in site.kwargs:
            slot = init_kwargs.get(key)
            if slot is None or not target.slot_ok(slot):
                continue
            text = _follow_name(ctx, site, text)
            parsed = scheme_of_expr(modules, site.span.file, text)
            if parsed is None:
                continue
            scheme, raw = parsed
            found = InitSite(scheme, raw, site.span, site.scope, 3, f"{key}={text}")
            found.args, found.unresolved = _fold_args(ctx, found, raw)
            out.append(found)
    return out


def _calls_with_kwargs(ctx: Context, keys: tuple[str, ...]) -> list[CallSite]:
    def build() -> list[CallSite]:
        wanted = set(keys)
        return [c for c in ctx.index.all_calls() if any(k in wanted for k, _ in c.kwargs)]

    return ctx.memo(f"init.calls_with_kwargs:{','.join(keys)}", build)


def layer_name(ctx: Context, site: CallSite) -> str | None:
    """What a layer construction is called: its ``name=`` or the attribute/variable it is assigned to."""
    literal = string_literal(dict(site.kwargs).get("name", ""))
    if literal:
        return literal
    for b in _assignments_by_line(ctx, site.span.file).get(site.span.line, ()):
        if site.callee in b.expr:
            return b.path
    return None


def _assignments_by_line(ctx: Context, path: str) -> dict[int, list]:
    """A file's assignments by each line their statement covers (built once per file per run)."""

    def build() -> dict[int, list]:
        out: dict[int, list] = {}
        facts = ctx.index.files.get(path)
        for b in facts.bindings if facts else ():
            if b.kind == BindingKind.assign:
                for line in range(b.span.line, min(max(b.span.end_line, b.span.line), b.span.line + MAX_STATEMENT_LINES) + 1):
                    out.setdefault(line, []).append(b)
        return out

    return ctx.memo(f"init.assignments:{path}", build)


def _follow_name(ctx: Context, site: CallSite, text: str) -> str:
    """``kernel_init=self.kernel_init`` -> the field's default expression, one hop, same file."""
    parts = tensor_parts(text)
    if len(parts) != 1 or "(" in text:
        return text
    facts = ctx.index.files.get(site.span.file)
    for b in facts.bindings if facts else ():
        kinds = (BindingKind.field, BindingKind.assign, BindingKind.default)
        if b.name == parts[0] and b.kind in kinds and b.expr and b.span.line != site.span.line:
            return b.expr
    return text


def _constructions(ctx: Context, modules: ModuleMap, target: Target, scope: str | None) -> list[InitSite]:
    """``self.lora_B = nn.Parameter(torch.zeros(r, d))`` and friends (the tensor's own value)."""
    if target.slot is not None:
        return []
    out: list[InitSite] = []
    for b in ctx.index.bindings_named([target.base[-1]]):
        facts = ctx.index.files.get(b.span.file)
        if b.kind != BindingKind.assign or facts is None or facts.role in EXCLUDED_ROLES:
            continue
        if not target.matches(tensor_parts(b.path)):
            continue
        if scope and looks_like_glob(scope) and not ctx.index.in_scope(b.span.file, scope):
            continue
        parsed = scheme_of_expr(modules, b.span.file, b.expr)
        if parsed is None:
            continue
        scheme, raw = parsed
        site = InitSite(scheme, raw, b.span, b.scope, 2, f"{b.path} = {b.expr}")
        site.args, site.unresolved = _fold_args(ctx, site, raw)
        out.append(site)
    return out


@dataclass(frozen=True)
class Layer:
    qualified: str  # key in init_schemes.yaml library_defaults
    span: Span
    scope: str


def _layers_named(ctx: Context, modules: ModuleMap, target: Target, scope: str | None) -> list[Layer]:
    """Library layers (torch.nn.Linear, flax.linen.Dense, ...) bound to the target's name."""
    defaults = schemes().get("library_defaults") or {}
    out: list[Layer] = []
    seen: set[tuple] = set()
    for key in sorted(defaults):
        for site in ctx.index.calls_to(key.rsplit(".", 1)[-1]):
            if (site.span.file, site.span.line) in seen or not _admitted(ctx, site, scope):
                continue
            resolved = modules.qualify(site.span.file, site.callee)
            if not (resolved == key or key.endswith("." + resolved) or resolved.endswith("." + key)):
                continue
            name = layer_name(ctx, site)
            if name is None or not _names_layer(target, name):
                continue
            seen.add((site.span.file, site.span.line))
            out.append(Layer(key, site.span, site.scope))
    return out


def _names_layer(target: Target, name: str) -> bool:
    return tuple(tensor_parts(name)[-len(target.base) :]) == target.base


def _library_defaults(target: Target, layers: list[Layer]) -> list[InitSite]:
    defaults = schemes().get("library_defaults") or {}
    out = []
    for layer in layers:
        slots = defaults.get(layer.qualified) or {}
        slot = target.slot or next((s for s in PRIMARY_SLOTS if s in slots), None)
        entry = slots.get(slot) if slot else None
        if entry:
            how = f"{layer.qualified} default for {slot}"
            out.append(InitSite(entry["scheme"], dict(entry.get("args") or {}), layer.span, layer.scope, 0, how))
    return out


def _hooks(ctx: Context, modules: ModuleMap, target: Target, scope: str | None, layers: list[Layer]) -> list[InitSite]:
    """Generic initialisers: ``_init_weights(m)`` hooks and ``for m in self.modules()`` loops, which init
    ``m.weight`` for every module of the type an ``isinstance`` guard admits."""
    if not layers:
        return []
    data = schemes()
    functions, namespaces = data["functions"], tuple(data.get("function_namespaces") or ())
    out: list[InitSite] = []
    seen: set[tuple[str, int, str]] = set()
    for leaf in sorted(set(functions) | set(data["inplace"])):
        for site in ctx.index.calls_to(leaf):
            key = (site.span.file, site.span.line, site.callee)
            head = _generic_receiver(site, leaf, functions)
            if key in seen or head is None or not _admitted(ctx, site, scope):
                continue
            seen.add(key)
            hook = modules.local_definition(site.span.file, site.scope)
            guard = isinstance_guard(ctx, modules, site, head)
            if guard is None and (hook is None or head not in hook.params):
                continue  # an unguarded local: not known to be a module of the target's type
            found = _explicit_site(
                modules, site, leaf, Target((head,), target.wanted_slot), functions, data["inplace"], namespaces
            )
            if found is None:
                continue
            layer = next((la for la in layers if guard is None or any(_same_type(la.qualified, g) for g in guard)), None)
            if layer is not None:
                found.tier = 1
                found.how = f"{site.scope} initialises every {layer.qualified}: {found.how}"
                found.extra = [layer.span]
                found.args, found.unresolved = _fold_args(ctx, found, found.args)
                out.append(found)
    return out


def _generic_receiver(site: CallSite, leaf: str, functions: dict) -> str | None:
    """``m`` in ``nn.init.zeros_(m.bias)`` / ``m.weight.data.normal_()``: a name standing for any module."""
    text = (site.args[0] if leaf in functions and site.args else site.callee.rpartition(".")[0]).strip()
    head = text.split(".", 1)[0]
    return head if "." in text and head.isidentifier() and head not in ("self", "cls") else None


def isinstance_guard(ctx: Context, modules: ModuleMap, site: CallSite, param: str | None) -> list[str] | None:
    """Types the enclosing ``if isinstance(param, T)`` admits at the site; None when unguarded."""
    tree = ctx.index.tree(site.span.file)
    if tree is None or param is None:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or not (node.body and node.body[0].lineno <= site.span.line <= (node.body[-1].end_lineno or 0)):
            continue
        for call in ast.walk(node.test):
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Name)
                and call.func.id == "isinstance"
                and len(call.args) == 2
                and isinstance(call.args[0], ast.Name)
                and call.args[0].id == param
            ):
                kinds = call.args[1].elts if isinstance(call.args[1], ast.Tuple) else [call.args[1]]
                return [modules.qualify(site.span.file, ast.unparse(k)) for k in kinds]
    return None


def _same_type(layer: str, guard: str) -> bool:
    return layer == guard or layer.endswith("." + guard) or guard.endswith("." + layer.rsplit(".", 1)[-1])


def _fold_args(ctx: Context, site: InitSite, raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    values: dict[str, Any] = {}
    unresolved: list[str] = []
    for key, text in sorted(raw.items()):
        if not isinstance(text, str):
            values[key] = text
            continue
        ok, value = fold_at(resolver_for(ctx), site.span, site.scope, text)
        if ok:
            values[key] = value
        elif key in ("mode", "nonlinearity"):
            values[key] = text
        else:
            unresolved.append(f"{key}={text}")
    return values, unresolved
