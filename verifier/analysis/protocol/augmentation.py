"""Rule ``augmentation``: which augmentations the training data goes through (or that it goes through none).

A transform counts by its import-resolved name in the rule's table (a local class that shares a library name
is not the library's), and only where the training pipeline uses it: the nearest name around it (assignment
target, keyword, dict key, ``if train:`` branch, dataset call's ``train=``/``split=``, enclosing function)
decides between training and evaluation, so an eval ``Resize``/``CenterCrop`` or a test-time flip is never
training augmentation.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass

from verifier.analysis.protocol import dataset as dataset_rule
from verifier.analysis.protocol.common import (
    FileView,
    const_str,
    dotted,
    evidence,
    leaf,
    names_in,
    norm,
    parents_of,
    python_paths,
    scope_admits,
    sorted_evidence,
    spans_of,
    text_of,
    tokens,
    file_view,
)
from verifier.analysis.protocol.values import Resolver
from verifier.index.names import qualify
from verifier.results import CheckResult, Status

KIND = "protocol"
TRAIN, EVAL = "train", "eval"
YES, MAYBE = "yes", "maybe"
MINE, OTHER = "mine", "other"
# A file is read only if it names a transform library or a transform-like class, or flips and draws at random.
_LIBRARIES = ("torchvision", "albumentations", "keras", "tensorflow", "timm")
_IMPORTS = re.compile(r"^\s*(?:import|from)\s+(?:torchvision|albumentations|keras|tensorflow|timm)\b", re.M)
_FLIP_CALLS = (".flip(", "fliplr(", "flipud(", "hflip(", "vflip(", "flip_left_right(", "flip_up_down(")
_CLASS_LIKE = ("Flip(", "Crop(", "Augment(", "Mixup(", "MixUp(", "CutMix(", "Jitter(", "Erasing(")
_CLASS_LIKE_RE = re.compile("|".join(map(re.escape, _CLASS_LIKE)))  # one scan instead of eight


@dataclass(frozen=True)
class Site:
    """One augmentation (or, with kind None, preprocessing) call of the data pipeline."""

    kind: str | None
    path: str
    node: ast.AST
    state: str  # YES: applied; MAYBE: under a setting or a flag we cannot resolve
    why: str
    dataset: str | None = None  # MINE / OTHER: in the pipeline of the claimed / another dataset


@functools.cache
def _kinds_by_spelling(aliases_key: tuple) -> dict[str, str]:
    return {norm(s): kind for kind, spellings in aliases_key for s in [kind, *spellings]}


def expected_kinds(expect, rule: dict) -> list[str] | None:
    """The claimed kinds (``[]`` for none), or None when an item is no known augmentation."""
    aliases = (rule.get("lexicon") or {}).get("aliases") or {}
    table = _kinds_by_spelling(tuple((k, tuple(v or [])) for k, v in sorted(aliases.items())))
    items = [expect] if isinstance(expect, str) else list(expect)
    out: list[str] = []
    for item in items:
        kind = table.get(norm(item))
        if kind is None:
            return None
        if kind != "none":
            out.append(kind)
    return list(dict.fromkeys(out))


def _api_table(rule: dict) -> tuple[dict[str, str], set[str]]:
    """qualified name -> kind (augmentations), and the qualified names of preprocessing."""
    augment: dict[str, str] = {}
    preprocess: set[str] = set()
    for family in (rule.get("lexicon") or {}).get("apis") or []:
        for module in family.get("modules") or []:
            for name, kind in (family.get("augment") or {}).items():
                augment[f"{module}.{name}"] = kind
            for name in family.get("preprocess") or []:
                preprocess.add(f"{module}.{name}")
    return augment, preprocess


def _tables(ctx, rule: dict):
    """(augment, preprocess, generators, library class leaves -> kind, library top-level modules), once per run."""

    def make():
        augment, preprocess = _api_table(rule)
        lex = rule.get("lexicon") or {}
        leaves: dict[str, str] = {}
        for qual, kind in sorted(augment.items()):
            name = qual.rsplit(".", 1)[-1]
            if name[:1].isupper() and kind not in ("timm_mixup", "timm_transform", "flip_mode"):
                leaves.setdefault(name, kind)
        modules = tuple(sorted({q.split(".", 1)[0] + "." for q in augment}))
        return augment, preprocess, frozenset(lex.get("generators") or []), leaves, modules

    return ctx.memo("protocol.augmentation.tables", make)


def _word_sets(ctx, rule: dict) -> tuple[frozenset[str], ...]:
    """(train words, eval words, random draws, flips) of the lexicon, once per run."""

    def make():
        lex = rule.get("lexicon") or {}
        return tuple(frozenset(lex.get(key) or []) for key in ("train_words", "eval_words", "random_draws", "flips"))

    return ctx.memo("protocol.augmentation.words", make)


class _Pipeline:
    """Reads one file: the sites, each with its training/eval label and dataset context."""

    def __init__(self, ctx, view: FileView, rule: dict, dataset: dataset_rule.Wanted | None, dataset_table):
        self.ctx, self.view, self.rule = ctx, view, rule
        self.train_words, self.eval_words, self.random_draws, self.flips = _word_sets(ctx, rule)
        self.dataset, self.dataset_table = dataset, dataset_table
        self._parents: dict[int, ast.AST] | None = None
        self.tables = _tables(ctx, rule)

    @property
    def parents(self) -> dict[int, ast.AST]:
        if self._parents is None:  # built only for a file with a candidate call
            self._parents = parents_of(self.ctx, self.view)
        return self._parents

    # ----- labels -----------------------------------------------------------------------------------------
    def _label_of_words(self, words: list[str]) -> str | None:
        pieces = set(words)
        train, evaluation = bool(pieces & self.train_words), bool(pieces & self.eval_words)
        if train and not evaluation:
            return TRAIN
        if evaluation and not train:
            return EVAL
        return None

    def _words(self, node: ast.AST | None) -> list[str]:
        out: list[str] = []
        for sub in ast.walk(node) if node is not None else ():
            if isinstance(sub, ast.Name):
                out += tokens(sub.id)
            elif isinstance(sub, ast.Attribute):
                out += tokens(sub.attr)
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and len(sub.value) < 40:
                out += tokens(sub.value)
        return out

    def _branch_label(self, test: ast.expr, in_body: bool) -> str | None:
        negate = False
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, negate = test.operand, not negate
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.NotEq, ast.IsNot, ast.NotIn)):
            negate = not negate
        label = self._label_of_words(self._words(test))
        if label is None:
            return None
        if negate != (not in_body):
            return EVAL if label == TRAIN else TRAIN
        return label

    def _call_label(self, call: ast.Call) -> str | None:
        """``CIFAR10(root, train=True, transform=...)``, ``load_dataset(..., split="test")``."""
        for kw in call.keywords:
            if kw.arg in ("train", "is_train", "training", "is_training") and isinstance(kw.value, ast.Constant) \
                    and isinstance(kw.value.value, bool):
                return TRAIN if kw.value.value else EVAL
            if kw.arg in ("split", "mode", "subset") and const_str(kw.value):
                return self._label_of_words(tokens(const_str(kw.value)))
        return None

    def label(self, node: ast.AST) -> tuple[str | None, str]:
        """(TRAIN / EVAL / None, what decided it), innermost context first."""
        child, parent = node, self.parents.get(id(node))
        while parent is not None:
            label, what = None, ""
            if isinstance(parent, ast.keyword) and parent.arg:
                label, what = self._label_of_words(tokens(parent.arg)), f"keyword `{parent.arg}`"
            elif isinstance(parent, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and child is parent.value:
                targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
                names = [dotted(t) or "" for t in targets]
                label, what = self._label_of_words([w for n in names for w in tokens(n.rsplit(".", 1)[-1])]), f"`{names[0]}`"
            elif isinstance(parent, ast.Dict) and child in parent.values:
                key = parent.keys[parent.values.index(child)]
                if const_str(key):
                    label, what = self._label_of_words(tokens(const_str(key))), f"key {const_str(key)!r}"
            elif isinstance(parent, ast.Call) and child is not parent.func:
                label, what = self._call_label(parent), "the dataset call's split"
                if label is None and child in parent.args and isinstance(parent.func, ast.Attribute):
                    receiver = dotted(parent.func.value) or ""  # train_transforms.append(...)
                    label, what = self._label_of_words(tokens(receiver.rsplit(".", 1)[-1])), f"`{receiver}`"
            elif isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
                body = parent.body if isinstance(parent, ast.If) else [parent.body]
                label, what = self._branch_label(parent.test, child in body), f"`if {ast.unparse(parent.test)}`"
            elif isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
                label, what = self._label_of_words(tokens(parent.name)), f"function `{parent.name}`"
            if label is not None:
                return label, what
            child, parent = parent, self.parents.get(id(parent))
        return None, ""

    # ----- settings and datasets --------------------------------------------------------------------------
    def _enclosing_body(self, node: ast.AST) -> list[ast.stmt]:
        parent = self.parents.get(id(node))
        while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parent = self.parents.get(id(parent))
        return parent.body if parent is not None else []

    def _fold(self, node: ast.AST, at: ast.AST):
        resolver = Resolver(self.ctx, self.view, self._enclosing_body(at))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            value = self._fold(node.operand, at)
            return None if value is None else not value
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
            a, b = resolver.value(node.left), resolver.value(node.comparators[0])
            if a is None or b is None:
                return None
            return (a == b) if isinstance(node.ops[0], ast.Eq) else (a != b)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Gt, ast.Lt, ast.GtE, ast.LtE)):
            a, b = resolver.value(node.left), resolver.value(node.comparators[0])
            if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
                return None
            op = node.ops[0]
            return a > b if isinstance(op, ast.Gt) else a < b if isinstance(op, ast.Lt) else a >= b if isinstance(op, ast.GtE) else a <= b
        value = resolver.value(node)
        return None if value is None else bool(value)

    def draws_random(self, test: ast.AST) -> bool:
        for sub in ast.walk(test):
            if isinstance(sub, ast.Call):
                name = dotted(sub.func) or ""
                if qualify(name, self.view.imports) in self.random_draws:
                    return True
        return False

    def _names_dataset(self, text: str) -> bool:
        table, longest = self.dataset_table
        return dataset_rule.names_dataset(text, self.dataset, table, longest)

    def _other_dataset(self, text: str) -> bool:
        table, longest = self.dataset_table
        pieces = tokens(text)
        return bool(spans_of(pieces, set(table), longest)) and not self._names_dataset(text)

    def _family_of_mine(self, text: str) -> bool:
        """``"cifar"`` selects CIFAR-10 and CIFAR-100 alike: a name the wanted one extends by digits only."""
        key = norm(text)
        return len(key) >= 4 and any(s.startswith(key) and s[len(key):].isdigit() for s in self.dataset.spellings)

    @staticmethod
    def _selects_dataset(test: ast.expr) -> bool:
        """A comparison of a string with a setting named for the dataset (``args.dataset``, ``data_name``)."""
        if not isinstance(test, ast.Compare):
            return False
        sides = [test.left, *test.comparators]
        names = [w for side in sides if not isinstance(side, ast.Constant)
                 for w in tokens(ast.unparse(side))]
        return bool(set(names) & {"dataset", "data", "ds", "benchmark", "task"})

    def _dataset_of(self, text: str) -> str | None:
        if self._names_dataset(text) or self._family_of_mine(text):
            return MINE
        return OTHER if self._other_dataset(text) else None

    def condition(self, node: ast.AST) -> tuple[str | None, str, str | None]:
        """(YES / MAYBE / None = not applied, why, MINE / OTHER / None = which dataset's pipeline) from the
        settings and dataset branches, dict keys, functions, variables and file around ``node``."""
        state, why, which = YES, "", None
        child, parent = node, self.parents.get(id(node))
        while parent is not None:
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
                in_body = child in (parent.body if isinstance(parent, ast.If) else [parent.body])
                test = parent.test
                strings = [s.value for s in ast.walk(test) if isinstance(s, ast.Constant) and isinstance(s.value, str)]
                named = {self._dataset_of(s) for s in strings} - {None} if self.dataset is not None else set()
                if self.dataset is not None and strings and not named and self._selects_dataset(test):
                    named = {OTHER}  # `if "cifar" in args.dataset:` names a dataset the lexicon does not know
                if self.draws_random(test) or self._branch_label(test, in_body) is not None or "__name__" in names_in(test):
                    pass  # a random draw, a split branch or the main guard: not a setting
                elif named:
                    negated = isinstance(test, ast.Compare) and isinstance(test.ops[0], (ast.NotEq, ast.NotIn))
                    taken = in_body != negated  # the branch runs when the named dataset is selected
                    if which is None and taken:
                        which = MINE if MINE in named else OTHER
                    elif which is None and MINE in named:
                        which = OTHER  # the else of `if dataset == <this one>`
                else:
                    value = self._fold(test, parent)
                    if value is None:
                        state, why = MAYBE, f"under `if {ast.unparse(test)}`, which cannot be resolved"
                    elif value != in_body:
                        return None, f"`if {ast.unparse(test)}` is off by default", which
            elif self.dataset is not None and which is None:
                text = ""
                if isinstance(parent, ast.Dict) and child in parent.values:
                    text = const_str(parent.keys[parent.values.index(child)]) or ""
                elif isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    text = parent.name
                elif isinstance(parent, ast.Assign) and child is parent.value:
                    text = " ".join(dotted(t) or "" for t in parent.targets)
                which = self._dataset_of(text) if text else None
            child, parent = parent, self.parents.get(id(parent))
        if self.dataset is not None and which is None:
            stem = self.view.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            which = self._dataset_of(stem)
        return state, why, which

    # ----- sites ------------------------------------------------------------------------------------------
    def sites(self) -> list[tuple[Site, str]]:
        augment, preprocess, generators, leaves, modules = self.tables
        lex = self.rule.get("lexicon") or {}
        out: list[tuple[Site, str]] = []
        for call in self.view.calls:
            kinds: list[tuple[str | None, str]] = []
            qual = call.qual
            if qual in augment:
                kinds = self._api_kinds(call, augment[qual], lex)
            elif qual in preprocess:
                kinds = [(None, YES)]
            elif qual in generators:
                kinds = self._generator_kinds(call, lex) or [(None, YES)]
            elif call.leaf in leaves and not qual.startswith(modules):
                # a repo's own `RandomHorizontalFlip`: likely a flip, but not the library's, so undecided
                kinds = [(leaves[call.leaf], MAYBE)]
            elif call.leaf in ("hflip", "vflip", "flip_left_right", "flip_up_down") and \
                    qual.startswith(("torchvision.transforms", "tensorflow.image")):
                kinds = self._flip_kinds(call)
            elif call.leaf in ("flip", "fliplr", "flipud") and (qual in self.flips or "." in call.name and
                                                                 call.receiver() not in self.view.imports):
                kinds = self._flip_kinds(call)
            if not kinds:
                continue
            label, decided = self.label(call.node)
            if label == EVAL:
                continue
            applied, why, which = self.condition(call.node)
            if applied is None:
                continue
            for kind, flag_state in kinds:
                state = MAYBE if MAYBE in (flag_state, applied) else YES
                reason = why or (flag_state == MAYBE and f"`{call.name}` is not the library's or its setting is unresolved") or decided
                out.append((Site(kind, call.file, call.node, state, reason, which), call.scope))
        return out

    def _literal(self, node: ast.AST | None, at: ast.AST):
        if node is None:
            return None
        return Resolver(self.ctx, self.view, self._enclosing_body(at)).value(node)

    def _api_kinds(self, call, kind: str, lex: dict) -> list[tuple[str | None, str]]:
        node = call.node
        if kind == "flip_mode":  # keras RandomFlip(mode="horizontal_and_vertical" by default)
            arg = call.kwarg("mode") or (node.args[0] if node.args else None)
            mode = "horizontal_and_vertical" if arg is None else self._literal(arg, node)
            if not isinstance(mode, str):
                return [("flip", MAYBE)]
            return [(k, YES) for k, word in (("horizontal_flip", "horizontal"), ("vertical_flip", "vertical")) if word in mode]
        if kind == "timm_mixup":
            return self._enabled_by_strength(call, (("mixup_alpha", 1.0, "mixup"), ("cutmix_alpha", 0.0, "cutmix")), YES)
        if kind == "timm_transform":
            return self._timm_kinds(call, lex)
        p = call.kwarg("p")
        if p is not None:
            value = self._literal(p, node)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value <= 0:
                return []
            if value is None:
                return [(kind, MAYBE)]
        return [(kind, YES)]

    def _enabled_by_strength(self, call, table, state: str) -> list[tuple[str | None, str]]:
        """Augmentations switched on by a positive strength or probability keyword (``mixup_alpha``, ``hflip``),
        each with the library's default when the keyword is left out; an unreadable value is MAYBE."""
        out: list[tuple[str | None, str]] = []
        for key, default, name in table:
            arg = call.kwarg(key)
            value = default if arg is None else self._literal(arg, call.node)
            if value is None:
                out.append((name, MAYBE))
            elif isinstance(value, (int, float)) and value > 0:
                out.append((name, state))
        return out

    def _timm_kinds(self, call, lex: dict) -> list[tuple[str | None, str]]:
        node = call.node
        if leaf(call.qual) == "create_transform":
            training = call.kwarg("is_training") or (node.args[1] if len(node.args) > 1 else None)
            value = False if training is None else self._literal(training, node)
            if value is False or self._literal(call.kwarg("no_aug"), node) is True:
                return [(None, YES)]
            state = YES if value is True else MAYBE
        else:
            state = YES
        out: list[tuple[str | None, str]] = [("random_resized_crop", state)]
        out += self._enabled_by_strength(call, (("hflip", 0.5, "horizontal_flip"), ("vflip", 0.0, "vertical_flip")), state)
        auto = call.kwarg("auto_augment")
        if auto is not None:
            policy = self._literal(auto, node)
            if isinstance(policy, str):
                table = lex.get("auto_augment") or {}
                kind = next((k for prefix, k in sorted(table.items(), key=lambda kv: -len(kv[0]))
                             if policy.split("-")[0] == prefix or policy.startswith(prefix + "-")), None)
                if kind:
                    out.append((kind, state))
            elif policy is None and not (isinstance(auto, ast.Constant) and auto.value is None):
                out.append(("randaugment", MAYBE))
        return out

    def _generator_kinds(self, call, lex: dict) -> list[tuple[str | None, str]]:
        out = []
        for kw in call.node.keywords:
            kind = (lex.get("generator_flags") or {}).get(kw.arg or "")
            if kind is None:
                continue
            value = self._literal(kw.value, call.node)
            if value is None:
                out.append((kind, MAYBE))
            elif value not in (0, 0.0, False, None, [], ""):
                out.append((kind, YES))
        return out

    def _flip_kinds(self, call) -> list[tuple[str | None, str]]:
        """A flip is augmentation only under a random condition (``if random.random() < 0.5``)."""
        child, parent = call.node, self.parents.get(id(call.node))
        randomly = False
        while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if isinstance(parent, (ast.If, ast.IfExp, ast.While)) and child is not parent.test and self.draws_random(parent.test):
                randomly = True
                break
            if isinstance(parent, ast.Call) and leaf(dotted(parent.func) or "") == "where" and parent.args \
                    and child is not parent.args[0] and self.draws_random(parent.args[0]):
                randomly = True  # torch.where(torch.rand(n, 1, 1, 1) < 0.5, x.flip(3), x)
                break
            child, parent = parent, self.parents.get(id(parent))
        if not randomly:
            return []
        if call.leaf in ("fliplr", "hflip", "flip_left_right"):
            return [("horizontal_flip", YES)]
        if call.leaf in ("flipud", "vflip", "flip_up_down"):
            return [("vertical_flip", YES)]
        node = call.node
        dims = call.kwarg("dims") or call.kwarg("dim") or call.kwarg("axis")
        if dims is None:
            args = node.args[1:] if call.qual in self.flips else node.args
            dims = args[0] if args else None
        value = self._literal(dims, node) if dims is not None else None
        axes = value if isinstance(value, list) else [value]
        torch_like = call.qual.startswith("torch") or call.qual not in self.flips
        if torch_like and axes in ([-1], [3]):
            return [("horizontal_flip", YES)]
        if torch_like and axes == [-2]:
            return [("vertical_flip", YES)]
        return [("flip", YES)]


def _meets(claimed: str, kinds: set[str]) -> bool:
    """A claimed flip is met by either direction, a claimed random crop by a random resized crop too."""
    if claimed == "flip":
        return bool(kinds & {"flip", "horizontal_flip", "vertical_flip"})
    if claimed == "random_crop":
        return bool(kinds & {"random_crop", "random_resized_crop"})
    return claimed in kinds


def _dataset_table(ctx) -> tuple[dict[str, str], int]:
    """The dataset rule's alias table and its longest spelling, once per run."""

    def make():
        table = dataset_rule.alias_table(_dataset_rule())
        return table, max(map(len, table), default=1)

    return ctx.memo("protocol.augmentation.dataset_table", make)


def find_sites(ctx, scope: str | None, rule: dict, dataset: str | None = None) -> list[Site]:
    want = dataset_rule.wanted(dataset, _dataset_rule()) if dataset else None
    table = _dataset_table(ctx)
    out: list[Site] = []
    for view in _candidate_views(ctx, scope):
        for site, fn_scope in _Pipeline(ctx, view, rule, want, table).sites():
            if scope_admits(scope, fn_scope):
                out.append(site)
    if want is not None:
        # the claimed dataset's own pipeline when the repo has one, else the pipelines of no named dataset
        mine = [s for s in out if s.dataset == MINE]
        out = mine or [s for s in out if s.dataset is None]
    return sorted(out, key=lambda s: (s.path, s.node.lineno, getattr(s.node, "col_offset", 0), s.kind or ""))


def _candidate_views(ctx, scope: str | None) -> list[FileView]:
    """Files that name a transform library or a transform-like class, or flip and draw at random; once per run
    and scope (every claim reads the same files)."""

    def make():
        out = []
        for path in python_paths(ctx, scope):
            text = text_of(ctx, path)
            if not ((any(w in text for w in _LIBRARIES) and _IMPORTS.search(text)) or _CLASS_LIKE_RE.search(text)
                    or ("flip" in text and any(w in text for w in _FLIP_CALLS) and "rand" in text)):
                continue  # (every flip call has "flip" in it: one scan rules most files out)
            view = file_view(ctx, path)
            if view is not None:
                out.append(view)
        return out

    return ctx.memo(f"protocol.augmentation.views:{scope or ''}", make)


def _dataset_rule() -> dict:
    from verifier.analysis.protocol import load_rule

    return load_rule("dataset") or {}


def _ev(ctx, sites: list[Site], role: str = "rule", limit: int = 4):
    """One evidence item per call (timm's create_transform applies several kinds at once)."""
    notes: dict[tuple[str, int, int], list[str]] = {}
    nodes: dict[tuple[str, int, int], Site] = {}
    for s in sites:
        key = (s.path, s.node.lineno, getattr(s.node, "col_offset", 0))
        notes.setdefault(key, []).append(s.kind or "preprocessing")
        nodes.setdefault(key, s)
    keys = list(nodes)[:limit]
    return sorted_evidence(evidence(ctx, nodes[k].path, nodes[k].node, role, note=", ".join(dict.fromkeys(notes[k])))
                           for k in keys)


def _where(site: Site) -> str:
    return f"{site.path}:{site.node.lineno}"


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    claimed = expected_kinds(params["expect"], rule)
    if claimed is None:
        return CheckResult.unverified(KIND, f"`{params['expect']}` names no augmentation this rule knows")
    sites = find_sites(ctx, scope, rule, params.get("dataset"))
    augments = [s for s in sites if s.kind]
    applied = [s for s in augments if s.state == YES]
    undecided = [s for s in augments if s.state == MAYBE]
    where = f" for {params['dataset']}" if params.get("dataset") else ""
    if not sites:
        return CheckResult.unverified(KIND, f"no training data pipeline{where} can be seen (no transform of the table)")
    if not claimed:
        if applied:
            names = ", ".join(dict.fromkeys(s.kind for s in applied))
            return CheckResult.failed(KIND, Status.mismatch, f"no augmentation is claimed{where}, but training data "
                                      f"goes through {names} ({_where(applied[0])})", _ev(ctx, applied))
        if undecided:
            return CheckResult.unverified(KIND, f"{undecided[0].kind} at {_where(undecided[0])} depends on a setting: "
                                          f"{undecided[0].why}", _ev(ctx, undecided))
        return CheckResult.passed(KIND, f"the training pipeline{where} only preprocesses ({_where(sites[0])})",
                                  _ev(ctx, sites))
    kinds_yes = {s.kind for s in applied}
    kinds_maybe = {s.kind for s in undecided}
    found = [c for c in claimed if _meets(c, kinds_yes)]
    open_ = [c for c in claimed if c not in found and (_meets(c, kinds_maybe) or (c in ("horizontal_flip", "vertical_flip") and "flip" in kinds_yes))]
    absent = [c for c in claimed if c not in found and c not in open_]
    hits = [s for s in applied if any(_meets(c, {s.kind}) for c in found)]
    extras = sorted({s.kind for s in applied} - {s.kind for s in hits})
    if not absent and not open_:
        note = f"; also {', '.join(extras)}" if extras else ""
        return CheckResult.passed(KIND, f"training data{where} goes through {', '.join(found)} ({_where(hits[0])}){note}",
                                  _ev(ctx, hits), extra=extras)
    if open_ and not absent:
        maybe = [s for s in augments if any(_meets(c, {s.kind}) or s.kind == "flip" for c in open_)]
        return CheckResult.unverified(KIND, f"{', '.join(open_)}{where} cannot be decided ({maybe[0].why or 'direction unknown'})",
                                      _ev(ctx, maybe))
    if found:
        return CheckResult.partial(KIND, 0.5, f"training data{where} goes through {', '.join(found)} "
                                   f"({_where(hits[0])}) but not {', '.join(absent)}", _ev(ctx, hits))
    if applied and not open_:
        names = ", ".join(dict.fromkeys(s.kind for s in applied))
        return CheckResult.failed(KIND, Status.mismatch, f"{', '.join(claimed)} is claimed{where}, but training data goes "
                                  f"through {names} instead ({_where(applied[0])})", _ev(ctx, applied))
    if open_ or undecided:
        return CheckResult.unverified(KIND, f"{', '.join(claimed)}{where}: the augmentations depend on settings that "
                                      "cannot be resolved", _ev(ctx, undecided))
    return CheckResult.failed(KIND, Status.missing, f"{', '.join(claimed)} is claimed{where}, but the training "
                              f"pipeline ({_where(sites[0])}) applies no augmentation", _ev(ctx, sites, "missing-near"))
