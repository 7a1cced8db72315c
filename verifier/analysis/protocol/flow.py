"""Bounded def-use flow of data splits (test / val / train) through the repo, as leakage analysis does it.

A value is split-derived when it comes from a split API (``split="test"``, ``train=False``, ``ds["test"]``,
the second output of ``train_test_split``) or is named like one (``X_test``, ``val_loader``). Taint moves
forward through assignments, loops, ``with`` targets, calls and attribute reads, and into repo functions
through their parameters (depth-bounded). The walk records the events the rules judge: training sinks,
model-selection points, normalisation fitted before a split, and repo functions evaluated on held-out data.
"""

from __future__ import annotations

import ast
import functools
import gc
import re
from dataclasses import dataclass, field

from verifier.analysis.protocol.common import (
    MODULE_SCOPE,
    NO_FIELDS_BUT_BREAK,
    FileView,
    dotted,
    file_view,
    is_ml_text,
    leaf,
    own_statements,
    per_node,
    python_paths,
    target_names,
    text_of,
    tokens,
    walk_list,
)

KINDS = ("test", "val", "train")
MAX_STATEMENTS = 200_000
MAX_CANDIDATES = 4
# A file is a root of the flow when it can train or select (callees are analysed on demand).
ROOT_WORDS = re.compile(
    r"backward|\.fit\(|fit_transform|partial_fit|train_on_batch|Trainer\(|\.save|save_checkpoint|save_pretrained|"
    r"early|stopper|[Ss]cheduler|\.step\(|GridSearchCV|RandomizedSearchCV|cross_val|ModelCheckpoint|EarlyStopping|"
    r"train_test_split|random_split|best"
)
# The same words as plain strings: a file is a root when it holds one (`in` tests, 3x faster than the regex, whose
# branches have no common first letter).
ROOT_STRINGS = ("best", "backward", ".save", "early", "scheduler", "Scheduler", ".step(", ".fit(", "fit_transform",
                "partial_fit", "train_on_batch", "Trainer(", "save_checkpoint", "save_pretrained", "stopper",
                "GridSearchCV", "RandomizedSearchCV", "cross_val", "ModelCheckpoint", "EarlyStopping",
                "train_test_split", "random_split")


def _is_root_text(text: str) -> bool:
    """``ROOT_WORDS.search(text)``."""
    return any(word in text for word in ROOT_STRINGS)

_TEST_TOKENS = {"test", "tst", "te", "holdout", "heldout", "testset", "testloader", "testdata", "testing"}
_VAL_TOKENS = {"val", "valid", "validation", "dev", "eval", "valset", "valloader", "validset", "vali"}
_TRAIN_TOKENS = {"train", "tr", "trainset", "trainloader", "training", "trn"}
# Tokens that make a split-named variable a setting, not data: test_size, val_every, train_steps.
_SETTING_TOKENS = {
    "size", "ratio", "frac", "fraction", "pct", "percent", "split", "splits", "every", "freq", "frequency",
    "interval", "steps", "step", "iters", "epochs", "epoch", "path", "dir", "file", "files", "bs", "batch",
    "batches", "num", "n", "count", "fn", "func", "function", "mode", "transform", "transforms", "cfg", "config",
    "kwargs", "args", "time", "start", "end", "idx", "indices", "index", "flag", "only", "name", "names",
}
_SPLIT_WORDS = {
    "test": "test", "testing": "test", "heldout": "test", "holdout": "test",
    "val": "val", "valid": "val", "validation": "val", "dev": "val", "eval": "val", "evaluation": "val",
    "train": "train", "training": "train",
}
_SOURCE_LEAF_TOKENS = {"loader", "dataloader", "data", "dataset", "set", "ds", "split", "iter", "batches"}
SAVE_CALLS = {
    "save", "save_checkpoint", "save_pretrained", "save_model", "save_weights", "save_state", "save_state_dict",
    "dump", "checkpoint", "savez", "save_best",
}
FIT_SINKS = {"fit", "fit_transform", "partial_fit", "train_on_batch", "fit_generator"}
STATS_CALLS = {"mean", "std", "var", "min", "max", "fit", "fit_transform", "nanmean", "nanstd", "quantile"}
SPLIT_APIS = {"train_test_split", "random_split", "split", "kfold"}


@functools.lru_cache(maxsize=1 << 16)
def name_kind(name: str) -> str | None:
    """The split a variable's name says it holds, or None (``test_size`` is a setting, not data; a bare ``val``
    is a value: ``for val in batch["input_ids"]``, while ``val_x`` / ``x_val`` / ``val_loader`` are validation)."""
    leaf = name.rsplit(".", 1)[-1]
    if leaf.lower() in ("val", "vals"):
        return None
    toks = tokens(leaf)
    if not toks or any(t in _SETTING_TOKENS for t in toks):
        return None
    for tok in toks:
        if tok in _TEST_TOKENS or (tok.startswith("test") and tok not in ("tests",)):
            return "test"
    for tok in toks:
        if tok in _VAL_TOKENS or (tok.startswith("val") and not tok.startswith("valu")):
            return "val"
    for tok in toks:
        if tok in _TRAIN_TOKENS or (tok.startswith("train") and tok not in ("trainer", "trainers")):
            return "train"
    return None


@functools.lru_cache(maxsize=1 << 14)
def split_word(text: str) -> str | None:
    """``"test"`` / ``"validation[:10%]"`` / ``"train+validation"`` -> the split it names (test wins)."""
    low = text.lower()
    found = [kind for word, kind in _SPLIT_WORDS.items() if word in tokens(low)]
    for kind in KINDS:
        if kind in found:
            return kind
    return None


def call_source_kind(node: ast.Call) -> str | None:
    """A data-loading call that says which split it returns."""
    for kw in node.keywords:
        if kw.arg in ("split", "subset", "mode", "phase", "stage", "partition", "which", "set", "split_name"):
            if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                kind = split_word(kw.value.value)
                if kind:
                    return kind
        if kw.arg in ("train", "is_train", "training") and isinstance(kw.value, ast.Constant):
            if kw.value.value is False:
                return "test"
            if kw.value.value is True:
                return "train"
    func = node.func
    written = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
    if written is not None and not _has_source_token(written):
        return None  # (the leaf is this name, or none at all when the chain has no name: no loader either way)
    name = dotted(func) or ""
    toks = tokens(leaf(name))
    if toks and any(t in _SOURCE_LEAF_TOKENS for t in toks):
        kind = name_kind(leaf(name).replace("dataloader", "loader"))
        if kind:
            return kind
    return None


@functools.lru_cache(maxsize=1 << 14)
def _has_source_token(name: str) -> bool:
    return any(t in _SOURCE_LEAF_TOKENS for t in tokens(name))


@dataclass(frozen=True, slots=True)
class Origin:
    file: str
    line: int


Taint = dict[str, Origin]  # kind -> where it came from


@dataclass(slots=True)
class Event:
    kind: str  # train-sink | selection | norm-before-split | eval-call
    file: str
    line: int
    end_line: int
    scope: str
    kinds: dict[str, Origin]
    detail: str
    callee: str = ""


@dataclass
class FlowResult:
    events: list[Event] = field(default_factory=list)
    bounded: str = ""  # why the walk stopped early, when it did
    analysed: int = 0

    def of(self, kind: str) -> list[Event]:
        return sorted((e for e in self.events if e.kind == kind), key=lambda e: (e.file, e.line, e.detail))


class _Analyzer:
    def __init__(self, ctx, paths: list[str], max_depth: int):
        self.ctx = ctx
        self.max_depth = max_depth
        self.result = FlowResult()
        self.by_name: dict[str, list[tuple[str, str]]] = {}
        allowed = set(paths)
        facts_known = any(f.definitions for f in ctx.index.files.values())
        if facts_known:  # names from the index: no file is parsed until a call into it is followed
            for path in paths:
                for d in ctx.index.files[path].definitions:
                    if d.kind in ("function", "method"):
                        self.by_name.setdefault(d.name, []).append((path, d.qualname))
        else:
            for path in paths:
                view = file_view(ctx, path)
                if view is not None:
                    for qual, fn in view.functions.items():
                        self.by_name.setdefault(fn.name, []).append((path, qual))
        self.allowed = allowed
        self.done: set[tuple[str, str, tuple]] = set()
        self.returns: dict[tuple[str, str], list[Taint]] = {}  # held-out taint per returned position
        self.statements = 0
        self._seen_events: set[tuple] = set()
        # Per-node facts that do not depend on the taint environment, worked out on the first visit (a loop body
        # is walked twice, a function once per distinct argument taint): node id -> (node, facts), common.per_node;
        # a template also keeps the file it was read in (its origins name that file), so it has its own check.
        self._templates: dict[int, tuple] = {}
        self._fits_below: dict[int, tuple] = {}
        self._roots_below: dict[int, tuple] = {}
        self._selection_ifs: dict[int, tuple] = {}
        self._call_facts: dict[int, tuple] = {}

    def view(self, path: str) -> FileView | None:
        return file_view(self.ctx, path) if path in self.allowed else None

    # ----- taint of expressions ---------------------------------------------------------------------------
    def kinds_of(self, node: ast.AST | None, env: dict[str, Taint], view: FileView) -> Taint:
        """The splits an expression carries: what it says itself (split APIs, split names; fixed per node, so
        worked out once) merged, in walk order, with what ``env`` says of the chains it reads."""
        if node is None:
            return {}
        chains, static, items, _ = self._template(node, view)
        if not chains or env.keys().isdisjoint(chains):
            return dict(static)
        out: Taint = {}
        for chain, kind, origin in items:
            if chain is None:
                out.setdefault(kind, origin)
            else:
                for k, o in env.get(chain, {}).items():
                    out.setdefault(k, o)
        return out

    def _template(self, node: ast.AST, view: FileView):
        """(chains read, taint when ``env`` knows none of them, items in walk order, the calls below in walk
        order): an item is (None, kind, origin) for a fixed taint, (chain, None, None) for a look-up of ``env``.
        One walk of the expression, the first time it is met."""
        key = id(node)
        known = self._templates.get(key)
        if known is not None and known[0] is node and known[1] == view.path:
            return known[2]
        kind_of_node = type(node)
        if kind_of_node is ast.Constant:  # (no children: what the walk would give, without it)
            return _NO_TAINT
        if kind_of_node is ast.Name:
            kind = name_kind(node.id)
            fixed = ((None, kind, Origin(view.path, node.lineno)),) if kind else ()
            template = (frozenset((node.id,)), {kind: fixed[0][2]} if kind else {}, ((node.id, None, None), *fixed), ())
            self._templates[key] = (node, view.path, template)
            return template
        items: list[tuple] = []
        static: Taint = {}
        chains: set[str] = set()
        calls: list[ast.Call] = []
        # What the reference walk (tests/test_protocol_speed_invariants.py) yields, inline (no generator), with each
        # chain's dotted name built once for the whole chain: the walk meets `a.b.c` before `a.b` and `a`, whose
        # names the first one's gave.
        path = view.path
        func_positions: set[int] = set()  # a call's function is visited after the call itself (breadth first)
        names: dict[int, str | None] = {}
        for sub in walk_list(node):
            kind_of_node = type(sub)
            if kind_of_node is ast.Call:
                calls.append(sub)
                func_positions.add(id(sub.func))
                kind = call_source_kind(sub)
                if kind:
                    origin = Origin(path, sub.lineno)
                    static.setdefault(kind, origin)
                    items.append((None, kind, origin))
            elif kind_of_node is ast.Subscript:
                sliced = sub.slice
                if isinstance(sliced, ast.Constant) and isinstance(sliced.value, str):
                    kind = split_word(sliced.value)
                    if kind:
                        origin = Origin(path, sub.lineno)
                        static.setdefault(kind, origin)
                        items.append((None, kind, origin))
            elif (kind_of_node is ast.Name or kind_of_node is ast.Attribute) and id(sub) not in func_positions:
                chain = names[id(sub)] if id(sub) in names else _dotted_noting(sub, names)
                if not chain or "()" in chain:
                    continue
                chains.add(chain)
                items.append((chain, None, None))
                kind = name_kind(chain)
                if kind:
                    origin = Origin(path, sub.lineno)
                    static.setdefault(kind, origin)
                    items.append((None, kind, origin))
        template = (frozenset(chains), static, tuple(items), tuple(calls))
        self._templates[key] = (node, view.path, template)
        return template

    # ----- statements -------------------------------------------------------------------------------------
    def run_function(self, view: FileView, qual: str, params: dict[str, Taint], depth: int) -> None:
        key = (view.path, qual, tuple(sorted((p, tuple(sorted(t))) for p, t in params.items())))
        if key in self.done:
            return
        self.done.add(key)
        if qual == MODULE_SCOPE:
            body = [s for s in view.tree.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        else:
            fn = view.functions.get(qual)
            if fn is None:
                return
            body = fn.node.body
        env: dict[str, Taint] = {p: dict(t) for p, t in params.items()}
        fitted: dict[str, int] = {}
        self.result.analysed += 1
        self.block(body, env, fitted, view, qual, depth, top=True)
        if not params and qual != MODULE_SCOPE:
            self.returns[(view.path, qual)] = self._returned_taint(body, env, view)

    def _returned_taint(self, body, env, view) -> list[Taint]:
        """The held-out taint of what a function returns, per tuple position (`return train_dl, test_dl`)."""
        shapes = []
        for stmt in own_statements(body):
            if isinstance(stmt, ast.Return) and stmt.value is not None:
                items = stmt.value.elts if isinstance(stmt.value, ast.Tuple) else [stmt.value]
                shapes.append([{k: o for k, o in self._data_taint(e, env, view).items() if k in ("test", "val")}
                               for e in items])
        if not shapes or len({len(s) for s in shapes}) != 1:
            return []
        merged: list[Taint] = [{} for _ in shapes[0]]
        for shape in shapes:
            for i, taint in enumerate(shape):
                for k, o in taint.items():
                    merged[i].setdefault(k, o)
        return merged

    def _data_taint(self, node, env, view) -> Taint:
        """The split a returned expression *is*, not every split it mentions: `DataLoader(test_set)` and
        `ds["test"]` are test data; `ds.map(f, remove_columns=ds["test"].column_names)` is not."""
        if isinstance(node, (ast.Name, ast.Attribute)):
            return self.kinds_of(node, env, view)
        if isinstance(node, ast.Call):
            kind = call_source_kind(node)
            if kind:
                return {kind: Origin(view.path, node.lineno)}
            out: Taint = {}
            parts = ([node.func.value] if isinstance(node.func, ast.Attribute) else []) + list(node.args[:1])
            for part in parts:
                for k, o in self._data_taint(part, env, view).items():
                    out.setdefault(k, o)
            return out
        if isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and split_word(key.value):
                return {split_word(key.value): Origin(view.path, node.lineno)}
            return self._data_taint(node.value, env, view)
        return {}

    def returned(self, call: ast.Call) -> list[Taint]:
        """Held-out taint a repo function hands back: data it loads from a test split reaches its caller too."""
        targets = self.by_name.get(leaf(dotted(call.func) or ""), [])
        if len(targets) != 1:
            return []
        path, qual = targets[0]
        view = self.view(path)
        if view is None or qual not in view.functions:
            return []
        if (path, qual) not in self.returns:
            self.run_function(view, qual, {}, 0)
        return self.returns.get((path, qual), [])

    def block(self, body, env, fitted, view, qual, depth, top=False) -> None:
        for stmt in body:
            self.statements += 1
            if self.statements > MAX_STATEMENTS:
                self.result.bounded = f"data-flow walk stopped after {MAX_STATEMENTS} statements"
                return
            self.statement(stmt, env, fitted, view, qual, depth, top)

    def loop_body(self, body, env, fitted, view, qual, depth) -> None:
        """A loop body walked twice, so values carried round the loop reach the next iteration. When the first
        walk leaves ``env`` and ``fitted`` as they were, the second would redo the first step for step: the same
        taint everywhere, so the same events (already recorded), the same calls (their functions already run,
        their returns known); only the statement count would grow, so it grows by what the walk would have
        counted, and the walk is left out (not when that count could reach the statement bound)."""
        before = _state(env, fitted)
        self.block(body, env, fitted, view, qual, depth)
        if _state(env, fitted) == before:
            again = _statements_walked(body)
            if self.statements + again <= MAX_STATEMENTS:
                self.statements += again
                return
        self.block(body, env, fitted, view, qual, depth)

    def statement(self, stmt, env, fitted, view, qual, depth, top) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            value = stmt.value
            if value is None:
                return
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            self.exprs(value, env, view, qual, depth, stmt)
            self.assign(targets, value, env, fitted, view, top and not isinstance(stmt, ast.AugAssign), qual)
            return
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            self.exprs(stmt.iter, env, view, qual, depth, stmt)
            kinds = self.kinds_of(stmt.iter, env, view)
            for name in target_names(stmt.target):
                if kinds:
                    env.setdefault(name, {}).update({k: o for k, o in kinds.items() if k not in env.get(name, {})})
            self.loop_body(stmt.body, env, fitted, view, qual, depth)  # twice: loop-carried values reach the next
            self.block(stmt.orelse, env, fitted, view, qual, depth)
            return
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self.exprs(item.context_expr, env, view, qual, depth, stmt)
                if item.optional_vars is not None:
                    kinds = self.kinds_of(item.context_expr, env, view)
                    for name in target_names(item.optional_vars):
                        if kinds:
                            env.setdefault(name, {}).update(kinds)
            self.block(stmt.body, env, fitted, view, qual, depth)
            return
        if isinstance(stmt, ast.If):
            self.exprs(stmt.test, env, view, qual, depth, stmt)
            self.selection_if(stmt, env, view, qual)
            self.block(stmt.body, env, fitted, view, qual, depth)
            self.block(stmt.orelse, env, fitted, view, qual, depth)
            return
        if isinstance(stmt, ast.While):
            self.exprs(stmt.test, env, view, qual, depth, stmt)
            self.loop_body(stmt.body, env, fitted, view, qual, depth)
            return
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            self.block(stmt.body, env, fitted, view, qual, depth)
            for handler in stmt.handlers:
                self.block(handler.body, env, fitted, view, qual, depth)
            self.block(stmt.orelse, env, fitted, view, qual, depth)
            self.block(stmt.finalbody, env, fitted, view, qual, depth)
            return
        if isinstance(stmt, ast.Match):
            self.exprs(stmt.subject, env, view, qual, depth, stmt)
            for case in stmt.cases:
                self.block(case.body, env, fitted, view, qual, depth)
            return
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.expr):
                self.exprs(child, env, view, qual, depth, stmt)

    def assign(self, targets, value, env, fitted, view, strong, qual=MODULE_SCOPE) -> None:
        names = [n for t in targets for n in target_names(t)]
        splitter = leaf(dotted(value.func) or "") if isinstance(value, ast.Call) else ""
        if splitter in ("train_test_split", "random_split"):
            # A re-split names its parts (train, test) whatever the input was, but a training part carved out of
            # test data is still test data: `full = CIFAR10(train=False); tr, va = random_split(full, ...)`.
            given = self.kinds_of(value.args[0], env, view) if value.args else {}
            held_out = given.get("test")
            alternate = splitter == "train_test_split"
            for i, name in enumerate(names):
                said = name_kind(name)
                if alternate and i % 2 == 0:
                    kind = "train"
                elif alternate:
                    kind = said if said in ("val", "test") else "test"
                else:
                    kind = said
                if kind == "train" and held_out is not None:
                    env[name] = {"test": held_out}
                elif kind == "train" and "train" in given:
                    env[name] = {"train": given["train"]}  # where the training data was loaded
                else:
                    env[name] = {kind: Origin(view.path, value.lineno)} if kind else {}
            self.check_split_input(value.args[:1], fitted, view, value, qual)
            return
        if len(targets) == 1 and isinstance(targets[0], (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(targets[0].elts) == len(value.elts) and not any(isinstance(e, ast.Starred) for e in targets[0].elts):
            for target, item in zip(targets[0].elts, value.elts):  # a, b = f(x), g(y): element-wise
                self.assign([target], item, env, fitted, view, strong, qual)
            return
        if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice):
            if any(name_kind(n) in ("train", "test", "val") for n in names):
                self.check_split_input([value.value], fitted, view, value, qual)
        kinds = self.kinds_of(value, env, view)
        for name in names:
            if strong:
                env[name] = dict(kinds)
            elif kinds:
                env.setdefault(name, {}).update(kinds)
        if isinstance(value, ast.Call):
            returned = self.returned(value)
            pairs: list = []
            if len(targets) == 1 and isinstance(targets[0], (ast.Tuple, ast.List)) and len(returned) == len(targets[0].elts):
                pairs = list(zip(targets[0].elts, returned))
            elif len(returned) == 1:
                pairs = [(t, returned[0]) for t in targets]
            for target, taint in pairs:
                for name in target_names(target):
                    for k, o in taint.items():
                        env.setdefault(name, {}).setdefault(k, o)
        self.track_fit(value, names, env, fitted, view)

    # ----- normalisation fitted on all data, then split ------------------------------------------------------
    def track_fit(self, value, names, env, fitted, view) -> None:
        for sub, callee, inp, root in self._fit_facts(value, view):
            if self.kinds_of(inp, env, view):
                continue  # statistics of a split already: fine
            fitted.setdefault(root, sub.lineno)
            if callee in ("fit_transform",) or any(n == root for n in names):
                for n in names:
                    fitted.setdefault(n, sub.lineno)
        if not fitted:
            return
        roots = self._roots_of(value)  # (asked only here: most functions never fit a statistic)
        for name in names:
            if name not in fitted and any(n in fitted for n in roots) and not self.kinds_of(value, env, view):
                fitted[name] = fitted[next(n for n in roots if n in fitted)]

    def _fit_facts(self, value, view) -> tuple:
        """The statistics calls below ``value`` with each input and its chain, in walk order: what
        :meth:`track_fit` looks at first, fixed per node."""
        return per_node(self._fits_below, value, lambda: self._stats_inputs(value, view))

    def _stats_inputs(self, value, view) -> tuple:
        """What :meth:`_fit_facts` keeps for ``value``, worked out on its first visit."""
        stats_inputs = []
        for sub in self._calls_in(value, view):
            func = sub.func
            kind = type(func)
            if kind is ast.Attribute and func.attr not in STATS_CALLS or kind is ast.Name and func.id not in STATS_CALLS:
                continue  # (its leaf is that attribute or name: not a statistic)
            callee = leaf(dotted(func) or "")
            if callee not in STATS_CALLS:
                continue
            inputs = list(sub.args[:1])
            if callee in ("mean", "std", "var", "min", "max", "nanmean", "nanstd", "quantile") and isinstance(
                sub.func, ast.Attribute
            ):
                inputs = [sub.func.value]
            for inp in inputs:
                root = dotted(inp)
                if not root or "()" in root:
                    continue
                stats_inputs.append((sub, callee, inp, root))
        return tuple(stats_inputs)

    def _roots_of(self, value) -> tuple[str, ...]:
        """The sorted chains ``value`` reads, fixed per node."""
        return per_node(self._roots_below, value, lambda: tuple(sorted(_roots(value))))

    def check_split_input(self, inputs, fitted, view, node, qual) -> None:
        for inp in inputs:
            root = dotted(inp)
            if root and root in fitted:
                self.emit("norm-before-split", view, node, qual, {"test": Origin(view.path, node.lineno)},
                          f"statistics fitted on `{root}` (line {fitted[root]}) before it is split",
                          callee=str(fitted[root]))

    # ----- calls: sinks, selection, interprocedural -----------------------------------------------------------
    def exprs(self, node, env, view, qual, depth, stmt) -> None:
        if node is None:
            return
        for sub in self._template(node, view)[3]:  # (its calls in walk order)
            self.call(sub, env, view, qual, depth)

    def _calls_in(self, node: ast.AST, view: FileView) -> tuple[ast.Call, ...]:
        """The calls of an expression in ``ast.walk`` order."""
        return self._template(node, view)[3]

    def _call_fact(self, node: ast.Call) -> tuple:
        """(dotted name, leaf, argument nodes, inert): what :meth:`call` reads of a call whatever the taint."""
        name = dotted(node.func) or ""
        callee = leaf(name)
        return name, callee, list(node.args) + [kw.value for kw in node.keywords], self._inert(name, callee)

    def call(self, node: ast.Call, env, view, qual, depth) -> None:
        name, callee, arg_nodes, inert = per_node(self._call_facts, node, lambda: self._call_fact(node))
        if inert:
            return
        arg_kinds: Taint = {}
        recv_kinds: Taint = {}
        # The taint of the arguments and receiver matters only to the branches below that read it; for any other
        # callee (most calls: library functions and methods no repo function shares a name with) it is unused.
        if (callee in FIT_SINKS or callee == "backward" or callee == "step" or callee in self.by_name
                or callee.startswith(("train", "fit")) or _is_stopper(name, callee)):
            for arg in arg_nodes:
                for k, o in self.kinds_of(arg, env, view).items():
                    arg_kinds.setdefault(k, o)
            receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
            recv_kinds = self.kinds_of(receiver, env, view) if receiver is not None else {}
        if callee in FIT_SINKS and arg_kinds:
            self.emit("train-sink", view, node, qual, arg_kinds, f"`{name}` fits on it", callee)
        elif callee == "backward":
            kinds = {**recv_kinds, **arg_kinds}
            if kinds:
                self.emit("train-sink", view, node, qual, kinds, f"`{name}` back-propagates it", callee)
        elif callee.endswith("Trainer") or callee in ("SFTTrainer", "Seq2SeqTrainer"):
            train_ds = next((kw.value for kw in node.keywords if kw.arg == "train_dataset"), None)
            if train_ds is not None:
                kinds = self.kinds_of(train_ds, env, view)
                if kinds:
                    self.emit("train-sink", view, node, qual, kinds, f"`{name}(train_dataset=...)` trains on it", callee)
            eval_ds = next((kw.value for kw in node.keywords if kw.arg == "eval_dataset"), None)
            if eval_ds is not None and self._selects_best(view):
                self.emit("selection", view, node, qual, self.kinds_of(eval_ds, env, view),
                          f"`{name}` keeps the best checkpoint on eval_dataset", callee)
        elif callee in ("ModelCheckpoint", "EarlyStopping", "EarlyStoppingCallback"):
            monitor = next((kw.value for kw in node.keywords if kw.arg == "monitor"), None)
            if isinstance(monitor, ast.Constant) and isinstance(monitor.value, str):
                kind = name_kind(monitor.value.replace("/", "_"))
                self.emit("selection", view, node, qual, {kind: Origin(view.path, node.lineno)} if kind else {},
                          f"`{callee}` monitors {monitor.value!r}", callee)
        elif callee in ("GridSearchCV", "RandomizedSearchCV", "cross_val_score", "cross_validate", "HalvingGridSearchCV"):
            self.emit("selection", view, node, qual, {"val": Origin(view.path, node.lineno)},
                      f"`{callee}` selects by cross-validation", callee)
        elif _is_stopper(name, callee) and node.args:
            self.emit("selection", view, node, qual, arg_kinds, f"`{name}` decides on it", callee)
        elif callee == "step" and node.args and any(t in ("sched", "scheduler", "plateau", "lr") for t in tokens(name)):
            self.emit("selection", view, node, qual, arg_kinds, f"`{name}` adapts training to it", callee)
        elif arg_kinds and (callee.startswith("train") or callee.startswith("fit")) and callee not in self.by_name:
            if callee not in ("train_test_split", "train"):
                self.emit("train-sink", view, node, qual, arg_kinds, f"`{name}` trains on it", callee)
        targets = self.by_name.get(callee, [])
        if targets and (arg_kinds or recv_kinds):
            if any(k in arg_kinds for k in ("val", "test")):
                self.emit("eval-call", view, node, qual, arg_kinds, f"`{name}` is run on held-out data", callee)
            if len(targets) > MAX_CANDIDATES:
                return  # a common name (`forward`, `update`) resolved by name alone: too ambiguous to follow
            if depth < self.max_depth:
                for target_path, target_qual in targets:
                    target_view = self.view(target_path)
                    fn = target_view.functions.get(target_qual) if target_view is not None else None
                    if fn is None:
                        continue
                    params = self._bind(fn.params, node, env, view)
                    if params:
                        self.run_function(target_view, target_qual, params, depth + 1)
            elif not self.result.bounded:
                self.result.bounded = f"call depth bound {self.max_depth} reached at {view.path}:{node.lineno}"

    def _inert(self, name: str, callee: str) -> bool:
        """A call no branch of :meth:`call` acts on, whatever its arguments carry (most calls: library functions and
        methods no repo function shares a name with), so it is passed over at once."""
        return not (callee in FIT_SINKS or callee == "backward" or callee == "step" or callee in self.by_name
                    or callee.startswith(("train", "fit")) or callee.endswith("Trainer")
                    or callee in ("ModelCheckpoint", "EarlyStopping", "EarlyStoppingCallback")
                    or callee in ("GridSearchCV", "RandomizedSearchCV", "cross_val_score", "cross_validate",
                                  "HalvingGridSearchCV")
                    or _is_stopper(name, callee))

    def _bind(self, params, node: ast.Call, env, view) -> dict[str, Taint]:
        names = [p for p in params if p not in ("self", "cls")]
        out: dict[str, Taint] = {}
        for i, arg in enumerate(node.args):
            if i < len(names) and not isinstance(arg, ast.Starred):
                kinds = self.kinds_of(arg, env, view)
                if kinds:
                    out[names[i]] = kinds
        for kw in node.keywords:
            if kw.arg and kw.arg in params:
                kinds = self.kinds_of(kw.value, env, view)
                if kinds:
                    out[kw.arg] = kinds
        return out

    def _selects_best(self, view: FileView) -> bool:
        text = text_of(self.ctx, view.path)
        return "load_best_model_at_end" in text or "metric_for_best_model" in text

    def selection_if(self, stmt: ast.If, env, view, qual) -> None:
        test = stmt.test
        action = per_node(self._selection_ifs, stmt, lambda: _selection_if_action(stmt))
        if action is None:
            return
        kinds = self.kinds_of(test, env, view)
        verb = {"save": "saves a checkpoint", "best": "keeps the best", "stop": "stops early"}[action]
        self.emit("selection", view, stmt, qual, kinds, f"`if {ast.unparse(test)[:60]}` {verb}", action)

    def emit(self, kind, view, node, qual, kinds, detail, callee="") -> None:
        line = node.lineno
        end = line if isinstance(node, ast.If) else (getattr(node, "end_lineno", None) or line)
        key = (kind, view.path, line, tuple(sorted(kinds)))
        if key in self._seen_events:
            return
        self._seen_events.add(key)
        self.result.events.append(Event(kind, view.path, line, end, qual, dict(sorted(kinds.items())), detail, callee))


def _selection_if_action(stmt: ast.If) -> str | None:
    """The selection an ``if`` makes (save / best / stop) when its test compares and names what it selects on."""
    test = stmt.test
    if not any(isinstance(n, ast.Compare) for n in walk_list(test)):
        return None
    action = _selection_action(stmt.body)
    test_names = {dotted(n) or "" for n in walk_list(test) if isinstance(n, (ast.Name, ast.Attribute))}
    mentions_best = any("best" in tokens(n) or "patience" in tokens(n) for n in test_names)
    if not action or not (mentions_best or action in ("save", "best")):
        return None
    return action


def _state(env: dict[str, Taint], fitted: dict[str, int]) -> tuple:
    """``env`` and ``fitted`` with their order (a taint's first origin is the one kept)."""
    return tuple((name, tuple(taint.items())) for name, taint in env.items()), tuple(fitted.items())


def _statements_walked(body: list[ast.stmt]) -> int:
    """How many statements :meth:`_Analyzer.block` counts walking ``body`` (loop bodies twice), calls aside."""
    count = 0
    for stmt in body:
        count += 1
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            count += 2 * _statements_walked(stmt.body) + _statements_walked(stmt.orelse)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            count += _statements_walked(stmt.body)
        elif isinstance(stmt, ast.If):
            count += _statements_walked(stmt.body) + _statements_walked(stmt.orelse)
        elif isinstance(stmt, ast.While):
            count += 2 * _statements_walked(stmt.body)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            count += _statements_walked(stmt.body) + sum(_statements_walked(h.body) for h in stmt.handlers)
            count += _statements_walked(stmt.orelse) + _statements_walked(stmt.finalbody)
        elif isinstance(stmt, ast.Match):
            count += sum(_statements_walked(case.body) for case in stmt.cases)
    return count


def _dotted_noting(node: ast.AST, names: dict[int, str | None]) -> str | None:
    """``dotted(node)``, noting in ``names`` the dotted name of each Name / Attribute of its chain below it too
    (the name of ``a.b`` is the name of ``a`` and ``.b``, or None when that is None)."""
    chain: list[ast.AST] = []
    base = node
    while type(base) is ast.Attribute or type(base) is ast.Subscript:
        chain.append(base)
        base = base.value
    kind = type(base)
    if kind is ast.Name:
        name = base.id
        names[id(base)] = name
    elif kind is ast.Call:
        name = dotted(base)
    else:
        name = None
    for link in reversed(chain):
        if type(link) is ast.Attribute:
            name = None if name is None else f"{name}.{link.attr}"
            names[id(link)] = name
    return name


_NO_TAINT: tuple = (frozenset(), {}, (), ())  # the template of a constant: reads nothing, says nothing, calls nothing


def _roots(node: ast.AST) -> set[str]:
    return {d for n in walk_list(node) if isinstance(n, (ast.Name, ast.Attribute)) and (d := dotted(n)) and "()" not in d}


def _is_stopper(name: str, callee: str) -> bool:
    toks = set(tokens(name))
    return bool(toks & {"early", "stopper", "stopping"}) and callee not in ("EarlyStopping",)


def _selection_action(body: list[ast.stmt]) -> str | None:
    for stmt in body:
        for sub in walk_list(stmt, NO_FIELDS_BUT_BREAK):  # ast.walk's order; breaks kept, what it skips is none of these
            if isinstance(sub, ast.Call) and leaf(dotted(sub.func) or "") in SAVE_CALLS:
                return "save"
            if isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                if any("best" in tokens(n) for t in targets for n in target_names(t)):
                    return "best"
            if isinstance(sub, ast.Break):
                return "stop"
    return None


def flow(ctx, scope: str | None = None) -> FlowResult:
    """Run the split flow once per run (per glob scope) from every function and module body of the files that
    can train or select; other files are entered only through calls with split-derived arguments."""

    def make() -> FlowResult:
        was_enabled = gc.isenabled()
        gc.disable()  # ~10^5 small acyclic records (templates, taints, events): nothing for the cyclic GC to find
        try:
            return walk()
        finally:
            if was_enabled:
                gc.enable()

    def walk() -> FlowResult:
        paths = python_paths(ctx, scope)
        roots = [p for p in paths if is_ml_text(ctx, p) and _is_root_text(text_of(ctx, p))]
        depth = getattr(getattr(ctx, "options", None), "max_call_depth", 6)
        analyzer = _Analyzer(ctx, paths, depth)
        for path in roots:
            view = analyzer.view(path)
            if view is None:
                continue
            analyzer.run_function(view, MODULE_SCOPE, {}, 0)
            for qual in sorted(view.functions):
                analyzer.run_function(view, qual, {}, 0)
                if analyzer.result.bounded.startswith("data-flow walk stopped"):
                    return analyzer.result
        return analyzer.result

    return ctx.memo(f"protocol.flow:{scope or ''}", make)
