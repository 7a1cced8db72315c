"""Paper formulas (SymPy syntax, SA-Bench ASCII, or LaTeX) as SymPy expressions.

Off-the-shelf LaTeX parsers silently misread papers (``\\log`` as base 10, ``\\gamma`` as Euler's constant,
truncated parses), so LaTeX is read by a small recursive-descent parser written for what papers write, and
SymPy syntax goes through ``parse_expr`` with a local dictionary that makes every name a plain real symbol
(``beta``, ``gamma``, ``N``, ``S``, ``Q``, ``E`` are never SymPy's specials). Anything left over is an
error naming its position, never a silently wrong formula.
"""

from __future__ import annotations

import ast
import io
import keyword
import math
import re
import tokenize
from dataclasses import dataclass, field
from fractions import Fraction

import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.parsing.sympy_parser import auto_number, convert_xor, stringify_expr

from verifier.symbolic.core import (
    INV,
    MATMUL,
    MAX_EXPONENT,
    MAX_POWER_BITS,
    PICK,
    REDUCTIONS,
    has_matrix_ops,
    is_matrix_op,
    matmul,
    transpose,
    RMAX,
    RMEAN,
    RMIN,
    RPROD,
    RSUM,
    power_too_large,
    sym,
)
from verifier import pysource


class FormulaSyntaxError(ValueError):
    def __init__(self, message: str, position: int):
        super().__init__(f"{message} (at position {position})")
        self.position = position
        self.reason = message


class FormulaTooLarge(FormulaSyntaxError):
    """A well-formed formula beyond the analysis bounds: the claim is unverified, the spec is not wrong."""


# SymPy evaluates numeric powers and long sums eagerly while parsing, so sizes are bounded before it runs.
MAX_LITERAL_CHARS = 60  # digits in one number literal
MAX_FORMULA_TOKENS = 50_000  # papers' longest formulas are a few hundred tokens; parsing stays linear below this
MAX_FORMULA_TERMS = 4_000  # additive terms, at any depth (matching bounds far fewer symbols, equivalence.py)


@dataclass
class Formula:
    expr: sp.Expr
    lhs: str | None  # the name on the left of `=` / `\leftarrow`, if any
    sum_bounds: frozenset = field(default_factory=frozenset)  # symbols N of \sum_{i=1}^{N} (for 1/N sum = mean)
    text: str = ""
    # names read as matrices (None: no matrix notation; the check then treats every product operand as one)
    matrices: frozenset | None = None
    # matrix notation the paper spells out (a transpose, `@`, declared matrices), not only capitals side by side
    explicit_matrices: bool = False
    # `X <- f(X)`, `X_{t+1} = f(X_t)`: the paper symbol (on the right, the old value) the rule gives a new value
    update: str | None = None
    update_arrow: bool = False  # written with an arrow (<-, :=, \leftarrow): an assignment, not an equation
    # an opaque application's symbol (`D__x_hat` of `D(x̂)`) -> (the function's name, its argument expressions):
    # the check compares them with the arguments of the code's call the symbol maps to
    applications: dict = field(default_factory=dict)


class Grad(sp.Function):
    """``grad(f, x)``: the gradient (or Jacobian) of ``f`` with respect to ``x``, one object on both sides.

    The paper's ``∇_x L``, ``∂L/∂W`` and the code's ``torch.autograd.grad`` / ``x.grad`` / ``jax.grad`` all
    become it. Construction canonicalises what is the same gradient however it is written: the gradient of
    a sum of per-sample outputs (``grad(d.sum(), x)``, ``grad_outputs=ones``) is the per-sample gradient,
    linearity splits sums and pulls numeric factors out, and an explicit expression of ``x`` alone is
    differentiated (``grad(x**2, x)`` is ``2*x``). Anything else stays opaque: equivalence.py evaluates it as
    ``f * h(x)``, linear in ``f`` and a fixed opaque function of the variable, so a wrong variable, a
    dropped factor or a different ``f`` differ, and the same gradient agrees."""

    nargs = 2
    is_real = True

    @classmethod
    def eval(cls, f, wrt):
        if f.is_Number:
            return sp.Integer(0)
        if isinstance(f, sp.Function) and f.func is RSUM and len(f.args) == 1:
            return cls(f.args[0], wrt)
        if isinstance(f, sp.Add):
            return sp.Add(*[cls(t, wrt) for t in f.args])
        if isinstance(f, sp.Mul):
            coeff, rest = f.as_coeff_Mul()
            if coeff != 1 and coeff.is_Number:
                return coeff * cls(rest, wrt)
        if isinstance(wrt, sp.Symbol) and f.free_symbols == {wrt} and _explicit(f):
            return sp.diff(f, wrt)
        return None


_EXPLICIT = (sp.Add, sp.Mul, sp.Pow, sp.exp, sp.log, sp.sin, sp.cos, sp.tanh, sp.sinh, sp.cosh, sp.erf)


MAX_DIFF_NODES = 400  # an explicit expression larger than this stays an opaque gradient (bounded SymPy work)


def _explicit(f: sp.Expr) -> bool:
    """Built from elementary operations only, so SymPy's derivative is the code's (no reductions, opaque
    functions or branches, whose derivatives SymPy leaves unevaluated or piecewise), and small."""
    for count, n in enumerate(sp.preorder_traversal(f)):
        if count >= MAX_DIFF_NODES or not (n.is_Atom or isinstance(n, _EXPLICIT)):
            return False
    return True


def gradients_in(expr: sp.Basic) -> list[sp.Expr]:
    """The opaque gradients left in ``expr`` (explicit ones were differentiated away)."""
    return [n for n in sp.preorder_traversal(expr) if isinstance(n, Grad)]


# ----- concatenations and slices: one opaque, ordered object each, on both sides --------------------------
# ``[P, Z]`` / ``torch.cat([p, z], dim=1)`` is ``concat(P, Z)``: an undefined function, so evaluation
# (equivalence.py) gives it a fixed value that depends on each operand's position ([P, Z] is not [Z, P]),
# and the axis is not compared (papers do not state it). ``V[:, :r]`` is ``slice_ah(V, r)``: the name spells
# the layout, one letter per axis (a ``:``, h ``:hi``, l ``lo:``, b ``lo:hi``, i an index, e ``...``; trailing
# full axes dropped, a zero start omitted), the arguments are the tensor then the bounds, so ``:r`` and
# ``:rank`` compare through the symbol mapping and ``:2*r`` differs.
CONCAT = sp.Function("concat")
SLICE_PREFIX = "slice_"
_SLICE_NAME = re.compile(r"slice_[ahlbie]+")


def concat(*parts: sp.Expr) -> sp.Expr:
    return CONCAT(*parts)


def slice_of(x: sp.Expr, axes: list[tuple[str, list[sp.Expr]]]) -> sp.Expr:
    """``x[...]`` from its axis specs: (letter, bounds) per axis, normalised as described above."""
    specs = []
    for letter, bounds in axes:
        if letter == "b" and bounds and bounds[0] == 0:
            letter, bounds = "h", bounds[1:]
        elif letter == "l" and bounds and bounds[0] == 0:
            letter, bounds = "a", []
        specs.append((letter, bounds))
    while specs and specs[-1][0] == "a":
        specs.pop()
    if not specs:
        return x
    return sp.Function(SLICE_PREFIX + "".join(letter for letter, _ in specs))(x, *[b for _, bs in specs for b in bs])


def is_concat(node: sp.Basic) -> bool:
    return isinstance(node, AppliedUndef) and node.func is CONCAT


def is_slice(node: sp.Basic) -> bool:
    return isinstance(node, AppliedUndef) and bool(_SLICE_NAME.fullmatch(node.func.__name__))


def is_opaque_call(node: sp.Basic, *, concat_and_slice: bool = False) -> bool:
    """An application of a function no formula interprets (a model, a density, an unknown op): not a
    reduction, a label pick or a matrix operator, nor, unless ``concat_and_slice`` lets them count (listing
    what a value depends on), a concatenation or a slice."""
    if not isinstance(node, AppliedUndef) or node.func.__name__ in REDUCTIONS or node.func.__name__ == "pick":
        return False
    return not is_matrix_op(node) and (concat_and_slice or not (is_concat(node) or is_slice(node)))


def _matching_bracket(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        depth += {"[": 1, "(": 1, "{": 1, "]": -1, ")": -1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return -1


def _split_top(text: str, sep: str = ",") -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"[": 1, "(": 1, "{": 1, "]": -1, ")": -1, "}": -1}.get(ch, 0)
        if depth == 0 and ch == sep:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def _axis_spec(part: str, pos: int) -> tuple[str, list[str]]:
    if part in ("...", "…"):
        return "e", []
    if part.count(":") > 1:
        raise FormulaSyntaxError("a slice with a step (a:b:c)", pos)
    if ":" not in part:
        if not part:
            raise FormulaSyntaxError("an empty index", pos)
        return "i", [part]
    lo, hi = (s.strip() for s in part.split(":"))
    if lo in ("", "0"):
        return ("h", [hi]) if hi else ("a", [])
    return ("b", [lo, hi]) if hi else ("l", [lo])


MAX_BRACKET_DEPTH = 40  # papers nest lists two or three deep; the rewrite recurses once per level


def bracket_structures(text: str, offset: int = 0, depth: int = 0) -> str:
    """``V[:, :r]`` -> ``slice_ah(V, r)`` and ``[P, Z]`` (a bracket of two or more items where an operand
    starts) -> ``concat(P, Z)``, at any depth; any other bracket is left as it is (a grouping bracket, or an
    index ``x[i]`` the caller reads as before). A step (``a:b:c``) is an error naming its position."""
    out = ""
    i = 0
    braces = 0  # inside `_{u,[0,T]}` a bracket is part of an index, not a list
    while i < len(text):
        ch = text[i]
        braces += {"{": 1, "}": -1}.get(ch, 0)
        if ch != "[" or braces > 0:
            out += ch
            i += 1
            continue
        end = _matching_bracket(text, i)
        if end < 0:
            return out + text[i:]
        if depth >= MAX_BRACKET_DEPTH:
            raise FormulaTooLarge(f"brackets nested more than {MAX_BRACKET_DEPTH} deep", offset + i)
        inner = bracket_structures(text[i + 1 : end], offset + i + 1, depth + 1)
        parts = _split_top(inner)
        attached = bool(out) and (out[-1].isalnum() or out[-1] in "_)]'")
        if attached and any(":" in p or p in ("...", "…") for p in parts):
            base_start = _operand_start(out)
            axes = [_axis_spec(p, offset + i) for p in parts]
            pattern = "".join(a for a, _ in axes)
            while pattern.endswith("a"):
                pattern = pattern[:-1]
            base = out[base_start:]
            bounds = [b for _, bs in axes for b in bs]
            out = out[:base_start] + (f"{SLICE_PREFIX}{pattern}({', '.join([base, *bounds])})" if pattern else base)
        elif not attached and len(parts) >= 2 and all(parts):
            out += f"concat({', '.join(parts)})"
        else:
            out += "[" + inner + "]"
        i = end + 1
    return out


def _operand_start(head: str) -> int:
    """Where the operand ``head`` ends with starts: a name, or a bracket group with the name applied to it."""
    if head.endswith((")", "]")):
        depth = 0
        for j in range(len(head) - 1, -1, -1):
            depth += {")": 1, "]": 1, "(": -1, "[": -1}.get(head[j], 0)
            if depth == 0:
                return _name_start(head, j)
        return 0
    return _name_start(head, len(head))


def _name_start(text: str, end: int) -> int:
    """Where the name ending at ``end`` starts (``end`` when none): a backward scan, not a regex over the text."""
    j = end
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_.'"):
        j -= 1
    while j < end and not (text[j].isalpha() or text[j] == "_"):
        j += 1  # a name does not start with a digit or a dot
    return j


def fold_sequences(items: list, pos: int = 0) -> list[sp.Expr]:
    """``x_1, ..., x_N`` (None the ellipsis) -> the sequence ``x`` as one item: the two ends must be one
    base with an index each (``x_1`` .. ``x_N``, ``head_1`` .. ``head_h``); anything else is an error."""
    out: list[sp.Expr] = []
    k = 0
    while k < len(items):
        if items[k] is not None and k + 1 < len(items) and items[k + 1] is None:
            first, last = items[k], items[k + 2] if k + 2 < len(items) else None
            base = _sequence_base(first, last)
            if base is None:
                raise FormulaSyntaxError("a list with `...` whose ends are not one indexed sequence", pos)
            out.append(sym(base))
            k += 3
            continue
        if items[k] is None:
            raise FormulaSyntaxError("a list with `...` whose ends are not one indexed sequence", pos)
        out.append(items[k])
        k += 1
    return out


def _sequence_base(first, last) -> str | None:
    if not (isinstance(first, sp.Symbol) and isinstance(last, sp.Symbol)):
        return None
    a, b = first.name.rsplit("_", 1) if "_" in first.name else ("", ""), last.name.rsplit("_", 1) if "_" in last.name else ("", "")
    if a[0] and a[0] == b[0] and a[1] != b[1] and re.fullmatch(r"\w{1,4}", a[1]) and re.fullmatch(r"\w{1,6}", b[1]):
        return a[0]
    return None


def structures_in(expr: sp.Basic) -> list[str]:
    """The concatenations and slices of ``expr`` by kind (``concat/3``, ``slice_ah``), sorted: two sides
    with different lists have different layouts, which a value comparison cannot judge."""
    out = []
    for n in sp.preorder_traversal(expr):
        if is_concat(n):
            out.append(f"concat/{len(n.args)}")
        elif is_slice(n):
            out.append(n.func.__name__)
    return sorted(out)


def _scalar_products(expr: sp.Expr) -> sp.Expr:
    r"""Under a square root, capitals side by side are counts or scalars ("\sqrt{N_W Q_P}"), not a matrix product:
    a matrix's square root is no formula an ML paper writes this way."""
    return expr.replace(
        lambda e: getattr(e, "func", None) == MATMUL and all(isinstance(a, sp.Symbol) for a in e.args),
        lambda e: sp.Mul(*e.args),
    )


def _sigmoid(x):
    return 1 / (1 + sp.exp(-x))


def _clamp(x, lo=None, hi=None):
    out = x
    if lo is not None:
        out = sp.Max(out, lo)
    if hi is not None:
        out = sp.Min(out, hi)
    return out


def _var(x):
    return RMEAN((x - RMEAN(x)) ** 2)


FUNCTIONS = {
    "exp": sp.exp,
    "log": lambda x, b=None: sp.log(x) if b is None else sp.log(x) / sp.log(b),
    "ln": sp.log,
    "log1p": lambda x: sp.log(1 + x),
    "sqrt": sp.sqrt,
    "sigmoid": _sigmoid,
    "logsigmoid": lambda x: -sp.log(1 + sp.exp(-x)),
    "softplus": lambda x: sp.log(1 + sp.exp(x)),
    "tanh": sp.tanh,
    "relu": lambda x: sp.Max(x, 0),
    "abs": sp.Abs,
    "Abs": sp.Abs,
    "min": sp.Min,
    "Min": sp.Min,
    "max": sp.Max,
    "Max": sp.Max,
    "clip": _clamp,
    "clamp": _clamp,
    "mean": RMEAN,
    "sum": RSUM,
    "prod": RPROD,
    "rmax": RMAX,
    "rmin": RMIN,
    "pick": PICK,
    "var": _var,
    "std": lambda x: sp.sqrt(_var(x)),
    "softmax": lambda x: sp.exp(x) / RSUM(sp.exp(x)),
    "log_softmax": lambda x: x - sp.log(RSUM(sp.exp(x))),
    "logsumexp": lambda x: sp.log(RSUM(sp.exp(x))),
    "norm": lambda x: sp.sqrt(RSUM(x**2)),
    "erf": sp.erf,
    "sin": sp.sin,
    "cos": sp.cos,
    "Piecewise": sp.Piecewise,
    "sigma": _sigmoid,  # σ(·) in ASCII claims; `sigma_t` without parentheses stays a symbol
    "minimum": sp.Min,
    "maximum": sp.Max,
    "gelu": lambda x: x * (1 + sp.erf(x / sp.sqrt(2))) / 2,
    "sinh": sp.sinh,
    "cosh": sp.cosh,
    "floor": sp.floor,
    "ceil": sp.ceiling,
    "matmul": matmul,
    "transpose": transpose,
    "grad": Grad,  # ∇_x f / ∂f/∂x, as compiled from papers' gradient notation
    "sign": sp.sign,
    "concat": CONCAT,  # [a, b], torch.cat: ordered, opaque
    "cat": CONCAT,
    "diag": sp.Function("diag"),  # the diagonal matrix of a vector: the code's torch.diag / np.diag (opaque)
    "inv": INV,  # the matrix inverse, as compiled from (BᵀB)⁻¹ and read from torch.linalg.inv / torch.inverse
}

_UNICODE = {
    "−": "-", "–": "-", "×": "*", "·": "*", "⋅": "*", "∗": "*", "÷": "/", "√": "sqrt", "²": "**2", "³": "**3",
    "≤": "<=", "≥": ">=", "←": "<-", "∞": "oo", "⁻¹": "**(-1)", "ᵀ": "^T", "⊤": "T", "‖": "|",
}
_GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ϵ": "epsilon", "ζ": "zeta",
    "η": "eta", "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda_", "μ": "mu", "ν": "nu", "ξ": "xi",
    "π": "pi", "ρ": "rho", "σ": "sigma", "τ": "tau", "φ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega",
    "Γ": "Gamma", "Δ": "Delta", "Θ": "Theta", "Λ": "Lambda", "Σ": "Sigma", "Φ": "Phi", "Ψ": "Psi", "Ω": "Omega",
}


# ================================================================================ SymPy syntax / ASCII
def parse_sympy(
    text: str, functions: list[str] | tuple[str, ...] = (), matrices: list[str] | tuple[str, ...] = ()
) -> Formula:
    """SymPy-syntax or SA-Bench ASCII formula (``Pr(i > j) = 1 / (1 + exp(-(Q_i - Q_j) / s))``).

    ``A @ B`` / ``matmul(A, B)`` is the matrix product, ``K^T`` / ``Kᵀ`` / ``transpose(K)`` the transpose
    (``gamma^T`` stays a power)."""
    if "\\" in text:
        raise FormulaSyntaxError("LaTeX command in a SymPy-syntax formula: give it as `latex:`", text.index("\\"))
    original = text
    for k, v in {**_UNICODE, **_GREEK}.items():
        text = text.replace(k, v)
    lhs, rhs, offset = _split_assignment(text)
    arrow = text[max(offset - 2, 0) : offset] in ("<-", ":=")
    if not rhs.strip():
        raise FormulaSyntaxError("empty formula", offset)
    if "[" in rhs:
        rhs = bracket_structures(rhs, offset)
    tokens = _tokens(rhs, offset)
    _bound_size(len(tokens), sum(1 for t in tokens if t[1] in ("+", "-")), offset)
    pieces: list[str] = []
    local: dict = {}
    user_functions = set(functions)
    applications: dict = {}
    i = 0
    while i < len(tokens):
        kind, value, pos = tokens[i]
        nxt = tokens[i + 1][1] if i + 1 < len(tokens) else None
        if kind == tokenize.NAME:
            if value == "lambda" and not (nxt or "").isidentifier():
                value = "lambda_"  # "L_rec + lambda * L_kl": the letter spelled out ("lambda x: x" stays an error)
            if keyword.iskeyword(value) or value.startswith("__"):
                raise FormulaSyntaxError(f"unexpected `{value}`", pos)
            if nxt == "(" and value in user_functions:
                local[value] = sp.Function(value)
            elif nxt == "(" and value in FUNCTIONS:
                local[value] = FUNCTIONS[value]
            elif nxt == "(" and _SLICE_NAME.fullmatch(value):
                local[value] = sp.Function(value)
            elif nxt == "(":
                # An unknown function applied to arguments (pi(y_w), Q(s, a)) is one opaque quantity.
                close = _matching(tokens, i + 1)
                inner = "_".join(_clean(t[1]) for t in tokens[i + 2 : close] if _clean(t[1]))
                name = f"{value}__{inner}" if inner else value
                local[name] = sym(name)
                if inner:
                    _note_application(applications, name, value, _sympy_arguments(tokens[i + 2 : close], functions, applications))
                pieces.append((name, pos))
                i = close + 1
                continue
            else:
                local[value] = sym(value)
            pieces.append((value, pos))
        elif kind == tokenize.OP and value in (".", ";", ":", "[", "]", "{", "}", "!", "="):
            if value in ("[", "]"):
                pieces.append(("(" if value == "[" else ")", pos))
            elif value == "=" or (value == "." and not pieces):
                raise FormulaSyntaxError(f"unexpected `{value}`", pos)
            else:
                raise FormulaSyntaxError(f"unexpected `{value}`", pos)
        elif kind == tokenize.ERRORTOKEN and value.strip():
            raise FormulaSyntaxError(f"unexpected character `{value}`", pos)
        else:
            pieces.append((value, pos))
        i += 1
    if not pieces:
        raise FormulaSyntaxError("empty formula", offset)
    if pieces[-1][0] in ("+", "-", "*", "/", "**", "^", "@"):
        raise FormulaSyntaxError(f"formula ends with `{pieces[-1][0]}`", offset + len(rhs.rstrip()))
    pieces = _transposes(pieces)
    if any(p[0] == "transpose" for p in pieces):
        local["transpose"] = transpose
    local.setdefault("oo", sp.oo)
    terms = []
    for sign, term in _top_level_terms(pieces):
        if not term:
            raise FormulaSyntaxError("missing operand", offset)
        body = " ".join(t for t, _ in term)
        if "|" in body:
            body = _abs_bars(body, term[0][1])
        value = _parse_piece(body, local, term)
        if not isinstance(value, sp.Expr):
            what = "a comparison" if isinstance(value, sp.core.relational.Relational) else type(value).__name__
            raise FormulaSyntaxError(f"{what} is not a formula", term[0][1])
        terms.append(value if sign == 1 else -value)
    expr = sp.Add(*terms) if len(terms) > 1 else terms[0]
    formula = _checked(expr, lhs, frozenset(), original, arrow)
    formula.matrices = frozenset(matrices) if matrices else None
    formula.applications = _applications_of(formula.expr, applications)
    formula.explicit_matrices = bool(matrices) or any(p[0] in ("@", "transpose") for p in pieces)
    return formula


def _application_arguments(text: str, parse_one, applications: dict) -> tuple | None:
    """The comma-separated arguments in ``text``, each read by ``parse_one`` (its expression and the
    applications inside it, or None when it is no plain formula), the inner applications noted as they are
    read; None when one does not parse. Shared by the SymPy-syntax and the LaTeX reader."""
    out = []
    for part in _split_top(text, ","):
        try:
            parsed = parse_one(part)
        except (FormulaSyntaxError, RecursionError, TypeError, ValueError):
            return None
        if parsed is None:
            return None
        value, inner = parsed
        for key, app in inner.items():
            _note_application(applications, key, *app)
        out.append(value)
    return tuple(out)


def _sympy_arguments(tokens: list, functions, applications: dict) -> tuple | None:
    """An opaque application's arguments (``Q(s_next, a_next)``), each parsed as a formula of its own; None
    when one does not parse or is a conditional (``pi(y|x)``)."""
    text = " ".join(t[1] for t in tokens)
    if "|" in text or not text.strip():
        return None

    def parse_one(part: str):
        sub = parse_sympy(part, functions)
        return None if sub.lhs is not None else (sub.expr, sub.applications)

    return _application_arguments(text, parse_one, applications)


def _transposes(pieces: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """``K ^ T`` and ``(Q K) ^ T`` -> ``transpose(...)``; a Greek or numeric base keeps its power."""
    out: list[tuple[str, int]] = []
    i = 0
    while i < len(pieces):
        tok, pos = pieces[i]
        is_t = tok in ("^", "**") and i + 1 < len(pieces) and pieces[i + 1][0] == "T"
        if is_t and (i + 2 >= len(pieces) or pieces[i + 2][0] not in ("(", "_")) and out:
            start = len(out) - 1
            if out[-1][0] == ")":
                depth = 0
                for j in range(len(out) - 1, -1, -1):
                    depth += {")": 1, "(": -1}.get(out[j][0], 0)
                    if depth == 0:
                        start = j
                        break
                if start > 0 and out[start - 1][0].isidentifier():
                    start -= 1  # f(x)^T
            group = [t for t, _ in out[start:] if t.isidentifier()]
            if group and not all(_scalar_name(sym(t)) for t in group):
                out = out[:start] + [("transpose", pos), ("(", pos)] + out[start:] + [(")", pos)]
                i += 2
                continue
        out.append((tok, pos))
        i += 1
    return out


def _top_level_terms(pieces: list[tuple[str, int]]) -> list[tuple[int, list[tuple[str, int]]]]:
    """Split at top-level binary + and -, so a long sum is added once (linear) and never nests deeply."""
    out: list[tuple[int, list[str]]] = []
    depth, sign, current = 0, 1, []
    for piece in pieces:
        tok = piece[0]
        if tok in ("(", "[", "{"):
            depth += 1
        elif tok in (")", "]", "}"):
            depth -= 1
        binary = bool(current) and current[-1][0] not in ("+", "-", "*", "/", "**", "^", "(", ",")
        if depth == 0 and tok in ("+", "-") and binary:
            out.append((sign, current))
            sign, current = (1 if tok == "+" else -1), []
            continue
        current.append(piece)
    out.append((sign, current))
    return out


def _bound_size(n_tokens: int, n_terms: int, position: int) -> None:
    if n_tokens > MAX_FORMULA_TOKENS:
        raise FormulaTooLarge(f"formula too large: {n_tokens} tokens (limit {MAX_FORMULA_TOKENS})", position)
    if n_terms > MAX_FORMULA_TERMS:
        raise FormulaTooLarge(f"formula too large: {n_terms} terms (limit {MAX_FORMULA_TERMS})", position)


def literal_size_problem(text: str) -> str | None:
    """Why SymPy must not evaluate ``text`` (a huge literal, a power tower), or None: for code outside the
    formula check that parses paper expressions itself (the claim compiler's Gaussian parameters)."""
    try:
        _bound_literals(text, [(text, 0)])
    except (FormulaTooLarge, FormulaSyntaxError) as exc:
        return str(exc.args[0]) if exc.args else "formula too large"
    return None


def _bound_literals(body: str, term: list[tuple[str, int]]) -> None:
    """Reject what SymPy would evaluate without end: huge literals and numeric exponents (power towers)."""
    try:
        tree = pysource.parse(body.replace("^", "**"), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return  # parse_expr reports the syntax error with its position
    try:
        _numeric(tree.body, body, term)
    except RecursionError:
        raise FormulaSyntaxError("formula nested too deeply", term[0][1]) from None


def _numeric(node: ast.AST, body: str, term: list[tuple[str, int]]) -> Fraction | float | None:
    """The exact value of a numeric subexpression (None when it has symbols), refusing to build huge numbers."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            text = body[node.col_offset : node.end_col_offset] if node.end_col_offset else str(node.value)
            if len(text) > MAX_LITERAL_CHARS:
                raise FormulaTooLarge(f"number too large: {len(text)} characters", _source_position(term, node.col_offset))
            return Fraction(node.value) if isinstance(node.value, int) else node.value
        return None
    if isinstance(node, ast.UnaryOp):
        value = _numeric(node.operand, body, term)
        return -value if value is not None and isinstance(node.op, ast.USub) else value
    if not isinstance(node, ast.BinOp):
        for child in ast.iter_child_nodes(node):
            _numeric(child, body, term)
        return None
    if not isinstance(node.op, (ast.Pow, ast.BitXor)) and isinstance(node.left, ast.BinOp):
        # a long sum nests to the left: walk the chain iteratively, not by recursion
        chain = []
        while isinstance(node, ast.BinOp) and not isinstance(node.op, (ast.Pow, ast.BitXor)):
            chain.append(node)
            node = node.left
        value = _numeric(node, body, term)
        for link in reversed(chain):
            value = _combine(link.op, value, _numeric(link.right, body, term))
        return value
    if isinstance(node.op, (ast.Pow, ast.BitXor)):
        base, exp = _numeric(node.left, body, term), _numeric(node.right, body, term)
        try:
            return _power(base, exp)
        except FormulaTooLarge as exc:
            raise FormulaTooLarge(exc.reason, _source_position(term, node.col_offset)) from None
    return _combine(node.op, _numeric(node.left, body, term), _numeric(node.right, body, term))


def _combine(op: ast.operator, a, b) -> Fraction | float | None:
    try:
        if a is None or b is None:
            return None
        if isinstance(op, ast.Add):
            return a + b
        if isinstance(op, ast.Sub):
            return a - b
        if isinstance(op, ast.Mult):
            return a * b
        if isinstance(op, ast.Div):
            return a / b if b else None
    except (OverflowError, ZeroDivisionError):
        return math.inf
    return None


def _power(base, exp) -> Fraction | float | None:
    """base ** exp within the bounds (the caller puts the position into the error)."""
    where = 0
    if exp is not None and abs(exp) > MAX_EXPONENT:
        raise FormulaTooLarge(f"exponent too large (above {MAX_EXPONENT})", where)
    if base is None or exp is None:
        return None
    if isinstance(base, Fraction) and isinstance(exp, Fraction) and exp.denominator == 1:
        bits = max(base.numerator.bit_length(), base.denominator.bit_length())
        if bits * abs(exp.numerator) > MAX_POWER_BITS:
            raise FormulaTooLarge(f"number too large: a power of about {bits * abs(exp.numerator) // 3} digits", where)
        return base**exp.numerator if base or exp.numerator >= 0 else None
    try:
        out = float(base) ** float(exp)
    except ZeroDivisionError:
        return None
    except OverflowError:
        return math.inf
    return None if isinstance(out, complex) else out


class _FlattenChains(ast.NodeTransformer):
    """`a + b + c + ...` as one ``Add(a, b, c, ...)``: Python's left-nested `+` makes SymPy re-flatten the whole
    sum at every step (quadratic in the number of terms); products likewise."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        if isinstance(node.op, (ast.Add, ast.Sub)):
            return self._chain(node, (ast.Add, ast.Sub), "__sau_add")
        if isinstance(node.op, ast.Mult):
            return self._chain(node, (ast.Mult,), "__sau_mul")
        if isinstance(node.op, ast.MatMult):
            return ast.Call(ast.Name("__sau_matmul", ast.Load()), [self.visit(node.left), self.visit(node.right)], [])
        return self.generic_visit(node)

    def _chain(self, node: ast.BinOp, ops: tuple, func: str) -> ast.AST:
        parts = []
        while isinstance(node, ast.BinOp) and isinstance(node.op, ops):
            right = self.visit(node.right)
            parts.append(ast.UnaryOp(ast.USub(), right) if isinstance(node.op, ast.Sub) else right)
            node = node.left
        parts.append(self.visit(node))
        parts.reverse()
        if len(parts) < 3:
            first, second = parts
            op = ast.Mult() if func == "__sau_mul" else ast.Add()
            return ast.BinOp(first, op, second)
        return ast.Call(ast.Name(func, ast.Load()), parts, [])


_GLOBALS = {"Integer": sp.Integer, "Float": sp.Float, "Rational": sp.Rational, "__sau_add": sp.Add, "__sau_mul": sp.Mul,
            "__sau_matmul": matmul}


def _parse_piece(body: str, local: dict, term: list[tuple[str, int]]) -> sp.Expr:
    """parse_expr's token transformations, then one evaluation of the AST with sums and products flattened."""
    offset = term[0][1]
    _bound_literals(body, term)
    try:
        code = stringify_expr(body, local, dict(_GLOBALS), (auto_number, convert_xor))
        tree = ast.fix_missing_locations(_FlattenChains().visit(pysource.parse(code, mode="eval")))
        # the same eval parse_expr does, of tokens vetted above (names only, no strings, dots or dunders)
        return eval(compile(tree, "<formula>", "eval"), {**_GLOBALS, "__builtins__": {}}, dict(local))
    except FormulaSyntaxError:
        raise
    except SyntaxError as exc:
        raise FormulaSyntaxError(f"does not parse: {exc.msg}", _source_position(term, (exc.offset or 1) - 1)) from None
    except (TypeError, ValueError, NameError, AttributeError, ZeroDivisionError, RecursionError, MemoryError) as exc:
        raise FormulaSyntaxError(f"does not parse: {type(exc).__name__}: {str(exc)[:80]}", offset) from None
    except tokenize.TokenError as exc:
        raise FormulaSyntaxError(f"does not parse: {exc.args[0]}", offset) from None


def _source_position(term: list[tuple[str, int]], char: int) -> int:
    """Map a character offset in the space-joined term back to the formula text."""
    at = 0
    for text, pos in term:
        if char < at + len(text) + 1:
            return pos + max(char - at, 0) if char >= at else pos
        at += len(text) + 1
    last_text, last_pos = term[-1]
    return last_pos + len(last_text)


def _abs_bars(body: str, offset: int) -> str:
    out, open_ = [], False
    for ch in body:
        if ch == "|":
            out.append(")" if open_ else "Abs(")
            open_ = not open_
        else:
            out.append(ch)
    if open_:
        raise FormulaSyntaxError("unbalanced `|`", offset)
    return "".join(out)


def _split_assignment(text: str) -> tuple[str | None, str, int]:
    """Keep the right-hand side of the last top-level `=` or `<-` (not `==`, `<=`, `>=`, `!=`)."""
    depth, cut, cut_len = 0, -1, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and ch == "=" and (i == 0 or text[i - 1] not in "<>!=:") and text[i + 1 : i + 2] != "=":
            cut, cut_len = i, 1
        elif depth == 0 and text.startswith("<-", i) or depth == 0 and text.startswith(":=", i):
            cut, cut_len = i, 2
    if cut < 0:
        return None, text, 0
    lhs = text[:cut].strip() or None
    return lhs, text[cut + cut_len :], cut + cut_len


def _tokens(text: str, offset: int) -> list[tuple[int, str, int]]:
    out = []
    line_starts = [0]
    for line in text.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text.replace("\n", " ")).readline):
            if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT):
                continue
            if tok.type == tokenize.STRING:
                raise FormulaSyntaxError("a string is not a formula", offset + tok.start[1])
            out.append((tok.type, tok.string, offset + tok.start[1]))
    except tokenize.TokenError as exc:
        raise FormulaSyntaxError(f"does not parse: {exc.args[0]}", offset + len(text)) from None
    except IndentationError as exc:
        raise FormulaSyntaxError("does not parse", offset + (exc.offset or 0)) from None
    return out


def _matching(tokens: list, open_index: int) -> int:
    depth = 0
    for j in range(open_index, len(tokens)):
        if tokens[j][1] in "([{":
            depth += 1
        elif tokens[j][1] in ")]}":
            depth -= 1
            if depth == 0:
                return j
    raise FormulaSyntaxError("unclosed `(`", tokens[open_index][2])


def _clean(text: str) -> str:
    return re.sub(r"\W+", "", text.replace("-", "m").replace("+", "p"))


def _note_application(table: dict, key: str, fname: str, args: tuple | None) -> None:
    """Record what an opaque application's symbol applies; a name seen with other arguments (``D(x, y)`` and
    ``D(x_y)`` both spell ``D__x_y``) or unreadable ones is no application to compare (None)."""
    if args is None or (key in table and table[key] != (fname, args)):
        table[key] = None
    else:
        table[key] = (fname, args)


def _applications_of(expr: sp.Basic, table: dict) -> dict:
    names = {s.name for s in expr.free_symbols}
    return {k: v for k, v in sorted(table.items()) if v is not None and k in names}


def _checked(expr, lhs: str | None, bounds: frozenset, text: str, arrow: bool = False) -> Formula:
    if isinstance(expr, tuple):
        raise FormulaSyntaxError("a tuple is not a formula (stray `,`?)", 0)
    if not isinstance(expr, sp.Expr):
        raise FormulaSyntaxError(f"not an expression: {type(expr).__name__}", 0)
    for s in expr.free_symbols:
        if re.search(r"[\\{}]", s.name):
            raise FormulaSyntaxError(f"LaTeX left in symbol `{s.name}`", text.find(s.name[:3]) if text else 0)
    update = update_target(lhs, expr, arrow)
    return Formula(
        expr=fold_gradient_sums(expr), lhs=lhs, sum_bounds=bounds, text=text, update=update, update_arrow=bool(update) and arrow
    )


_NEW_SUFFIX = re.compile(r"(?P<base>.+?)_(?:tp1|kp1|t|k)$")


def update_target(lhs: str | None, expr: sp.Expr, arrow: bool = False) -> str | None:
    """The symbol an update rule gives a new value: the left-hand side when it is also on the right
    (``θ <- θ - η g``), or its previous value over an iteration index (``w_tp1 = w_t - ...``, ``θ_t <- θ_tm1
    - ...``); None for an equation defining something else (``x' = ...``, ``H^{(l+1)} = f(H^{(l)})``: a new
    quantity, which code often names anew). ``arrow``: written with ←, which also allows ``θ_t <- θ_tm1``."""
    if not lhs:
        return None
    names = {s.name for s in expr.free_symbols}
    key = re.sub(r"\W+", "_", lhs).strip("_")
    if key in names:
        return key
    m = _NEW_SUFFIX.fullmatch(key)
    if m is None:
        return None
    base = m.group("base")
    index = key[len(base) + 1 :]
    previous = {"tp1": ("t",), "kp1": ("k",), "t": ("tm1",) if arrow else (), "k": ("km1",) if arrow else ()}[index]
    found = [f"{base}_{p}" if p else base for p in previous if (f"{base}_{p}" if p else base) in names]
    return found[0] if len(found) == 1 else None


def fold_gradient_sums(expr: sp.Expr) -> sp.Expr:
    """``Σ_i ∇_W L(W, x_i)`` is ``∇_W Σ_i L(W, x_i)`` (linearity), the form code computes (``jax.grad`` of a
    summed loss); a mean of gradients likewise is the gradient of the mean."""
    if not any(isinstance(n, Grad) for n in sp.preorder_traversal(expr)):
        return expr

    def fold(node: sp.Basic) -> sp.Basic:
        if isinstance(node, sp.Function) and node.func in (RSUM, RMEAN) and len(node.args) == 1:
            inner = node.args[0]
            if isinstance(inner, Grad):
                return Grad(inner.args[0], inner.args[1]) if node.func is RSUM else Grad(RMEAN(inner.args[0]), inner.args[1])
        return node

    return expr.replace(lambda n: isinstance(n, sp.Function) and n.func in (RSUM, RMEAN), fold)


# ================================================================================ LaTeX
_GREEK_CMDS = {
    "alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta", "iota",
    "kappa", "lambda", "mu", "nu", "xi", "pi", "rho", "varrho", "sigma", "tau", "upsilon", "phi", "varphi",
    "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi",
    "Omega", "ell",
}
_SKIP_CMDS = {
    "left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr", ",", ";",
    ":", "!", " ", "quad", "qquad", "displaystyle", "textstyle", "limits", "nolimits", "middle",
}
_FONT_COMMANDS = frozenset({"mathrm", "operatorname", "text", "textrm", "mathit", "mathsf", "mathtt"})
_ACCENTS = {"hat": "hat", "widehat": "hat", "bar": "bar", "overline": "bar", "tilde": "tilde", "widetilde": "tilde",
            "dot": "dot", "vec": "", "mathbf": "", "boldsymbol": "", "bm": "", "mathcal": "", "mathrm": "",
            "mathit": "", "text": "", "textrm": "", "operatorname": "", "mathsf": "", "mathtt": "", "mathbb": ""}
_FUNC_CMDS = {"log": "log", "ln": "log", "exp": "exp", "tanh": "tanh", "sin": "sin", "cos": "cos", "sqrt": "sqrt",
              "min": "min", "max": "max", "arg": None}
_WORD_FUNCS = {"clip": "clip", "clamp": "clip", "softmax": "softmax", "sigmoid": "sigmoid", "relu": "relu",
               "ReLU": "relu", "logsigmoid": "logsigmoid", "softplus": "softplus", "exp": "exp", "log": "log",
               "Var": "var", "var": "var", "std": "std", "LogSumExp": "logsumexp", "logsumexp": "logsumexp",
               "mean": "mean", "sign": "sign", "min": "min", "max": "max"}
_CASELESS_FUNCS = {k.lower(): v for k, v in _WORD_FUNCS.items() if k.lower() in ("softmax", "sigmoid", "relu", "softplus", "logsumexp", "logsigmoid")}
_SPLITTERS = {"leftarrow", "gets", "coloneqq", "triangleq", "equiv", "doteq", "Leftarrow", "longleftarrow"}


class _Tok:
    __slots__ = ("kind", "pos", "text")

    def __init__(self, kind: str, text: str, pos: int):
        self.kind, self.text, self.pos = kind, text, pos  # kind: cmd | char | num | letter | end

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"{self.kind}:{self.text}@{self.pos}"


def _lex(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch == "\\":
            j = i + 1
            if j < n and text[j].isalpha():
                while j < n and text[j].isalpha():
                    j += 1
            else:
                j += 1
            out.append(_Tok("cmd", text[i + 1 : j], i))
            i = j
        elif ch.isdigit() or (ch == "." and i + 1 < n and text[i + 1].isdigit()):
            j = i
            while j < n and (text[j].isdigit() or text[j] == "."):
                j += 1
            if j < n and text[j] in "eE" and j + 1 < n and (text[j + 1].isdigit() or text[j + 1] == "-"):
                k = j + 2
                while k < n and text[k].isdigit():
                    k += 1
                if text[j + 1 : k].lstrip("-").isdigit():
                    j = k
            out.append(_Tok("num", text[i:j], i))
            i = j
        elif ch.isalpha():
            out.append(_Tok("letter", ch, i))
            i += 1
        else:
            out.append(_Tok("char", ch, i))
            i += 1
    out.append(_Tok("end", "", n))
    return out


class _LatexParser:
    def __init__(self, text: str, functions: tuple[str, ...], matrices: tuple[str, ...] = ()):
        self.text = text
        self.toks = _lex(text)
        self.i = 0
        self.functions = set(functions)
        self.matrices = set(matrices)  # names known to be matrices: declared, or seen transposed
        self.transposed = False
        self.bounds: set = set()
        self.force_apply = 0  # inside a gradient's operand: `D(x)` is an applied function
        self.open_norms = 0  # `\|` opens a norm unless one is open: "\frac{1}{2} \| x \|^2" multiplies
        self.applications: dict[str, tuple[str, tuple] | None] = {}  # None: one name, two argument lists

    # ----- token helpers ---------------------------------------------------------------------------
    def peek(self, k: int = 0) -> _Tok:
        self._skip()
        j = self.i
        while k and j < len(self.toks) - 1:
            j += 1
            while self.toks[j].kind == "cmd" and self.toks[j].text in _SKIP_CMDS:
                j += 1
            k -= 1
        return self.toks[j]

    def _skip(self) -> None:
        while self.toks[self.i].kind == "cmd" and self.toks[self.i].text in _SKIP_CMDS:
            self.i += 1

    def next(self) -> _Tok:
        self._skip()
        tok = self.toks[self.i]
        if tok.kind != "end":
            self.i += 1
        return tok

    def expect(self, text: str) -> _Tok:
        tok = self.next()
        if tok.text != text or tok.kind not in ("char", "cmd"):
            raise FormulaSyntaxError(f"expected `{text}`, found `{tok.text or 'end'}`", tok.pos)
        return tok

    def at(self, text: str, kind: str = "char") -> bool:
        tok = self.peek()
        return tok.kind == kind and tok.text == text

    def error(self, tok: _Tok, what: str = "unexpected") -> FormulaSyntaxError:
        shown = ("\\" + tok.text) if tok.kind == "cmd" else (tok.text or "end of formula")
        return FormulaSyntaxError(f"{what} `{shown}`", tok.pos)

    # ----- grammar ---------------------------------------------------------------------------------
    def parse(self) -> sp.Expr:
        expr = self.sum()
        tok = self.peek()
        if tok.kind != "end":
            raise self.error(tok)
        return expr

    def sum(self) -> sp.Expr:
        # terms are collected and added once: a long sum stays linear, not quadratic
        if self.at("+"):
            self.next()
        if self.at("-"):
            self.next()
            terms = [-self.product()]
        else:
            terms = [self.product()]
        while True:
            if self.at("+"):
                self.next()
                terms.append(self.product())
            elif self.at("-"):
                self.next()
                terms.append(-self.product())
            elif self.at("pm", "cmd"):
                raise self.error(self.peek(), "cannot decide")
            else:
                return sp.Add(*terms)

    def product(self) -> sp.Expr:
        factors = [self.unary()]
        joins = [""]  # how each factor joins the one before: "" (juxtaposed or \cdot) or "*" (\times, *)
        while True:
            tok = self.peek()
            if (tok.kind == "char" and tok.text in "*") or (tok.kind == "cmd" and tok.text in ("cdot", "times", "ast")):
                self.next()
                factors.append(self.unary())
                joins.append("" if tok.text == "cdot" else "*")
            elif tok.kind == "char" and tok.text == "/":
                self.next()
                factors = [self._juxtaposed(factors, joins) / self.unary()]
                joins = [""]
            elif self._starts_atom(tok):
                factors.append(self.unary())
                joins.append("")
            else:
                return self._juxtaposed(factors, joins)

    def _is_matrix(self, e: sp.Expr) -> bool:
        if is_concat(e):
            return True  # a tensor: `W_O [h_1, ..., h_H]` is a matrix product, `s [P, Z]` a scaling
        if is_slice(e):
            return self._is_matrix(e.args[0])
        if isinstance(e, sp.Symbol):
            return e.name in self.matrices or (e.name[:1].isascii() and e.name[:1].isupper())
        if isinstance(e, sp.Add):
            return any(self._is_matrix(t) for t in e.args)
        return has_matrix_ops(e)

    def _known_matrix(self, e: sp.Expr) -> bool:
        return (isinstance(e, sp.Symbol) and e.name in self.matrices) or has_matrix_ops(e)

    def _juxtaposed(self, factors: list[sp.Expr], joins: list[str]) -> sp.Expr:
        r"""Factors written side by side (or with ``\cdot``) form a matrix product when two of them are
        matrices (``B A``, ``Q K^\top``) or one is known to be (``W^\top x``, a declared ``W``): leading
        numbers, Greek and lower-case letters are scalar coefficients (``s B A``); a lower-case symbol after
        a matrix is the vector it acts on (``W x``). Otherwise the product is elementwise, as before."""
        matrices = [i for i, f in enumerate(factors) if self._is_matrix(f)]
        if not matrices or (len(matrices) < 2 and not any(self._known_matrix(factors[i]) for i in matrices)):
            return sp.Mul(*factors)
        first = matrices[0]
        if any(j == "*" for j in joins[first + 1 :]):
            return sp.Mul(*factors)  # `A \times B`: not read as a matrix product
        if first == len(factors) - 1:
            # `x W`: a lone matrix last; a leading Latin letter is the row vector it multiplies, not a scalar
            while first > 0 and isinstance(factors[first - 1], sp.Symbol) and not _scalar_name(factors[first - 1]):
                first -= 1
        coefficient = sp.Mul(*factors[:first])
        operands = []
        for f in factors[first:]:
            if f.is_Number:
                coefficient *= f
            else:
                operands.append(f)
                if isinstance(f, sp.Symbol):
                    self.matrices.add(f.name)
        return coefficient * matmul(*operands)

    def unary(self) -> sp.Expr:
        if self.at("-"):
            self.next()
            return -self.unary()
        return self.power()

    def _starts_atom(self, tok: _Tok) -> bool:
        if tok.kind in ("num", "letter"):
            return True
        if tok.kind == "char":
            return tok.text in "({[|"
        if tok.kind == "cmd":
            if tok.text in ("|", "Vert", "lVert"):
                return self.open_norms == 0
            return tok.text not in ("cdot", "times", "ast", "pm", "mid") and tok.text not in _SPLITTERS and tok.text not in (
                "}", "{", "right", "|", "rbrace", "rangle", "rvert", "rVert", "end", "rfloor", "rceil")
        return False

    def power(self) -> sp.Expr:
        base = self.atom()
        while True:
            tok = self.peek()
            if tok.kind == "char" and tok.text == "^":
                self.next()
                sup = self._transpose_sup()
                if sup == "T" and not _scalar_name(base):
                    if isinstance(base, sp.Symbol):
                        self.matrices.add(base.name)
                    self.transposed = True
                    base = transpose(base)
                    continue
                if sup:
                    continue
                base = _bounded_power(base, self.group_or_single(), tok.pos)
            elif tok.kind == "char" and tok.text == "'":
                self.next()
            elif tok.kind == "char" and tok.text == "_" and isinstance(base, sp.Expr):
                self.next()  # a subscript on a non-symbol (‖x‖_2): ignored
                self.group_or_single()
            else:
                return base

    def _transpose_sup(self) -> str:
        r""""T" for a transpose (``^\top``, ``^T``, ``^{T}``), "mark" for ``^\prime``/``^*`` (ignored), else ""."""
        tok = self.peek()
        if tok.kind == "cmd" and tok.text in ("top", "intercal", "prime", "ast", "star"):
            self.next()
            return "T" if tok.text in ("top", "intercal") else "mark"
        if tok.kind == "letter" and tok.text == "T":
            self.next()
            return "T"
        inner = self.peek(1)
        if tok.kind == "char" and tok.text == "{" and self.peek(2).text == "}" and (
            (inner.kind == "cmd" and inner.text in ("top", "intercal", "prime")) or (inner.kind == "letter" and inner.text == "T")
        ):
            self.next(), self.next(), self.next()
            return "mark" if inner.text == "prime" else "T"
        return ""

    def group_or_single(self) -> sp.Expr:
        tok = self.peek()
        if tok.kind == "char" and tok.text == "{":
            self.next()
            out = self.sum()
            self.expect("}")
            return out
        if tok.kind == "num":
            self.next()
            return sp.Rational(tok.text[0]) if tok.text[0].isdigit() and len(tok.text) > 1 and "." not in tok.text else _number(tok)
        return self.atom()

    def group(self) -> sp.Expr:
        self.expect("{")
        out = self.sum()
        self.expect("}")
        return out

    def accent_token(self) -> str:
        r"""``\hat x``, ``\bar\theta``: an accent or font command takes one token when no group follows."""
        tok = self.next()
        return f"\\{tok.text}" if tok.kind == "cmd" else tok.text

    def raw_group(self) -> str:
        """The text of a `{...}` group (for names and subscripts)."""
        open_ = self.expect("{")
        depth, start = 1, open_.pos + 1
        while True:
            tok = self.toks[self.i]
            if tok.kind == "end":
                raise FormulaSyntaxError("unclosed `{`", open_.pos)
            self.i += 1
            if tok.kind == "char" and tok.text == "{":
                depth += 1
            elif tok.kind == "char" and tok.text == "}":
                depth -= 1
                if depth == 0:
                    return self.text[start : tok.pos]

    def atom(self) -> sp.Expr:
        tok = self.peek()
        if tok.kind == "num":
            self.next()
            return _number(tok)
        if tok.kind == "letter":
            self.next()
            if tok.text == "e" and self.at("^"):
                self.next()
                return sp.exp(self.group_or_single())
            return self.symbol_tail(tok.text)
        if tok.kind == "char":
            if tok.text == "[":
                return self.bracket_list()
            if tok.text == "(":
                self.next()
                out = self.sum()
                self.expect(")")
                return out
            if tok.text == "{":
                return self.group()
            if tok.text == "|":
                self.next()
                if self.at("|"):  # ||x||
                    self.next()
                    inner = self.sum()
                    self.expect("|"), self.expect("|")
                    return sp.sqrt(RSUM(inner**2))
                inner = self.sum()
                self.expect("|")
                return sp.Abs(inner)
            raise self.error(tok)
        if tok.kind == "cmd":
            return self.command()
        raise self.error(tok)

    def command(self) -> sp.Expr:
        tok = self.next()
        name = tok.text
        if name in ("frac", "dfrac", "tfrac") and self.peek(1).kind == "cmd" and self.peek(1).text == "partial":
            return self.partial_fraction(tok)
        if name in ("nabla", "partial"):
            return self.gradient(tok)
        if name in ("frac", "dfrac", "tfrac"):
            num = self.group()
            den = self.group()
            return num / den
        if name == "sqrt":
            if self.at("["):
                self.next()
                n = self.sum()
                self.expect("]")
                return _bounded_power(self.group_or_single(), 1 / n, tok.pos)
            return sp.sqrt(_scalar_products(self.group_or_single()))
        if name in ("|", "Vert", "lVert", "rVert"):
            self.open_norms += 1
            try:
                inner = self.sum()
            finally:
                self.open_norms -= 1
            closing = self.next()
            if closing.text not in ("|", "Vert", "rVert"):
                raise self.error(closing, "expected `\\|`, found")
            return sp.sqrt(RSUM(inner**2))
        if name in ("lvert", "vert"):
            inner = self.sum()
            self.next()
            return sp.Abs(inner)
        if name in ("lfloor", "lceil"):
            # \lfloor x \rfloor, \lceil x \rceil, \lfloor x \rceil (nearest): the opaque floor / ceil / round the
            # code's torch.floor, np.ceil, torch.round become
            inner = self.sum()
            closing = self.next()
            if closing.text not in ("rfloor", "rceil"):
                raise self.error(closing, "expected `\\rfloor` or `\\rceil`, found")
            kind = {("lfloor", "rfloor"): "floor", ("lceil", "rceil"): "ceil"}.get((name, closing.text), "round")
            return sp.Function(kind)(inner)
        if name in ("infty",):
            return sp.oo
        if name == "sigma" and self.at("("):
            return _sigmoid(self.paren_args(tok)[0])
        if name in _GREEK_CMDS:
            base = {"varepsilon": "epsilon", "vartheta": "theta", "varphi": "phi", "varrho": "rho", "lambda": "lambda_"}.get(name, name)
            return self.symbol_tail(base)
        if name in _FUNC_CMDS:
            return self.function(name, tok)
        if name == "mathbb" or name == "mathop":
            word = self.raw_group().replace("\\mathbb", "").strip("{} ")
            if word in ("E", "\\mathbb{E}"):
                self._sub_or_skip()
                return RMEAN(self.bracket_body(tok))
            return self.symbol_tail(word)
        if name in ("sum", "prod"):
            bound = None
            if self.at("_"):
                self.next()
                self.group_or_skip()
            if self.at("^"):
                self.next()
                bound = self.group_or_single()
            if self.at("_"):
                self.next()
                self.group_or_skip()
            body = self.product()
            if name == "prod":
                return RPROD(body)
            if isinstance(bound, sp.Symbol):
                self.bounds.add(bound)
            return RSUM(body)
        if name in _ACCENTS:
            word = self.raw_group() if self.peek().text == "{" or self.peek().kind not in ("letter", "cmd") else self.accent_token()
            if re.fullmatch(r"\\mathbb\s*\{?\s*E\s*\}?", word.strip()) or (name == "mathbb" and word.strip() == "E"):
                self._sub_or_skip()
                return RMEAN(self.bracket_body(tok))
            known = _WORD_FUNCS.get(word.strip()) or _CASELESS_FUNCS.get(word.strip().lower())
            if name in _FONT_COMMANDS and known:
                return self.function(known, tok, word=True)  # "\mathrm{SoftMax}" is softmax
            inner = _LatexParser(word, tuple(self.functions)).name_of_group(word, tok.pos)
            suffix = _ACCENTS[name]
            base = f"{inner}_{suffix}" if suffix else inner
            if name in _FONT_COMMANDS and re.fullmatch(r"[A-Za-z]{2,}", word.strip()):
                # "\mathrm{MLP}^{(k)}(...)", "\operatorname{LN}(x)": a named function applied, not a product
                self.force_apply += 1
                try:
                    return self.symbol_tail(base)
                finally:
                    self.force_apply -= 1
            return self.symbol_tail(base)
        if name in _SPLITTERS:
            raise self.error(tok, "a second assignment")
        raise self.error(tok, "unsupported LaTeX command")

    def gradient(self, tok: _Tok) -> sp.Expr:
        r"""``\nabla_{x} f``, ``\nabla_\theta \log p_\theta(x)``, ``\partial_x f``: the variable is the subscript
        (a gradient without one is ambiguous: refused), the operand the factor that follows."""
        if not self.at("_"):
            raise self.error(tok, "a gradient with no variable it is taken with respect to:")
        self.next()
        wrt = self.group_or_single()
        if not isinstance(wrt, sp.Symbol):
            raise self.error(tok, "a gradient with respect to an expression:")
        if self.at("^"):
            raise self.error(self.peek(), "a higher-order derivative:")
        return Grad(self.grad_operand(tok), wrt)

    def partial_fraction(self, tok: _Tok) -> sp.Expr:
        r"""``\frac{\partial L}{\partial W}`` and ``\frac{\partial}{\partial x} f``: Leibniz notation."""
        self.expect("{")
        self.next()  # \\partial
        operand = None
        if not self.at("}"):
            operand = self.grad_operand(tok, closing="}")
        self.expect("}")
        self.expect("{")
        head = self.next()
        if not (head.kind == "cmd" and head.text == "partial"):
            raise self.error(head, "a derivative whose denominator is not `\\partial x`:")
        wrt = self.power()
        if not isinstance(wrt, sp.Symbol):
            raise self.error(head, "a derivative with respect to an expression:")
        self.expect("}")
        if operand is None:
            operand = self.grad_operand(tok)
        return Grad(operand, wrt)

    def grad_operand(self, tok: _Tok, closing: str = "") -> sp.Expr:
        r"""What a gradient is taken of: a bracket, ``\log`` of an operand, or one factor in which a name
        written against ``(`` is an applied function (``D(\hat{x})`` is the critic's output, not D times x)."""
        nxt = self.peek()
        if closing:  # inside the numerator's group: all of it
            self.force_apply += 1
            try:
                return self.sum()
            finally:
                self.force_apply -= 1
        if nxt.kind == "end" or (nxt.kind == "char" and nxt.text in "+-=)]}"):
            raise self.error(nxt, "a gradient with nothing to differentiate before")
        if nxt.kind == "cmd" and nxt.text in ("log", "ln"):
            self.next()
            self._sub_or_skip()
            return sp.log(self.grad_operand(tok))
        if nxt.kind == "char" and nxt.text in "([":
            self.next()
            out = self.sum()
            self.expect(")" if nxt.text == "(" else "]")
            return out
        self.force_apply += 1
        try:
            return self.power()
        finally:
            self.force_apply -= 1

    def bracket_list(self) -> sp.Expr:
        r"""``[a]`` groups; ``[P, Z]`` and ``[x_{cls}, x_1, \ldots, x_N]`` are concatenations (a run
        ``x_1, \ldots, x_N`` is the sequence ``x`` as one operand)."""
        open_ = self.next()
        items: list[sp.Expr | None] = []
        while True:
            nxt = self.peek()
            if nxt.kind == "cmd" and nxt.text in ("ldots", "dots", "cdots", "dotsc"):
                self.next()
                items.append(None)
            else:
                items.append(self.sum())
            if self.at(","):
                self.next()
                continue
            break
        self.expect("]")
        if len(items) == 1 and items[0] is not None:
            return items[0]
        return concat(*fold_sequences(items, open_.pos))

    def slice_suffix(self, x: sp.Expr) -> sp.Expr:
        """``V[:, :r]`` written against its tensor: the slice, its bounds read as formulas."""
        open_ = self.peek()
        end = _matching_bracket(self.text, open_.pos)
        if end < 0:
            raise FormulaSyntaxError("unclosed `[`", open_.pos)
        axes = []
        for part in _split_top(self.text[open_.pos + 1 : end]):
            letter, bounds = _axis_spec(part, open_.pos)
            axes.append((letter, [_LatexParser(b, tuple(self.functions)).parse() for b in bounds]))
        while self.toks[self.i].kind != "end" and self.toks[self.i].pos <= end:
            self.i += 1
        return slice_of(x, axes)

    def _slice_follows(self) -> bool:
        tok = self.peek()
        if not (tok.kind == "char" and tok.text == "[") or tok.pos == 0 or self.text[tok.pos - 1].isspace():
            return False
        end = _matching_bracket(self.text, tok.pos)
        return end > 0 and any(":" in part for part in _split_top(self.text[tok.pos + 1 : end]))

    def name_of_group(self, word: str, pos: int) -> str:
        word = word.strip()
        m = re.fullmatch(r"\\?([A-Za-z]+)", word)
        if m:
            name = m.group(1)
            return {"varepsilon": "epsilon", "lambda": "lambda_"}.get(name, name)
        raise FormulaSyntaxError(f"cannot name `{word}`", pos)

    def _sub_or_skip(self) -> None:
        if self.at("_"):
            self.next()
            self.group_or_skip()

    def group_or_skip(self) -> None:
        if self.at("{"):
            self.raw_group()
        else:
            self.next()

    def bracket_body(self, tok: _Tok) -> sp.Expr:
        nxt = self.peek()
        if nxt.kind == "char" and nxt.text in "[(":
            self.next()
            out = self.sum()
            self.expect("]" if nxt.text == "[" else ")")
            return out
        if nxt.kind == "char" and nxt.text == "{":
            return self.group()
        if nxt.kind == "cmd" and nxt.text in ("{", "lbrace"):
            self.next()
            out = self.sum()
            self.next()
            return out
        return self.product()

    def paren_args(self, tok: _Tok) -> list[sp.Expr]:
        nxt = self.peek()
        closing = {"(": ")", "[": "]", "{": "}"}
        if nxt.kind == "char" and nxt.text in closing:
            self.next()
            args = [self.sum()]
            while self.at(","):
                self.next()
                args.append(self.sum())
            self.expect(closing[nxt.text])
            return args
        if nxt.kind == "cmd" and nxt.text in ("{", "lbrace"):
            self.next()
            args = [self.sum()]
            while self.at(","):
                self.next()
                args.append(self.sum())
            end = self.next()
            if end.text not in ("}", "rbrace"):
                raise self.error(end, "expected `\\}`, found")
            return args
        raise self.error(nxt, f"expected arguments after `{tok.text}`, found")

    def function(self, name: str, tok: _Tok, word: bool = False) -> sp.Expr:
        if not word:
            self._sub_or_skip()  # \min_{\theta}, \log_{e}
        if name in ("min", "max"):
            args = self.paren_args(tok)
            return (sp.Min if name == "min" else sp.Max)(*args)
        nxt = self.peek()
        if name in ("sqrt",):
            return sp.sqrt(self.group_or_single())
        if nxt.kind == "char" and nxt.text in "([{" or nxt.kind == "cmd" and nxt.text in ("{", "lbrace"):
            args = self.paren_args(tok)
        else:
            args = [self.power_only()]
        fn = FUNCTIONS.get(name)
        if fn is None:
            raise self.error(tok, "unsupported function")
        try:
            return fn(*args)
        except TypeError:
            raise FormulaSyntaxError(f"wrong number of arguments to `{name}`", tok.pos) from None

    def power_only(self) -> sp.Expr:
        """\\log x_t or \\exp 2x: the argument without parentheses is the next factor (and its power)."""
        if self.at("^"):
            raise self.error(self.peek())
        return self.power()

    def symbol_tail(self, base: str) -> sp.Expr:
        """Subscripts and `^{(i)}` join the name; a following `(...)` with `,`/`|` or a declared function
        applies it (kept as one opaque quantity)."""
        name = base
        while True:
            tok = self.peek()
            if tok.kind == "char" and tok.text == "_":
                self.next()
                name += "_" + self._subscript_text()
                continue
            if tok.kind == "char" and tok.text == "^" and self.peek(1).kind == "char" and self.peek(1).text == "{" and self.peek(2).text == "(":
                self.next()
                name += "_" + _clean(self.raw_group())
                continue
            break
        if self._slice_follows():
            return self.slice_suffix(sym(name))
        if self._schedule_argument_follows(name):
            # "c_{skip}(\sigma) x", "c_{out}(t)": a coefficient written as a function of the noise level or the time,
            # which code computes as one value (`c_skip = ...`), not a product with σ
            self.i += 3
            return sym(name)
        if name in self.functions and self.at("("):
            return sp.Function(name)(*self.paren_args(self.peek()))
        if self.at("(") and (self.force_apply or self._looks_applied(name)):
            start = self.peek().pos
            self.next()
            depth = 1
            while depth:
                t = self.next()
                if t.kind == "end":
                    raise FormulaSyntaxError("unclosed `(`", start)
                if t.kind == "char" and t.text == "(":
                    depth += 1
                elif t.kind == "char" and t.text == ")":
                    depth -= 1
            inner = self.text[start + 1 : t.pos]
            applied = sym(f"{name}__{_name_text(inner)}")
            _note_application(self.applications, applied.name, name, self._latex_arguments(inner))
            return applied
        return sym(name)

    def _latex_arguments(self, inner: str) -> tuple | None:
        """The arguments of an opaque application (``D(\\hat{x})``, ``\\epsilon_\\theta(x_t, t)``); None when
        they are not plain expressions (a conditional ``p(y | x)``, anything that does not parse)."""
        if "|" in inner or "\\mid" in inner or not inner.strip() or re.search(r"'|\\prime|′", inner):
            return None  # a conditional; or primes, which this parser does not keep apart (s' would read as s)

        def parse_one(part: str):
            sub = _LatexParser(part, tuple(self.functions), tuple(self.matrices))
            value = sub.parse()
            if not isinstance(value, sp.Expr) or any(v is None for v in sub.applications.values()):
                return None
            return value, sub.applications

        return _application_arguments(inner, parse_one, self.applications)

    def _schedule_argument_follows(self, name: str) -> bool:
        """``(σ)`` or ``(t)`` right after a name with a word subscript (``c_{skip}``, ``w_{cfg}``)."""
        if not re.fullmatch(r"[A-Za-z]_[A-Za-z]{2,}", name) or not self.at("("):
            return False
        inner, close = self.peek(1), self.peek(2)
        argument = (inner.kind == "cmd" and inner.text == "sigma") or (inner.kind == "letter" and inner.text == "t")
        return argument and close.kind == "char" and close.text == ")"

    def _looks_applied(self, name: str) -> bool:
        j = self.i
        depth = 0
        while j < len(self.toks):
            t = self.toks[j]
            if t.kind == "end":
                return False
            if t.kind == "char" and t.text == "(":
                depth += 1
            elif t.kind == "char" and t.text == ")":
                depth -= 1
                if depth == 0:
                    break
            elif depth == 1 and ((t.kind == "char" and t.text in ",|") or (t.kind == "cmd" and t.text == "mid")):
                return True
            j += 1
        inner = [t for t in self.toks[self.i + 1 : j] if not (t.kind == "cmd" and t.text in _SKIP_CMDS)]
        if len(inner) == 1 and inner[0].kind == "cmd" and inner[0].text in ("theta", "phi", "psi", "omega"):
            return True
        argument = self.text[self.toks[self.i].pos + 1 : self.toks[j].pos] if j < len(self.toks) else None
        if argument is not None and re.fullmatch(r"\s*\\?[A-Za-z]+\s*_\s*\{?\s*[A-Za-z0-9]{1,3}\s*\}?\s*", argument):
            return True  # "\mu_1(x_i)", "e(x_i)": a function of one indexed data point, not a product with it
        if argument is not None and re.fullmatch(r"[A-VX-Z]_[A-Za-z0-9]+", name) and re.fullmatch(r"\s*w\s*", argument):
            return True  # "F_k(w)": client k's objective of the weights; "W_q(x)" stays the projection's product
        return bool(re.search(r"_(theta|phi|ref|psi|old)", name))

    def _subscript_text(self) -> str:
        tok = self.peek()
        if tok.kind == "char" and tok.text == "{":
            return _name_text(self.raw_group())
        self.next()
        if tok.kind == "cmd":
            return {"varepsilon": "epsilon"}.get(tok.text, tok.text)
        return tok.text


# the lower-case Greek names a symbol can carry (the parser spells \varepsilon as epsilon)
_GREEK_WORDS = {c for c in _GREEK_CMDS if c.islower() and not c.startswith("var")}


def _scalar_name(e: sp.Expr) -> bool:
    r"""A number or a lower-case Greek name (``\gamma^T`` is a power or a mark, never a transpose)."""
    if e.is_Number:
        return True
    if isinstance(e, sp.Symbol):
        head = re.sub(r"\d+$", "", e.name.split("_")[0])
        return head in _GREEK_WORDS
    return not e.free_symbols


def _name_text(latex: str) -> str:
    text = re.sub(r"\\(mathrm|text|mathbf|boldsymbol|operatorname|mathit)\s*", "", latex)
    text = text.replace("\\mid", "|").replace("\\theta", "theta").replace("\\", "")
    text = text.replace("-", "m").replace("+", "p")
    text = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")
    return text or "x"


def _bounded_power(base: sp.Expr, exp: sp.Expr, pos: int) -> sp.Expr:
    """`10^{10^{10}}`: SymPy would evaluate the tower; numeric exponents stay within the bound."""
    if power_too_large(base, exp):
        what = "exponent too large" if abs(exp) > MAX_EXPONENT else "number too large"
        raise FormulaTooLarge(f"{what} (above {MAX_EXPONENT if abs(exp) > MAX_EXPONENT else 'the size bound'})", pos)
    return base**exp


def _number(tok: _Tok) -> sp.Expr:
    if len(tok.text) > MAX_LITERAL_CHARS:
        raise FormulaTooLarge(f"number too large: {len(tok.text)} characters", tok.pos)
    try:
        return sp.Rational(tok.text)
    except (TypeError, ValueError):
        raise FormulaSyntaxError(f"bad number `{tok.text}`", tok.pos) from None


def parse_latex(
    text: str, functions: list[str] | tuple[str, ...] = (), matrices: list[str] | tuple[str, ...] = ()
) -> Formula:
    """A formula as papers write it in LaTeX. Natural log, `\\sigma(\\cdot)` = sigmoid, `\\mathbb{E}` = mean.

    ``matrices`` names matrix symbols; a matrix found in one product (``B A x``) counts in the others
    (``W_0 x``), so the formula is read twice when it has any."""
    original = text
    text = text.strip().strip("$").strip()
    text = re.sub(r"\\(begin|end)\{(equation|align|aligned)\*?\}", " ", text)
    text = text.replace("&", " ").replace("\\\\", " ")
    text = re.sub(r"[,.;]\s*$", "", text)
    lhs, rhs, offset = _split_latex(text)
    shift = max(original.find(text), 0)
    parser = _LatexParser(rhs, tuple(functions), tuple(matrices))
    try:
        _bound_size(len(parser.toks) - 1, sum(1 for t in parser.toks if t.kind == "char" and t.text in "+-"), 0)
        expr = parser.parse()
        if parser.matrices - set(matrices):
            parser = _LatexParser(rhs, tuple(functions), tuple(sorted(parser.matrices)))
            expr = parser.parse()
    except FormulaSyntaxError as exc:
        raise type(exc)(exc.reason, exc.position + offset + shift) from None
    except RecursionError:
        raise FormulaSyntaxError("formula nested too deeply", offset + shift) from None
    except (TypeError, ValueError) as exc:
        raise FormulaSyntaxError(f"does not parse: {str(exc)[:80]}", offset + shift) from None
    arrow = lhs is not None and not text[:offset].rstrip().endswith("=")
    formula = _checked(expr, lhs, frozenset(parser.bounds), original, arrow)
    formula.matrices = frozenset(parser.matrices) if parser.matrices else None
    formula.explicit_matrices = bool(matrices) or parser.transposed
    formula.applications = _applications_of(formula.expr, parser.applications)
    return formula


def _split_latex(text: str) -> tuple[str | None, str, int]:
    depth, cut, cut_len = 0, -1, 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0 and ch == "=" and text[i - 1 : i] not in ("<", ">", "!"):
            cut, cut_len = i, 1
        elif depth == 0 and ch == "\\":
            m = re.match(r"\\([A-Za-z]+)", text[i:])
            if m and m.group(1) in _SPLITTERS:
                cut, cut_len = i, len(m.group(0))
            if m:
                i += len(m.group(0))
                continue
        i += 1
    if cut < 0:
        return None, text, 0
    lhs = text[:cut].strip() or None
    if lhs:
        lhs = _name_text(lhs)
    return lhs, text[cut + cut_len :], cut + cut_len


def parse_formula(
    expect: str | None, latex: str | None, functions: list[str] | tuple[str, ...] = (),
    matrices: list[str] | tuple[str, ...] = (),
) -> Formula:
    """The check's formula: `expect` (SymPy syntax / ASCII) wins over `latex` when both are given."""
    if expect:
        return parse_sympy(expect, functions, matrices)
    if latex:
        return parse_latex(latex, functions, matrices)
    raise FormulaSyntaxError("no formula given", 0)
