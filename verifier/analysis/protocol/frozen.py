"""Rule ``frozen``: no gradient reaches the named parameters or model (a frozen reference / pretrained base).

Barriers: ``requires_grad_(False)`` / ``.requires_grad = False`` (directly, over ``.parameters()``, or over the
``named_parameters()`` a name test selects), calls of
it under ``torch.no_grad()``/``inference_mode()``, ``.detach()`` of its output, ``jax.lax.stop_gradient``,
PEFT's ``get_peft_model`` (freezes the base), a repo ``freeze*`` helper, or being left out of every optimizer.
Counter-evidence: an optimizer built over the named object's parameters with no barrier.
"""

from __future__ import annotations

import ast
import dataclasses
import re

from verifier.analysis.protocol.common import (
    FileView,
    dotted,
    evidence,
    norm,
    scope_admits,
    sorted_evidence,
    tokens,
    views_mentioning,
)
from verifier.results import CheckResult, Status

KIND = "protocol"
OPTIMIZERS = {"SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adafactor", "Lion", "LAMB", "Adadelta", "adam", "adamw",
              "sgd", "lion", "Adam8bit", "AdamW8bit", "PagedAdamW"}


def _mentions(node: ast.AST, key: str) -> bool:
    for n in ast.walk(node):
        if isinstance(n, (ast.Name, ast.Attribute)):
            name = n.id if isinstance(n, ast.Name) else n.attr
            if _same(name, key):
                return True
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and key in norm(n.value) and len(key) > 3:
            return True  # named_parameters() filters: if "base_model" in name
    return False


def _same(name: str, key: str) -> bool:
    n = norm(name)
    return n == key or n.rstrip("s") == key.rstrip("s")


def _barriers(view: FileView, key: str) -> list[tuple[ast.AST, str]]:
    out: list[tuple[ast.AST, str]] = []
    for node in ast.walk(view.tree):
        if isinstance(node, ast.Call):
            name = dotted(node.func) or ""
            leafname = name.rsplit(".", 1)[-1]
            if leafname == "requires_grad_" and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value is False or leafname == "requires_grad_" and not node.args and any(
                    isinstance(k.value, ast.Constant) and k.value.value is False for k in node.keywords):
                if _mentions(node.func, key):
                    out.append((node, "requires_grad_(False)"))
            elif leafname in ("stop_gradient",) and any(_mentions(a, key) for a in node.args):
                out.append((node, "stop_gradient"))
            elif leafname == "detach" and _mentions(node.func, key):
                out.append((node, "detach()"))
            elif leafname == "get_peft_model" and node.args and _mentions(node.args[0], key):
                out.append((node, "PEFT freezes the base model"))
            elif "freeze" in tokens(leafname) and any(_mentions(a, key) for a in list(node.args) + [node.func]):
                out.append((node, f"`{name}(...)`"))
            elif leafname == "register_buffer" and node.args and isinstance(node.args[0], ast.Constant) and \
                    isinstance(node.args[0].value, str) and _same(node.args[0].value, key):
                out.append((node, "a registered buffer (no gradient)"))
        elif isinstance(node, ast.Assign):
            if isinstance(node.value, ast.Call) and (dotted(node.value.func) or "").rsplit(".", 1)[-1] == "Parameter" and any(
                    k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is False
                    for k in node.value.keywords) and any(_mentions(t, key) for t in node.targets):
                out.append((node, "nn.Parameter(..., requires_grad=False)"))
            for target in node.targets:
                if isinstance(target, ast.Attribute) and target.attr == "requires_grad" and \
                        isinstance(node.value, ast.Constant) and node.value.value is False:
                    if _mentions(target.value, key):
                        out.append((node, "requires_grad = False"))
        elif isinstance(node, (ast.For, ast.AsyncFor)) and not _mentions(node.iter, key) and _name_filtered_freeze(node, key):
            out.append((node, "requires_grad = False on the parameters whose names it selects"))
        elif isinstance(node, (ast.For, ast.AsyncFor)) and _mentions(node.iter, key):
            for sub in node.body:
                for n in ast.walk(sub):
                    if isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in n.targets) \
                            and isinstance(n.value, ast.Constant) and n.value.value is False:
                        out.append((node, "requires_grad = False over its parameters"))
                    elif isinstance(n, ast.Call) and (dotted(n.func) or "").endswith("requires_grad_") and n.args and \
                            isinstance(n.args[0], ast.Constant) and n.args[0].value is False:
                        out.append((node, "requires_grad_(False) over its parameters"))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            if any((dotted(i.context_expr.func if isinstance(i.context_expr, ast.Call) else i.context_expr) or "")
                   .rsplit(".", 1)[-1] in ("no_grad", "inference_mode") for i in node.items):
                for sub in node.body:
                    for n in ast.walk(sub):
                        if isinstance(n, ast.Call) and _mentions(n.func, key):
                            out.append((node, "its forward runs under no_grad"))
                            break
    return out


def _name_filtered_freeze(loop: ast.For | ast.AsyncFor, key: str) -> bool:
    """``for n, p in model.named_parameters(): if not n.startswith("head"): p.requires_grad = False``: the
    parameters a name test selects are frozen; does that selection take in ``key``?"""
    call = loop.iter
    if not (isinstance(call, ast.Call) and (dotted(call.func) or "").endswith("named_parameters")):
        return False
    if not (isinstance(loop.target, ast.Tuple) and loop.target.elts and isinstance(loop.target.elts[0], ast.Name)):
        return False
    var = loop.target.elts[0].id

    def selects(test: ast.AST) -> bool | None:
        """Whether the test holds for a parameter of ``key`` (None: not a test on the name we can read)."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = selects(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            parts = [selects(v) for v in test.values]
            if any(x is None for x in parts):
                return None
            return all(parts) if isinstance(test.op, ast.And) else any(parts)
        words, negate = _name_test(test, var)
        if words is None:
            return None
        hit = any(_part_of(w, key) for w in words)
        return not hit if negate else hit

    def freezes(body: list[ast.stmt], holds: bool) -> bool:
        for stmt in body:
            if isinstance(stmt, ast.If):
                verdict = selects(stmt.test)
                if verdict is None:
                    continue
                if freezes(stmt.body, holds and verdict) or freezes(stmt.orelse, holds and not verdict):
                    return True
            elif holds and _sets_no_grad(stmt):
                return True
        return False

    return any(isinstance(stmt, ast.If) for stmt in loop.body) and freezes(loop.body, True)


def _name_test(test: ast.AST, var: str) -> tuple[list[str] | None, bool]:
    """The strings a test on the parameter name ``var`` looks for (``"head" in n``, ``n.startswith(("a", "b"))``)
    and whether it is negated (``not in``); (None, False) when it is no such test or they are not literals."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Name) \
            and test.comparators[0].id == var and isinstance(test.ops[0], (ast.In, ast.NotIn)):
        return _strings(test.left), isinstance(test.ops[0], ast.NotIn)
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and isinstance(test.func.value, ast.Name) \
            and test.func.value.id == var and test.func.attr in ("startswith", "endswith") and test.args:
        return _strings(test.args[0]), False
    return None, False


def _strings(node: ast.AST) -> list[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [e.value for e in node.elts]
    return None


def _part_of(word: str, key: str) -> bool:
    """A parameter-name filter ("backbone.", "blocks.0") selects ``key`` when they name the same part."""
    w = norm(word)
    return bool(w) and (w == key or (len(w) > 3 and (w in key or key in w)))


def _sets_no_grad(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in stmt.targets):
        return isinstance(stmt.value, ast.Constant) and stmt.value.value is False
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        return (dotted(call.func) or "").endswith("requires_grad_") and bool(call.args) and \
            isinstance(call.args[0], ast.Constant) and call.args[0].value is False
    return False


def _optimizers(view: FileView) -> list[ast.Call]:
    out = []
    for call in view.calls:
        if call.leaf in OPTIMIZERS and (call.qual.startswith(("torch.optim", "optax", "bitsandbytes", "transformers"))
                                        or call.name.startswith(("optim.", "torch.optim.", "optax."))):
            out.append(call.node)
    return out


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    """The name as written; when nothing is called so, the spec's aliases of it, then (for a paper symbol such
    as ``B``) the code names ending in it (``lora_B``): pass if one of them is frozen."""
    raw = str(params["name"])
    alternates = other_spellings(ctx, raw, scope)
    if not (_SYMBOL.fullmatch(raw) and alternates):
        # a one-letter symbol is a code name's word piece (lora_B) before it is a variable (B, T, C = x.shape)
        result = _evaluate(raw, ctx, scope, symbol=bool(_SYMBOL.fullmatch(raw)) and raw[0].isupper() and not alternates)
        if result.status is not Status.missing or not alternates:
            return result
    tried = [(alt, _evaluate(alt, ctx, scope)) for alt in alternates]
    found = [t for t in tried if t[1].status is not Status.missing]
    if not found:
        return _evaluate(raw, ctx, scope, symbol=bool(_SYMBOL.fullmatch(raw)) and raw[0].isupper())
    alt, best = next((t for t in found if t[1].status is Status.pass_), found[0])
    return dataclasses.replace(best, message=f"`{raw}` is `{alt}` in the code: {best.message}")


_SYMBOL = re.compile(r"[A-Za-z][0-9]?")


def other_spellings(ctx, raw: str, scope: str | None) -> list[str]:
    """The spec's aliases of ``raw``, then for a one-letter paper symbol the identifiers that end in it as a
    word piece, case kept (``lora_B``, ``W_B`` for ``B``; not ``bias``)."""
    try:
        aliases = dict(ctx.aliases)
    except AttributeError:  # a bare index context (rule examples) has no spec
        aliases = {}
    out = list(aliases.get(raw, []))
    out += [k for k, spellings in aliases.items() if raw in spellings and k != raw]
    out += [s for k, spellings in aliases.items() if raw in spellings for s in spellings if s != raw]
    if _SYMBOL.fullmatch(raw):
        ending = re.compile(rf"^[A-Za-z][A-Za-z0-9]*_{re.escape(raw)}$")
        for view in views_mentioning(ctx, [f"_{raw}"], scope):
            for node in ast.walk(view.tree):
                name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
                if name and ending.match(name):
                    out.append(name)
    return list(dict.fromkeys(n for n in out if n != raw))  # first spelling first


def _evaluate(raw: str, ctx, scope: str | None, symbol: bool = False) -> CheckResult:
    """``symbol``: ``raw`` is a paper symbol no code name ends in; a bare ``B`` in the code may be anything
    (a batch size), so only a barrier or an optimizer over it decides, else it stays unverified."""
    key = norm(raw.rsplit(".", 1)[-1])
    variants = sorted({raw, raw.rsplit(".", 1)[-1], raw.replace("_", ""), raw.rstrip("s")})
    views = views_mentioning(ctx, variants, scope)
    barriers, trained, seen = [], [], []
    for view in views:
        found_name = False
        for node in ast.walk(view.tree):
            if isinstance(node, (ast.Name, ast.Attribute)) and _same(node.id if isinstance(node, ast.Name) else node.attr, key):
                found_name = True
                seen.append((view, node))
                break
        if not found_name:
            continue
        barriers += [(view, n, why) for n, why in _barriers(view, key)]
        for opt in _optimizers(view):
            params_arg = opt.args[0] if opt.args else next((k.value for k in opt.keywords if k.arg in ("params", "parameters")), None)
            if params_arg is not None and _mentions(params_arg, key) and "requires_grad" not in ast.unparse(params_arg):
                trained.append((view, opt))
    barriers = [b for b in barriers if scope_admits(scope, _scope_of(b[0], b[1]))]
    if barriers:
        ev = [evidence(ctx, v.path, n, "rule", note=why) for v, n, why in barriers[:4]]
        return CheckResult.passed(KIND, f"`{raw}` is frozen: {barriers[0][2]} ({barriers[0][0].path}:{barriers[0][1].lineno})",
                                  sorted_evidence(ev))
    if trained:
        v, opt = trained[0]
        return CheckResult.failed(KIND, Status.mismatch, f"the optimizer at {v.path}:{opt.lineno} updates `{raw}`",
                                  [evidence(ctx, v.path, opt, "rule")])
    if symbol:
        return CheckResult.unverified(KIND, f"the paper symbol `{raw}` names no code object (no identifier ends in _{raw}); "
                                            "an alias in the spec says which it is")
    if seen:
        v, node = seen[0]
        return CheckResult.failed(KIND, Status.mismatch, f"`{raw}` is used but nothing stops gradients reaching it",
                                  [evidence(ctx, v.path, node.lineno, "missing-near")])
    return CheckResult.failed(KIND, Status.missing, f"`{raw}` not found in the code", [])


def _scope_of(view: FileView, node: ast.AST) -> str:
    line = getattr(node, "lineno", 0)
    best = "<module>"
    for qual, fn in view.functions.items():
        if fn.node.lineno <= line <= (fn.node.end_lineno or fn.node.lineno):
            best = qual
    return best
