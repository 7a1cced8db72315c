"""Shared views of the repo for the protocol rules: one ast walk per file, memoised for the whole run.

Every rule asks the same questions (which calls, in which function, with which arguments), so a file is
parsed and walked once; rules then filter these flat records instead of walking trees again.
"""

from __future__ import annotations

import ast
import functools
import gc
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

try:  # the regex parser, to tell which case-insensitive patterns lower-cased text can answer
    from re import _constants as _sre_constants, _parser as _sre_parse  # Python 3.11+
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _sre_constants  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]

from verifier.index.facts import FileRole, Language
from verifier.index.names import qualify
from verifier.index.repo import looks_like_glob
from verifier.results import Evidence

MODULE_SCOPE = "<module>"
SNIPPET_WIDTH = 160


@dataclass(slots=True)
class CallView:
    node: ast.Call
    name: str  # dotted as written: "torch.manual_seed", "self.model.eval", "Generator().manual_seed"
    qual: str  # import-resolved: "torch.utils.data.random_split"
    leaf: str
    file: str
    scope: str  # enclosing function qualname or <module>

    @property
    def line(self) -> int:
        return self.node.lineno

    @property
    def end_line(self) -> int:
        return getattr(self.node, "end_lineno", None) or self.node.lineno

    def kwarg(self, name: str) -> ast.expr | None:
        for kw in self.node.keywords:
            if kw.arg == name:
                return kw.value
        return None

    def receiver(self) -> str:
        return self.name.rpartition(".")[0]


@dataclass(slots=True)
class FunctionView:
    qualname: str
    name: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    file: str
    params: tuple[str, ...]
    calls: list[CallView] = field(default_factory=list)
    decorators: tuple[str, ...] = ()


@dataclass(slots=True)
class FileView:
    path: str
    tree: ast.Module
    imports: dict[str, str]  # local alias -> qualified module/name
    calls: list[CallView]
    functions: dict[str, FunctionView]
    module_calls: list[CallView]
    has_main: bool
    defined_names: frozenset[str]  # module-level names (defs, classes, imports, assignments)

    def function_of(self, scope: str) -> FunctionView | None:
        return self.functions.get(scope)


def dotted(node: ast.AST | None) -> str | None:
    """``a.b.c`` for attribute chains; calls and subscripts in the chain keep a marker so names stay unique."""
    parts: list[str] = []
    while node is not None:
        if isinstance(node, ast.Name):
            parts.append(node.id)
            return ".".join(reversed(parts))
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call):
            inner = dotted(node.func)
            if inner is None:
                return None
            parts.append(inner + "()")
            return ".".join(reversed(parts))
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            return None
    return None


def leaf(name: str | None) -> str:
    return (name or "").rsplit(".", 1)[-1]



def _params(args: ast.arguments) -> tuple[str, ...]:
    """A function's parameter names in signature order (positional, keyword-only, *args, **kwargs)."""
    params = tuple(a.arg for a in args.posonlyargs + args.args + args.kwonlyargs)
    return params + tuple(a.arg for a in (args.vararg, args.kwarg) if a is not None)


def _decorators(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    return tuple(d for d in (dotted(x.func if isinstance(x, ast.Call) else x) for x in node.decorator_list) if d)


class _Walker(ast.NodeVisitor):
    def __init__(self, path: str, imports: dict[str, str]):
        self.path = path
        self.imports = imports
        self.scope: list[str] = []
        self.calls: list[CallView] = []
        self.functions: dict[str, FunctionView] = {}
        self.current: list[FunctionView] = []
        self.has_main = False

    def _qual(self, name: str) -> str:
        return qualify(name, self.imports)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for deco in node.decorator_list:
            self.visit(deco)
        self.scope.append(node.name)
        for stmt in node.body:
            self.visit(stmt)
        self.scope.pop()

    def _visit_function(self, node) -> None:
        for deco in node.decorator_list:
            self.visit(deco)
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            self.visit(default)
        qual = ".".join(self.scope + [node.name])
        view = FunctionView(qual, node.name, node, self.path, _params(node.args),
                            decorators=tuple(self._qual(d) for d in _decorators(node)))
        self.functions.setdefault(qual, view)
        self.scope.append(node.name)
        self.current.append(view)
        for stmt in node.body:
            self.visit(stmt)
        self.current.pop()
        self.scope.pop()

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if (
            not self.scope
            and isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and test.left.id == "__name__"
        ):
            self.has_main = True
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.imports.setdefault(alias.asname or alias.name.split(".")[0], alias.name if alias.asname else alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = ("." * node.level) + (node.module or "")
        for alias in node.names:
            if alias.name != "*":
                self.imports.setdefault(alias.asname or alias.name, f"{module}.{alias.name}" if module else alias.name)

    def visit_Call(self, node: ast.Call) -> None:
        name = dotted(node.func)
        if name:
            scope = self.current[-1].qualname if self.current else MODULE_SCOPE
            view = CallView(node, name, self._qual(name), leaf(name), self.path, scope)
            self.calls.append(view)
            if self.current:
                self.current[-1].calls.append(view)
        self.generic_visit(node)


def _import_nodes(body: list[ast.stmt]):
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Expr, ast.Assign, ast.Return)):
            for name in ("body", "orelse", "finalbody", "handlers"):
                stack.extend(getattr(node, name, None) or [])


def _imports(tree: ast.Module) -> dict[str, str]:
    out: dict[str, str] = {}
    for node in _import_nodes(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    out[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    out.setdefault(head, head)
        elif isinstance(node, ast.ImportFrom):
            module = ("." * node.level) + (node.module or "")
            for alias in node.names:
                if alias.name != "*":
                    out[alias.asname or alias.name] = f"{module}.{alias.name}" if module else alias.name
    return out


def _module_names(tree: ast.Module, imports: dict[str, str]) -> frozenset[str]:
    names = set(imports)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        else:
            for sub in walk_list(node):  # (a set: the order does not matter; no node it looks for lacks fields)
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    names.add(sub.id)
                elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(sub.name)
                elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                    for alias in sub.names:
                        names.add((alias.asname or alias.name).split(".")[0])
    return frozenset(names)


def _walk_file(path: str, tree: ast.Module, imports: dict[str, str]):
    """What :class:`_Walker` collects, in the order it visits nodes, with an explicit stack instead of
    ``NodeVisitor``'s recursion (3x faster), and the tree's depth. Returns (calls, functions, has_main, depth)."""
    calls: list[CallView] = []
    functions: dict[str, FunctionView] = {}
    has_main = False
    deepest = 0
    # node, enclosing class/function names, innermost function, depth; children pushed reversed, so popped in order
    stack: list[tuple[ast.AST, tuple[str, ...], FunctionView | None, int]] = [(tree, (), None, 0)]
    push, pop = stack.append, stack.pop
    while stack:
        node, scope, current, depth = pop()
        if depth > deepest:
            deepest = depth
        kind = type(node)
        below = depth + 1
        if kind is ast.ClassDef:
            inner = scope + (node.name,)
            for stmt in reversed(node.body):
                push((stmt, inner, current, below))
            for deco in reversed(node.decorator_list):
                push((deco, scope, current, below))
            continue
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            inner = scope + (node.name,)
            view = FunctionView(".".join(inner), node.name, node, path, _params(node.args),
                                decorators=tuple(qualify(d, imports) for d in _decorators(node)))
            functions.setdefault(view.qualname, view)
            for stmt in reversed(node.body):
                push((stmt, inner, view, below))
            for default in reversed(node.args.defaults + [d for d in node.args.kw_defaults if d is not None]):
                push((default, scope, current, below))
            for deco in reversed(node.decorator_list):
                push((deco, scope, current, below))
            continue
        if kind is ast.Import:
            for alias in node.names:
                imports.setdefault(alias.asname or alias.name.split(".")[0], alias.name if alias.asname else alias.name.split(".")[0])
            continue
        if kind is ast.ImportFrom:
            module = ("." * node.level) + (node.module or "")
            for alias in node.names:
                if alias.name != "*":
                    imports.setdefault(alias.asname or alias.name, f"{module}.{alias.name}" if module else alias.name)
            continue
        if kind is ast.Call:
            name = dotted(node.func)
            if name:
                call = CallView(node, name, qualify(name, imports), leaf(name), path,
                                current.qualname if current is not None else MODULE_SCOPE)
                calls.append(call)
                if current is not None:
                    current.calls.append(call)
        elif kind is ast.If and not scope:
            test = node.test
            if isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__":
                has_main = True
        for name in _CHILD_FIELDS_REVERSED[kind]:  # (the expression contexts and operators: in _NOTHING_BELOW)
            value = getattr(node, name, None)
            if type(value) is list:
                for item in reversed(value):
                    if isinstance(item, ast.AST) and type(item) not in _NOTHING_BELOW:
                        push((item, scope, current, below))
            elif isinstance(value, ast.AST) and type(value) not in _NOTHING_BELOW:
                push((value, scope, current, below))
    return calls, functions, has_main, deepest


# Nodes below which the walk finds nothing (names, constants, contexts, operators): not pushed at all.
_NOTHING_BELOW = frozenset({ast.Name, ast.Constant, *(t for t in vars(ast).values()
                                                      if isinstance(t, type) and issubclass(t, ast.AST) and t._fields == ())})


def _stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def build_view(path: str, tree: ast.Module) -> FileView:
    imports = _imports(tree)
    walked = dict(imports)  # the walk adds the imports it meets (function-level ones too) as it goes
    calls, functions, has_main, depth = _walk_file(path, tree, walked)
    if 4 * depth + 50 + _stack_depth() < sys.getrecursionlimit():
        imports = walked
    else:
        # So deep that the recursive walk could overflow the stack (then the file has no view, as before): it decides.
        walker = _Walker(path, imports)
        walker.visit(tree)
        calls, functions, has_main = walker.calls, walker.functions, walker.has_main
    module_calls = [c for c in calls if c.scope == MODULE_SCOPE]
    return FileView(
        path,
        tree,
        imports,
        calls,
        functions,
        module_calls,
        has_main,
        _module_names(tree, imports),
    )


def file_view(ctx, path: str) -> FileView | None:
    def make() -> FileView | None:
        try:
            tree = ctx.index.tree(path)
        except (OSError, ValueError, RecursionError):
            return None
        if tree is None:
            return None
        was_enabled = gc.isenabled()
        gc.disable()  # ~10^4 small acyclic records per large file: nothing for the cyclic GC to find
        try:
            view = build_view(path, tree)
        except RecursionError:
            return None
        finally:
            if was_enabled:
                gc.enable()
        _freeze_when_large(ctx, path)
        return view

    key = f"protocol.view:{path}"
    built = ctx.memo("protocol.views_built", dict)
    if path not in built:
        built[path] = ctx.memo(key, make)
    return built[path]


def built_view(ctx, path: str) -> tuple[bool, FileView | None]:
    """(was the file's view built already, the view): lets a rule test its cheap facts before the file's text."""
    built = ctx.memo("protocol.views_built", dict)
    return (True, built[path]) if path in built else (False, None)


# Source characters of the files whose views are built, from which the views (and their trees) are frozen out of
# the cyclic GC: about 10^5 AST nodes, where every full collection starts to cost more than the walks it interrupts.
FREEZE_VIEWS_FROM_CHARS = 1_000_000


def _freeze_when_large(ctx, path: str) -> None:
    """Views and trees live as long as the run and hold no reference cycles, so the cyclic GC can never free them;
    on a repo this large (the index freezes its trees from 200 files on; a repo of fewer, larger files is as
    large) freeze what is alive, so later collections do not rescan it again and again (on a 196-file slice of
    transformers, 4 full collections were a third of the protocol pass). Frozen objects are still freed by
    refcount."""
    built = ctx.memo("protocol.view_chars", lambda: [0])
    built[0] += len(text_of(ctx, path))
    if built[0] >= FREEZE_VIEWS_FROM_CHARS:
        gc.freeze()


def tree_nodes(ctx, view: FileView) -> tuple[ast.AST, ...]:
    """The file's nodes in ``ast.walk(view.tree)`` order, without the nodes that have no fields (contexts,
    operators, ``pass``/``break``/``continue``): walked once per run; every rule that scans a whole file reads
    this instead of walking it again."""
    return ctx.memo(f"protocol.nodes:{view.path}", lambda: tuple(walk_list(view.tree)))


def nodes_of(ctx, view: FileView, types: tuple[type, ...]) -> tuple[ast.AST, ...]:
    """The file's nodes of these exact types, in walk order (``type(n) in``: a parsed tree holds no instances of
    the deprecated ``ast.Num``/``ast.Str`` subclasses, the only subclasses of a concrete node type)."""
    table: dict[tuple, tuple[ast.AST, ...]] = ctx.memo(f"protocol.nodes_of:{view.path}", dict)
    found = table.get(types)
    if found is None:
        wanted = frozenset(types)
        found = table[types] = tuple(n for n in tree_nodes(ctx, view) if type(n) in wanted)
    return found


def innermost_scope(view: FileView, node: ast.AST) -> str:
    """The qualified name of the smallest function holding the node's line (``<module>`` outside every one)."""
    line = getattr(node, "lineno", 0)
    best, size = "<module>", 10**9
    for qual, fn in view.functions.items():
        start, end = fn.node.lineno, getattr(fn.node, "end_lineno", fn.node.lineno)
        if start <= line <= end and end - start < size:
            best, size = qual, end - start
    return best


def parents_of(ctx, view: FileView) -> dict[int, ast.AST]:
    """id(node) -> its parent, for the whole file, once per run."""
    return ctx.memo(f"protocol.parents:{view.path}",
                    lambda: {id(child): node for node in tree_nodes(ctx, view) for child in ast.iter_child_nodes(node)})


def per_node(table: dict, node: Any, compute) -> Any:
    """``compute()`` once per node for as long as ``table`` lives. The table maps id(node) to (node, answer): it
    holds the node, and a node's id that another, later one reuses is never read as that node's answer."""
    known = table.get(id(node))
    if known is None or known[0] is not node:
        known = table[id(node)] = (node, compute())
    return known[1]


def python_paths(ctx, scope: str | None = None) -> list[str]:
    """Code files (and notebooks) a protocol rule may look at, honouring a glob ``in:``."""
    paths = ctx.memo("protocol.python_paths", lambda: sorted(ctx.index.python_files(FileRole.code)))
    if scope and looks_like_glob(scope):
        return [p for p in paths if ctx.index.in_scope(p, scope)]
    return paths


def text_of(ctx, path: str) -> str:
    try:
        return ctx.index.source(path)
    except (OSError, ValueError):
        return ""


def views_mentioning(
    ctx, words: Iterable[str], scope: str | None = None, pattern: re.Pattern | None = None, ml_only: bool = False,
    admit=None,
) -> list[FileView]:
    """Parse only files whose text contains one of ``words`` (and matches ``pattern``, and uses an ML framework
    when ``ml_only``, and that ``admit(path)`` lets through): a C-speed prefilter before any tree is built."""
    words = tuple(words)
    out = []
    for path in python_paths(ctx, scope):
        if ml_only and _ml_by_imports(ctx, path) is False:
            continue  # (the same test as below, asked first where it is a few set look-ups)
        text = text_of(ctx, path)
        if words and not any(w in text for w in words):
            continue
        if ml_only and not is_ml_text(ctx, path):
            continue
        if pattern is not None and not search_text(ctx, path, pattern):
            continue
        if admit is not None and not admit(path):
            continue
        view = file_view(ctx, path)
        if view is not None:
            out.append(view)
    return out


# One list of the ML frameworks: the word test on a file's text and the import test are both built from it.
_ML_FRAMEWORKS = ("torch", "jax", "flax", "optax", "tensorflow", "keras", "sklearn", "lightning", "transformers", "datasets",
                  "xgboost", "lightgbm", "haiku", "equinox", "gym", "gymnasium", "diffusers", "timm", "peft", "accelerate",
                  "deepspeed", "mlx", "paddle", "pytorch_lightning")
ML_MARKERS = re.compile(rf"\b({'|'.join(_ML_FRAMEWORKS)})\b")
_ML_MODULES = frozenset(_ML_FRAMEWORKS) | {
    "torchvision", "torchaudio", "torchtext", "torch_geometric", "dgl", "sentence_transformers", "open_clip", "trl"}


def is_ml_text(ctx, path: str) -> bool:
    """Does a file use an ML framework at all? (Protocol flow only matters where models are trained.)"""

    def make() -> bool:
        by_imports = _ml_by_imports(ctx, path)
        if by_imports is not None:
            return by_imports
        text = text_of(ctx, path)
        return any(w in text for w in _ML_FRAMEWORKS) and bool(ML_MARKERS.search(text))  # a C-speed look first

    return ctx.memo(f"protocol.ml:{path}", make)


def _ml_by_imports(ctx, path: str) -> bool | None:
    """What a fully parsed file's imports say about its using an ML framework (one set test per import, not a text
    scan per framework word); None when it has none to go by."""
    facts = ctx.index.files.get(path)
    if facts is not None and facts.parse_error is None and facts.imports:
        return any(imp.module.split(".", 1)[0] in _ML_MODULES for imp in facts.imports if not imp.relative_level)
    return None


def lower_text(ctx, path: str) -> str:
    return ctx.memo(f"protocol.lower:{path}", lambda: text_of(ctx, path).lower())


@functools.lru_cache(maxsize=256)
def _case_sensitive_twin(pattern: re.Pattern) -> re.Pattern | None:
    """The same pattern without IGNORECASE, to run on lower-cased ASCII text; None unless every part of it is one
    whose matches do not depend on case there: ASCII literals that are not capitals, classes and ranges holding no
    capital, categories (word, space, digit), anchors, groups without inline flags, branches and repeats."""
    if not pattern.flags & re.IGNORECASE or not isinstance(pattern.pattern, str):
        return None
    try:
        parsed = _sre_parse.parse(pattern.pattern, pattern.flags)
    except Exception:  # noqa: BLE001 - an unusual pattern just keeps the plain search
        return None
    return re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE) if _fold_safe(parsed) else None


def _fold_safe(parsed) -> bool:
    c = _sre_constants
    for op, av in parsed:
        if op in (c.LITERAL, c.NOT_LITERAL):
            if not _fold_safe_char(av):
                return False
        elif op is c.IN:
            for item_op, item in av:
                if item_op is c.LITERAL and not _fold_safe_char(item):
                    return False
                if item_op is c.RANGE and (item[1] > 127 or (item[0] <= ord("Z") and item[1] >= ord("A"))):
                    return False
                if item_op not in (c.LITERAL, c.RANGE, c.CATEGORY, c.NEGATE):
                    return False
        elif op is c.BRANCH:
            if not all(_fold_safe(branch) for branch in av[1]):
                return False
        elif op is c.SUBPATTERN:
            if av[1] or av[2] or not _fold_safe(av[3]):  # inline flags such as (?-i:...) change the case rule
                return False
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
            if not _fold_safe(av[2]):
                return False
        elif op not in (c.AT, c.ANY, c.CATEGORY):
            return False
    return True


def _fold_safe_char(code: int) -> bool:
    return code < 128 and not ord("A") <= code <= ord("Z")


def search_text(ctx, path: str, pattern: re.Pattern) -> bool:
    """``pattern.search`` of a file's text. A case-insensitive pattern runs case-sensitively on the lower-cased
    text (memoised, and read by other rules anyway) when the text is ASCII and the pattern has a twin: there the
    two agree exactly (ASCII letters fold by lower-casing, and no part of the twin depends on case), and the
    case-sensitive scan is 3-4x faster on a large repo."""
    text = text_of(ctx, path)
    twin = _case_sensitive_twin(pattern)
    if twin is not None and (text.isascii() or _folds_like_ascii(ctx, path)):
        literals = _literal_branches(twin)
        low = lower_text(ctx, path)
        return any(s in low for s in literals) if literals is not None else twin.search(low) is not None
    if not pattern.flags & re.IGNORECASE:
        literals = _literal_branches(pattern)
        if literals is not None:
            return any(s in text for s in literals)
    return pattern.search(text) is not None


# The non-ASCII letters that IGNORECASE matches to ASCII ones (the regex docs name these four).
_ASCII_CASE_PARTNERS = frozenset("\u0130\u0131\u017f\u212a")


def _folds_like_ascii(ctx, path: str) -> bool:
    """Does lower-casing this text still agree with IGNORECASE for a twin pattern (ASCII parts only)? Yes when no
    non-ASCII character of it can match an ASCII letter (the four partners; any whose case mappings reach ASCII)
    and lower-casing keeps each one a single character of the same class (word, digit, space), so the twin's
    classes and anchors see what the original sees. Asked once per file, for the files that are not ASCII."""

    def make() -> bool:
        for c in set(text_of(ctx, path)):
            if c.isascii():
                continue
            low = c.lower()
            if (len(low) != 1 or c in _ASCII_CASE_PARTNERS or low.isascii()
                    or any(ch.isascii() for ch in c.upper() + low.upper() + c.casefold())
                    or (low.isalnum(), low.isdecimal(), low.isspace()) != (c.isalnum(), c.isdecimal(), c.isspace())):
                return False
        return True

    return ctx.memo(f"protocol.folds_like_ascii:{path}", make)


@functools.lru_cache(maxsize=256)
def _literal_branches(pattern: re.Pattern) -> tuple[str, ...] | None:
    """The strings a pattern is an alternation of (``lora|adapter``), when it is only that: then its search is a few
    ``in`` tests, which need no regex scan at every position."""
    try:
        parsed = _sre_parse.parse(pattern.pattern, pattern.flags)
    except Exception:  # noqa: BLE001 - an unusual pattern just keeps the regex
        return None
    c = _sre_constants
    items = list(parsed)
    branches = items[0][1][1] if len(items) == 1 and items[0][0] is c.BRANCH else [items]
    out = []
    for branch in branches:
        branch = list(branch)
        if not branch or any(op is not c.LITERAL for op, _ in branch):
            return None
        out.append("".join(chr(code) for _, code in branch))
    return tuple(out)


def scope_admits(scope: str | None, qualname: str) -> bool:
    """A qualified ``in:`` (``Trainer.train``, ``evaluate``) admits that function and what it encloses."""
    if not scope or looks_like_glob(scope):
        return True
    return qualname == scope or qualname.endswith("." + scope) or qualname.startswith(scope + ".") or (
        ("." + scope + ".") in ("." + qualname + ".")
    )


def node_in_scope(scope: str | None, view: "FileView", node: ast.AST) -> bool:
    """``scope_admits`` for a node: the function holding it is looked up only when a qualified scope needs it."""
    if not scope or looks_like_glob(scope):
        return True
    return scope_admits(scope, innermost_scope(view, node))


def other_files(ctx, languages: tuple[Language, ...]) -> list[str]:
    return sorted(p for p, f in ctx.index.files.items() if f.language in languages and f.role == FileRole.code)


# ----- evidence --------------------------------------------------------------------------------------------
def snippet(ctx, path: str, line: int, end_line: int | None = None) -> str:
    try:
        lines = ctx.memo(f"protocol.lines:{path}", lambda: _LINE_BREAKS.split(ctx.index.source(path)))
    except (OSError, ValueError):
        return ""
    text = lines[line - 1] if 1 <= line <= len(lines) else ("\n".join(lines[max(line - 1, 0): line]))
    text = text.strip()
    return text if len(text) <= SNIPPET_WIDTH else text[: SNIPPET_WIDTH - 3] + "..."


# Lines split as the index splits them (``RepoIndex.lines``: like the Python tokenizer, so ast lines match), once
# per file: a rule gives evidence on many lines of one large file.
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")


def evidence(ctx, path: str, node_or_line: Any, role: str = "rule", note: str = "", end: int | None = None) -> Evidence:
    if isinstance(node_or_line, int):
        line, end_line = node_or_line, end or node_or_line
    else:
        line = getattr(node_or_line, "lineno", 1)
        end_line = getattr(node_or_line, "end_lineno", None) or line
        if isinstance(node_or_line, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.While,
                                     ast.With, ast.If)):
            # Compound statements: point at the header, not the whole body.
            end_line = max(line, _header_end(node_or_line))
    return Evidence(path, line, end_line, snippet(ctx, path, line), role, note)


def _header_end(node: ast.stmt) -> int:
    body = getattr(node, "body", None)
    if body:
        return max(node.lineno, body[0].lineno - 1)
    return node.lineno


def sorted_evidence(items: Iterable[Evidence]) -> list[Evidence]:
    unique = {e.sort_key(): e for e in items}
    return [unique[k] for k in sorted(unique)]


# ----- names ---------------------------------------------------------------------------------------------
_NON_ALNUM = re.compile(r"[^a-z0-9]")
_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def tokens(name: str) -> list[str]:
    """``X_test`` -> [x, test]; ``testLoader`` -> [test, loader]; ``valDS`` -> [val, ds]."""
    return list(_tokens(name))


@functools.lru_cache(maxsize=1 << 16)
def _tokens(name: str) -> tuple[str, ...]:
    """Rules ask about the same identifiers again and again (every call's receiver, every variable)."""
    out: list[str] = []
    for part in _SEPARATORS.split(name):
        out.extend(t.lower() for t in _CAMEL.findall(part))
    return tuple(out)


_SEPARATORS = re.compile(r"[^A-Za-z0-9]+")


@functools.lru_cache(maxsize=1 << 16)
def norm(text: str) -> str:
    """Compare names across spellings: "CIFAR-10" = "cifar10" = "Cifar_10"; a trailing "+" is its own benchmark
    ("HumanEval+" = "humanevalplus", not HumanEval)."""
    return _NON_ALNUM.sub("", _TRAILING_PLUS.sub("plus", str(text).strip()).lower())


_TRAILING_PLUS = re.compile(r"\+$")


def const_str(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def written_dims(call: ast.Call, listed, *, shape_first: bool = False, positional: bool = True) -> tuple | None:
    """The dims a shape-taking call writes (the shape rule's learnable tensors and the runtime-shape rule's
    allocations read them alike): its ``size=`` / ``shape=`` keyword, its first argument when that is the
    shape (``full((a, b), v)``), one tuple argument (``zeros((a, b))``) or, if ``positional``, plain positional
    ones (``zeros(a, b)``). ``listed`` reads a tuple or list node's elements (None: not one)."""
    keyword = next((k.value for k in call.keywords if k.arg in ("size", "shape")), None)
    if keyword is not None:
        return listed(keyword)
    if shape_first:
        return listed(call.args[0]) if call.args else None
    if len(call.args) == 1 and listed(call.args[0]) is not None:
        return listed(call.args[0])
    if positional and call.args and not any(isinstance(a, ast.Starred) for a in call.args):
        return tuple(call.args)
    return None


def names_in(node: ast.AST | None) -> set[str]:
    """Every plain identifier an expression reads (roots of attribute chains included)."""
    if node is None:
        return set()
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def attr_chains_in(node: ast.AST | None) -> set[str]:
    out: set[str] = set()
    if node is None:
        return out
    for n in ast.walk(node):
        if isinstance(n, (ast.Attribute, ast.Name)):
            d = dotted(n)
            if d:
                out.add(d)
    return out


def outer_chains(node: ast.AST | None) -> list[str]:
    """The maximal ``a.b.c`` chains an expression reads (``args.seed``, not also ``args``), in source order."""
    out: list[str] = []

    def visit(n: ast.AST) -> None:
        key = None
        if isinstance(n, ast.Subscript):
            key, base = const_str(n.slice), n.value
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get" and n.args:
            key, base = const_str(n.args[0]), n.func.value
        if key is not None:
            d = dotted(base)
            if d and "()" not in d:
                out.append(f"{d}.{key}")
                return
        if isinstance(n, (ast.Name, ast.Attribute)):
            d = dotted(n)
            if d and "()" not in d:
                out.append(d)
                return
        for child in ast.iter_child_nodes(n):
            visit(child)

    if node is not None:
        visit(node)
    return out


def target_names(target: ast.AST) -> list[str]:
    """Names bound by an assignment target, in order (tuples flattened; ``self.x`` kept dotted)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        out: list[str] = []
        for elt in target.elts:
            out.extend(target_names(elt.value if isinstance(elt, ast.Starred) else elt))
        return out
    d = dotted(target)
    return [d] if d else []


def walk_list(node: ast.AST, skip: frozenset[type] | None = None) -> list[ast.AST]:
    """``list(ast.walk(node))`` without the nodes that have no fields (contexts, operators, ``pass``, ``break``,
    ``continue``; or the types in ``skip``, which must have no children): the same nodes in the same breadth-first
    order otherwise, built in one loop instead of a generator per node (2x faster)."""
    skip = _NO_FIELDS if skip is None else skip
    fields = _CHILD_FIELDS if _PRUNED_FIELD_TYPES <= skip else _ALL_FIELDS
    out = [node]
    push = out.append
    for current in out:  # the list grows as it is read: breadth first
        for name in fields[type(current)]:
            value = getattr(current, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST) and type(item) not in skip:
                        push(item)
            elif value is not None and isinstance(value, ast.AST) and type(value) not in skip:
                push(value)
    return out


_NO_FIELDS = frozenset(t for t in vars(ast).values() if isinstance(t, type) and issubclass(t, ast.AST) and t._fields == ())
NO_FIELDS_BUT_BREAK = _NO_FIELDS - {ast.Break}

# The fields that can hold a child node, per node type: the grammar's identifiers, strings and numbers never do, and
# `ctx` / `op` / `ops` hold only field-less nodes (expression contexts, operators), which the walks skip. A walk
# reads these instead of every field (a third fewer look-ups); a type missing here reads all its fields.
_PRIMITIVE_FIELDS = frozenset({"id", "attr", "arg", "module", "level", "kind", "type_comment", "is_async",
                               "conversion", "simple", "tag", "asname", "kwd_attrs"})
_CONTEXT_FIELDS = frozenset({"ctx", "op", "ops"})
_STRING_NAMED = {ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler, ast.alias, ast.MatchAs,
                 ast.MatchStar}
_PRUNED_FIELD_TYPES = frozenset(t for t in _NO_FIELDS if issubclass(t, (ast.expr_context, ast.operator, ast.unaryop,
                                                                         ast.boolop, ast.cmpop)))


class _FieldTable(dict):
    def __init__(self, table: dict, reverse: bool = False) -> None:
        super().__init__(table)
        self.reverse = reverse

    def __missing__(self, kind):
        return tuple(reversed(kind._fields)) if self.reverse else kind._fields


def _child_fields(kind: type, prune_contexts: bool) -> tuple[str, ...]:
    return tuple(f for f in kind._fields if not (
        f in _PRIMITIVE_FIELDS or (prune_contexts and f in _CONTEXT_FIELDS) or (f == "name" and kind in _STRING_NAMED)
        or (f == "names" and kind in (ast.Global, ast.Nonlocal)) or (f == "value" and kind is ast.Constant)))


_AST_TYPES = [t for t in vars(ast).values() if isinstance(t, type) and issubclass(t, ast.AST)]
_CHILD_FIELDS = _FieldTable({t: _child_fields(t, True) for t in _AST_TYPES})
_ALL_FIELDS = _FieldTable({t: _child_fields(t, False) for t in _AST_TYPES})
_CHILD_FIELDS_REVERSED = _FieldTable({t: tuple(reversed(f)) for t, f in _CHILD_FIELDS.items()}, reverse=True)


def own_statements(body: list[ast.stmt]):
    """Statements of a body, nested blocks included, but not nested function/class bodies."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ("body", "orelse", "finalbody", "handlers"):
            stack.extend(reversed(getattr(stmt, name, []) or []))


# ----- dataset and metric names as code writes them -----------------------------------------------------------
def acronym(name: str) -> str | None:
    """"Navier-Stokes 2D" -> ``ns2d``, "Shallow Water Equations" -> ``swe``: the initials of a multi-word name
    (all-capital words and words with digits kept whole), when it takes 2+ initials and is 3+ characters long, so
    it stays specific ("Darcy Flow" has none: ``df`` would match anything). Hub ids (``org/name``) have none."""
    words = [w for w in re.split(r"[\s_\-]+", name.strip()) if w]
    if len(words) < 2 or not all(w.isalnum() for w in words):
        return None
    out, initials = "", 0
    for word in words:
        if word.isupper() or any(c.isdigit() for c in word):
            out += word.lower()
        else:
            out, initials = out + word[0].lower(), initials + 1
    return out if initials >= 2 and len(out) >= 3 else None


def spans_of(pieces: list[str], spellings: frozenset[str] | set[str], longest: int) -> list[tuple[int, int]]:
    """Spans of consecutive word pieces whose concatenation is a spelling: pieces of ``era5.nc`` hold ``era5``,
    pieces of ``competition_math`` hold ``math``; ``mathematics`` and ``slice`` hold neither ``math`` nor ``sl``."""
    out = []
    for i in range(len(pieces)):
        text = ""
        for j in range(i, len(pieces)):
            text += pieces[j]
            if len(text) > longest:
                break
            if text in spellings:
                out.append((i, j + 1))
    return out


def name_spans(text: str, spellings: frozenset[str] | set[str]) -> list[tuple[int, int]]:
    """Where a name (one of its normalised spellings) sits in a string or identifier, on word-piece boundaries
    (separators, camelCase, letter/digit changes; digits are kept, so ``cifar100`` is not ``cifar10``)."""
    if not spellings:
        return []
    return spans_of(tokens(text), spellings, max(map(len, spellings)))


@dataclass(frozen=True)
class SpellingPattern:
    """A cheap prefilter over lower-cased file text: each name's word pieces with optional separators between
    them (``aesthetic_quality``, ``aestheticQuality`` and ``aesthetic-quality`` for "aesthetic quality"). The
    longest piece of each name is looked for first with ``in`` (C speed), the regex only where one is present."""

    regex: re.Pattern
    needles: tuple[str, ...]

    def search(self, text: str) -> bool:
        return any(n in text for n in self.needles) and self.regex.search(text) is not None


# Word pieces too common in code to be a good first look (the rarest piece of a name is looked for first).
_COMMON_PIECES = frozenset("calculate compute get load make build metric metrics score distance given paths path "
                           "error mean rate time data loss test train value total model image images per".split())


def spelling_pattern(names: Iterable[str]) -> SpellingPattern | None:
    pieces = {tuple(tokens(n)) for n in names if tokens(n)}
    if not pieces:
        return None
    alternatives = sorted(r"[^a-z0-9]{0,2}".join(re.escape(p) for p in ps) for ps in pieces)
    longest = {max(ps, key=lambda p: (p not in _COMMON_PIECES, len(p))) for ps in pieces}
    needles = tuple(sorted(n for n in longest if not any(o != n and o in n for o in longest)))
    return SpellingPattern(re.compile("|".join(alternatives)), needles)


_QUOTED = re.compile(r"([\"'])(.*?)\1")


def name_mentions(ctx, names: Iterable[str], limit: int = 3, accept=None) -> list[Evidence]:
    """Lines of any indexed file (code, comments, docs, configs) that name one of ``names`` on word-piece
    boundaries: the evidence of a mention that nothing implements. A short name with capitals counts only where it
    is written as such or inside a string (``import math`` does not name MATH, ``map_labels`` does not name mAP,
    ``"data/math/train.jsonl"`` names MATH); ``accept(line)`` can veto a line."""
    forms = [(n, frozenset({norm(n)}), n != n.lower() and sum(c.isalpha() for c in n) <= 5)
             for n in dict.fromkeys(names) if norm(n)]
    pattern = spelling_pattern(n for n, _, _ in forms)
    out: list[Evidence] = []
    if pattern is None:
        return out
    for path in sorted(ctx.index.files):
        try:
            low = lower_text(ctx, path)
            if not pattern.search(low):
                continue
            lines = ctx.index.source(path).splitlines()
        except (OSError, ValueError):
            continue
        numbers, line, last = [], 1, 0
        for m in pattern.regex.finditer(low):
            line, last = line + low.count("\n", last, m.start()), m.start()
            if not numbers or numbers[-1] != line:
                numbers.append(line)
        for i in numbers:
            line = lines[i - 1] if i <= len(lines) else ""
            quoted = " ".join(m.group(2) for m in _QUOTED.finditer(line))
            if not any(name_spans(line, spellings) and (not caps or n in line or name_spans(quoted, spellings))
                       for n, spellings, caps in forms):
                continue
            if accept is not None and not accept(line):
                continue
            text = line.strip()
            out.append(Evidence(path, i, i, text if len(text) <= SNIPPET_WIDTH else text[: SNIPPET_WIDTH - 3] + "...",
                                "mention", "the name appears; no logic implements it"))
            if len(out) >= limit:
                return out
    return out
