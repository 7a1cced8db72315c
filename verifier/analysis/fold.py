"""Safe constant folding of an expression's source text over known constants.

The analysed repo is untrusted, so nothing is ever evaluated: the expression is parsed with ``ast`` and
walked by hand, accepting only literals, arithmetic, tuples/lists, a whitelist of pure functions and
references the caller resolved (``env``). Everything is bounded (source length, nesting, exponent size,
string length) so a hostile ``10 ** 10 ** 10`` or ``"x" * 10**9`` is refused, never computed.

Public API (used by the value resolver and the call/init checks):

    fold(expr_source, env={}) -> FoldResult(ok, value, reason)
    fold_node(node, env={})   -> FoldResult
    references(expr_source)   -> tuple of the dotted names the expression reads ("args.lr", "cfg.optim.lr")
    dotted(node)              -> "cfg.optim.lr" for cfg.optim.lr / cfg["optim"]["lr"] / cfg.get("lr"), else None
    parse_number_text(text)   -> 0.0003 for "3e-4", 3 for "3", True for "true"; None when not a literal

``env`` maps dotted names to already-folded values; ``config["lr"]`` and ``config.lr`` look up the same key
``config.lr``. Lists fold to lists and tuples to tuples.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from verifier import pysource

MAX_SOURCE = 2000  # characters of expression text we are willing to parse
MAX_DEPTH = 60  # nesting of the expression tree
MAX_INT_BITS = 4096
MAX_STR = 10_000
MAX_SEQ = 1_000
MAX_EXPONENT = 1_000

_EMPTY: Mapping[str, object] = {}


@dataclass(frozen=True, slots=True)
class FoldResult:
    ok: bool
    value: object = None
    reason: str = ""

    def __bool__(self) -> bool:  # pragma: no cover - convenience, `if fold(x):` reads naturally
        return self.ok


class _Refuse(Exception):
    """Folding stops: the expression is not a bounded constant over ``env``."""


# Pure functions whose result depends only on their (folded) arguments. Keys are dotted names as written;
# numpy/jax/torch spellings map to the same math.
def _sqrt(x: float) -> float:
    if x < 0:
        raise _Refuse("sqrt of a negative number")
    return math.sqrt(x)


def _log(x: float, base: float | None = None) -> float:
    if x <= 0 or (base is not None and (base <= 0 or base == 1)):
        raise _Refuse("log outside its domain")
    return math.log(x) if base is None else math.log(x, base)


def _checked_float(x: Any) -> float:
    if isinstance(x, str):
        parsed = parse_number_text(x)
        if isinstance(parsed, (int, float)) and not isinstance(parsed, bool):
            return float(parsed)
        if x.strip().lower() in ("inf", "+inf", "infinity", "-inf", "nan"):
            return float(x.strip())
        raise _Refuse(f"float() of a non-numeric string {x[:20]!r}")
    if isinstance(x, (int, float)):
        return float(x)
    raise _Refuse("float() of a non-number")


def _checked_int(x: Any, base: int | None = None) -> int:
    if isinstance(x, str):
        try:
            return int(x.strip().replace("_", ""), base or 10)
        except ValueError:
            parsed = parse_number_text(x)
            if isinstance(parsed, int) and not isinstance(parsed, bool):
                return parsed
            raise _Refuse(f"int() of a non-integer string {x[:20]!r}") from None
    if isinstance(x, float):
        if not math.isfinite(x):
            raise _Refuse("int() of inf/nan")
        return int(x)
    if isinstance(x, int):
        return int(x)
    raise _Refuse("int() of a non-number")


def _exp(x: float) -> float:
    if x > 700:
        raise _Refuse("exp overflow")
    return math.exp(x)


_FUNCTIONS: dict[str, Any] = {
    "int": _checked_int,
    "float": _checked_float,
    "bool": bool,
    "tuple": lambda seq=(): tuple(seq),
    "list": lambda seq=(): list(seq),
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "sqrt": _sqrt,
    "exp": _exp,
    "log": _log,
    "log2": lambda x: _log(x, 2),
    "log10": lambda x: _log(x, 10),
    "ceil": math.ceil,
    "floor": math.floor,
    "cos": math.cos,
    "sin": math.sin,
    "tan": math.tan,
    "tanh": math.tanh,
}
_MODULE_PREFIXES = ("math", "np", "numpy", "jnp", "jax.numpy", "torch", "onp")
_FUNCTION_MODULES_OK = {"sqrt", "exp", "log", "log2", "log10", "ceil", "floor", "cos", "sin", "tan", "tanh"}
_CONSTANTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "tau": math.tau}


def fold(expr_source: str, env: Mapping[str, object] = _EMPTY) -> FoldResult:
    """Fold the source text of one expression; never evaluates anything from the repo."""
    if not isinstance(expr_source, str):
        return FoldResult(False, reason="not source text")
    text = expr_source.strip()
    if not text:
        return FoldResult(False, reason="empty expression")
    if len(text) > MAX_SOURCE:
        return FoldResult(False, reason="expression too long to fold")
    try:
        tree = pysource.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return FoldResult(False, reason="not a Python expression")
    return fold_node(tree.body, env)


def fold_node(node: ast.AST, env: Mapping[str, object] = _EMPTY) -> FoldResult:
    try:
        return FoldResult(True, _Folder(env).visit(node, 0))
    except _Refuse as exc:
        return FoldResult(False, reason=str(exc) or "not a constant")
    except (ArithmeticError, ValueError, TypeError, LookupError, AttributeError, RecursionError, MemoryError) as exc:
        return FoldResult(False, reason=f"{type(exc).__name__} while folding")


def references(expr_source: str) -> tuple[str, ...]:
    """The dotted names an expression reads, outermost chains only, sorted and de-duplicated."""
    text = (expr_source or "").strip()
    if not text or len(text) > MAX_SOURCE:
        return ()
    try:
        tree = pysource.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    found: set[str] = set()

    def walk(node: ast.AST, depth: int) -> None:
        if depth > MAX_DEPTH:
            return
        name = dotted(node)
        if name is not None:
            if not _is_builtin_constant(name):
                found.add(name)
            if isinstance(node, ast.Call):  # cfg.get("lr", DEFAULT): the fallback may be a reference too
                for arg in node.args[1:]:
                    walk(arg, depth + 1)
            return
        if isinstance(node, ast.Call):
            for arg in node.args:
                walk(arg, depth + 1)
            for kw in node.keywords:
                walk(kw.value, depth + 1)
            return
        for child in ast.iter_child_nodes(node):
            walk(child, depth + 1)

    walk(tree.body, 0)
    return tuple(sorted(found))


def dotted(node: ast.AST) -> str | None:
    """``a.b.c``, ``a["b"]["c"]``, ``a.get("c"[, default])`` and ``getattr(a, "c")`` as ``a.b.c`` text."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    if isinstance(node, ast.Subscript):
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and _IDENT.match(key.value):
            head = dotted(node.value)
            return f"{head}.{key.value}" if head else None
        return None
    if isinstance(node, ast.Call) and node.args and not node.keywords:
        first = node.args[0]
        if (
            isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and isinstance(first, ast.Constant)
            and isinstance(first.value, str)
            and _IDENT.match(first.value)
            and len(node.args) <= 2
        ):
            head = dotted(node.func.value)
            return f"{head}.{first.value}" if head else None
        if (
            isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) in (2, 3)
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            head = dotted(first)
            return f"{head}.{node.args[1].value}" if head else None
    return None


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")
_NUMBER = re.compile(r"^[+-]?(\d[\d_]*\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def parse_number_text(text: str) -> object:
    """A config/launch literal as a value: "3e-4" -> 0.0003, "64" -> 64, "true" -> True; else None."""
    if not isinstance(text, str):
        return None
    t = text.strip().strip("'\"").strip()
    if not t or len(t) > 64:
        return None
    low = t.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("none", "null", "~"):
        return None
    if _NUMBER.match(t):
        body = t.replace("_", "")
        if re.match(r"^[+-]?\d+$", body):
            value = int(body)
            return value if value.bit_length() <= MAX_INT_BITS else None
        try:
            value = float(body)
        except ValueError:
            return None
        return value if math.isfinite(value) else None
    return None


def _is_builtin_constant(name: str) -> bool:
    if name in ("True", "False", "None"):
        return True
    head, _, leaf = name.rpartition(".")
    return head in _MODULE_PREFIXES and leaf in _CONSTANTS


class _Folder:
    def __init__(self, env: Mapping[str, object]) -> None:
        self.env = env

    def visit(self, node: ast.AST, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise _Refuse("expression nested too deeply")
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise _Refuse(f"{type(node).__name__} is not foldable")
        return _bounded(method(node, depth + 1))

    def _Constant(self, node: ast.Constant, depth: int) -> Any:
        if isinstance(node.value, (int, float, str, bool, type(None))):
            return node.value
        raise _Refuse("unsupported literal")

    def _lookup(self, name: str) -> Any:
        if name in self.env:
            return _bounded(self.env[name])
        head, _, leaf = name.rpartition(".")
        if head in _MODULE_PREFIXES and leaf in _CONSTANTS:
            return _CONSTANTS[leaf]
        raise _Refuse(f"unknown name {name}")

    def _Name(self, node: ast.Name, depth: int) -> Any:
        return self._lookup(node.id)

    def _Attribute(self, node: ast.Attribute, depth: int) -> Any:
        name = dotted(node)
        if name is None:
            raise _Refuse("attribute of a non-name")
        return self._lookup(name)

    def _Subscript(self, node: ast.Subscript, depth: int) -> Any:
        name = dotted(node)
        if name is not None and name in self.env:
            return _bounded(self.env[name])
        container = self.visit(node.value, depth)
        index = self.visit(node.slice, depth)
        if isinstance(container, (tuple, list, str)) and isinstance(index, int) and not isinstance(index, bool):
            if not -len(container) <= index < len(container):
                raise _Refuse("index out of range")
            return container[index]
        raise _Refuse("subscript not foldable")

    def _Tuple(self, node: ast.Tuple, depth: int) -> Any:
        if len(node.elts) > MAX_SEQ:
            raise _Refuse("sequence too long")
        return tuple(self.visit(e, depth) for e in node.elts)

    def _List(self, node: ast.List, depth: int) -> Any:
        if len(node.elts) > MAX_SEQ:
            raise _Refuse("sequence too long")
        return [self.visit(e, depth) for e in node.elts]

    def _UnaryOp(self, node: ast.UnaryOp, depth: int) -> Any:
        value = self.visit(node.operand, depth)
        if isinstance(node.op, ast.Not):
            return not value
        if not _is_number(value):
            raise _Refuse("unary operator on a non-number")
        if isinstance(node.op, ast.USub):
            return -value
        if isinstance(node.op, ast.UAdd):
            return +value
        if isinstance(node.op, ast.Invert) and isinstance(value, int):
            return ~value
        raise _Refuse("unsupported unary operator")

    def _BinOp(self, node: ast.BinOp, depth: int) -> Any:
        left = self.visit(node.left, depth)
        right = self.visit(node.right, depth)
        op = node.op
        if isinstance(left, str) or isinstance(right, str):
            return _string_op(op, left, right)
        if isinstance(left, (tuple, list)) or isinstance(right, (tuple, list)):
            return _sequence_op(op, left, right)
        if not (_is_number(left) and _is_number(right)):
            raise _Refuse("arithmetic on non-numbers")
        if isinstance(op, ast.Add):
            return left + right
        if isinstance(op, ast.Sub):
            return left - right
        if isinstance(op, ast.Mult):
            return left * right
        if isinstance(op, ast.Div):
            return left / right
        if isinstance(op, ast.FloorDiv):
            return left // right
        if isinstance(op, ast.Mod):
            return left % right
        if isinstance(op, ast.Pow):
            return _power(left, right)
        raise _Refuse("unsupported binary operator")

    def _BoolOp(self, node: ast.BoolOp, depth: int) -> Any:
        values = [self.visit(v, depth) for v in node.values]
        if isinstance(node.op, ast.And):
            result = values[0]
            for v in values:
                result = v
                if not v:
                    return v
            return result
        for v in values:
            if v:
                return v
        return values[-1]

    def _Compare(self, node: ast.Compare, depth: int) -> Any:
        left = self.visit(node.left, depth)
        for op, comparator in zip(node.ops, node.comparators):
            right = self.visit(comparator, depth)
            if isinstance(op, ast.Eq):
                ok = left == right
            elif isinstance(op, ast.NotEq):
                ok = left != right
            elif isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) and _is_number(left) and _is_number(right):
                ok = {ast.Lt: left < right, ast.LtE: left <= right, ast.Gt: left > right, ast.GtE: left >= right}[
                    type(op)
                ]
            elif isinstance(op, ast.Is) and right is None:
                ok = left is None
            elif isinstance(op, ast.IsNot) and right is None:
                ok = left is not None
            else:
                raise _Refuse("unsupported comparison")
            if not ok:
                return False
            left = right
        return True

    def _IfExp(self, node: ast.IfExp, depth: int) -> Any:
        return self.visit(node.body if self.visit(node.test, depth) else node.orelse, depth)

    def _Call(self, node: ast.Call, depth: int) -> Any:
        name = dotted(node)
        if name is not None and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            if name in self.env:
                return _bounded(self.env[name])
            if len(node.args) == 2:
                return self.visit(node.args[1], depth)
            raise _Refuse(f"unknown name {name}")
        if node.keywords:
            raise _Refuse("keyword arguments in a call are not folded")
        func = dotted(node.func)
        if func is None:
            raise _Refuse("call of a non-name")
        head, _, leaf = func.rpartition(".")
        if head and not (head in _MODULE_PREFIXES and leaf in _FUNCTION_MODULES_OK):
            raise _Refuse(f"{func}() is not a whitelisted pure function")
        fn = _FUNCTIONS.get(leaf)
        if fn is None:
            raise _Refuse(f"{func}() is not a whitelisted pure function")
        args = [self.visit(a, depth) for a in node.args]
        if leaf in ("min", "max") and len(args) == 1 and isinstance(args[0], (tuple, list)):
            args = list(args[0])
        if leaf in ("min", "max") and not args:
            raise _Refuse(f"{leaf}() of nothing")
        if leaf in ("tuple", "list"):
            if len(args) > 1 or (args and not isinstance(args[0], (tuple, list))):
                raise _Refuse(f"{leaf}() of a non-sequence")
        elif leaf not in ("int", "float", "bool") and not all(_is_number(a) for a in args):
            raise _Refuse(f"{func}() of a non-number")
        return fn(*args)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float))  # bool included: Python arithmetic treats it as 0/1


def _power(base: Any, exponent: Any) -> Any:
    if isinstance(exponent, (int, float)) and abs(exponent) > MAX_EXPONENT:
        raise _Refuse("exponent too large")
    if isinstance(base, int) and isinstance(exponent, int) and exponent >= 0:
        if base not in (0, 1, -1) and abs(base).bit_length() * exponent > MAX_INT_BITS:
            raise _Refuse("power too large")
        return base**exponent
    if base == 0 and exponent < 0:
        raise _Refuse("zero to a negative power")
    if isinstance(base, (int, float)) and base < 0 and not float(exponent).is_integer():
        raise _Refuse("complex power")
    result = float(base) ** float(exponent)
    if not math.isfinite(result):
        raise _Refuse("power overflow")
    return result


def _string_op(op: ast.operator, left: Any, right: Any) -> Any:
    if isinstance(op, ast.Add) and isinstance(left, str) and isinstance(right, str):
        if len(left) + len(right) > MAX_STR:
            raise _Refuse("string too long")
        return left + right
    if isinstance(op, ast.Mult):
        text, count = (left, right) if isinstance(left, str) else (right, left)
        if isinstance(count, int) and not isinstance(count, bool) and isinstance(text, str):
            if count * len(text) > MAX_STR:
                raise _Refuse("string too long")
            return text * count
    raise _Refuse("unsupported string operation (formatting is not folded)")


def _sequence_op(op: ast.operator, left: Any, right: Any) -> Any:
    if isinstance(op, ast.Add) and type(left) is type(right):
        if len(left) + len(right) > MAX_SEQ:
            raise _Refuse("sequence too long")
        return left + right
    if isinstance(op, ast.Mult):
        seq, count = (left, right) if isinstance(left, (tuple, list)) else (right, left)
        if isinstance(count, int) and not isinstance(count, bool) and isinstance(seq, (tuple, list)):
            if count * len(seq) > MAX_SEQ:
                raise _Refuse("sequence too long")
            return seq * count
    raise _Refuse("unsupported sequence operation")


def _bounded(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        if value.bit_length() > MAX_INT_BITS:
            raise _Refuse("integer too large")
        return value
    if isinstance(value, float):
        if math.isnan(value):
            raise _Refuse("not a number")
        return value
    if isinstance(value, str):
        if len(value) > MAX_STR:
            raise _Refuse("string too long")
        return value
    if isinstance(value, (tuple, list)):
        if len(value) > MAX_SEQ:
            raise _Refuse("sequence too long")
        return value
    raise _Refuse(f"value of type {type(value).__name__} is not a constant")
