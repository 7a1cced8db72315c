"""Rule ``eval-mode``: evaluation runs the model in eval mode without gradients, and training resumes train mode.

Evaluation functions are repo functions named for evaluation (``evaluate``, ``validate``, ``test_epoch``) or
run on held-out data (from the split flow), that never back-propagate. Eval mode may be set in the function
or by its caller just before the call; JAX/Flax code passes ``train=False`` / ``deterministic=True`` instead
and needs no ``no_grad``. Framework-managed loops (Lightning ``validation_step``, HF ``trainer.evaluate()``,
Keras ``model.evaluate``) switch modes themselves.
"""

from __future__ import annotations

import ast
import bisect
import builtins
from dataclasses import dataclass

from verifier.analysis.protocol.common import (
    FileView,
    built_view,
    dotted,
    evidence,
    file_view,
    nodes_of,
    per_node,
    python_paths,
    scope_admits,
    sorted_evidence,
    text_of,
    tokens,
    views_mentioning,
    walk_list,
)
from verifier.analysis.protocol.flow import flow
from verifier.index.facts import Language
from verifier.results import CheckResult, Status

KIND = "protocol"
EVAL_TOKENS = {"eval", "evaluate", "evaluation", "test", "testing", "validate", "validation", "val", "valid", "evaluator"}
NO_GRAD = {"no_grad", "inference_mode", "enable_grad"}
DETERMINISTIC_KW = {("train", False), ("training", False), ("is_training", False), ("deterministic", True), ("train_mode", False)}
FRAMEWORK_STEPS = {"validation_step", "test_step", "predict_step", "validation_epoch_end", "test_epoch_end"}
CHECKED_TOKENS = {"args", "arguments", "argument", "config", "configs", "inputs", "input", "params", "kwargs", "shape",
                  "shapes", "type", "types", "keys", "options", "settings", "schema", "dtype"}
LOADER_TOKENS = {"get", "load", "read", "download", "prepare", "examples", "collate", "split"}
# A module's own methods: called on held-out data by the evaluation, never the evaluation routine itself
MODEL_METHODS = {"forward", "call", "apply", "setup", "extra_repr"}
ML_IMPORTS = ("torch", "jax", "flax", "haiku", "equinox", "lightning", "pytorch_lightning", "tensorflow", "keras", "transformers")


@dataclass
class EvalFn:
    view: FileView
    qual: str
    node: ast.FunctionDef


def _is_backward(n: ast.Call) -> bool:
    if isinstance(n.func, ast.Attribute):
        if n.func.attr == "backward":
            return True
        if n.func.attr in ("step", "apply_gradients") and set(tokens(dotted(n.func.value) or "")) & {
            "opt", "optim", "optimizer", "state"
        }:
            return True
    return (dotted(n.func) or "").rsplit(".", 1)[-1] in ("grad", "value_and_grad")


@dataclass(frozen=True, slots=True)
class BodySites:
    """What :func:`judge` asks of a function body (or module), from one walk of it, each list in ``ast.walk``
    order as :func:`_eval_calls`, :func:`_no_grad_withs` and :func:`_train_calls` return it."""

    eval_calls: tuple[ast.Call, ...]
    no_grad_withs: tuple[ast.AST, ...]
    train_calls: tuple[ast.Call, ...]
    backward: bool


def _sites(ctx, node, view: FileView | None = None) -> BodySites:
    """The sites of a function body, or of a whole module (``view.tree``). With the file's view, from the file's
    sites (:func:`_file_sites`: its one shared node list, scanned once) instead of a walk of the body."""
    if view is None:
        return _per_node(ctx, "sites", node, lambda: _body_sites(walk_list(node)))
    return _per_node(ctx, "sites", node, lambda: _sites_within(_file_sites(ctx, view), node, view.tree))


@dataclass(frozen=True, slots=True)
class _Site:
    """A call or ``with`` of a file that :func:`_body_sites` would keep, with its source span."""

    start: tuple[int, int]
    end: tuple[int, int]
    node: ast.AST
    evals: tuple[ast.Call, ...]
    train: bool
    backward: bool
    withs: tuple[ast.AST, ...]


def _file_sites(ctx, view: FileView) -> tuple[_Site, ...]:
    """Every site of the file, in ``ast.walk`` order of the whole tree: the nodes of a function are a subtree, and a
    breadth-first walk lists a subtree's nodes in the order a walk of that subtree alone lists them (by depth, then
    by the path from their common ancestor), so a body's sites are the file's sites inside it, in this order."""

    def make() -> tuple[_Site, ...]:
        out = []  # the calls, then the withs (each kind of site in walk order: BodySites keeps the kinds apart)
        for n in nodes_of(ctx, view, (ast.Call,)):
            func = n.func
            kind = type(func)
            if not (kind is ast.Attribute and func.attr in _SITE_ATTRS or kind is ast.Name and func.id in _GRAD_NAMES
                    or kind is not ast.Attribute and kind is not ast.Name
                    or any(isinstance(kw.value, ast.Constant) for kw in n.keywords)):
                continue  # (none of the three tests below can hold: `x.mean()`, `print(y)`)
            evals, train, backward = tuple(_eval_calls_at(n)), _is_train_call(n), _is_backward(n)
            if evals or train or backward:
                out.append(_Site((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset), n, evals, train, backward,
                                 ()))
        for n in nodes_of(ctx, view, (ast.With, ast.AsyncWith)):
            withs = tuple(_no_grad_withs_at(n))
            if withs:
                out.append(_Site((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset), n, (), False, False, withs))
        return tuple(out)

    return ctx.memo(f"protocol.eval_mode.file_sites:{view.path}", make)


# What a call's function must end in for it to be a site: eval/train mode, back-propagation, an optimizer step,
# a JAX gradient (with a constant keyword, any call may pass `train=False`).
_GRAD_NAMES = frozenset({"grad", "value_and_grad"})
_SITE_ATTRS = frozenset({"eval", "train", "backward", "step", "apply_gradients"}) | _GRAD_NAMES


def _sites_within(sites: tuple[_Site, ...], node, tree) -> BodySites:
    """The sites below ``node`` (a function, or the module): those inside its source span. A function's span runs
    from its first decorator to its last line, and no node outside the function lies in it (a ``def`` is a
    statement: nothing else shares its text)."""
    if node is not tree:
        start, end = _span(node)
        sites = tuple(s for s in sites if start <= s.start and s.end <= end)
    return BodySites(tuple(c for s in sites for c in s.evals), tuple(w for s in sites for w in s.withs),
                     tuple(s.node for s in sites if s.train), any(s.backward for s in sites))


def _span(fn) -> tuple[tuple[int, int], tuple[int, int]]:
    first = min([(d.lineno, d.col_offset) for d in fn.decorator_list] + [(fn.lineno, fn.col_offset)])
    return first, (fn.end_lineno, fn.end_col_offset)


def _body_sites(nodes) -> BodySites:
    """From a body's nodes in ``ast.walk`` order (less the nodes without fields: neither calls nor withs)."""
    evals: list = []
    withs: list = []
    trains: list = []
    backward = False
    for n in nodes:
        kind = type(n)
        if kind is ast.Call:
            evals.extend(_eval_calls_at(n))
            if _is_train_call(n):
                trains.append(n)
            if not backward and _is_backward(n):
                backward = True
        elif kind is ast.With or kind is ast.AsyncWith:
            withs.extend(_no_grad_withs_at(n))
    return BodySites(tuple(evals), tuple(withs), tuple(trains), backward)


# builtins and exceptions (`raise ValueError(msg.format(...))` in a config's `validate` runs no model)
_PLAIN = frozenset(name for name in dir(builtins) if not name.startswith("_"))


def _calls_a_model(view: FileView, node) -> bool:
    """Some call that is not a library function or builtin: ``model(x)``, ``self.policy.act(obs)``."""
    for n in walk_list(node):
        if type(n) is ast.Call:
            if _model_call(view, dotted(n.func) or ""):
                return True
    return False


def _model_call(view: FileView, name: str) -> bool:
    root = name.split(".")[0]
    return bool(name) and root not in view.imports and root not in _PLAIN and name.rsplit(".", 1)[-1] not in (
        "append", "item", "to", "size", "format", "join", "keys", "items", "values", "update", "get")


def _calls_a_model_in(ctx, view: FileView, fn) -> bool:
    """:func:`_calls_a_model` of a function of the file, from the file's calls (every call with a name, which is
    every call the test can accept) inside the function's span, found by position instead of by a walk."""
    starts, calls = ctx.memo(f"protocol.eval_mode.calls_by_position:{view.path}", lambda: _calls_by_position(view))
    start, end = _span(fn)
    for i in range(bisect.bisect_left(starts, start), len(starts)):
        if starts[i] > end:
            break
        call = calls[i]
        if (call.node.end_lineno, call.node.end_col_offset) <= end and _model_call(view, call.name):
            return True
    return False


def _calls_by_position(view: FileView):
    ordered = sorted(((c.node.lineno, c.node.col_offset), i) for i, c in enumerate(view.calls))
    return [p for p, _ in ordered], [view.calls[i] for _, i in ordered]


def _is_jax(view: FileView) -> bool:
    return any(v.split(".")[0] in ("jax", "flax", "haiku", "equinox", "optax") for v in view.imports.values())


def _ml_file(view: FileView) -> bool:
    return any(v.lstrip(".").split(".")[0] in ML_IMPORTS for v in view.imports.values())


# What BodySites gathers in one pass, per node (tests/test_protocol_shortcuts.py keeps the per-kind walks it replaced).
def _eval_calls_at(n: ast.Call) -> list[ast.Call]:
    """``n`` once if it sets eval mode, once more per deterministic keyword it passes."""
    out = []
    if isinstance(n.func, ast.Attribute):
        if n.func.attr == "eval" and not n.args and not n.keywords or n.func.attr == "train" and n.args and isinstance(n.args[0], ast.Constant) and n.args[0].value is False:
            out.append(n)
    for kw in n.keywords:
        if isinstance(kw.value, ast.Constant) and (kw.arg, kw.value.value) in DETERMINISTIC_KW:
            out.append(n)
    return out


def _is_train_call(n: ast.Call) -> bool:
    return (isinstance(n.func, ast.Attribute) and n.func.attr == "train"
            and (not n.args or (isinstance(n.args[0], ast.Constant) and n.args[0].value is True)) and not n.keywords)


def _no_grad_withs_at(n) -> list[ast.AST]:
    """``n`` once per item that turns gradients off."""
    out = []
    for item in n.items:
        expr = item.context_expr
        name = dotted(expr.func if isinstance(expr, ast.Call) else expr) or ""
        leafname = name.rsplit(".", 1)[-1]
        if leafname in ("no_grad", "inference_mode") or leafname == "set_grad_enabled" and isinstance(expr, ast.Call) and expr.args and \
                isinstance(expr.args[0], ast.Constant) and expr.args[0].value is False:
            out.append(n)
    return out


def _decorated_no_grad(fn) -> ast.AST | None:
    for deco in fn.decorator_list:
        name = dotted(deco.func if isinstance(deco, ast.Call) else deco) or ""
        if name.rsplit(".", 1)[-1] in ("no_grad", "inference_mode"):
            return deco
    return None


def find_eval_functions(ctx, scope) -> list[EvalFn]:
    glob = scope if scope and ("/" in scope or scope.endswith(".py")) else None
    held_out_callees = {e.callee for e in flow(ctx, glob).of("eval-call")
                        if any(kind in ("val", "test") and _origin_here(ctx, e, origin) for kind, origin in e.kinds.items())}
    out = []
    admit = (lambda path: _may_define_one(ctx, path, held_out_callees)) if _indexed_definitions(ctx) else None
    for view in views_mentioning(ctx, ML_IMPORTS, glob, ml_only=True, admit=admit):
        if not _ml_file(view):
            continue
        for qual, fn in sorted(view.functions.items()):
            if not scope_admits(scope, qual) or fn.name in FRAMEWORK_STEPS:
                continue
            if not _may_evaluate(fn.name, held_out_callees):
                continue
            toks = set(tokens(fn.name))
            named = bool(toks & EVAL_TOKENS) and not toks & {"train", "fit"}
            if fn.name.startswith("test_") and view.path.rsplit("/", 1)[-1].startswith("test_"):
                continue
            if _backward_in(ctx, fn.node, view) or (not named and _trains(ctx, view, fn)):
                continue
            if not _calls_a_model_in(ctx, view, fn.node):
                continue
            out.append(EvalFn(view, qual, fn.node))
    return out


def _origin_here(ctx, event, origin) -> bool:
    """Was the held-out data made (loaded, split, iterated) in the function that makes the call? ``evaluate(model,
    val_loader)`` next to the loader's creation is an evaluation; the functions the data reaches further down (a
    cache's ``update`` inside ``model.generate``) are the model's internals, not evaluation routines."""
    if origin.file != event.file:
        return False
    view = file_view(ctx, event.file)
    fn = view.functions.get(event.scope) if view is not None else None
    if fn is None:
        return True  # module level: the file's own data
    return fn.node.lineno <= origin.line <= (fn.node.end_lineno or fn.node.lineno)


def _may_evaluate(name: str, held_out_callees: set[str]) -> bool:
    """The name test of :func:`find_eval_functions`: named for evaluation, or run on held-out data."""
    if name in MODEL_METHODS or (name.startswith("__") and name.endswith("__")):
        return False  # `super().__init__(config)`, a module's `forward`: the model run on held-out data, not the evaluation
    toks = set(tokens(name))
    if toks & LOADER_TOKENS:
        return False  # `get_test_examples`, `load_val_split`: it fetches the held-out data, it does not evaluate on it
    if toks & {"validate", "check", "test"} and toks & CHECKED_TOKENS:
        return False  # `_validate_arguments`, `validate_config`: checks its inputs, not a model
    named = bool(toks & EVAL_TOKENS) and not toks & {"train", "fit"}
    return named or (name in held_out_callees and not toks & {"train", "fit", "run", "main"})


def _indexed_definitions(ctx) -> bool:
    return ctx.memo("protocol.eval_mode.indexed", lambda: any(f.definitions for f in ctx.index.files.values()))


def _may_define_one(ctx, path: str, held_out_callees: set[str]) -> bool:
    """Could this file hold an evaluation function? Not when the index parsed it cleanly (every def of it is among
    its definitions, nested ones too) and none of its function names passes the name test: then it is never parsed
    for eval-mode. A file the index could not parse cleanly, or a notebook, is parsed as before."""
    facts = ctx.index.files.get(path)
    if facts is None or facts.parse_error is not None or facts.language is not Language.python:
        return True
    return any(d.kind in ("function", "method") and _may_evaluate(d.name, held_out_callees) for d in facts.definitions)


class _Caller:
    """One call of an evaluation function's name, with what :func:`judge` asks of the body it sits in, worked out
    once: evaluation functions that share a name (``evaluate``) share their callers."""

    __slots__ = ("view", "call", "owner", "_eval_before", "_no_grad_around", "_trains")
    _UNKNOWN = object()

    def __init__(self, view: FileView, call) -> None:
        self.view = view
        self.call = call
        self.owner = view.functions.get(call.scope)
        self._eval_before = self._no_grad_around = self._trains = self._UNKNOWN

    @property
    def body(self):
        return self.owner.node if self.owner is not None else self.view.tree

    def eval_before(self, ctx):
        """The last eval-mode call of the caller's body at or before the call (``ast.walk`` order), or None."""
        if self._eval_before is self._UNKNOWN:
            before = [c for c in _sites(ctx, self.body, self.view).eval_calls if c.lineno <= self.call.node.lineno]
            self._eval_before = before[-1] if before else None
        return self._eval_before

    def no_grad_around(self, ctx):
        """The first no-grad ``with`` of the caller's body that holds the call, or None."""
        if self._no_grad_around is self._UNKNOWN:
            withs = [w for w in _sites(ctx, self.body, self.view).no_grad_withs if _inside(self.call.node, [w])]
            self._no_grad_around = withs[0] if withs else None
        return self._no_grad_around

    def trains(self, ctx) -> bool:
        """The call sits in a repo function that trains."""
        if self._trains is self._UNKNOWN:
            self._trains = self.owner is not None and _trains(ctx, self.view, self.owner)
        return self._trains


def _callers(ctx, fn: EvalFn) -> list[_Caller]:
    return [c for c in _calls_named(ctx, fn.node.name) if c.call.scope != fn.qual]


def _calls_named(ctx, name: str) -> list:
    """A :class:`_Caller` for every call of that leaf name in the files that mention it, in file order: asked once per
    name (many evaluation functions share one: ``evaluate``, ``test``)."""
    table: dict[str, list] = ctx.memo("protocol.eval_mode.calls_named", dict)
    if name not in table:
        # What ``views_mentioning(ctx, (name,))`` and the calls by leaf give, file by file; a file already parsed
        # is asked for calls of that name first (a look-up), its text only when it has some.
        found = []
        for path in python_paths(ctx):
            built, view = built_view(ctx, path)
            if built:
                calls = _calls_by_leaf(ctx, view).get(name, ()) if view is not None else ()
                if calls and name in text_of(ctx, path):
                    found.extend(_Caller(view, call) for call in calls)
            elif name in text_of(ctx, path):
                view = file_view(ctx, path)
                if view is not None:
                    found.extend(_Caller(view, call) for call in _calls_by_leaf(ctx, view).get(name, ()))
        table[name] = found
    return table[name]


def _calls_by_leaf(ctx, view: FileView) -> dict[str, list]:
    """A file's calls grouped by callee leaf, in file order: each evaluation function looks up its own name."""
    table: dict[str, dict[str, list]] = ctx.memo("protocol.eval_mode.calls_by_leaf", dict)
    if view.path not in table:
        grouped: dict[str, list] = {}
        for call in view.calls:
            grouped.setdefault(call.leaf, []).append(call)
        table[view.path] = grouped
    return table[view.path]


def _inside(node: ast.AST, containers: list[ast.AST]) -> bool:
    return any(c.lineno <= node.lineno <= (c.end_lineno or c.lineno) for c in containers)


def judge(ctx, fn: EvalFn):
    """(score or None for mismatch, message, evidence) for one evaluation function."""
    jax = _is_jax(fn.view)
    ev = [evidence(ctx, fn.view.path, fn.node, "definition")]
    own = _sites(ctx, fn.node, fn.view)
    eval_sites = list(own.eval_calls)
    grad_sites = list(own.no_grad_withs)
    deco = _decorated_no_grad(fn.node)
    if deco is not None:
        grad_sites.append(deco)
    callers = _callers(ctx, fn)
    for caller in callers:
        if not eval_sites:
            before = caller.eval_before(ctx)
            if before is not None:
                eval_sites.append(before)
                ev.append(evidence(ctx, caller.view.path, before, "rule", note="eval mode set by the caller"))
        if not grad_sites:
            around = caller.no_grad_around(ctx)
            if around is not None:
                grad_sites.append(around)
                ev.append(evidence(ctx, caller.view.path, around, "rule", note="no_grad in the caller"))
    for site in eval_sites[:1] + grad_sites[:1]:
        if _inside(site, [fn.node]):
            ev.append(evidence(ctx, fn.view.path, site, "rule", note="eval mode" if site in eval_sites else "no gradients"))
    needs_grad_off = not jax
    has_eval = bool(eval_sites)
    has_no_grad = bool(grad_sites) or not needs_grad_off
    resumes = True
    training_callers = [(c.view, c.owner, c.call.node) for c in callers if c.trains(ctx)]
    if has_eval and training_callers and not jax:
        own_train = own.train_calls
        resumes = bool(own_train) or any(_sites(ctx, o.node, v).train_calls or _callee_sets_train(ctx, v, o)
                                         for v, o, _ in training_callers)
        if not resumes:
            v, _, c = training_callers[0]
            ev.append(evidence(ctx, v.path, c, "rule", note="evaluation inside training; model.train() never restores"))
    name = fn.qual
    if has_eval and has_no_grad and resumes:
        return 1.0, f"`{name}` runs in eval mode{' without gradients' if needs_grad_off else ''}", ev
    if has_eval and has_no_grad:
        return 0.5, f"`{name}` switches to eval mode but training never switches back (model.train())", ev
    if has_no_grad and not has_eval:
        return 0.5, f"`{name}` disables gradients but never calls model.eval() (dropout/batch-norm stay in training mode)", ev
    if has_eval:
        return 0.75, f"`{name}` calls model.eval() but keeps gradients on (no torch.no_grad()/inference_mode())", ev
    return None, f"`{name}` evaluates with neither model.eval() nor torch.no_grad()", ev


def _functions_named(ctx, names: set[str]) -> list:
    """Repo functions with one of these names (located through the index facts when present: no parse)."""
    table = ctx.memo("protocol.function_table", lambda: _function_table(ctx))
    out = []
    for name in sorted(names & table.keys()):
        for path, qual in table[name]:
            view = file_view(ctx, path)
            fn = view.functions.get(qual) if view is not None else None
            if fn is not None:
                out.append(fn)
    return out


def _function_table(ctx) -> dict[str, list[tuple[str, str]]]:
    table: dict[str, list[tuple[str, str]]] = {}
    paths = python_paths(ctx)
    if any(f.definitions for f in ctx.index.files.values()):
        for path in paths:
            for d in ctx.index.files[path].definitions:
                if d.kind in ("function", "method"):
                    table.setdefault(d.name, []).append((path, d.qualname))
        return table
    for path in paths:
        view = file_view(ctx, path)
        for qual, fn in (view.functions.items() if view is not None else ()):
            table.setdefault(fn.name, []).append((path, qual))
    return table


def _trains(ctx, view: FileView, owner) -> bool:
    """The function back-propagates, or calls (by name) a repo function that does."""
    return _per_node(ctx, "trains", owner.node, lambda: _backward_in(ctx, owner.node, view) or any(
        node is not owner.node for name in {c.leaf for c in owner.calls} for node in _named_with(ctx, "backward", name)))


def _backward_in(ctx, node, view: FileView | None = None) -> bool:
    return _sites(ctx, node, view).backward


def _named_with(ctx, what: str, name: str) -> tuple[ast.AST, ...]:
    """The bodies of the repo functions called ``name`` that back-propagate (``backward``) or set train mode
    (``train``). Asked once per name: in a large repo a callee name (``forward``, ``get``) names hundreds of
    functions, and every candidate evaluation function and caller asks about the same ones."""
    table: dict[str, tuple[ast.AST, ...]] = ctx.memo(f"protocol.eval_mode.named_{what}", dict)
    if name not in table:
        sites = (lambda fn: _sites(ctx, fn.node, file_view(ctx, fn.file)))
        test = (lambda fn: sites(fn).backward) if what == "backward" else (lambda fn: bool(sites(fn).train_calls))
        table[name] = tuple(fn.node for fn in _functions_named(ctx, {name}) if test(fn))
    return table[name]


def _per_node(ctx, what: str, node, compute):
    """One answer per function body for the run."""
    return per_node(ctx.memo(f"protocol.eval_mode.{what}", dict), node, compute)


def _callee_sets_train(ctx, view: FileView, owner) -> bool:
    return any(_named_with(ctx, "train", name) for name in {c.leaf for c in owner.calls})


def _framework_managed(ctx, scope) -> list:
    out = []
    for view in views_mentioning(ctx, ("validation_step", "test_step", ".evaluate(")):
        for qual, fn in view.functions.items():
            if fn.name in FRAMEWORK_STEPS and scope_admits(scope, qual):
                out.append(evidence(ctx, view.path, fn.node, "rule", note="Lightning switches eval mode and no_grad"))
        for call in view.calls:
            if call.leaf == "evaluate" and any(t in tokens(call.receiver()) for t in ("trainer", "model", "keras")) \
                    and not view.functions.get(call.leaf) and scope_admits(scope, call.scope):
                out.append(evidence(ctx, view.path, call.node, "call", note="framework evaluate() handles eval mode"))
    return out


def _judged(ctx, fns: list[EvalFn]) -> list:
    """(verdict, function) for the functions in their order, judged in file order up to the first mismatch: the
    worst verdict is the first mismatch in file order when there is one, and no other verdict is then reported (a
    large repo has hundreds of evaluation-named functions). Without a mismatch every function is judged."""
    judged = []
    for fn in sorted(fns, key=lambda f: (f.view.path, f.node.lineno)):
        verdict = judge(ctx, fn)
        judged.append((verdict, fn))
        if verdict[0] is None:
            return judged
    place = {id(fn): i for i, fn in enumerate(fns)}
    return sorted(judged, key=lambda v: place[id(v[1])])


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    fns = find_eval_functions(ctx, scope)
    if not fns:
        managed = _framework_managed(ctx, scope)
        if managed:
            return CheckResult.passed(KIND, "evaluation runs through a framework loop that sets eval mode and no_grad",
                                      sorted_evidence(managed[:3]))
        return CheckResult.failed(KIND, Status.missing, "no evaluation function found", [])
    verdicts = _judged(ctx, fns)
    order = sorted(verdicts, key=lambda v: (v[0][0] if v[0][0] is not None else -1, v[1].view.path, v[1].node.lineno))
    (score, message, ev), _ = order[0]
    if len(fns) > 1:
        message += f" (worst of {len(fns)} evaluation functions)"
    ev = sorted_evidence(ev)
    if score is None:
        return CheckResult.failed(KIND, Status.mismatch, message, ev)
    if score == 1.0:
        all_ev = sorted_evidence([e for (_, _, es), _ in verdicts for e in es][:8])
        return CheckResult.passed(KIND, message, all_ev)
    return CheckResult.partial(KIND, score, message, ev)
