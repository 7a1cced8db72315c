"""The repo's precise call graph over its own functions and methods, for inlining ordered steps.

Built once per run from the index's CallSite and Definition records (no file is parsed): ``self.m`` and
``super().m`` through the class and its repo bases, module functions, imported repo functions (absolute and
relative), ``obj.m`` where ``obj = Cls(...)`` or ``self.obj = Cls(...)``, and a method called on an
unknown receiver when exactly one repo method has that (uncommon) name. Unlike the reachability graph of
``analysis.entry`` it does not guess towards more edges: an inlined wrong callee would invent steps.
The same :class:`Resolver` resolves calls found in the ``ast`` of the functions an order check inlines,
there with the function's local aliases (``opt = self.optimizer``) and parameter annotations.
"""

from __future__ import annotations

import ast
from collections import defaultdict, deque
from dataclasses import dataclass

from verifier.analysis.imports import ModuleMap, module_map
from verifier.index.facts import BindingKind, Definition, FileRole
from verifier.index.names import attribute_chain
from verifier.index.repo import RepoIndex

MODULE = "<module>"
# Method names every framework object has: never resolved by name alone.
COMMON_METHODS = frozenset(
    ["step", "update", "backward", "zero_grad", "forward", "train", "eval", "to", "cuda", "cpu", "save", "load", "state_dict", "load_state_dict", "parameters", "named_parameters", "apply", "item", "run", "call", "get", "set", "add", "append", "extend", "pop", "close", "open", "read", "write", "reset", "sample", "log", "info", "debug", "warning", "error", "format", "copy", "clone", "detach", "numpy", "mean", "sum", "init", "build", "compile", "fit", "predict", "evaluate", "transform", "items", "keys", "values", "start", "stop", "join", "put", "send", "flush"]
)


@dataclass(frozen=True, slots=True)
class FnKey:
    file: str
    qualname: str  # "<module>" for a file's top level

    def label(self) -> str:
        return f"{self.file}:{self.qualname}"


class Resolver:
    """Which repo Definition a dotted call name (as written in a scope) refers to."""

    def __init__(self, index: RepoIndex, modules: ModuleMap) -> None:
        self.index = index
        self.modules = modules
        self.attr_types: dict[tuple[str, str, str], str] = {}  # (file, class, attr) -> constructor text
        self.var_types: dict[tuple[str, str, str], str] = {}  # (file, scope, var) -> constructor text
        methods: dict[str, list[Definition]] = defaultdict(list)
        for path in index.python_files(role=None):
            facts = index.files[path]
            classes = {d.qualname for d in facts.definitions if d.kind == "class"}
            for d in facts.definitions:
                if d.kind == "method":
                    methods[d.name].append(d)
            for b in facts.bindings:
                if b.kind != BindingKind.assign or "(" not in b.expr[:120]:
                    continue
                own = b.path.startswith("self.") and b.path.count(".") == 1
                if not own and "." in b.path:
                    continue
                ctor = constructor(b.expr)
                if not ctor:
                    continue
                if own:
                    cls = enclosing_class(classes, b.scope)
                    if cls:
                        self.attr_types.setdefault((path, cls, b.path[5:]), ctor)
                else:
                    self.var_types.setdefault((path, b.scope, b.path), ctor)
        self.unique_methods = {n: ds[0] for n, ds in methods.items() if len(ds) == 1 and n not in COMMON_METHODS}
        # Heads of every repo module path: an imported name outside these is a library, resolved no further.
        self.repo_heads = {part for p in index.python_files(role=None) for part in modules.module_of(p).split(".")}
        self._classes: dict[str, set[str]] = {}
        self._resolved: dict[tuple[str, str, str], Definition | None] = {}

    # ----- classes ---------------------------------------------------------------------------------------
    def class_named(self, path: str, text: str) -> Definition | None:
        target = self.modules.resolve_in_file(path, text)
        return target if target is not None and target.kind == "class" else None

    def method(self, cls: Definition, name: str, _depth: int = 0) -> Definition | None:
        """``cls.name`` or the first repo base class's (method resolution order, depth-first)."""
        found = self.modules.local_definition(cls.span.file, f"{cls.qualname}.{name}")
        if found is not None or _depth > 5:
            return found
        for base in cls.bases:
            parent = self.class_named(cls.span.file, base)
            if parent is not None and parent is not cls:
                found = self.method(parent, name, _depth + 1)
                if found is not None:
                    return found
        return None

    def class_of(self, path: str, scope: str) -> Definition | None:
        classes = self._classes.get(path)
        if classes is None:
            classes = self._classes[path] = {q for q, d in self.modules.definitions_in(path).items() if d.kind == "class"}
        cls = enclosing_class(classes, scope)
        return self.modules.local_definition(path, cls) if cls else None

    def type_of(self, path: str, scope: str, receiver: str, local_types: dict[str, str] | None = None) -> str | None:
        """Constructor text of a receiver (``trainer`` -> ``Trainer``, ``self.opt`` -> ``torch.optim.Adam``)."""
        parts = receiver.split(".")
        if parts[0] in ("self", "cls") and len(parts) == 2:
            if local_types and receiver in local_types:
                return local_types[receiver]
            cls = self.class_of(path, scope)
            while cls is not None:
                ctor = self.attr_types.get((cls.span.file, cls.qualname, parts[1]))
                if ctor:
                    return ctor
                cls = next((b for b in (self.class_named(cls.span.file, t) for t in cls.bases) if b), None)
            return None
        if len(parts) == 1:
            if local_types and receiver in local_types:
                return local_types[receiver]
            pieces = scope.split(".") if scope and scope != MODULE else []
            for cut in range(len(pieces), -1, -1):
                key = (path, ".".join(pieces[:cut]) if cut else MODULE, receiver)
                if key in self.var_types:
                    return self.var_types[key]
        return None

    # ----- calls -----------------------------------------------------------------------------------------
    def resolve(self, path: str, scope: str, name: str, local_types: dict[str, str] | None = None) -> Definition | None:
        """The repo function or method a call ``name`` made in ``scope`` of ``path`` runs, if known."""
        if not name or "()" in name.replace("super()", "") or "[]" in name:
            return None
        if local_types:
            return self._resolve(path, scope, name, local_types)
        key = (path, scope, name)
        if key not in self._resolved:
            self._resolved[key] = self._resolve(path, scope, name, None)
        return self._resolved[key]

    def _resolve(self, path: str, scope: str, name: str, local_types: dict[str, str] | None) -> Definition | None:
        parts = name.split(".")
        leaf = parts[-1]
        imported = self.modules.import_named(path, parts[0])
        if imported is not None and not imported.relative_level and imported.module.split(".")[0] not in self.repo_heads:
            return None  # torch.*, np.*, optax.*: not repo code
        if parts[0] in ("self", "cls") and len(parts) == 2:
            cls = self.class_of(path, scope)
            return self.method(cls, leaf) if cls else None
        if parts[0] == "super()" and len(parts) == 2:
            cls = self.class_of(path, scope)
            for base in cls.bases if cls else ():
                parent = self.class_named(path, base)
                found = self.method(parent, leaf) if parent else None
                if found is not None:
                    return found
            return None
        if len(parts) >= 2:
            ctor = self.type_of(path, scope, ".".join(parts[:-1]), local_types)
            cls = self.class_named(path, ctor) if ctor else None
            if cls is not None:
                return self.method(cls, leaf)
        if len(parts) == 1:
            nested = self._nested(path, scope, leaf)
            if nested is not None:
                return nested
            closure = self._closure(path, scope, leaf, local_types)
            if closure is not None:
                return closure
        target = self.modules.resolve_in_file(path, name)
        if target is not None:
            if target.kind == "class":
                return self.method(target, "__init__")
            return target
        if len(parts) >= 2 and imported is None and (parts[0] not in ("self", "cls") or len(parts) > 2):
            return self.unique_methods.get(leaf)
        return None

    def _closure(self, path: str, scope: str, name: str, local_types: dict[str, str] | None) -> Definition | None:
        """``step = make_step(...); step(x)``: a factory with exactly one inner function returns that one."""
        ctor = self.type_of(path, scope, name, local_types)
        factory = self.modules.resolve_in_file(path, ctor) if ctor else None
        if factory is None or factory.kind == "class":
            return None
        prefix = factory.qualname + "."
        inner = [d for d in self.modules.definitions_in(factory.span.file).values()
                 if d.qualname.startswith(prefix) and "." not in d.qualname[len(prefix):] and d.kind != "class"]
        return inner[0] if len(inner) == 1 else None

    def _nested(self, path: str, scope: str, name: str) -> Definition | None:
        pieces = scope.split(".") if scope and scope != MODULE else []
        for cut in range(len(pieces), 0, -1):
            found = self.modules.local_definition(path, ".".join([*pieces[:cut], name]))
            if found is not None and found.kind != "class":
                return found
        return None


def constructor(expr: str) -> str:
    """``Trainer(cfg)`` -> ``Trainer``; ``torch.optim.Adam(...)`` -> ``torch.optim.Adam``; else ""."""
    head, paren, _ = expr.partition("(")
    head = head.strip()
    if not paren or not head or len(head) > 120:
        return ""
    return head if all(part.isidentifier() for part in head.split(".")) else ""


def enclosing_class(classes, scope: str) -> str | None:
    parts = scope.split(".") if scope and scope != MODULE else []
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        if prefix in classes:
            return prefix
    return None


class CallGraph:
    """Edges between repo functions (FnKey), from every indexed call site; reverse edges for callers."""

    def __init__(self, index: RepoIndex, modules: ModuleMap) -> None:
        self.index = index
        self.modules = modules
        self.resolver = Resolver(index, modules)
        self.callees: dict[FnKey, set[FnKey]] = defaultdict(set)
        self.callers: dict[FnKey, set[FnKey]] = defaultdict(set)
        self.definitions: dict[FnKey, Definition] = {}
        for path in index.python_files(role=None):
            facts = index.files[path]
            if facts.role in (FileRole.test, FileRole.doc):
                continue
            functions = {d.qualname: d for d in facts.definitions if d.kind != "class"}
            for d in functions.values():
                self.definitions[FnKey(path, d.qualname)] = d
            for call in facts.calls:
                source = FnKey(path, innermost_function(functions, call.scope))
                target = self.resolver.resolve(path, call.scope, call.callee)
                if target is not None and target.kind != "class":
                    key = FnKey(target.span.file, target.qualname)
                    if key != source:
                        self.callees[source].add(key)
                        self.callers[key].add(source)

    def containers(self, scopes: list[tuple[str, str]]) -> set[FnKey]:
        """The functions (or file top levels) holding calls made in these (file, scope) places."""
        out = set()
        for path, scope in scopes:
            functions = {d.qualname: d for d in self.index.files[path].definitions if d.kind != "class"}
            out.add(FnKey(path, innermost_function(functions, scope)))
        return out

    def ancestors(self, start: set[FnKey], max_depth: int, cut: set[FnKey] | None = None) -> dict[FnKey, int]:
        """Functions that reach ``start`` in at most ``max_depth`` calls, with their distance; functions at
        the depth limit that still have callers are added to ``cut``."""
        dist = {k: 0 for k in start}
        queue = deque(sorted(start, key=lambda k: (k.file, k.qualname)))
        while queue:
            key = queue.popleft()
            if dist[key] >= max_depth:
                if cut is not None and any(c not in dist for c in self.callers.get(key, ())):
                    cut.add(key)
                continue
            for caller in sorted(self.callers.get(key, ()), key=lambda k: (k.file, k.qualname)):
                if caller not in dist:
                    dist[caller] = dist[key] + 1
                    queue.append(caller)
        return dist


def innermost_function(functions: dict[str, Definition], scope: str) -> str:
    parts = scope.split(".") if scope and scope != MODULE else []
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        if prefix in functions:
            return prefix
    return MODULE


def call_graph(ctx) -> CallGraph:
    """The run's precise call graph, built once (memoised on the check Context)."""
    return ctx.memo("analysis.callgraph", lambda: CallGraph(ctx.index, module_map(ctx)))


# ----- ast nodes of definitions, parsed only for the functions a check inlines ---------------------------
def function_nodes(tree: ast.Module) -> dict[str, ast.AST]:
    """qualname -> FunctionDef/AsyncFunctionDef/ClassDef node, for every definition in a module."""
    out: dict[str, ast.AST] = {}
    stack: list[tuple[str, list[ast.stmt]]] = [("", tree.body)]
    while stack:
        prefix, body = stack.pop()
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = f"{prefix}{node.name}"
                out.setdefault(qual, node)
                stack.append((qual + ".", node.body))
            elif isinstance(node, (ast.If, ast.Try, ast.With)):  # defs under `if TYPE_CHECKING:` / try-import
                stack.append((prefix, [*getattr(node, "body", []), *getattr(node, "orelse", [])]))
    return out


def local_types(fn: ast.AST) -> dict[str, str]:
    """What a function's names stand for: ``opt = self.optimizer`` (alias), ``t = Trainer(...)`` and
    annotated parameters (constructor/type text). Later assignments win; enough for straight-line setup."""
    out: dict[str, str] = {}
    args = getattr(fn, "args", None)
    if args is not None:
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            if a.annotation is not None:
                text = (attribute_chain(a.annotation) or "")
                if text:
                    out[a.arg] = text
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = (attribute_chain(node.targets[0]) or ""), node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = (attribute_chain(node.target) or ""), node.value
        else:
            continue
        if not target or (target.count(".") > 1) or (target.count(".") == 1 and not target.startswith("self.")):
            continue
        if isinstance(value, ast.Call):
            ctor = (attribute_chain(value.func) or "")
            if ctor:
                out[target] = ctor
        else:
            alias = (attribute_chain(value) or "")
            if alias and alias != target:
                out.setdefault("=" + target, alias)
    return out




def unalias(receiver: str, types: dict[str, str]) -> str:
    """``opt`` -> ``self.optimizer`` when ``opt = self.optimizer`` (following at most a few hops)."""
    for _ in range(4):
        head, dot, rest = receiver.partition(".")
        target = types.get("=" + head)
        if target is None:
            return receiver
        receiver = target + (dot + rest if dot else "")
    return receiver
