"""A small structural matcher over ``ast`` for ``pattern`` checks (semgrep-like, Python only).

Pattern syntax is Python with two additions: ``$X`` is a metavariable (binds any expression or name; the
same metavariable must bind equal code everywhere it appears) and ``...`` is a wildcard (any arguments in a
call, any statements in a body, any expression). ``def $F(...): ...`` matches any function. Dotted names match
through imports (``nn.Linear`` matches ``torch.nn.Linear`` and ``from torch.nn import Linear``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from verifier.index.names import attribute_chain, qualify
from verifier import pysource

MV_PREFIX = "__MV_"
ANY_ARGS = "__ANY_ARGS__"
ANY_KW = "__ANY_KW__"
MAX_PATTERN = 2000
MAX_MATCHES = 500
_MV = re.compile(r"\$([A-Z_][A-Z0-9_]*)")
_DEF_ANY = re.compile(r"(\bdef\s+[\w$]+\s*)\(\s*\.\.\.\s*\)")
_FIELDS_SKIP = {"ctx", "lineno", "col_offset", "end_lineno", "end_col_offset", "type_comment", "kind"}


SCOPE_NAME = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")  # `inside: Trainer.train` names a scope


class PatternError(ValueError):
    """The pattern (or a where clause) is not valid: a spec problem."""


@dataclass(frozen=True)
class Pattern:
    text: str
    nodes: tuple[ast.AST, ...]  # one expression, or a statement sequence
    is_expr: bool
    words: tuple[str, ...]  # identifiers a file must contain for a match to be possible


@dataclass
class Match:
    file: str
    node: ast.AST
    end_node: ast.AST
    bindings: dict[str, ast.AST] = field(default_factory=dict)

    @property
    def line(self) -> int:
        return self.node.lineno

    @property
    def end_line(self) -> int:
        return getattr(self.end_node, "end_lineno", None) or self.end_node.lineno


_TAIL_ANY = re.compile(r",\s*\.\.\.\s*\)")


def _prepare(text: str) -> str:
    text = _DEF_ANY.sub(lambda m: f"{m.group(1)}(*{ANY_ARGS})", text)
    # `f(x, lr=$LR, ...)` is not Python: a trailing `...` becomes `**__ANY_KW__` (any further arguments).
    text = _TAIL_ANY.sub(f", **{ANY_KW})", text)
    return _MV.sub(lambda m: MV_PREFIX + m.group(1), text)


def compile_pattern(text: str) -> Pattern:
    if not isinstance(text, str) or not text.strip():
        raise PatternError("empty pattern")
    if len(text) > MAX_PATTERN:
        raise PatternError(f"pattern longer than {MAX_PATTERN} characters")
    src = _prepare(text.strip())
    try:
        expr = pysource.parse(src, mode="eval")
        nodes: tuple[ast.AST, ...] = (expr.body,)
        is_expr = True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        try:
            module = pysource.parse(src)
        except SyntaxError as exc:
            raise PatternError(f"pattern {text!r} is not Python: {exc.msg}") from None
        except (ValueError, RecursionError, MemoryError) as exc:
            raise PatternError(f"pattern {text!r} is not Python: {type(exc).__name__}") from None
        nodes = tuple(module.body)
        is_expr = False
        if len(nodes) == 1 and isinstance(nodes[0], ast.Expr):
            nodes, is_expr = (nodes[0].value,), True
    words = set()
    for node in nodes:
        for n in ast.walk(node):
            if isinstance(n, ast.Attribute):
                words.add(n.attr)
    return Pattern(text, nodes, is_expr, tuple(sorted(words)))


def _is_mv(name: str) -> bool:
    return name.startswith(MV_PREFIX)


def _is_ellipsis(node: Any) -> bool:
    return isinstance(node, ast.Constant) and node.value is Ellipsis


def _is_stmt_ellipsis(node: Any) -> bool:
    return isinstance(node, ast.Expr) and _is_ellipsis(node.value)




class Matcher:
    def __init__(self, imports: dict[str, str]):
        self.imports = imports

    def qualify(self, dotted: str) -> str:
        return qualify(dotted, self.imports)

    def match(self, pat: Any, node: Any, b: dict[str, ast.AST]) -> bool:
        if isinstance(pat, ast.AST) and _is_ellipsis(pat) and isinstance(node, ast.expr):
            return True
        if isinstance(pat, ast.Name) and _is_mv(pat.id):
            if not isinstance(node, ast.AST):
                return False
            return self._bind(pat.id, node, b)
        if isinstance(pat, ast.Expr) and isinstance(pat.value, ast.Name) and _is_mv(pat.value.id) and isinstance(node, ast.stmt):
            return self._bind(pat.value.id, node, b)
        if isinstance(pat, (ast.Attribute, ast.Name)) and isinstance(node, (ast.Attribute, ast.Name)):
            pd, nd = attribute_chain(pat), attribute_chain(node)
            if pd and nd and not any(_is_mv(p) for p in pd.split(".")):
                if pd == nd:
                    return True
                qn, qp = self.qualify(nd), self.qualify(pd)
                return qn == qp or qn.endswith("." + pd) or qn == pd
        if type(pat) is not type(node):
            return False
        if isinstance(pat, ast.Call):
            return self._call(pat, node, b)
        if isinstance(pat, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not (_is_mv(pat.name) and self._bind_name(pat.name, node.name, b) or pat.name == node.name):
                return False
            if not (pat.args.vararg is not None and pat.args.vararg.arg == ANY_ARGS):
                if not self.match(pat.args, node.args, b):
                    return False
            return self._body(pat.body, node.body, b) and (not pat.decorator_list or self._seq(pat.decorator_list, node.decorator_list, b))
        if isinstance(pat, ast.ClassDef):
            if not (_is_mv(pat.name) and self._bind_name(pat.name, node.name, b) or pat.name == node.name):
                return False
            return self._body(pat.body, node.body, b)
        if isinstance(pat, ast.arg):
            return (_is_mv(pat.arg) and self._bind_name(pat.arg, node.arg, b)) or pat.arg == node.arg
        if isinstance(pat, ast.keyword):
            return pat.arg == node.arg and self.match(pat.value, node.value, b)
        if isinstance(pat, ast.Constant):
            return type(pat.value) is type(node.value) and pat.value == node.value
        for name, pval in ast.iter_fields(pat):
            if name in _FIELDS_SKIP:
                continue
            nval = getattr(node, name, None)
            if isinstance(pval, list):
                if name in ("body", "orelse", "finalbody", "handlers"):
                    if not self._body(pval, nval or [], b):
                        return False
                elif not self._seq(pval, nval or [], b):
                    return False
            elif isinstance(pval, ast.AST):
                if not isinstance(nval, ast.AST) or not self.match(pval, nval, b):
                    return False
            elif isinstance(pval, str) and _is_mv(pval):
                if not self._bind_name(pval, nval, b):
                    return False
            elif pval != nval:
                return False
        return True

    def _bind(self, name: str, node: ast.AST, b: dict[str, ast.AST]) -> bool:
        if name in b:
            return _same(b[name], node)
        b[name] = node
        return True

    def _bind_name(self, name: str, value: Any, b: dict[str, ast.AST]) -> bool:
        return self._bind(name, ast.Name(id=str(value), ctx=ast.Load()), b)

    def _call(self, pat: ast.Call, node: ast.Call, b) -> bool:
        if not self.match(pat.func, node.func, b):
            return False
        tail_any = any(k.arg is None and isinstance(k.value, ast.Name) and k.value.id == ANY_KW for k in pat.keywords)
        has_any = tail_any or any(_is_ellipsis(a) for a in pat.args)
        args = list(pat.args) + ([ast.Constant(value=Ellipsis)] if tail_any else [])
        if not self._seq(args, node.args, b):
            return False
        given = {k.arg: k for k in node.keywords}
        for kw in pat.keywords:
            if kw.arg is None:
                continue
            target = given.get(kw.arg)
            if target is None or not self.match(kw.value, target.value, b):
                return False
        if not has_any and len(node.keywords) > len(pat.keywords):
            return False
        return True

    def _seq(self, pats: list, nodes: list, b, i: int = 0, j: int = 0) -> bool:
        """Sequences with ``...`` matching any run of items (backtracking over a copy of the bindings)."""
        if i == len(pats):
            return j == len(nodes)
        p = pats[i]
        if _is_ellipsis(p) or _is_stmt_ellipsis(p):
            for k in range(j, len(nodes) + 1):
                trial = dict(b)
                if self._seq(pats, nodes, trial, i + 1, k):
                    b.update(trial)
                    return True
            return False
        if j >= len(nodes):
            return False
        trial = dict(b)
        if self.match(p, nodes[j], trial) and self._seq(pats, nodes, trial, i + 1, j + 1):
            b.update(trial)
            return True
        return False

    def _body(self, pats: list, nodes: list, b) -> bool:
        return self._seq(pats, nodes, b)


def _same(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a, annotate_fields=False) == ast.dump(b, annotate_fields=False)


def find_matches(pattern: Pattern, path: str, tree: ast.Module, imports: dict[str, str], limit: int = MAX_MATCHES) -> list[Match]:
    matcher = Matcher(imports)
    out: list[Match] = []
    first = pattern.nodes[0]
    if pattern.is_expr or len(pattern.nodes) == 1:
        kind = type(first)
        for node in ast.walk(tree):
            if not isinstance(node, ast.AST) or not hasattr(node, "lineno"):
                continue
            if not (type(node) is kind or isinstance(first, (ast.Name, ast.Attribute)) and isinstance(node, (ast.Name, ast.Attribute))
                    or isinstance(first, ast.Name) and _is_mv(first.id)):
                continue
            bindings: dict[str, ast.AST] = {}
            if matcher.match(first, node, bindings):
                out.append(Match(path, node, node, bindings))
                if len(out) >= limit:
                    break
        return out
    for body in _bodies(tree):
        for start in range(len(body)):
            for end in range(start + 1, len(body) + 1):
                bindings = {}
                if matcher._seq(list(pattern.nodes), body[start:end], bindings):
                    out.append(Match(path, body[start], body[end - 1], bindings))
                    break
            if len(out) >= limit:
                return out
    return out


def _bodies(tree: ast.AST):
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            value = getattr(node, name, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield value


# ----- where clauses ---------------------------------------------------------------------------------------------
def compile_where(text: str) -> ast.expr:
    src = _MV.sub(lambda m: MV_PREFIX + m.group(1), str(text))
    try:
        return pysource.parse(src, mode="eval").body
    except SyntaxError as exc:
        raise PatternError(f"where clause {text!r} is not an expression: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise PatternError(f"where clause {text!r} is not an expression: {type(exc).__name__}") from None


class Unknown(Exception):
    """A where clause needs a value that cannot be folded to a constant."""


def evaluate_where(expr: ast.expr, bindings: dict[str, ast.AST], fold_source) -> bool:
    """Decide a where clause; metavariables fold through ``fold_source(source_text, node) -> (ok, value)``."""

    def value(node: ast.AST) -> Any:
        if isinstance(node, ast.Name) and _is_mv(node.id):
            bound = bindings.get(node.id)
            if bound is None:
                raise Unknown(f"${node.id[len(MV_PREFIX):]} is not bound by the pattern")
            if isinstance(bound, ast.Name) and not isinstance(getattr(bound, "ctx", None), ast.Store) and bound.id.isidentifier() \
                    and not hasattr(bound, "lineno"):
                return bound.id  # a bound identifier (function or argument name)
            try:
                text = ast.unparse(bound)
            except (ValueError, RecursionError):
                raise Unknown("unprintable binding") from None
            ok, folded = fold_source(text, bound)
            if not ok:
                raise Unknown(f"`{text}` has no constant value")
            return folded
        if isinstance(node, ast.Compare):
            left = value(node.left)
            for op, comp in zip(node.ops, node.comparators):
                right = value(comp)
                if not _compare(op, left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.BoolOp):
            results = [bool(value(v)) for v in node.values]
            return all(results) if isinstance(node.op, ast.And) else any(results)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not value(node.operand)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = value(node.operand)
            if isinstance(v, (int, float)):
                return -v
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return [value(e) for e in node.elts]
        if isinstance(node, ast.Constant):
            return node.value
        raise Unknown(f"unsupported where expression `{ast.unparse(node)}`")

    return bool(value(expr))


def _compare(op: ast.cmpop, a: Any, b: Any) -> bool:
    try:
        if isinstance(op, ast.Eq):
            return _eq(a, b)
        if isinstance(op, ast.NotEq):
            return not _eq(a, b)
        if isinstance(op, ast.Lt):
            return a < b
        if isinstance(op, ast.LtE):
            return a <= b or _eq(a, b)
        if isinstance(op, ast.Gt):
            return a > b
        if isinstance(op, ast.GtE):
            return a >= b or _eq(a, b)
        if isinstance(op, ast.In):
            return any(_eq(a, x) for x in b)
        if isinstance(op, ast.NotIn):
            return not any(_eq(a, x) for x in b)
    except TypeError:
        raise Unknown(f"cannot compare {a!r} and {b!r}") from None
    raise Unknown("unsupported comparison")


def _eq(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    return a == b


def as_list(value) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def validate_pattern_fields(require, forbid, inside, where) -> str | None:
    """The spec error for a pattern check's fields (bad pattern, inside or where syntax), or None.

    Pure syntax, no repo needed: the spec loader can call it at load time so a bad pattern is exit 2."""
    try:
        for text in as_list(require):
            compile_pattern(text)
        for text in as_list(forbid):
            compile_pattern(text)
        if inside and not SCOPE_NAME.match(inside):
            compile_pattern(inside)
        for text in as_list(where):
            compile_where(text)
    except PatternError as exc:
        return str(exc)
    return None
