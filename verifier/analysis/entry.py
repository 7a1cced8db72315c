"""Entry points and a name-level repo call graph, for "is this component ever run?".

Deliberately lightweight: edges come from the index's CallSite records resolved by name (``self.m``, module
functions, imported repo functions, ``obj.m`` where ``obj = Cls(...)``, functions passed as arguments), with
no type inference. It errs towards "reachable": a method called on a receiver of unknown type is taken to be
any reached class's method of that name, so "never called" is only said when no plausible path exists.
"""

from __future__ import annotations

import configparser
import gc
import re
from collections import defaultdict, deque
from dataclasses import dataclass

import tomllib

from verifier.analysis.imports import ModuleMap, module_map
from verifier.index.facts import (
    BindingKind,
    CallSite,
    Definition,
    FileRole,
    Language,
    Span,
)
from verifier.index.repo import RepoIndex

MODULE = "<module>"
MAX_NODES = 200_000
# Reaching a class (instantiating it) runs these: constructors, and what frameworks call on instances
# (nn.Module.__call__ -> forward, Flax setup, Dataset protocol, Lightning/Keras/HF Trainer hooks).
IMPLICIT_METHODS = (
    "__init__",
    "__post_init__",
    "__new__",
    "__call__",
    "forward",
    "setup",
    "__iter__",
    "__next__",
    "__getitem__",
    "__len__",
    "__enter__",
    "__exit__",
    "reset_parameters",
    "_reset_parameters",
    "_init_weights",  # transformers' post_init() applies it from library code
    "init_weights",
    "post_init",
    "training_step",
    "validation_step",
    "test_step",
    "predict_step",
    "configure_optimizers",
    "train_dataloader",
    "val_dataloader",
    "test_dataloader",
    "compute_loss",
    "call",
    "build",
    "train_step",
)
_CTOR = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*\(")
_DOTTED = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*$")
PACKAGING_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
_ENTRY_SPEC = re.compile(r"^\s*([\w.\-]+)\s*=\s*([\w.]+)\s*:\s*([\w.]+)")


@dataclass(frozen=True, slots=True)
class Node:
    file: str
    scope: str  # a Definition qualname, or "<module>"

    def label(self) -> str:
        return f"{self.file}:{self.scope}"


@dataclass(frozen=True, slots=True)
class EntryPoint:
    node: Node
    kind: str  # main-block | console-script | launch | notebook | script
    span: Span
    detail: str = ""


class CallGraph:
    def __init__(self, index: RepoIndex, modules: ModuleMap) -> None:
        self.index = index
        self.modules = modules
        self.edges: dict[Node, set[Node]] = defaultdict(set)
        self.deferred: dict[Node, set[str]] = defaultdict(set)  # method names called on unknown receivers
        self._classes: dict[str, dict[str, Definition]] = {}
        # A call or reference can only lead into repo code when its last name is a repo definition's name;
        # checking that first skips the bulk of library calls (torch.*, np.*) without resolving them.
        self._def_names = frozenset(d.name for d in index.all_definitions())
        # Many small allocations over a large live index make the cyclic GC rescan it again and again.
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            for path in index.python_files(role=None):
                if index.files[path].role not in (FileRole.test, FileRole.doc):
                    self._add_file(path)
            self.entries = find_entry_points(index, modules)
        finally:
            if was_enabled:
                gc.enable()
        self._parent: dict[Node, Node | None] | None = None

    # ----- construction --------------------------------------------------------------------------------
    def _add_file(self, path: str) -> None:
        facts = self.index.files[path]
        defs = self.modules.definitions_in(path)
        classes = {q: d for q, d in defs.items() if d.kind == "class"}
        self._classes[path] = classes
        attr_types: dict[tuple[str, str], str] = {}
        var_types: dict[tuple[str, str], str] = {}
        for b in facts.bindings:
            if b.kind != BindingKind.assign:
                continue
            m = _CTOR.match(b.expr or "")
            if not m or m.group(1).rsplit(".", 1)[-1] not in self._def_names:
                continue
            if b.path.startswith("self.") and b.path.count(".") == 1:
                cls = self._enclosing_class(classes, b.scope)
                if cls:
                    attr_types[(cls, b.path[5:])] = m.group(1)
            elif "." not in b.path:
                var_types[(b.scope, b.path)] = m.group(1)
        module_node = Node(path, MODULE)
        for imported in self.modules.imported_paths(path):
            self.edges[module_node].add(Node(imported, MODULE))
        for q, d in defs.items():
            node = Node(path, q)
            # Reaching any code in a file means its module was imported, so its top level ran.
            self.edges[node].add(module_node)
            if d.kind == "class":
                for base in d.bases:
                    target = self.modules.resolve_in_file(path, base)
                    if target is not None:
                        self.edges[node].add(Node(target.span.file, target.qualname))
                for name in IMPLICIT_METHODS:
                    method = defs.get(f"{q}.{name}")
                    if method is not None:
                        self.edges[node].add(Node(path, method.qualname))
        names = self._def_names
        for call in facts.calls:
            texts = [t.strip() for t in (*call.args, *(v for _, v in call.kwargs))]
            texts = [t for t in texts if t.rsplit(".", 1)[-1] in names]
            if call.callee.rsplit(".", 1)[-1] not in names and not texts:
                continue
            source = self._scope_node(path, defs, classes, call.scope)
            if call.callee.rsplit(".", 1)[-1] in names:
                targets, deferred = self._resolve_call(path, defs, classes, attr_types, var_types, call)
                self.edges[source].update(targets)
                if deferred:
                    self.deferred[source].add(deferred)
            for text in texts:
                ref = self._resolve_reference(path, defs, classes, call.scope, text)
                if ref is not None:
                    self.edges[source].add(ref)

    @staticmethod
    def _enclosing_class(classes: dict[str, Definition], scope: str) -> str | None:
        parts = scope.split(".")
        for cut in range(len(parts), 0, -1):
            prefix = ".".join(parts[:cut])
            if prefix in classes:
                return prefix
        return None

    def _scope_node(self, path, defs, classes, scope: str) -> Node:
        parts = scope.split(".") if scope and scope != MODULE else []
        for cut in range(len(parts), 0, -1):
            prefix = ".".join(parts[:cut])
            if prefix in defs and prefix not in classes:
                return Node(path, prefix)
        return Node(path, MODULE)  # module level, or a class body (runs on import)

    def _method(self, path: str, cls: str, name: str, _depth: int = 0) -> Node | None:
        defs = self.modules.definitions_in(path)
        if f"{cls}.{name}" in defs:
            return Node(path, f"{cls}.{name}")
        owner = defs.get(cls)
        if owner is None or _depth > 5:
            return None
        for base in owner.bases:
            target = self.modules.resolve_in_file(path, base)
            if target is not None and target.kind == "class":
                found = self._method(target.span.file, target.qualname, name, _depth + 1)
                if found is not None:
                    return found
        return None

    def _class_named(self, path: str, text: str) -> Definition | None:
        target = self.modules.resolve_in_file(path, text)
        return target if target is not None and target.kind == "class" else None

    def _resolve_call(self, path, defs, classes, attr_types, var_types, call: CallSite):
        parts = call.callee.split(".")
        head = parts[0]
        cls_ctx = self._enclosing_class(classes, call.scope)
        if head in ("self", "cls") and cls_ctx and len(parts) >= 2:
            if len(parts) == 2:
                method = self._method(path, cls_ctx, parts[1])
                if method is not None:
                    return {method}, None
            ctor = attr_types.get((cls_ctx, parts[1]))
            target_cls = self._class_named(path, ctor) if ctor else None
            if target_cls is not None:
                if len(parts) == 2:
                    return {Node(target_cls.span.file, target_cls.qualname)}, None
                method = self._method(target_cls.span.file, target_cls.qualname, parts[2])
                return ({method} if method else set()), None
            return set(), parts[-1]
        ctor = self._var_type(var_types, call.scope, head)
        if ctor is not None:
            target_cls = self._class_named(path, ctor)
            if target_cls is not None:
                if len(parts) == 1:
                    return {Node(target_cls.span.file, target_cls.qualname)}, None
                method = self._method(target_cls.span.file, target_cls.qualname, parts[1])
                return ({method} if method else set()), None
        if len(parts) == 1:
            nested = self._nested(defs, call.scope, head)
            if nested is not None:
                return {Node(path, nested)}, None
        target = self.modules.resolve_in_file(path, call.callee)
        if target is None and call.qualname != call.callee:
            target = self.modules.resolve_qualified(call.qualname)
        if target is not None:
            return {Node(target.span.file, target.qualname)}, None
        if len(parts) >= 2 and self.modules.import_named(path, head) is None:
            return set(), parts[-1]  # `obj.m()` on a receiver of unknown type (`super().m()` included)
        return set(), None

    @staticmethod
    def _var_type(var_types, scope: str, name: str) -> str | None:
        parts = scope.split(".") if scope and scope != MODULE else []
        for cut in range(len(parts), -1, -1):
            key = (".".join(parts[:cut]) if cut else MODULE, name)
            if key in var_types:
                return var_types[key]
        return None

    @staticmethod
    def _nested(defs, scope: str, name: str) -> str | None:
        parts = scope.split(".") if scope and scope != MODULE else []
        for cut in range(len(parts), 0, -1):
            candidate = ".".join([*parts[:cut], name])
            if candidate in defs:
                return candidate
        return None

    def _resolve_reference(self, path, defs, classes, scope: str, text: str) -> Node | None:
        """A function passed by name (``model.apply(self._init_weights)``, ``jax.jit(step)``)."""
        if not _DOTTED.match(text):
            return None
        parts = text.split(".")
        if parts[0] in ("self", "cls") and len(parts) == 2:
            cls_ctx = self._enclosing_class(classes, scope)
            return self._method(path, cls_ctx, parts[1]) if cls_ctx else None
        if len(parts) == 1:
            nested = self._nested(defs, scope, text)
            if nested is not None:
                return Node(path, nested)
        target = self.modules.resolve_in_file(path, text)
        if target is not None and target.kind != "class":
            return Node(target.span.file, target.qualname)
        return None

    # ----- reachability --------------------------------------------------------------------------------
    def _search(self) -> dict[Node, Node | None]:
        """One BFS from all entry points at once; parents give a shortest path to every reached node."""
        if self._parent is not None:
            return self._parent
        parent: dict[Node, Node | None] = {}
        queue: deque[Node] = deque()
        called_names: set[str] = set()
        reached_classes: list[Node] = []

        def reach(node: Node, via: Node | None) -> None:
            if node not in parent and len(parent) < MAX_NODES:
                parent[node] = via
                queue.append(node)

        for entry in sorted(self.entries, key=lambda e: (e.node.file, e.node.scope, e.kind)):
            reach(entry.node, None)
        while queue:
            node = queue.popleft()
            for target in sorted(self.edges.get(node, ()), key=lambda n: (n.file, n.scope)):
                reach(target, node)
            definition = self.modules.local_definition(node.file, node.scope)
            if definition is not None and definition.kind == "class":
                reached_classes.append(node)
                for name in sorted(called_names):
                    method = self._method(node.file, node.scope, name)
                    if method is not None:
                        reach(method, node)
            for name in sorted(self.deferred.get(node, ())):
                if name in called_names:
                    continue
                called_names.add(name)
                for cls in reached_classes:
                    method = self._method(cls.file, cls.scope, name)
                    if method is not None:
                        reach(method, node)
        self._parent = parent
        return parent

    def complete(self) -> bool:
        """Whether the search reached everything it could (it stops at MAX_NODES): only then is "unreached" sure."""
        return len(self._search()) < MAX_NODES

    def path_to(self, node: Node) -> list[Node] | None:
        parent = self._search()
        if node not in parent:
            return None
        path = [node]
        while parent[path[-1]] is not None:
            path.append(parent[path[-1]])
        return list(reversed(path))

    def reachable(self, definition: Definition) -> list[Node] | None:
        """The call path from an entry point to ``definition``, or None when no path exists."""
        return self.path_to(Node(definition.span.file, definition.qualname))

    def scope_reachable(self, file: str, scope: str) -> list[Node] | None:
        """Path to the code at ``scope`` in ``file`` (a call site's enclosing function or module level)."""
        defs = self.modules.definitions_in(file)
        classes = self._classes.get(file, {})
        return self.path_to(self._scope_node(file, defs, classes, scope))

    def entry_for(self, node: Node) -> EntryPoint | None:
        for entry in self.entries:
            if entry.node == node:
                return entry
        return None


# ----- entry points ------------------------------------------------------------------------------------
def find_entry_points(index: RepoIndex, modules: ModuleMap) -> list[EntryPoint]:
    out: list[EntryPoint] = []
    imported: set[str] = set()
    for path in index.python_files(role=None):
        imported.update(modules.imported_paths(path))
    for path, facts in index.files.items():
        if facts.role in (FileRole.test, FileRole.doc):
            continue
        if facts.language == Language.notebook:
            out.append(EntryPoint(Node(path, MODULE), "notebook", Span(path, 1, max(facts.lines, 1))))
        elif facts.language == Language.python:
            if facts.has_main_block:
                out.append(EntryPoint(Node(path, MODULE), "main-block", _main_span(index, path)))
            elif path not in imported and _runs_own_code(facts):
                out.append(EntryPoint(Node(path, MODULE), "script", Span(path, 1, max(facts.lines, 1))))
        for launch in facts.launches:
            target = _launch_target(index, modules, launch.target)
            if target is not None:
                out.append(EntryPoint(Node(target, MODULE), "launch", launch.span, launch.target))
    out.extend(_console_scripts(index, modules))
    unique = {(e.node, e.kind, e.span.file, e.span.line): e for e in out}
    return [unique[k] for k in sorted(unique, key=lambda k: (k[0].file, k[0].scope, k[1], k[2], k[3]))]


def _main_span(index: RepoIndex, path: str) -> Span:
    try:
        lines = index.source(path).splitlines()
    except OSError:
        return Span(path, 1, 1)
    for i, line in enumerate(lines, 1):
        if line.startswith("if") and "__name__" in line and "__main__" in line:
            return Span(path, i, len(lines))
    return Span(path, 1, max(len(lines), 1))


def _runs_own_code(facts) -> bool:
    """A script without a main guard: module-level calls of the file's own functions."""
    own = {d.name for d in facts.definitions if "." not in d.qualname}
    return any(c.scope in ("", MODULE) and c.callee in own for c in facts.calls)


def _launch_target(index: RepoIndex, modules: ModuleMap, target: str) -> str | None:
    target = target.strip().lstrip("./")
    if target in index.files:
        return target
    if target.endswith(".py"):
        for path in index.files:
            if path.endswith("/" + target):
                return path
        return None
    return modules.path_of(target)


def _console_scripts(index: RepoIndex, modules: ModuleMap) -> list[EntryPoint]:
    """``[project.scripts]``, setup.cfg ``console_scripts`` and setup.py ``entry_points``, read as text."""
    out: list[EntryPoint] = []
    specs: list[tuple[str, int, str, str]] = []  # file, line, module, function
    packaging = {p for p in index.files if p.rsplit("/", 1)[-1] in PACKAGING_FILES}
    # The index may not keep setup.cfg (not a config format it parses): read the root one directly.
    packaging.update(n for n in PACKAGING_FILES if _plain_file(index, n))
    for path in sorted(packaging):
        name = path.rsplit("/", 1)[-1]
        try:
            text = index.source(path) if path in index.files else (index.root / path).read_text("utf-8", "replace")
        except OSError:
            continue
        if name == "pyproject.toml":
            specs.extend(_pyproject_scripts(path, text))
        elif name == "setup.cfg":
            specs.extend(_setup_cfg_scripts(path, text))
        else:
            for i, line in enumerate(text.splitlines(), 1):
                for m in re.finditer(r"[\"']\s*([\w.\-]+\s*=\s*[\w.]+\s*:\s*[\w.]+)\s*[\"']", line):
                    spec = _ENTRY_SPEC.match(m.group(1))
                    if spec:
                        specs.append((path, i, spec.group(2), spec.group(3)))
    for file, line, module, func in specs:
        target = modules.resolve_qualified(f"{module}.{func}")
        if target is not None:
            out.append(
                EntryPoint(
                    Node(target.span.file, target.qualname), "console-script", Span(file, line, line), f"{module}:{func}"
                )
            )
    return out


def _plain_file(index: RepoIndex, name: str) -> bool:
    candidate = index.root / name
    return candidate.is_file() and not candidate.is_symlink()


def _pyproject_scripts(path: str, text: str) -> list[tuple[str, int, str, str]]:
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return []
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    tables = [project.get("scripts"), project.get("gui-scripts")]
    poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
    if isinstance(poetry, dict):
        tables.append(poetry.get("scripts"))
    out = []
    lines = text.splitlines()
    for table in tables:
        if not isinstance(table, dict):
            continue
        for script, value in sorted(table.items()):
            if not isinstance(value, str) or ":" not in value:
                continue
            module, _, func = value.partition(":")
            line = next((i for i, t in enumerate(lines, 1) if t.strip().startswith(str(script))), 1)
            out.append((path, line, module.strip(), func.strip()))
    return out


def _setup_cfg_scripts(path: str, text: str) -> list[tuple[str, int, str, str]]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    if not parser.has_option("options.entry_points", "console_scripts"):
        return []
    lines = text.splitlines()
    out = []
    for entry in parser.get("options.entry_points", "console_scripts").splitlines():
        spec = _ENTRY_SPEC.match(entry)
        if spec:
            line = next((i for i, t in enumerate(lines, 1) if t.strip() == entry.strip()), 1)
            out.append((path, line, spec.group(2), spec.group(3)))
    return out


def call_graph(ctx) -> CallGraph:
    """The run's shared call graph (memoised on the check Context)."""
    return ctx.memo("analysis.entry.call_graph", lambda: CallGraph(ctx.index, module_map(ctx)))


def describe_path(path: list[Node]) -> str:
    return " -> ".join(n.label() for n in path)
