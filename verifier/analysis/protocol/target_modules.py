"""Rule ``target-modules``: the adapter is attached to the module families the claim names, and to no others.

Claims name families ("W_Q and W_V", "attention output", "all FC layers"); code names modules per architecture
(``q_proj`` / ``query`` / ``q`` / ``to_q``, a fused ``qkv`` / ``c_attn``). Placements are read where a method is
attached: a PEFT config's ``target_modules`` (resolved through configs, argparse defaults and launch flags by the
value resolver), a ``named_modules()`` loop whose name test selects the modules it replaces, an attribute
assigned a LoRA/adapter layer (``blk.attn.qkv = LoRAQKV(blk.attn.qkv, r)``, ``self.query = lora.Linear(...)``).
Code names map to families through rules/protocol/target-modules.yaml; a fused qkv counts whole unless the
wrapper adds its terms to slices of it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from verifier.analysis.protocol.common import (
    FileView,
    dotted,
    evidence,
    innermost_scope,
    nodes_of,
    scope_admits,
    sorted_evidence,
    views_mentioning,
)
from verifier.results import CheckResult, Status
from verifier import pysource

KIND = "protocol"
_QKV = ("query", "key", "value")


@dataclass(frozen=True)
class Site:
    """One placement: a config call, an injection loop, or the wrapping assignments of one function."""

    file: str
    line: int
    end_line: int
    how: str
    method: str  # lora | adapter | any (a placement whose method its names do not say)
    names: tuple[str, ...] = ()
    families: frozenset[str] | None = None  # None: not resolved statically (``reason`` says why)
    reason: str = ""
    via: tuple[str, int] | None = None  # where the list is written, when elsewhere (config, argparse, launch)
    slices: tuple[tuple[str, int], ...] = ()  # a wrapper's forward and the slice additions that decided the families


class Lexicon:
    """The families, shorthands, groups and code-name table of the rule's YAML."""

    def __init__(self, rule: dict):
        lex = rule.get("lexicon") or {}
        self.families = frozenset(lex.get("families") or [])
        self.shorthands = {str(k): frozenset(v) for k, v in (lex.get("shorthands") or {}).items()}
        self.groups = {str(k): frozenset(v) for k, v in (lex.get("groups") or {}).items()}
        self.modules = {str(k).lower(): frozenset(v) for k, v in (lex.get("modules") or {}).items()}
        self.containers = {str(k).lower(): frozenset(v) for k, v in (lex.get("containers") or {}).items()}
        self.ambiguous = frozenset(str(w).lower() for w in lex.get("ambiguous") or [])
        self.configs = {str(m): tuple(v) for m, v in (lex.get("peft_configs") or {}).items()}
        self.peft_defaults = {str(k): [str(n).split() for n in v] for k, v in (lex.get("peft_defaults") or {}).items()}
        self.layer_words = {str(m): tuple(str(w).lower() for w in v) for m, v in (lex.get("layer_words") or {}).items()}

    def families_of(self, name: str, substring: bool = False) -> tuple[frozenset[str] | None, str]:
        """The families a code name denotes, or (None, why not). ``substring``: the name is tested with ``in``,
        so a container (``attn``, ``mlp``) selects every projection inside it."""
        text = name.strip().strip("^$").strip(".").lower()
        if text in ("all-linear", "all_linear"):
            return self.shorthands.get("all-linear"), ""
        pieces = [p for p in text.split(".") if p]
        for k in range(len(pieces), 0, -1):
            found = self.modules.get(".".join(pieces[-k:]))
            if found is not None:
                return found, ""
        last = pieces[-1] if pieces else text
        if substring and last in self.containers:
            return self.containers[last], ""
        if last in self.ambiguous:
            return None, f"`{name}` names different modules in different architectures"
        return None, f"`{name}` maps to no module family (rules/protocol/target-modules.yaml)"

    def method_of(self, text: str) -> str:
        low = text.lower()
        hits = [m for m, words in sorted(self.layer_words.items()) if any(w in low for w in words)]
        return hits[0] if len(hits) == 1 else "any"


def _names_families(lex: Lexicon, names: list[str], substring: bool = False) -> tuple[frozenset[str] | None, str]:
    out: set[str] = set()
    for name in names:
        found, why = lex.families_of(name, substring)
        if found is None:
            return None, why
        out |= found
    return frozenset(out), ""


# ----- target lists as values ------------------------------------------------------------------------------
_ALTERNATIVES = re.compile(r"\(([^()]*\|[^()]*)\)")


def _as_names(value) -> tuple[list[str] | None, str]:
    """Module names from a resolved ``target_modules`` value: a list, ``"all-linear"``, a regex's
    alternatives (``".*(q_proj|v_proj)$"``), a launch flag's ``"[q_proj,v_proj]"`` or ``"q_proj,v_proj"``."""
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value) if isinstance(value, (set, frozenset)) else list(value)
        if items and all(isinstance(v, str) for v in items):
            return [v.strip() for v in items], ""
        return None, f"target_modules is {value!r}"
    if not isinstance(value, str) or not value.strip():
        return None, f"target_modules is {value!r}"
    text = value.strip()
    if text.lower() in ("all-linear", "all_linear"):
        return ["all-linear"], ""
    if re.search(r"[\\*+?|$^]", text):
        groups = _ALTERNATIVES.findall(text)
        if groups:
            names = [re.sub(r"[\\^$.*+?]", "", alt).strip() for alt in groups[-1].split("|")]
            if names and all(re.fullmatch(r"[A-Za-z_][\w]*", n) for n in names):
                return names, ""
        return None, f"target_modules is the regex {text!r}"
    text = text.strip("[]()")
    names = [n.strip(" '\"") for n in re.split(r"[,\s]+", text) if n.strip(" '\"")]
    return (names, "") if names else (None, f"target_modules is {value!r}")


def _resolver(ctx):
    from verifier.analysis.values import ValueResolver

    return ctx.memo("analysis.values.resolver", lambda: ValueResolver(ctx.index, getattr(ctx, "aliases", None) or {}))


def _value_of(ctx, expr: ast.AST, file: str, scope: str, line: int) -> tuple[object, tuple[str, int] | None]:
    """The value an expression has at a site (``"a,b".split(",")`` folded too) and where it is written."""
    split = None
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "split":
        sep = expr.args[0].value if expr.args and isinstance(expr.args[0], ast.Constant) else None
        split, expr = (sep if isinstance(sep, str) else None) or " ", expr.func.value
    cand = _resolver(ctx).value_at(ast.unparse(expr), file, scope, line)
    if cand is None or not cand.resolved:
        return None, None
    value = cand.value
    if split is not None:
        if not isinstance(value, str):
            return None, None
        value = [v.strip() for v in value.split(split) if v.strip()]
    src = cand.source.span if cand.source is not None else None
    via = (src.file, src.line) if src is not None and (src.file, src.line) != (file, line) else None
    return value, via


# ----- PEFT configs ----------------------------------------------------------------------------------------
def _peft_sites(ctx, lex: Lexicon, scope: str | None) -> list[Site]:
    resolver = _resolver(ctx)
    out: list[Site] = []
    for method, classes in sorted(lex.configs.items()):
        for cls in classes:
            for arg in resolver.resolve_call_arg(cls, "target_modules", scope):
                if arg.status in ("stub", "excluded"):
                    continue
                span = arg.site.span
                how = f"`{cls}(target_modules=...)`"
                if arg.status == "passed":
                    src = arg.candidate.source.span if arg.candidate is not None else None
                    via = (src.file, src.line) if src is not None and (src.file, src.line) != (span.file, span.line) else None
                    out.append(_site_from_value(lex, span, how, method, arg.value, via))
                elif arg.status == "default" or (arg.status == "unknown" and arg.reason.endswith("no known default")):
                    out.append(_peft_default(ctx, lex, span, cls, method))
                elif "**kwargs" in arg.reason:
                    out.append(_from_settings(ctx, lex, span, how, method))
                elif (folded := _folded_kwarg(ctx, arg.site)) is not None:
                    out.append(_site_from_value(lex, span, how, method, *folded))
                else:
                    out.append(Site(span.file, span.line, span.end_line, how, method,
                                    reason=arg.reason or "target_modules cannot be resolved"))
    return out


def _folded_kwarg(ctx, site) -> tuple[object, tuple[str, int] | None] | None:
    """What the value resolver leaves (``args.targets.split(",")``), folded here; None when still unknown."""
    text = next((v for k, v in site.kwargs if k == "target_modules"), None)
    try:
        expr = pysource.parse(text, mode="eval").body if text else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if expr is None:
        return None
    value, via = _value_of(ctx, expr, site.span.file, site.scope, site.span.line)
    return (value, via) if value is not None else None


def _site_from_value(lex: Lexicon, span, how: str, method: str, value, via) -> Site:
    names, why = _as_names(value)
    if names is None:
        return Site(span.file, span.line, span.end_line, how, method, reason=why, via=via)
    families, why = _names_families(lex, names)
    return Site(span.file, span.line, span.end_line, how, method, tuple(names), families, why, via)


def _peft_default(ctx, lex: Lexicon, span, cls: str, method: str) -> Site:
    """``LoraConfig(r=8)``: PEFT's per-architecture default, for the one architecture the run loads."""
    from verifier.analysis.protocol import load_rule
    from verifier.analysis.protocol import model as model_rule

    how = f"`{cls}` without target_modules (PEFT's default)"
    rule = load_rule("model") or {}
    uses = ctx.memo("protocol.model.uses:", lambda: model_rule.find_uses(ctx, None, rule))
    kinds = {}
    for use in uses:
        if not use.name or use.checkpoint:
            continue
        ps = model_rule.pieces(model_rule._strip(use.name))
        kind = next((k for k, names in sorted(lex.peft_defaults.items()) for n in names if ps[: len(n)] == n), None)
        kinds.setdefault(kind, use)
    if len(kinds) != 1 or None in kinds:
        return Site(span.file, span.line, span.end_line, how, method,
                    reason=f"`{cls}` without target_modules: PEFT's default depends on the architecture, and the run "
                           "loads no single one it knows")
    kind, use = next(iter(kinds.items()))
    families = frozenset(_QKV) if kind == "fused-qkv" else frozenset({"query", "value"})
    return Site(span.file, span.line, span.end_line, f"{how} for {use.name}", method, (kind,), families,
                via=(use.file, use.line))


def _from_settings(ctx, lex: Lexicon, span, how: str, method: str) -> Site:
    """``LoraConfig(**cfg["lora"])``: the one target-module setting of the repo, if it has exactly one."""
    res = _resolver(ctx).resolve(["target_modules"])
    values = {repr(c.value): c for c in res.top if c.resolved}
    if len(values) != 1:
        return Site(span.file, span.line, span.end_line, how, method,
                    reason="target_modules passed through **kwargs and no single setting gives it")
    cand = next(iter(values.values()))
    return _site_from_value(lex, span, how, method, cand.value, (cand.source.span.file, cand.source.span.line))


# ----- named_modules() injection loops ---------------------------------------------------------------------
_REPLACERS = ("setattr", "add_module", "register_module")


def _loop_sites(ctx, lex: Lexicon, scope: str | None) -> list[Site]:
    out: list[Site] = []
    for view in views_mentioning(ctx, ("named_modules",), scope, ml_only=True):
        for loop in nodes_of(ctx, view, (ast.For, ast.AsyncFor)):
            if not (isinstance(loop, (ast.For, ast.AsyncFor)) and isinstance(loop.iter, ast.Call)
                    and isinstance(loop.iter.func, ast.Attribute) and loop.iter.func.attr == "named_modules"
                    and isinstance(loop.target, ast.Tuple) and len(loop.target.elts) == 2
                    and all(isinstance(e, ast.Name) for e in loop.target.elts)):
                continue
            fn_scope = innermost_scope(view, loop)
            if not scope_admits(scope, fn_scope):
                continue
            site = _loop_site(ctx, lex, view, loop, fn_scope)
            if site is not None:
                out.append(site)
    return out


def _loop_site(ctx, lex: Lexicon, view: FileView, loop: ast.For, fn_scope: str) -> Site | None:
    name_var, module_var = (e.id for e in loop.target.elts)  # type: ignore[union-attr]
    selected = _selected_body(loop, name_var)
    if selected is None:
        return None
    test, body = selected
    replaced = _replacement(body, module_var)
    if replaced is None:
        return None
    words = " ".join([*_call_names(body), fn_scope.rsplit(".", 1)[-1]])
    method = lex.method_of(words)
    if method == "any" and not any(w in words.lower() for ws in lex.layer_words.values() for w in ws):
        return None  # a quantisation or re-initialisation loop replaces modules too: no adapter is named
    how = "a `named_modules()` loop that replaces the modules its name test selects"
    end = max(loop.lineno, loop.body[0].lineno - 1)
    inner = {t.id: n.iter for n in ast.walk(loop) if isinstance(n, (ast.For, ast.comprehension))
             and isinstance(t := n.target, ast.Name)}
    words, why, via = _test_words(ctx, view, test, name_var, inner, fn_scope)
    if words is None:
        return Site(view.path, loop.lineno, end, how, method, reason=why)
    if not words:
        if _is_linear_test(test, module_var):
            fams = lex.shorthands.get("all-linear")
            return Site(view.path, loop.lineno, end, how, method, ("nn.Linear",), fams)
        return None
    families: set[str] = set()
    for word, substring in words:
        found, why = lex.families_of(word, substring)
        if found is None:
            return Site(view.path, loop.lineno, end, how, method, tuple(w for w, _ in words), reason=why, via=via)
        families |= found
    return Site(view.path, loop.lineno, end, how, method, tuple(w for w, _ in words), frozenset(families), via=via)


def _selected_body(loop: ast.For, name_var: str) -> tuple[ast.AST | None, list[ast.stmt]] | None:
    """The name test that selects the modules and the statements run for them: ``if <test>: body`` or
    ``if not <test>: continue`` followed by the body; (None, body) when no name test filters the loop."""
    for i, stmt in enumerate(loop.body):
        if isinstance(stmt, ast.If):
            if len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Continue):
                if isinstance(stmt.test, ast.UnaryOp) and isinstance(stmt.test.op, ast.Not):
                    return stmt.test.operand, loop.body[i + 1:]
                if _mentions(stmt.test, name_var):
                    continue  # an exclusion (``if "head" in name: continue``): the selection is elsewhere
                return None
            if not stmt.orelse:
                return stmt.test, stmt.body
        elif isinstance(stmt, ast.For) and not isinstance(stmt.iter, ast.Call):
            nested = _selected_body(stmt, name_var)  # for t in targets: if t in name: ...
            if nested is not None and nested[0] is not None:
                return nested
    return None


def _mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _call_names(body: list[ast.stmt]) -> list[str]:
    return [dotted(n.func) or "" for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Call)]


def _replacement(body: list[ast.stmt], module_var: str) -> ast.AST | None:
    """The statement that swaps or wraps the selected module (``setattr`` of a new module, an attribute or
    ``_modules[...]`` assigned a wrapper of it, a call to a LoRA/adapter/replace helper); None for a hook, a
    print, a freeze, a re-initialisation (``m.weight.data = ...``)."""
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call):
                leaf = (dotted(node.func) or "").rsplit(".", 1)[-1].lower()
                if leaf in _REPLACERS:
                    new = node.args[-1] if node.args else None
                    if isinstance(new, (ast.Call, ast.Name)):
                        return node
                elif any(w in leaf for w in ("lora", "adapter", "inject", "replace", "wrap")):
                    return node
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in node.targets) and \
                    not any(isinstance(t, ast.Attribute) and t.attr in ("requires_grad", "weight", "bias", "data")
                            for t in node.targets) and \
                    any(isinstance(a, ast.Name) and a.id == module_var for a in node.value.args):
                return node
    return None


def _is_linear_test(test: ast.AST | None, module_var: str) -> bool:
    return test is not None and any(
        isinstance(n, ast.Call) and dotted(n.func) == "isinstance" and len(n.args) == 2 and _mentions(n.args[0], module_var)
        and (dotted(n.args[1]) or "").rsplit(".", 1)[-1] == "Linear" for n in ast.walk(test))


def _test_words(ctx, view, test, name_var: str, inner: dict, fn_scope: str):
    """(word, tested as substring) pairs a name test selects on; [] for no name test; None when a list it
    reads cannot be resolved (with the reason)."""
    if test is None:
        return [], "", None
    out: list[tuple[str, bool]] = []
    via = None

    def strings(expr: ast.AST) -> list[str] | None:
        nonlocal via
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return [expr.value]
        if isinstance(expr, (ast.Tuple, ast.List, ast.Set)) and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in expr.elts):
            return [e.value for e in expr.elts]  # type: ignore[attr-defined]
        value, where = _value_of(ctx, expr, view.path, fn_scope, getattr(expr, "lineno", 1))
        names, _ = _as_names(value) if value is not None else (None, "")
        via = via or where
        return names

    def is_name(expr: ast.AST) -> bool:  # name, name.split(".")[-1], name.lower()
        while isinstance(expr, (ast.Subscript, ast.Call)):
            expr = expr.value if isinstance(expr, ast.Subscript) else expr.func
            if isinstance(expr, ast.Attribute) and expr.attr in ("split", "rsplit", "lower", "strip"):
                expr = expr.value
        return isinstance(expr, ast.Name) and expr.id == name_var

    def visit(node: ast.AST) -> bool:
        if isinstance(node, ast.BoolOp):
            return all(visit(v) for v in node.values)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not _mentions(node, name_var)  # an exclusion beside the selection
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right, op = node.left, node.comparators[0], node.ops[0]
            if isinstance(op, ast.NotIn):
                return not _mentions(node, name_var)
            if isinstance(op, ast.In) and is_name(right):
                if isinstance(left, ast.Name) and left.id in inner:  # for t in targets: if t in name
                    got = strings(inner[left.id])
                else:
                    got = strings(left)
                if got is None:
                    return False
                out.extend((w, True) for w in got)
                return True
            if isinstance(op, (ast.In, ast.Eq)) and is_name(left):
                got = strings(right)
                if got is None:
                    return False
                out.extend((w, False) for w in got)
                return True
            return not _mentions(node, name_var)
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in ("endswith", "startswith") and is_name(func.value) and node.args:
                arg = node.args[0]
                got = strings(inner[arg.id]) if isinstance(arg, ast.Name) and arg.id in inner else strings(arg)
                if got is None:
                    return False
                out.extend((w, func.attr == "startswith") for w in got)
                return True
            if dotted(func) in ("any", "all") and node.args and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp)):
                gen = node.args[0]
                if len(gen.generators) == 1 and isinstance(gen.generators[0].target, ast.Name):
                    var = gen.generators[0].target.id
                    local = {**inner, var: gen.generators[0].iter}
                    saved = dict(inner)
                    inner.update(local)
                    ok = visit(gen.elt)
                    inner.clear()
                    inner.update(saved)
                    return ok
            return not _mentions(node, name_var)
        return not _mentions(node, name_var)

    if not visit(test):
        return None, "the names the injection selects cannot be resolved statically", via
    return out, "", via


# ----- attributes assigned a LoRA / adapter layer ----------------------------------------------------------
def _attribute_sites(ctx, lex: Lexicon, scope: str | None) -> list[Site]:
    words = tuple(w for ws in lex.layer_words.values() for w in ws)
    pattern = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)
    classes = ctx.memo("protocol.target_modules.classes", lambda: _classes(ctx))
    grouped: dict[tuple[str, str], list[tuple[int, int, str, frozenset[str] | None, str, str]]] = {}
    slice_lines: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for view in views_mentioning(ctx, (), scope, pattern=pattern, ml_only=True):
        for node in nodes_of(ctx, view, (ast.Assign, ast.Call)):  # the only nodes _placed accepts
            placed = _placed(node)
            if placed is None:
                continue
            chain, call = placed
            callee = dotted(call.func) or ""
            qual = view.imports.get(callee.split(".", 1)[0], "")
            loralib = qual == "loralib" or qual.startswith("loralib.")
            method = "lora" if loralib else lex.method_of(callee.rsplit(".", 1)[-1])
            if method == "any":
                continue  # nn.Linear, a plain module: not an adapter being placed
            families, why = lex.families_of(chain)
            if families is None and "maps to no module family" in why:
                continue  # ``self.adapter = Adapter(d)``: the attribute is the adapter itself, not a module it targets
            where: list[tuple[str, int]] = []
            if families is not None and families == frozenset(_QKV):
                families, why, where = _fused_part(ctx, view, call, callee, loralib, classes, families)
            fn_scope = innermost_scope(view, node)
            if not scope_admits(scope, fn_scope):
                continue
            grouped.setdefault((view.path, fn_scope), []).append(
                (node.lineno, getattr(node, "end_lineno", node.lineno), chain, families, why, method))
            slice_lines.setdefault((view.path, fn_scope), []).extend(where)
    out = []
    for (path, fn_scope), items in sorted(grouped.items()):
        items.sort()
        methods = {m for *_, m in items}
        method = methods.pop() if len(methods) == 1 else "any"
        names = tuple(sorted({c for _, _, c, _, _, _ in items}))
        how = "LoRA/adapter layers assigned to " + ", ".join(f"`{n}`" for n in names)
        bad = next((why for _, _, _, f, why, _ in items if f is None), "")
        families = None if bad else frozenset().union(*(f for _, _, _, f, _, _ in items))
        out.append(Site(path, items[0][0], items[0][1], how, method, names, families, bad,
                        slices=tuple(sorted(set(slice_lines.get((path, fn_scope), []))))))
    return out


def _placed(node: ast.AST) -> tuple[str, ast.Call] | None:
    """``x.attn.qkv = Wrapper(...)`` or ``setattr(x.attn, "qkv", Wrapper(...))``: (target chain, the call)."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute) \
            and isinstance(node.value, ast.Call):
        chain = dotted(node.targets[0])
        return (chain, node.value) if chain else None
    if isinstance(node, ast.Call) and dotted(node.func) == "setattr" and len(node.args) == 3 and \
            isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str) and isinstance(node.args[2], ast.Call):
        owner = dotted(node.args[0]) or ""
        return f"{owner}.{node.args[1].value}".strip("."), node.args[2]
    return None


def _fused_part(ctx, view, call: ast.Call, callee: str, loralib: bool, classes, families):
    """Which of query/key/value a fused-qkv layer adapts: loralib's ``enable_lora=[True, False, True]``, or the
    slices the wrapper's forward adds its low-rank terms to (with the lines that say so); the whole triple
    otherwise."""
    if loralib and callee.endswith("MergedLinear"):
        flags = next((k.value for k in call.keywords if k.arg == "enable_lora"), None)
        if flags is None:
            return families, "", []
        value, _ = _value_of(ctx, flags, view.path, innermost_scope(view, call), call.lineno)
        if isinstance(value, (list, tuple)) and len(value) == 3 and all(isinstance(v, bool) for v in value):
            return frozenset(f for f, on in zip(_QKV, value) if on), "", []
        return None, "loralib MergedLinear's enable_lora cannot be resolved", []
    found = classes.get(callee.rsplit(".", 1)[-1])
    if found is None:
        return families, "", []
    path, cls = found
    parts, lines = _slices_added(cls)
    if parts is None:
        return None, f"`{cls.name}` adds its terms to slices of the fused qkv that cannot be told apart", []
    if not parts:
        return families, "", []
    return frozenset(_QKV[i] for i in parts), "", [(path, n) for n in lines]


def _classes(ctx) -> dict[str, tuple[str, ast.ClassDef]]:
    out: dict[str, tuple[str, ast.ClassDef]] = {}
    for view in views_mentioning(ctx, ("class ",), ml_only=True):
        for node in nodes_of(ctx, view, (ast.ClassDef,)):
            out.setdefault(node.name, (view.path, node))
    return out


def _slices_added(cls: ast.ClassDef) -> tuple[set[int] | None, list[int]]:
    """Indices (0 query, 1 key, 2 value) of the fused output's thirds the forward adds to, and the lines (the
    forward's header first); empty when it adds to none (the whole output is adapted); None when a slice
    cannot be placed."""
    forward = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    if forward is None:
        return set(), []
    out: set[int] = set()
    lines = [forward.lineno]
    thirds: dict[str, int] = {}
    for node in ast.walk(forward):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple) \
                and len(node.targets[0].elts) == 3 and isinstance(node.value, ast.Call) \
                and (dotted(node.value.func) or "").rsplit(".", 1)[-1] in ("chunk", "split", "unbind"):
            thirds.update({e.id: i for i, e in enumerate(node.targets[0].elts) if isinstance(e, ast.Name)})
    for node in ast.walk(forward):
        target = None
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
            target = node.target
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.BinOp) \
                and isinstance(node.value.op, ast.Add) and ast.unparse(node.value.left) == ast.unparse(node.targets[0]):
            target = node.targets[0]
        if isinstance(target, ast.Name) and target.id in thirds:
            out.add(thirds[target.id])
            lines.append(node.lineno)
        elif isinstance(target, ast.Subscript):
            index = target.slice.elts[-1] if isinstance(target.slice, ast.Tuple) and target.slice.elts else target.slice
            if not isinstance(index, ast.Slice):
                continue
            third = _third(index)
            if third is None:
                return None, []
            out.add(third)
            lines.append(node.lineno)
    return out, lines


def _third(index: ast.Slice) -> int | None:
    def negative(n):
        return isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub)

    def doubled(n):
        return isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) and any(
            isinstance(s, ast.Constant) and s.value == 2 for s in (n.left, n.right))

    lower, upper = index.lower, index.upper
    if index.step is not None:
        return None
    if lower is None and upper is not None and not negative(upper) and not doubled(upper):
        return 0
    if upper is None and lower is not None and (negative(lower) or doubled(lower)):
        return 2
    if lower is not None and not negative(lower) and not doubled(lower) and upper is not None and (negative(upper) or doubled(upper)):
        return 1
    return None


# ----- verdict ---------------------------------------------------------------------------------------------
def _expected(lex: Lexicon, expect: list[str]) -> tuple[frozenset[str], list[frozenset[str]], str]:
    required: set[str] = set()
    groups: list[frozenset[str]] = []
    for item in expect:
        key = str(item).strip().lower()
        if key in lex.families:
            required.add(key)
        elif key in lex.shorthands:
            required |= lex.shorthands[key]
        elif key in lex.groups:
            groups.append(lex.groups[key])
        else:
            known = sorted(lex.families | set(lex.shorthands) | set(lex.groups))
            return frozenset(), [], f"`{item}` is not a module family ({', '.join(known)})"
    return frozenset(required), groups, ""


def compare(found: frozenset[str], required: frozenset[str], groups: list[frozenset[str]]) -> float:
    """1 exact; 0.75 every claimed family and more; 0.5 an overlap with a claimed family absent; 0 disjoint."""
    allowed = required.union(*groups) if groups else required
    covers = required <= found and all(found & g for g in groups)
    if covers:
        return 1.0 if found <= allowed else 0.75
    return 0.5 if found & allowed else 0.0


def find_sites(ctx, scope: str | None, rule: dict) -> list[Site]:
    lex = ctx.memo("protocol.target_modules.lexicon", lambda: Lexicon(rule))
    sites = _peft_sites(ctx, lex, scope) + _loop_sites(ctx, lex, scope) + _attribute_sites(ctx, lex, scope)
    unique = {(s.file, s.line, s.how): s for s in sites}
    return [unique[k] for k in sorted(unique)]


def _evidence(ctx, site: Site) -> list:
    ev = [evidence(ctx, site.file, site.line, "rule", end=site.end_line)]
    if site.via is not None:
        ev.append(evidence(ctx, site.via[0], site.via[1], "effective"))
    ev += [evidence(ctx, f, n, "rule", note="the low-rank term added to this part of the fused qkv") for f, n in site.slices]
    return ev


def _label(families) -> str:
    order = ["query", "key", "value", "attention-output", "mlp-in", "mlp-out", "embedding", "head"]
    return ", ".join(sorted(families, key=lambda f: (order.index(f) if f in order else 99, f)))


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    lex = ctx.memo("protocol.target_modules.lexicon", lambda: Lexicon(rule))
    required, groups, bad = _expected(lex, list(params["expect"]))
    if bad:
        return CheckResult.unverified(KIND, bad)
    method = str(params.get("method") or "any")
    sites = ctx.memo(f"protocol.target_modules.sites:{scope or ''}", lambda: find_sites(ctx, scope, rule))
    sites = [s for s in sites if method == "any" or s.method in (method, "any")]
    claimed = _label(required | set().union(*groups)) if groups else _label(required)
    if not sites:
        return CheckResult.failed(KIND, Status.missing, f"no placement of {'the method' if method == 'any' else method} "
                                  "found (a PEFT target_modules, an injection loop, a wrapped module)", [])
    resolved = [(s, compare(s.families, required, groups)) for s in sites if s.families is not None]
    resolved.sort(key=lambda t: (-t[1], t[0].file, t[0].line))
    if resolved and resolved[0][1] == 1.0:
        s = resolved[0][0]
        return CheckResult.passed(KIND, f"attached to {_label(s.families)} via {s.how} ({s.file}:{s.line})",
                                  sorted_evidence(_evidence(ctx, s)))
    unresolved = [s for s in sites if s.families is None]
    if unresolved:
        s = unresolved[0]
        return CheckResult.unverified(KIND, f"{s.reason} ({s.file}:{s.line})", evidence=sorted_evidence(_evidence(ctx, s)))
    s, score = resolved[0]
    got = _label(s.families)
    message = f"attached to {got} via {s.how} ({s.file}:{s.line}), not {claimed}"
    if score == 0.0:
        return CheckResult.failed(KIND, Status.mismatch, message, sorted_evidence(_evidence(ctx, s)), found=got)
    return CheckResult.partial(KIND, score, message, sorted_evidence(_evidence(ctx, s)), found=got)
