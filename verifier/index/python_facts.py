"""Python facts from one explicit-stack ``ast`` walk per file (the source is parsed, never executed).

Conventions the value resolver and the checks rely on:

* Binding.path: assignments use the written target (``self.lr``, ``cfg.optim.lr``; ``cfg["lr"]`` becomes
  ``cfg.lr``; class-level names become ``Class.name``); defaults ``func_qualname.param``; fields
  ``Class.name``; argparse/click ``args.<dest>``; kwargs ``<callee qualname>.<kw>``; dict entries the assigned
  name plus the key path (``config.optim.lr``, or just ``optim.lr`` for an anonymous dict).
* A default's ``scope`` and ``owner`` are the function's qualname; argparse ``owner`` is the parser variable;
  click ``owner`` the decorated function; kwarg ``owner`` the import-resolved callee.
* argparse/click options without a written default have ``expr == ""`` (store_true/is_flag: value False).
* Augmented assignments (``lr *= 0.1``) have ``expr`` ``"lr * (0.1)"`` and are never constant.
* Definition.params lists every parameter in order, ``*args``/``**kw`` with their stars (positional mapping
  stops at the first starred entry); decorators and bases are source text without ``@``.
* CallSite.callee renders call chains as ``torch.zeros().normal_`` and subscripts as ``layers[].forward``;
  qualname resolves the root through imports, and module-level definitions of the same file to
  ``<module>.<name>``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from verifier.index import stubs
from verifier.index.facts import (
    Binding,
    BindingKind,
    CallSite,
    Definition,
    FileFacts,
    Import,
    Note,
    Span,
)
from verifier.index.pyfold import Source, fold, number_value, split_lines
from verifier import pysource

_DATACLASS_DECORATORS = frozenset(
    {"dataclass", "dataclasses.dataclass", "define", "frozen", "mutable", "attrs", "s", "attr.s", "attr.attrs",
     "struct.dataclass", "flax.struct.dataclass", "chex.dataclass", "pydantic.dataclasses.dataclass",
     "config", "configclass", "gin.configurable"}
)
_FIELD_BASES = frozenset(
    {"BaseModel", "BaseSettings", "NamedTuple", "PyTreeNode", "Struct", "Config", "BaseConfig",
     "PretrainedConfig", "PreTrainedConfig", "Serializable", "TypedDict", "Module"}
)
_FIELD_CALLS = frozenset({"field", "Field", "ib", "attrib", "attr.ib", "attrs.field", "dataclasses.field",
                          "pydantic.Field", "struct.field", "static_field"})
_PROTOCOL_BASES = frozenset({"Protocol", "typing.Protocol", "typing_extensions.Protocol"})
_COMMENT_ASSIGN = re.compile(
    r"\b([A-Za-z_][A-Za-z0-9_]*)\s*(?:=|:)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?!\w|\.\d)"
)
_COMMENT_OF = re.compile(
    r"\b(?:([A-Za-z][A-Za-z0-9_]*)[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)[ \t]+(?:of|is|=)[ \t]+"
    r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?!\w|\.\d)"
)
_STOPWORDS = frozenset(
    {"a", "an", "the", "with", "and", "use", "uses", "using", "we", "set", "of", "to", "is", "our", "initial",
     "default", "for", "in", "at", "by", "this", "that", "it", "its", "as", "be", "are", "was", "which", "on"}
)
_DIGIT = re.compile(r"\d")
_MAX_REPAIRS = 40
_MAX_COMMENT_BINDINGS = 2000


@dataclass(frozen=True, slots=True)
class _Scope:
    qual: str  # "" for the module
    kind: str  # module | class | function
    fieldlike: bool = False
    protocol: bool = False

    @property
    def name(self) -> str:
        return self.qual or "<module>"


_MODULE = _Scope("", "module")


def _referenced_callables(value: ast.AST) -> tuple[str, ...]:
    """The functions a plain reference or a conditional choice of references names (``self.ddim_sample``,
    ``a if c else b``); empty for anything else (a call result, a literal, a lambda)."""
    if type(value) is ast.IfExp:
        body, orelse = _referenced_callables(value.body), _referenced_callables(value.orelse)
        return tuple(dict.fromkeys(body + orelse)) if body and orelse else ()
    if type(value) in (ast.Attribute, ast.Name):
        dotted = _dotted(value)
        if dotted and not any(c in dotted for c in "([<") and dotted.split(".")[-1] not in ("self", "cls"):
            return (dotted,)
    return ()


def module_name(path: str) -> str:
    """Dotted module for a repo-relative path: ``src/pkg/a.py`` -> ``pkg.a``; ``pkg/__init__.py`` -> ``pkg``."""
    parts = path.split("/")
    if len(parts) > 1 and parts[0] in ("src", "lib"):
        parts = parts[1:]
    last = parts[-1]
    for suffix in (".py", ".ipynb", ".pyi"):
        if last.endswith(suffix):
            last = last[: -len(suffix)]
            break
    parts[-1] = last
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(p.replace("-", "_") for p in parts)


def extract(path: str, text: str, facts: FileFacts, is_package: bool | None = None,
            not_comments: frozenset[int] = frozenset()) -> FileFacts:
    """Fill ``facts`` (made by the caller with path, sha, language, role, lines) from Python ``text``.
    ``not_comments``: lines that look like comments but are not prose (notebook magics turned off)."""
    lines = split_lines(text)
    module = module_name(path)
    if is_package is None:
        is_package = path.endswith("__init__.py")
    tree, error = _parse(text, lines)
    if error is not None:
        facts.parse_error = Note(path, error[0], error[1])
    walker = _Walker(path, module, is_package, Source(lines))
    if tree is not None:
        try:
            walker.run(tree)
        except RecursionError:
            facts.parse_error = facts.parse_error or Note(path, "too deeply nested to index fully")
    walker.scan_comments(not_comments)
    walker.finish(facts)
    return facts


def _parse(text: str, lines: list[str]) -> tuple[ast.Module | None, tuple[str, int | None] | None]:
    try:
        return pysource.parse(text), None
    except SyntaxError as exc:
        first = (f"syntax error: {exc.msg}", exc.lineno)
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return None, (f"unparseable: {type(exc).__name__}", None)
    work = list(lines)
    for _ in range(_MAX_REPAIRS):
        try:
            return pysource.parse("\n".join(work)), first
        except (ValueError, RecursionError, MemoryError):
            return None, first
        except SyntaxError as exc:
            lineno = exc.lineno or 0
            if not (1 <= lineno <= len(work)) or not work[lineno - 1].strip():
                if len(work) <= 1:
                    return None, first
                work = _drop_tail(work)
                continue
            line = work[lineno - 1]
            if line.strip() == "pass":
                work[lineno - 1] = ""  # an unexpected indent left by an earlier repair
                continue
            work[lineno - 1] = " " * (len(line) - len(line.lstrip())) + "pass"
        except (ValueError, RecursionError, MemoryError, OverflowError):
            return None, first
    return None, first


def _drop_tail(work: list[str]) -> list[str]:
    work = work[:-1]
    while work and not work[-1].strip():
        work = work[:-1]
    return work


def _dotted(node: ast.AST, depth: int = 0) -> str:
    """Render a callee chain: ``a.b``, ``f().g``, ``x[].y``; ``<expr>`` for anything else."""
    parts: list[str] = []
    while True:
        t = type(node)
        if t is ast.Attribute:
            parts.append(node.attr)  # type: ignore[attr-defined]
            node = node.value  # type: ignore[attr-defined]
        elif t is ast.Name:
            parts.append(node.id)  # type: ignore[attr-defined]
            break
        elif t is ast.Call and depth < 32:
            parts.append(_dotted(node.func, depth + 1) + "()")  # type: ignore[attr-defined]
            break
        elif t is ast.Subscript and depth < 32:
            parts.append(_dotted(node.value, depth + 1) + "[]")  # type: ignore[attr-defined]
            break
        else:
            parts.append("<expr>")
            break
    parts.reverse()
    return ".".join(parts)


def _plain_dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a pure Name/Attribute chain, else None."""
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
    if type(node) is not ast.Name:
        return None
    parts.append(node.id)  # type: ignore[attr-defined]
    parts.reverse()
    return ".".join(parts)


def _leaf(dotted: str) -> str:
    return dotted.rsplit(".", 1)[-1]


_ROOT = re.compile(r"[^.(\[]*")


def _root(dotted: str) -> str:
    return _ROOT.match(dotted).group()  # type: ignore[union-attr]


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(t: type) -> tuple[str, ...]:
    f = _CHILD_FIELDS.get(t)
    if f is None:
        f = tuple(n for n in t._fields if n not in ("ctx", "type_comment", "kind", "op", "ops"))  # type: ignore[attr-defined]
        _CHILD_FIELDS[t] = f
    return f


class _Walker:
    def __init__(self, path: str, module: str, is_package: bool, src: Source):
        self.path = path
        self.module = module
        self.is_package = is_package
        self.src = src
        self.bindings: list[Binding] = []
        self.definitions: list[Definition] = []
        self.imports: list[Import] = []
        self.reads: set[str] = set()
        self.has_main = False
        self.module_defs: set[str] = set()
        # (callee, node, scope, keyword-kind) resolved once every import is known.
        self.pending_calls: list[tuple[str, ast.Call, _Scope, str | None, str]] = []
        # `sample_fn = self.p_sample_loop if greedy else self.ddim_sample` then `sample_fn(shape)`: a call of both
        self.callable_aliases: dict[tuple[str, str], tuple[str, ...]] = {}
        self.pending_click: list[tuple[ast.Call, str, str]] = []
        self.dict_done: set[int] = set()
        self.docstrings: list[tuple[ast.Constant, str]] = []

    # ----- helpers -------------------------------------------------------------------------------------
    def span(self, node: ast.AST) -> Span:
        line = node.lineno  # type: ignore[attr-defined]
        return Span(self.path, line, getattr(node, "end_lineno", None) or line)

    def text(self, node: ast.AST) -> str:
        return self.src.segment(node)

    def bind(self, name: str, path: str, kind: BindingKind, value_node: ast.AST | None, scope: str,
             at: ast.AST, owner: str = "", dest: str = "", expr: str | None = None) -> None:
        if value_node is not None:
            ok, value = fold(value_node)
            if expr is None:
                expr = self.text(value_node)
        else:
            ok, value = False, None
        self.bindings.append(
            Binding(name.replace("-", "_"), path, kind, expr or "", value if ok else None, ok, scope,
                    self.span(at), owner, dest)
        )

    # ----- the walk ------------------------------------------------------------------------------------
    def run(self, tree: ast.Module) -> None:
        body = tree.body
        if body and stubs._is_docstring(body[0]):
            self.docstrings.append((body[0].value, "<module>"))  # type: ignore[attr-defined]
        for stmt in body:
            if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                self.module_defs.add(stmt.name)  # type: ignore[attr-defined]
            elif type(stmt) is ast.If and _is_main_test(stmt.test):  # type: ignore[attr-defined]
                self.has_main = True
        self.handlers = {
            ast.FunctionDef: self.on_function,
            ast.AsyncFunctionDef: self.on_function,
            ast.ClassDef: self.on_class,
            ast.Assign: self.on_assign,
            ast.AnnAssign: self.on_annassign,
            ast.AugAssign: self.on_augassign,
            ast.Call: self.on_call,
            ast.Dict: self.on_dict,
            ast.Import: self.on_import,
            ast.ImportFrom: self.on_import_from,
            ast.Subscript: self.on_subscript,
        }
        try:
            self.walk(body, _MODULE)
        finally:
            self.handlers = {}  # bound methods point back at self: break the cycle (the GC may be off)

    def walk(self, nodes: list, scope: _Scope) -> None:
        """Visit ``nodes`` and everything below them in ``scope``; defs recurse with their own scope."""
        stack = list(reversed(nodes))
        reads = self.reads
        handlers = self.handlers
        Name, Attribute, Constant, Load = ast.Name, ast.Attribute, ast.Constant, ast.Load
        push = stack.append
        pop = stack.pop
        while stack:
            node = pop()
            t = type(node)
            if t is Name:
                if type(node.ctx) is Load:  # type: ignore[attr-defined]
                    reads.add(node.id)  # type: ignore[attr-defined]
                continue
            if t is Attribute:
                if type(node.ctx) is Load:  # type: ignore[attr-defined]
                    reads.add(node.attr)  # type: ignore[attr-defined]
                push(node.value)  # type: ignore[attr-defined]
                continue
            if t is Constant:
                continue
            handler = handlers.get(t)
            if handler is not None and handler(node, scope, push):
                continue
            # Leaves (names, constants) are handled here rather than pushed: a third of all nodes.
            for f in _fields(t):
                v = getattr(node, f)
                tv = type(v)
                if tv is list:
                    for item in v:
                        ti = type(item)
                        if ti is Name:
                            if type(item.ctx) is Load:
                                reads.add(item.id)
                        elif ti is not Constant and item is not None and ti is not str:
                            push(item)
                elif tv is Name:
                    if type(v.ctx) is Load:  # type: ignore[attr-defined]
                        reads.add(v.id)  # type: ignore[attr-defined]
                elif tv is not Constant and v is not None and isinstance(v, ast.AST):
                    push(v)

    # Handlers return True when they pushed the children themselves.
    def on_function(self, node: ast.FunctionDef, scope: _Scope, push) -> bool:
        qual = f"{scope.qual}.{node.name}" if scope.qual else node.name
        kind = "method" if scope.kind == "class" else "function"
        a = node.args
        params = [p.arg for p in (*a.posonlyargs, *a.args)]
        if a.vararg:
            params.append("*" + a.vararg.arg)
        params.extend(p.arg for p in a.kwonlyargs)
        if a.kwarg:
            params.append("**" + a.kwarg.arg)
        class_name = scope.qual.rsplit(".", 1)[-1] if scope.kind == "class" else None
        try:
            stub = stubs.classify(node, self.src.lines, class_name, scope.protocol)
        except RecursionError:
            stub = None
        self.definitions.append(
            Definition(kind, node.name, qual, self.module, self.span(node), tuple(params), (),
                       tuple(self.text(d) for d in node.decorator_list), stub)
        )
        positional = [*a.posonlyargs, *a.args]
        for p, d in zip(positional[len(positional) - len(a.defaults):], a.defaults):
            self.bind_default(p, d, qual)
        for p, d in zip(a.kwonlyargs, a.kw_defaults):
            if d is not None:
                self.bind_default(p, d, qual)
        for d in node.decorator_list:
            if type(d) is ast.Call:
                callee = _dotted(d.func)
                if _leaf(callee) in ("option", "argument", "Option", "Argument"):
                    self.pending_click.append((d, callee, qual))
        if node.body and stubs._is_docstring(node.body[0]):
            self.docstrings.append((node.body[0].value, qual))  # type: ignore[attr-defined]
        for child in (*node.decorator_list, *a.defaults, *[d for d in a.kw_defaults if d is not None]):
            push(child)
        for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg):
            if p is not None and p.annotation is not None:
                push(p.annotation)
        if node.returns is not None:
            push(node.returns)
        self.walk(node.body, _Scope(qual, "function"))
        return True

    def bind_default(self, param: ast.arg, default: ast.expr, qual: str) -> None:
        kind = BindingKind.default
        value_node: ast.AST = default
        # typer.Option(3e-4, "--lr") / click-style defaults written as the parameter default.
        if type(default) is ast.Call and _leaf(_dotted(default.func)) in ("Option", "Argument"):
            kind = BindingKind.click
            kw = {k.arg: k.value for k in default.keywords if k.arg}
            if "default" in kw:
                value_node = kw["default"]
            elif default.args and not (type(default.args[0]) is ast.Constant and default.args[0].value is Ellipsis):
                value_node = default.args[0]
            else:
                value_node = None  # type: ignore[assignment]
        self.bind(param.arg, f"{qual}.{param.arg}", kind, value_node, qual, default, owner=qual, dest=param.arg
                  if kind is BindingKind.click else "")

    def on_class(self, node: ast.ClassDef, scope: _Scope, push) -> bool:
        qual = f"{scope.qual}.{node.name}" if scope.qual else node.name
        bases = tuple(self.text(b) for b in node.bases)
        decorators = tuple(self.text(d) for d in node.decorator_list)
        deco_names = {_dotted(d.func if type(d) is ast.Call else d) for d in node.decorator_list}
        fieldlike = bool(deco_names & _DATACLASS_DECORATORS) or any(
            _leaf(_dotted(b)) in _FIELD_BASES for b in node.bases
        )
        protocol = any(_dotted(b) in _PROTOCOL_BASES for b in node.bases)
        self.definitions.append(
            Definition("class", node.name, qual, self.module, self.span(node), (), bases, decorators, None)
        )
        if node.body and stubs._is_docstring(node.body[0]):
            self.docstrings.append((node.body[0].value, qual))  # type: ignore[attr-defined]
        for child in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
            push(child)
        self.walk(node.body, _Scope(qual, "class", fieldlike, protocol))
        return True

    def target_path(self, target: ast.AST, scope: _Scope) -> tuple[str, str] | None:
        """(leaf name, full path) for an assignment target, or None when it binds no named value."""
        t = type(target)
        if t is ast.Name:
            name = target.id  # type: ignore[attr-defined]
            return name, (f"{scope.qual}.{name}" if scope.kind == "class" else name)
        if t is ast.Attribute:
            dotted = _plain_dotted(target)
            return target.attr, dotted or self.text(target)  # type: ignore[attr-defined]
        if t is ast.Subscript:
            key = target.slice  # type: ignore[attr-defined]
            if type(key) is ast.Constant and isinstance(key.value, str) and key.value:
                base = _plain_dotted(target.value) or self.text(target.value)  # type: ignore[attr-defined]
                return key.value, f"{base}.{key.value}"
        return None

    def assign_kind(self, scope: _Scope, value: ast.AST | None, annotated: bool) -> BindingKind:
        if scope.kind == "class" and scope.fieldlike:
            if annotated:
                return BindingKind.field
            if type(value) is ast.Call and _dotted(value.func) in _FIELD_CALLS:  # type: ignore[attr-defined]
                return BindingKind.field
        return BindingKind.assign

    def bind_target(self, target: ast.AST, value: ast.AST | None, scope: _Scope, at: ast.AST,
                    annotated: bool = False, expr: str | None = None) -> None:
        t = type(target)
        if t is ast.Tuple or t is ast.List:
            elts = target.elts  # type: ignore[attr-defined]
            vt = type(value)
            if (vt is ast.Tuple or vt is ast.List) and len(value.elts) == len(elts) and not any(  # type: ignore[union-attr]
                type(e) is ast.Starred for e in (*elts, *value.elts)  # type: ignore[union-attr]
            ):
                for e, v in zip(elts, value.elts):  # type: ignore[union-attr]
                    self.bind_target(e, v, scope, at)
            else:
                text = self.text(value) if value is not None else ""
                for e in elts:
                    named = self.target_path(e, scope)
                    if named:
                        self.bindings.append(
                            Binding(named[0], named[1], BindingKind.assign, text, None, False, scope.name,
                                    self.span(at))
                        )
            return
        named = self.target_path(target, scope)
        if named is None:
            return
        name, path = named
        kind = self.assign_kind(scope, value, annotated)
        value_node = value
        owner = ""
        if kind is BindingKind.field:
            owner = scope.qual
            value_node = _field_default(value)
            if value_node is None:
                return
        if value is not None and type(value) is ast.Dict:
            self.bind_dict(value, path, scope)
        elif value is not None and type(value) is ast.Call and _dotted(value.func) == "dict":  # type: ignore[attr-defined]
            self.bind_dict_call(value, path, scope)  # type: ignore[arg-type]
        if expr is not None:
            self.bindings.append(
                Binding(name, path, kind, expr, None, False, scope.name, self.span(at), owner)
            )
        else:
            self.bind(name, path, kind, value_node, scope.name, at, owner=owner)

    def on_assign(self, node: ast.Assign, scope: _Scope, push) -> bool:
        for target in node.targets:
            self.bind_target(target, node.value, scope, node)
        if len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            referenced = _referenced_callables(node.value)
            key = (scope.qual, node.targets[0].id)
            if referenced:
                self.callable_aliases[key] = referenced
            else:
                self.callable_aliases.pop(key, None)  # rebound to something else: the alias no longer holds
        return False

    def on_annassign(self, node: ast.AnnAssign, scope: _Scope, push) -> bool:
        if node.value is not None:  # a bare annotation (a required field) binds no value
            self.bind_target(node.target, node.value, scope, node, annotated=True)
        return False

    def on_augassign(self, node: ast.AugAssign, scope: _Scope, push) -> bool:
        op = _AUG_OPS.get(type(node.op), "?")
        target_text = self.text(node.target)
        expr = f"{target_text} {op} ({self.text(node.value)})"
        self.bind_target(node.target, None, scope, node, expr=expr)
        leaf = self.target_path(node.target, scope)
        if leaf:
            self.reads.add(leaf[0])
        return False

    def on_call(self, node: ast.Call, scope: _Scope, push) -> bool:
        callee = _dotted(node.func)
        leaf = _leaf(callee)
        special = None
        if leaf == "add_argument":
            self.bind_argparse(node, callee, scope)
            special = "argparse"
        elif callee == "dict" and node.keywords:
            if id(node) not in self.dict_done:
                self.bind_dict_call(node, "", scope)
            special = "dict"
        elif leaf in ("get", "getattr", "pop", "setdefault", "hasattr") and node.args:
            key = node.args[1] if leaf in ("getattr", "hasattr") and len(node.args) > 1 else node.args[0]
            if type(key) is ast.Constant and isinstance(key.value, str):
                self.reads.add(key.value)
        self.pending_calls.append((callee, node, scope, special, ""))
        if type(node.func) is ast.Name:
            for referenced in self.callable_aliases.get((scope.qual, node.func.id), ()):
                self.pending_calls.append((referenced, node, scope, "alias", ""))  # its kwargs are bound once
        return False

    def on_dict(self, node: ast.Dict, scope: _Scope, push) -> bool:
        if id(node) not in self.dict_done:
            self.bind_dict(node, "", scope)
        return False

    def on_subscript(self, node: ast.Subscript, scope: _Scope, push) -> bool:
        key = node.slice
        if type(node.ctx) is ast.Load and type(key) is ast.Constant and isinstance(key.value, str):
            self.reads.add(key.value)
        return False

    def bind_dict(self, node: ast.Dict, prefix: str, scope: _Scope, depth: int = 0) -> None:
        self.dict_done.add(id(node))
        if depth > 32:
            return
        for k, v in zip(node.keys, node.values):
            if k is None or type(k) is not ast.Constant or not isinstance(k.value, str) or not k.value:
                continue
            path = f"{prefix}.{k.value}" if prefix else k.value
            if type(v) is ast.Dict:
                self.bind_dict(v, path, scope, depth + 1)
            elif type(v) is ast.Call and _dotted(v.func) == "dict":
                self.bind_dict_call(v, path, scope, depth + 1)
            else:
                self.bind(k.value, path, BindingKind.dict, v, scope.name, k if k.lineno == v.lineno else v)

    def bind_dict_call(self, node: ast.Call, prefix: str, scope: _Scope, depth: int = 0) -> None:
        self.dict_done.add(id(node))
        if depth > 32:
            return
        for kw in node.keywords:
            if kw.arg is None:
                continue
            path = f"{prefix}.{kw.arg}" if prefix else kw.arg
            v = kw.value
            if type(v) is ast.Dict:
                self.bind_dict(v, path, scope, depth + 1)
            elif type(v) is ast.Call and _dotted(v.func) == "dict":
                self.bind_dict_call(v, path, scope, depth + 1)
            else:
                self.bind(kw.arg, path, BindingKind.dict, v, scope.name, kw)

    def bind_argparse(self, node: ast.Call, callee: str, scope: _Scope) -> None:
        flags = [a.value for a in node.args if type(a) is ast.Constant and isinstance(a.value, str) and a.value]
        if not flags:
            return
        longs = [f for f in flags if f.startswith("--")]
        shorts = [f for f in flags if f.startswith("-") and not f.startswith("--")]
        plain = [f for f in flags if not f.startswith("-")]
        primary = (longs or plain or shorts)[0]
        name = primary.lstrip("-").replace("-", "_")
        if not name:
            return
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        dest_node = kw.get("dest")
        dest = dest_node.value if type(dest_node) is ast.Constant and isinstance(dest_node.value, str) else name
        receiver = callee.rsplit(".", 1)[0] if "." in callee else ""
        default = kw.get("default")
        if default is not None:
            self.bind(name, f"args.{dest}", BindingKind.argparse, default, scope.name, node, receiver, dest)
            return
        action = kw.get("action")
        implied = None
        if type(action) is ast.Constant and action.value in ("store_true", "store_false"):
            implied = action.value == "store_false"
        self.bindings.append(
            Binding(name, f"args.{dest}", BindingKind.argparse, "", implied, implied is not None, scope.name,
                    self.span(node), receiver, dest)
        )

    def on_import(self, node: ast.Import, scope: _Scope, push) -> bool:
        for alias in node.names:
            local = alias.asname or alias.name.split(".", 1)[0]
            self.imports.append(Import(alias.name, None, local, self.span(node)))
        return True

    def on_import_from(self, node: ast.ImportFrom, scope: _Scope, push) -> bool:
        module = node.module or ""
        if node.level:
            module = self.resolve_relative(module, node.level)
        for alias in node.names:
            if alias.name == "*":
                continue
            self.imports.append(Import(module, alias.name, alias.asname or alias.name, self.span(node), node.level))
        return True

    def resolve_relative(self, module: str, level: int) -> str:
        parts = self.module.split(".") if self.module else []
        if not self.is_package:
            parts = parts[:-1]
        if level > 1:
            parts = parts[: max(len(parts) - (level - 1), 0)]
        if module:
            parts.append(module)
        return ".".join(parts)

    # ----- comments and docstrings -----------------------------------------------------------------------
    def scan_comments(self, skip: frozenset[int] = frozenset()) -> None:
        found = 0
        for i, line in enumerate(self.src.lines, 1):
            at = line.find("#")
            if at < 0 or i in skip:
                continue
            if line.count('"', 0, at) % 2 or line.count("'", 0, at) % 2:
                continue  # the '#' sits inside a string literal
            found += self.comment_bindings(line[at + 1 :], i, "<module>")
            if found > _MAX_COMMENT_BINDINGS:
                return
        for const, scope in self.docstrings:
            value = const.value
            if not isinstance(value, str) or not _DIGIT.search(value):
                continue
            for offset, text in enumerate(value.split("\n")):
                found += self.comment_bindings(text, const.lineno + offset, scope)
                if found > _MAX_COMMENT_BINDINGS:
                    return

    def comment_bindings(self, text: str, line: int, scope: str) -> int:
        if not _DIGIT.search(text):
            return 0
        seen: set[tuple[str, str]] = set()
        for m in _COMMENT_ASSIGN.finditer(text):
            seen.add((m.group(1), m.group(2)))
        for m in _COMMENT_OF.finditer(text):
            first, second, number = m.group(1), m.group(2), m.group(3)
            if second.lower() in _STOPWORDS:
                continue
            seen.add((second, number))
            if first and first.lower() not in _STOPWORDS:
                seen.add((f"{first}_{second}", number))
        span = Span(self.path, line, line)
        for name, number in sorted(seen):
            self.bindings.append(
                Binding(name, name, BindingKind.comment, number, number_value(number), True, scope, span)
            )
        return len(seen)

    # ----- resolution and output -------------------------------------------------------------------------
    def finish(self, facts: FileFacts) -> None:
        aliases: dict[str, str] = {}
        for imp in sorted(self.imports, key=lambda i: (i.span.line, i.alias)):
            if imp.name is None:
                # `import torch.nn` binds `torch`; `import torch.nn as nn` binds `nn` to `torch.nn`.
                plain = imp.alias == imp.module.split(".", 1)[0]
                aliases[imp.alias] = imp.alias if plain else imp.module
            else:
                aliases[imp.alias] = imp.qualified
        module_prefix = f"{self.module}." if self.module else ""

        def resolve(callee: str) -> str:
            root = _root(callee)
            target = aliases.get(root)
            if target is not None:
                return target + callee[len(root):]
            if root in self.module_defs and root == callee.split(".", 1)[0] and "(" not in root:
                return module_prefix + callee
            return callee

        calls: list[CallSite] = []
        for callee, node, scope, special, _ in self.pending_calls:
            qualname = resolve(callee)
            args = tuple(self.text(a) for a in node.args)
            kwargs = tuple((k.arg if k.arg else "**", self.text(k.value)) for k in node.keywords)
            calls.append(CallSite(callee, qualname, args, kwargs, scope.name, self.span(node)))
            if special is None:
                for k in node.keywords:
                    if k.arg:
                        self.bind(k.arg, f"{qualname}.{k.arg}", BindingKind.kwarg, k.value, scope.name, k,
                                  owner=qualname)
        for node, callee, qual in self.pending_click:
            qualname = resolve(callee)
            if not (qualname.startswith(("click.", "typer.")) or callee.startswith("click.")):
                continue
            self.bind_click(node, qual, _leaf(qualname))
        self.pending_calls, self.pending_click, self.docstrings = [], [], []  # release the tree
        # Stable sorts by line keep the (deterministic) walk order among records of the same line.
        facts.bindings = sorted(self.bindings, key=_line_of)
        facts.calls = sorted(calls, key=_line_of)
        facts.definitions = sorted(self.definitions, key=lambda d: (d.span.line, d.qualname))
        facts.imports = sorted(self.imports, key=lambda i: (i.span.line, i.module, i.name or "", i.alias))
        facts.reads = frozenset(self.reads)
        facts.has_main_block = self.has_main

    def bind_click(self, node: ast.Call, qual: str, leaf: str) -> None:
        flags = [a.value for a in node.args if type(a) is ast.Constant and isinstance(a.value, str) and a.value]
        if not flags:
            return
        longs = [f for f in flags if f.startswith("--")]
        plain = [f for f in flags if not f.startswith("-")]
        shorts = [f for f in flags if f.startswith("-") and not f.startswith("--")]
        primary = (longs or plain or shorts)[0]
        name = primary.split("/", 1)[0].lstrip("-").replace("-", "_")
        dest = plain[0] if plain and longs else name
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        default = kw.get("default")
        if default is not None:
            self.bind(name, f"args.{dest}", BindingKind.click, default, qual, node, qual, dest)
            return
        flag = kw.get("is_flag")
        implied = False if type(flag) is ast.Constant and flag.value is True else None
        self.bindings.append(
            Binding(name, f"args.{dest}", BindingKind.click, "", implied, implied is not None, qual, self.span(node),
                    qual, dest)
        )


def _line_of(record: Binding | CallSite) -> int:
    return record.span.line


_AUG_OPS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
    ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^", ast.MatMult: "@",
}


def _field_default(value: ast.AST | None) -> ast.AST | None:
    """The default expression of a dataclass/pydantic/attrs field, or None for a required field."""
    if value is None:
        return None
    if type(value) is ast.Call and _dotted(value.func) in _FIELD_CALLS:  # type: ignore[attr-defined]
        kw = {k.arg: k.value for k in value.keywords if k.arg}  # type: ignore[attr-defined]
        if "default" in kw:
            return kw["default"]
        for name in ("default_factory", "factory"):
            if name in kw:
                factory = kw[name]
                return factory.body if type(factory) is ast.Lambda else factory
        args = value.args  # type: ignore[attr-defined]
        if args and not (type(args[0]) is ast.Constant and args[0].value is Ellipsis):
            return args[0]
        return None
    return value


def _is_main_test(test: ast.expr) -> bool:
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) is not ast.Eq:
        return False
    sides = (test.left, test.comparators[0])
    names = [s for s in sides if type(s) is ast.Name and s.id == "__name__"]
    consts = [s for s in sides if type(s) is ast.Constant and s.value == "__main__"]
    return bool(names and consts)


def prose_bindings(path: str, text: str, hash_comments_only: bool = False) -> list[Binding]:
    """``comment`` bindings for "name = number" written in a README (every line), or in the ``#`` comments
    of a shell/YAML/TOML file (``hash_comments_only``)."""
    walker = _Walker(path, "", False, Source(split_lines(text)))
    if hash_comments_only:
        walker.scan_comments()
        return walker.bindings
    found = 0
    for i, line in enumerate(walker.src.lines, 1):
        found += walker.comment_bindings(line, i, "<doc>")
        if found > _MAX_COMMENT_BINDINGS:
            break
    return walker.bindings
