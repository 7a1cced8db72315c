"""Source text and constant folding shared by the Python, notebook and shell extractors.

``ast`` columns are UTF-8 byte offsets; slicing the line list ourselves is ~50x cheaper than
``ast.get_source_segment`` (which re-splits the whole source on every call).
"""

from __future__ import annotations

import ast
import operator
import re

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_MAX_INT_BITS = 4096
_MAX_STR = 10_000

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def split_lines(text: str) -> list[str]:
    """Lines as the Python tokenizer counts them (only \\n, \\r\\n, \\r end a line; form feeds do not)."""
    if "\r" not in text:
        return text.split("\n")
    return _LINE_BREAK.split(text)


class Source:
    """A file's lines with cheap slicing by ``ast`` positions."""

    __slots__ = ("lines",)

    def __init__(self, lines: list[str]):
        self.lines = lines

    def segment(self, node: ast.AST) -> str:
        try:
            return self.span_text(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        except (AttributeError, IndexError, TypeError):
            return ""

    def span_text(self, line: int, col: int, end_line: int | None, end_col: int | None) -> str:
        lines = self.lines
        if end_line is None or end_col is None:
            return ""
        first = lines[line - 1]
        if line == end_line:
            if first.isascii():
                return first[col:end_col]
            return first.encode("utf-8")[col:end_col].decode("utf-8", "replace")
        parts = [_cut(first, col, None)]
        parts.extend(lines[line : end_line - 1])
        parts.append(_cut(lines[end_line - 1], 0, end_col))
        return "\n".join(parts)


def _cut(line: str, start: int, end: int | None) -> str:
    if line.isascii():
        return line[start:end]
    return line.encode("utf-8")[start:end].decode("utf-8", "replace")


def fold(node: ast.AST) -> tuple[bool, object]:
    """(True, value) when ``node`` is a constant expression: numbers with arithmetic, strings, bools, None,
    tuples/lists of constants (as tuples), ``float("inf")``. Bounded: no huge powers or strings."""
    try:
        return True, _fold(node)
    except (_NotConstant, ArithmeticError, ValueError, TypeError, RecursionError, MemoryError):
        return False, None


class _NotConstant(Exception):
    pass


def _fold(node: ast.AST) -> object:
    t = type(node)
    if t is ast.Constant:
        v = node.value  # type: ignore[attr-defined]
        if v is Ellipsis or isinstance(v, (bytes, complex)):
            raise _NotConstant
        return v
    if t is ast.UnaryOp:
        v = _fold(node.operand)  # type: ignore[attr-defined]
        op = type(node.op)  # type: ignore[attr-defined]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            if op is ast.Not:
                return not v
            raise _NotConstant
        if op is ast.USub:
            return -v
        if op is ast.UAdd:
            return +v
        if op is ast.Not:
            return not v
        if op is ast.Invert and isinstance(v, int):
            return ~v
        raise _NotConstant
    if t is ast.BinOp:
        fn = _BINOPS.get(type(node.op))  # type: ignore[attr-defined]
        if fn is None:
            raise _NotConstant
        left = _fold(node.left)  # type: ignore[attr-defined]
        right = _fold(node.right)  # type: ignore[attr-defined]
        _guard(fn, left, right)
        result = fn(left, right)
        if isinstance(result, int) and not isinstance(result, bool) and result.bit_length() > _MAX_INT_BITS:
            raise _NotConstant
        if isinstance(result, (str, tuple)) and len(result) > _MAX_STR or isinstance(result, complex):
            raise _NotConstant
        return result
    if t is ast.Tuple or t is ast.List:
        return tuple(_fold(e) for e in node.elts)  # type: ignore[attr-defined]
    if t is ast.Call:
        func = node.func  # type: ignore[attr-defined]
        if (
            isinstance(func, ast.Name)
            and func.id in ("float", "int")
            and len(node.args) == 1  # type: ignore[attr-defined]
            and not node.keywords  # type: ignore[attr-defined]
        ):
            arg = _fold(node.args[0])  # type: ignore[attr-defined]
            if isinstance(arg, str) and len(arg) > 64:
                raise _NotConstant
            if isinstance(arg, (str, int, float)) and not isinstance(arg, bool):
                return float(arg) if func.id == "float" else int(arg)
        raise _NotConstant
    raise _NotConstant


def _guard(fn, left: object, right: object) -> None:
    for v in (left, right):
        if v is None or isinstance(v, tuple):
            if fn is operator.add and type(left) is type(right) is tuple:
                return
            raise _NotConstant
    if (
        fn is operator.pow
        and type(left) is int
        and type(right) is int
        and abs(right) > 1
        and abs(left) > 1
        and abs(right) * max(abs(left).bit_length(), 1) > _MAX_INT_BITS
    ):
        raise _NotConstant
    if fn is operator.mul and (isinstance(left, str) or isinstance(right, str)):
        count = right if isinstance(left, str) else left
        if not isinstance(count, int) or count * max(len(str(left if isinstance(left, str) else right)), 1) > _MAX_STR:
            raise _NotConstant


def number_value(text: str) -> object:
    """A number written as text ("1e-4", "64", "-3") as int/float; anything else unchanged."""
    text = text.strip()
    if _NUMBER.fullmatch(text):
        try:
            return int(text)
        except ValueError:
            try:
                return float(text)
            except ValueError:
                return text
    return text


def is_number_text(text: str) -> bool:
    return bool(_NUMBER.fullmatch(text.strip()))
