"""Is a function body a placeholder? One short reason, or None.

Follows pyflakes' no-false-positives principle: abstract methods, overloads, Protocol members, dispatchers that
raise NotImplementedError only after other returns, and factories whose inputs are real values are not stubs.
"""

from __future__ import annotations

import ast
import re

from verifier.index.names import attribute_chain

# Factories that produce a tensor of the right shape without computing anything from the inputs.
_RANDOM_LEAVES = frozenset({"randn", "rand", "randint", "randn_like", "rand_like", "randint_like", "normal", "uniform"})
_FILL_LEAVES = frozenset(
    {"zeros", "zeros_like", "ones", "ones_like", "empty", "empty_like", "full", "full_like"}
)
_ARRAY_ROOTS = frozenset({"torch", "np", "numpy", "jnp", "jax", "random", "tf", "onp"})
# Reading an input only for these keeps it "ignored": the output does not depend on its values.
_SHAPE_ATTRS = frozenset({"shape", "device", "dtype", "ndim", "is_cuda"})
_SHAPE_METHODS = frozenset({"size", "dim", "numel", "new_zeros", "new_ones", "new_empty", "new_full", "to"})
_NOT_STUB_DECORATORS = frozenset({"abstractmethod", "abstractproperty", "overload", "abstractclassmethod"})
_IDENTITY_OK = re.compile(r"identity|noop|no_op|passthrough|pass_through|dummy|null|nothing|base|abstract", re.IGNORECASE)
_TRANSFORM_WORDS = re.compile(
    r"normali[sz]e|augment|transform|preprocess|postprocess|encode|decode|rotary|rotate|quantiz|"
    r"compress|smooth|whiten|standardi[sz]e|tokeni[sz]e|embed|project",
    re.IGNORECASE,
)
_MAX_SMALL_BODY = 4
_MAX_SMALL_LINES = 30
# Placeholder markers (spelled with classes so this pattern is not itself mistaken for a marker).
_TODO = re.compile(r"\b(T[O]DO|F[I]XME|X[X]X|TBD)\b|not implemented|implement (me|this)", re.IGNORECASE)


def classify(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    lines: list[str],
    class_name: str | None = None,
    in_protocol: bool = False,
) -> str | None:
    """Why ``fn`` is a placeholder (pass, ellipsis, docstring-only, not-implemented, todo, constant-return,
    random-return, zeros-return, identity-return), or None when it looks implemented or intentionally empty."""
    if in_protocol or any(_leaf(d) in _NOT_STUB_DECORATORS for d in fn.decorator_list):
        return None
    body = list(fn.body)
    docstring = ""
    if body and _is_docstring(body[0]):
        docstring = body[0].value.value  # type: ignore[attr-defined]
        body = body[1:]
    todo = bool(_TODO.search(docstring)) or _has_todo_comment(fn, lines)
    real = [s for s in body if not _is_trivial(s)]
    if not real:
        if todo:
            return "todo"
        if any(_is_ellipsis(s) for s in body):
            return "ellipsis"
        if body:
            return "pass"
        return "docstring-only"
    if _always_raises_not_implemented(fn, real):
        return "not-implemented"
    if len(real) > _MAX_SMALL_BODY or (getattr(fn, "end_lineno", 0) or 0) - fn.lineno > _MAX_SMALL_LINES:
        return None  # placeholders are short; long bodies do real work (and walking them all is costly)
    params = _value_params(fn)
    if not params or fn.name.startswith("__") and fn.name.endswith("__") and fn.name not in ("__call__",):
        return None
    reason = _ignores_inputs(fn, params)
    if reason:
        return "todo" if todo else reason
    if (
        len(real) == 1
        and isinstance(real[0], ast.Return)
        and isinstance(real[0].value, ast.Name)
        and real[0].value.id in params
        and _should_transform(fn.name, class_name)
    ):
        return "identity-return"
    return None


def _leaf(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _is_ellipsis(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and stmt.value.value is Ellipsis


def _is_trivial(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Pass) or _is_ellipsis(stmt) or _is_docstring(stmt)


def _has_todo_comment(fn: ast.AST, lines: list[str]) -> bool:
    start = getattr(fn, "lineno", 1)
    end = getattr(fn, "end_lineno", start) or start
    for line in lines[start - 1 : end]:
        hash_at = line.find("#")
        if hash_at >= 0 and _TODO.search(line, hash_at):
            return True
    return False


def _is_not_implemented(exc: ast.expr | None) -> bool:
    return exc is not None and _leaf(exc) in ("NotImplementedError", "NotImplemented")


def _own_nodes(fn: ast.AST):
    """Nodes of ``fn``'s body, not descending into nested functions, classes or lambdas."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _always_raises_not_implemented(fn: ast.AST, real: list[ast.stmt]) -> bool:
    if not any(type(s) is ast.Raise and _is_not_implemented(s.exc) for s in real):
        return False
    # A dispatcher (`if kind == "a": return ...` then raise) is implemented for the cases it returns.
    return not any(isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)) for n in _own_nodes(fn))


def _value_params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    a = fn.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    if a.vararg:
        names.append(a.vararg.arg)
    if a.kwarg:
        names.append(a.kwarg.arg)
    return {n for n in names if n not in ("self", "cls")}




def _factory_kind(value: ast.expr | None) -> str | None:
    if not isinstance(value, ast.Call):
        return None
    dotted = (attribute_chain(value.func) or "")
    if not dotted or "." not in dotted:
        return None
    root, leaf = dotted.split(".", 1)[0], dotted.rsplit(".", 1)[-1]
    if root not in _ARRAY_ROOTS:
        return None
    if leaf in _RANDOM_LEAVES or ".random." in f".{dotted}.":
        return "random-return"
    if leaf in _FILL_LEAVES:
        return "zeros-return"
    return None


def _real_param_uses(fn: ast.AST, params: set[str]) -> bool:
    """Does the body use an input's values (not just its shape, device or dtype)?"""
    shape_only: set[int] = set()
    for node in _own_nodes(fn):
        if isinstance(node, ast.Attribute) and node.attr in _SHAPE_ATTRS and isinstance(node.value, ast.Name):
            shape_only.add(id(node.value))
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in _SHAPE_METHODS and isinstance(f.value, ast.Name):
                shape_only.add(id(f.value))
            leaf = _leaf(f)
            if (leaf == "len" or leaf.endswith("_like")) and node.args and isinstance(node.args[0], ast.Name):
                shape_only.add(id(node.args[0]))
    for node in _own_nodes(fn):
        if (
            isinstance(node, ast.Name)
            and node.id in params
            and id(node) not in shape_only
            and isinstance(node.ctx, ast.Load)
        ):
            return True
    return False


_SIMPLE_STMTS = (ast.Return, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Pass)


def _ignores_inputs(fn: ast.FunctionDef | ast.AsyncFunctionDef, params: set[str]) -> str | None:
    body = [s for s in fn.body if not _is_trivial(s)]
    # Only straight-line bodies ending in a return qualify; branching bodies are treated as real work.
    if not body or type(body[-1]) is not ast.Return or not all(isinstance(s, _SIMPLE_STMTS) for s in body):
        return None
    returns = [s for s in body if type(s) is ast.Return]
    kinds = set()
    for ret in returns:
        value = ret.value
        if value is None or _is_plain_constant(value):
            if isinstance(value, ast.Constant) and isinstance(value.value, bool):
                return None  # predicates like `should_stop` legitimately answer a constant
            kinds.add("constant-return")
            continue
        kind = _factory_kind(value)
        if kind is None:
            return None
        kinds.add(kind)
    if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in _own_nodes(fn)):
        return None
    if _real_param_uses(fn, params):
        return None
    for kind in ("random-return", "zeros-return", "constant-return"):
        if kind in kinds:
            return kind
    return None


def _is_plain_constant(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value is not Ellipsis
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, (int, float))
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_is_plain_constant(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return not node.keys
    return False


def _should_transform(fn_name: str, class_name: str | None) -> bool:
    if class_name and _IDENTITY_OK.search(class_name):
        return False
    if _IDENTITY_OK.search(fn_name):
        return False
    if fn_name in ("forward", "__call__") and class_name:
        return True
    return bool(_TRANSFORM_WORDS.search(fn_name))
