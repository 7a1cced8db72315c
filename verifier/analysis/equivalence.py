"""Deciding whether a paper formula and a code expression are the same function.

Order of work, cheapest first: a randomized numeric screen in-process (bounded: a fixed number of sample
points, a node limit), a high-precision re-evaluation that confirms a mismatch and yields the
counterexample, then a proof attempt (expand / simplify, z3 with transcendental functions and reductions
left uninterpreted) in a killable worker process with a hard timeout. Tensors are modelled elementwise:
symbols that sit inside a reduction on both sides are short random vectors, everything else is a scalar.
Matrix algebra is real: operands of ``matmul``/``transpose`` are random square matrices, so ``B A`` against
``A B`` is a confirmed mismatch while ``(A B)^T = B^T A^T`` holds, and proofs first normalise products
(transposes pushed to the leaves, products distributed over sums, scalar factors pulled out).
"""

from __future__ import annotations

import atexit
import functools
import itertools
import multiprocessing
import os
import re
import threading
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

import mpmath
import numpy as np
import sympy as sp
from sympy.core.function import AppliedUndef

from verifier.analysis.code_sympy import MATMUL, REDUCTIONS, TRANSPOSE, api_table, expr_nodes, matmul, transpose
from verifier.symbolic.core import has_matrix_ops, is_matrix_op
from verifier.symbolic.latex import Grad

SAMPLES = 40
VECTOR_LEN = 4
MAX_EVAL_NODES = 20000
QUICK_SAMPLES = 10
MAX_ASSIGNMENTS = 48
MAX_UNMAPPED = 12  # paper symbols left for the search; beyond it the candidate combinations explode
REL_TOL = 1e-6
MATRIX_SIZE = 3  # random square matrices: 3x3 already separates B A from A B and (A B)^T from A^T B^T
MAX_SHAPE_ASSIGNMENTS = 8  # which factor of `alpha * x @ W` is the matrix: at most this many readings
MAX_DISTRIBUTED_TERMS = 64  # a product of sums expanded for a proof beyond this stays as it is


# ============================================================================== numeric evaluation
class _Unsupported(Exception):
    pass


class _FloatOps:
    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
    sin = staticmethod(np.sin)
    cos = staticmethod(np.cos)
    tanh = staticmethod(np.tanh)
    floor = staticmethod(np.floor)
    ceil = staticmethod(np.ceil)
    sinh = staticmethod(np.sinh)
    cosh = staticmethod(np.cosh)

    @staticmethod
    def erf(x):
        return np.vectorize(lambda v: float(mpmath.erf(v)) if np.isfinite(v) else np.nan, otypes=[float])(x)

    @staticmethod
    def const(value: sp.Expr):
        return float(value)

    @staticmethod
    def power(base, exp):
        return np.power(base, exp)


class _MpOps:
    exp = staticmethod(np.frompyfunc(mpmath.exp, 1, 1))
    sin = staticmethod(np.frompyfunc(mpmath.sin, 1, 1))
    cos = staticmethod(np.frompyfunc(mpmath.cos, 1, 1))
    tanh = staticmethod(np.frompyfunc(mpmath.tanh, 1, 1))
    floor = staticmethod(np.frompyfunc(mpmath.floor, 1, 1))
    ceil = staticmethod(np.frompyfunc(mpmath.ceil, 1, 1))
    sinh = staticmethod(np.frompyfunc(mpmath.sinh, 1, 1))
    cosh = staticmethod(np.frompyfunc(mpmath.cosh, 1, 1))
    erf = staticmethod(np.frompyfunc(mpmath.erf, 1, 1))

    @staticmethod
    def log(x):
        return np.frompyfunc(lambda v: mpmath.log(v) if v > 0 else (mpmath.mpf("-inf") if v == 0 else mpmath.nan), 1, 1)(x)

    @staticmethod
    def const(value: sp.Expr):
        if value in (sp.oo, -sp.oo, sp.zoo, sp.nan):
            return mpmath.mpf(float(value)) if value != sp.zoo else mpmath.nan
        return mpmath.mpf(sp.Float(value, mpmath.mp.dps).__str__()) if not value.is_Rational else mpmath.mpf(value.p) / value.q

    @staticmethod
    def power(base, exp):
        def one(b, e):
            try:
                r = mpmath.power(b, e)
            except (ZeroDivisionError, ValueError):
                return mpmath.nan
            return r if not isinstance(r, mpmath.mpc) else (r.real if abs(r.imag) < mpmath.mpf(10) ** (-40) else mpmath.nan)

        return np.frompyfunc(one, 2, 1)(base, exp)


def _opaque_coeffs(name: str, arity: int) -> np.ndarray:
    rng = np.random.default_rng(zlib.crc32(f"{name}/{arity}".encode()))
    return rng.uniform(0.3, 1.7, size=(max(arity, 1), 3))


def _reduce(name: str, v, ops):
    if ops is _FloatOps:
        if name == "rmean":
            r = v.mean(axis=-1, keepdims=True)
        elif name == "rsum":
            r = v.sum(axis=-1, keepdims=True)
        elif name == "rmax":
            r = v.max(axis=-1, keepdims=True)
        elif name == "rmin":
            r = v.min(axis=-1, keepdims=True)
        elif name == "rprod":
            r = v.prod(axis=-1, keepdims=True)
        else:  # rvar1
            n = v.shape[-1]
            r = v.var(axis=-1, keepdims=True, ddof=1) if n > 1 else np.full(v.shape[:-1] + (1,), np.nan)
        return r
    n = v.shape[-1]
    rows = []
    for row in v.reshape(-1, n):
        vals = list(row)
        if name == "rmean":
            rows.append(mpmath.fsum(vals) / n)
        elif name == "rsum":
            rows.append(mpmath.fsum(vals))
        elif name == "rmax":
            rows.append(max(vals))
        elif name == "rmin":
            rows.append(min(vals))
        elif name == "rprod":
            rows.append(mpmath.fprod(vals))
        else:
            mean = mpmath.fsum(vals) / n
            rows.append(mpmath.fsum((x - mean) ** 2 for x in vals) / (n - 1) if n > 1 else mpmath.nan)
    return np.array(rows, dtype=object).reshape(v.shape[:-1] + (1,))


def evaluate(expr: sp.Basic, env: dict[sp.Symbol, Any], ops=_FloatOps) -> Any:
    """Evaluate ``expr`` on arrays (rows = sample points, last axis = vector entries)."""
    memo: dict[sp.Basic, Any] = {}
    return _ev(expr, env, ops, memo)


def _ev(e: sp.Basic, env, ops, memo):
    hit = memo.get(e)
    if hit is not None:
        return hit
    out = _ev_inner(e, env, ops, memo)
    memo[e] = out
    return out


def _ev_inner(e: sp.Basic, env, ops, memo):
    if e.is_Symbol:
        if e not in env:
            raise _Unsupported(f"unbound symbol {e}")
        return env[e]
    if e.is_Number or e in (sp.oo, -sp.oo, sp.zoo, sp.nan) or e.is_NumberSymbol:
        return ops.const(e)
    if e is sp.true or e is sp.false:
        return bool(e)
    args = e.args
    if isinstance(e, sp.Add):
        out = _ev(args[0], env, ops, memo)
        for a in args[1:]:
            out = out + _ev(a, env, ops, memo)
        return out
    if isinstance(e, sp.Mul):
        out = _ev(args[0], env, ops, memo)
        for a in args[1:]:
            out = out * _ev(a, env, ops, memo)
        return out
    if isinstance(e, sp.Pow):
        base, exp = _ev(args[0], env, ops, memo), _ev(args[1], env, ops, memo)
        if args[1] == -1:
            return 1 / base
        return ops.power(base, exp)
    if isinstance(e, sp.exp):
        return ops.exp(_ev(args[0], env, ops, memo))
    if isinstance(e, sp.log):
        v = _ev(args[0], env, ops, memo)
        if ops is _FloatOps:
            v = np.where(v > 0, v, np.nan) if isinstance(v, np.ndarray) else (v if v > 0 else np.nan)
        return ops.log(v)
    simple = {sp.sin: "sin", sp.cos: "cos", sp.tanh: "tanh", sp.erf: "erf", sp.floor: "floor", sp.ceiling: "ceil",
              sp.sinh: "sinh", sp.cosh: "cosh"}
    for cls, attr in simple.items():
        if isinstance(e, cls):
            return getattr(ops, attr)(_ev(args[0], env, ops, memo))
    if isinstance(e, sp.Abs):
        return abs(_ev(args[0], env, ops, memo))
    if isinstance(e, sp.sign):
        v = _ev(args[0], env, ops, memo)
        return np.sign(v) if ops is _FloatOps else np.frompyfunc(lambda x: (x > 0) - (x < 0), 1, 1)(v)
    if isinstance(e, (sp.Min, sp.Max)):
        vals = [_ev(a, env, ops, memo) for a in args]
        out = vals[0]
        for v in vals[1:]:
            b = np.broadcast_arrays(out, v)
            out = np.where(b[0] <= b[1], b[0], b[1]) if isinstance(e, sp.Min) else np.where(b[0] >= b[1], b[0], b[1])
        return out
    if isinstance(e, sp.Mod):
        a, b = _ev(args[0], env, ops, memo), _ev(args[1], env, ops, memo)
        return a % b
    if isinstance(e, sp.Piecewise):
        result = None
        taken = None
        for value_expr, cond in args:
            v = _ev(value_expr, env, ops, memo)
            c = _ev(cond, env, ops, memo)
            c = np.asarray(c, dtype=bool)
            if result is None:
                shape = np.broadcast_shapes(np.shape(v), np.shape(c))
                result = np.broadcast_to(np.asarray(v, dtype=object if ops is _MpOps else float), shape).copy()
                result[...] = np.nan if ops is _FloatOps else mpmath.nan
                taken = np.zeros(shape, dtype=bool)
            c = np.broadcast_to(c, result.shape)
            pick = c & ~taken
            result[pick] = np.broadcast_to(v, result.shape)[pick]
            taken |= c
        return result
    if isinstance(e, sp.core.relational.Relational):
        a, b = _ev(args[0], env, ops, memo), _ev(args[1], env, ops, memo)
        op = e.rel_op
        if op == "<":
            return np.asarray(a < b, dtype=bool)
        if op == "<=":
            return np.asarray(a <= b, dtype=bool)
        if op == ">":
            return np.asarray(a > b, dtype=bool)
        if op == ">=":
            return np.asarray(a >= b, dtype=bool)
        raise _Unsupported(op)
    if isinstance(e, sp.And):
        out = True
        for a in args:
            out = np.logical_and(out, _ev(a, env, ops, memo))
        return out
    if isinstance(e, sp.Or):
        out = False
        for a in args:
            out = np.logical_or(out, _ev(a, env, ops, memo))
        return out
    if isinstance(e, sp.Not):
        return np.logical_not(_ev(args[0], env, ops, memo))
    if isinstance(e, Grad):
        return _ev(args[0], env, ops, memo) * _opaque_apply("grad-wrt", [_ev(args[1], env, ops, memo)], ops)
    if isinstance(e, AppliedUndef):
        name = e.func.__name__
        if e.func is MATMUL:
            out = _ev(args[0], env, ops, memo)
            for a in args[1:]:
                out = _matprod(out, _ev(a, env, ops, memo))
            return out
        if e.func is TRANSPOSE and len(args) == 1:
            v = _ev(args[0], env, ops, memo)
            return np.swapaxes(v, -1, -2) if isinstance(v, np.ndarray) and v.ndim >= 3 else v
        if name in REDUCTIONS:
            return _reduce(name, _broadcast_vec(_ev(args[0], env, ops, memo)), ops)
        if name == "pick":
            v = _broadcast_vec(_ev(args[0], env, ops, memo))
            return v[..., :1]
        if e.func is APPLY and len(args) >= 2:
            return _joint_apply([_ev(a, env, ops, memo) for a in args], ops)
        return _opaque_apply(name, [_ev(a, env, ops, memo) for a in args], ops)
    raise _Unsupported(type(e).__name__)


def _opaque_apply(name: str, vals: list, ops) -> Any:
    """An opaque function's value: fixed (seeded by name and arity), smooth and not linear in its arguments.
    A gradient ``Grad(f, x)`` is ``f`` times the one of its variable (``grad-wrt``): the same gradient agrees on
    both sides, and a different variable, factor or function does not."""
    coeffs = _opaque_coeffs(name, len(vals))
    out = 0
    for (a, b, c), v in zip(coeffs, vals):
        scale = ops.const(sp.Rational(str(round(float(a), 6))))
        shift = ops.const(sp.Rational(str(round(float(b), 6))))
        weight = ops.const(sp.Rational(str(round(float(c), 6))))
        out = out + weight * ops.sin(scale * v + shift) + v * scale / 3
    return out


# ``apply(f, a1, ..., an)``: a paper's ``D(x̂)`` / a code's ``critic(x_hat)`` with the function itself a symbol
# (mapped like any other: D -> critic), so the function and every argument enter one value
APPLY = sp.Function("apply")


def _joint_apply(vals: list, ops) -> Any:
    """An application's value: a fixed smooth function of the function symbol's value and of every argument
    together, ``sin(c0 + Σ a_i v_i)`` plus a small linear part, so the same function on the same arguments
    agrees on both sides and any other function or argument differs; not a sum of one term per argument
    (that would equal ``Q(s1, a1) + Q(s2, a2)`` with ``Q(s1, a2) + Q(s2, a1)``)."""
    coeffs = _opaque_coeffs("apply", len(vals))
    inner = ops.const(sp.Rational(str(round(float(coeffs[0][1]), 6))))
    linear = 0
    for (a, _, c), v in zip(coeffs, vals):
        inner = inner + ops.const(sp.Rational(str(round(float(a), 6)))) * v
        linear = linear + ops.const(sp.Rational(str(round(float(c), 6)))) * v / 5
    return ops.sin(inner) + linear


def _matprod(x, y):
    """The matrix product of sample stacks (rows x cols in the last two axes); a scalar operand scales."""
    if not (isinstance(x, np.ndarray) and x.ndim >= 3 and x.shape[-2:] != (1, 1)):
        return x * y
    if not (isinstance(y, np.ndarray) and y.ndim >= 3 and y.shape[-2:] != (1, 1)):
        return x * y
    try:
        return np.matmul(x, y)
    except ValueError as exc:
        raise _Unsupported(f"matrix shapes do not fit: {x.shape[-2:]} @ {y.shape[-2:]}") from exc


def _broadcast_vec(v):
    arr = np.asarray(v) if not isinstance(v, np.ndarray) else v
    if arr.ndim == 0:
        arr = arr.reshape(1, 1)
    return arr


# ============================================================================== the screen
@dataclass
class Decision:
    kind: str  # proven | numerically-equivalent | not-equivalent | undecided
    seconds: float = 0.0
    sign: int = 1
    counterexample: dict[str, Any] | None = None
    reason: str = ""
    method: str = ""
    limit: str = ""  # set when an analysis bound (size, time) stopped the decision: never a verdict on the code
    orientation: str = ""  # "flipped"/"rows": equal with the paper's column vectors as the code's row vectors
    data: frozenset = frozenset()  # the paper symbols read as those vectors
    matrices: frozenset = frozenset()  # leaves evaluated as matrices (the proof keeps their products ordered)

    @property
    def equivalent(self) -> bool:
        return self.kind in ("proven", "numerically-equivalent")


def reduction_symbols(expr: sp.Basic) -> set[sp.Symbol]:
    out: set[sp.Symbol] = set()
    for node in sp.preorder_traversal(expr):
        if isinstance(node, AppliedUndef) and (node.func.__name__ in REDUCTIONS or node.func.__name__ == "pick"):
            out |= node.free_symbols
    return out


def sample_env(
    symbols: list[sp.Symbol], vector: set[sp.Symbol], positive: set[sp.Symbol], n: int, seed: int = 7,
    matrices: set[sp.Symbol] | None = None,
):
    """Deterministic sample points: positives in (0.1, 2), probabilities in (0.05, 0.95), mixed signs.

    With ``matrices`` (matrix mode) every value is a stack of (rows, cols): matrices are square, vectors one
    row, scalars 1x1, so products and transposes act on the last two axes and the rest broadcasts."""
    rng = np.random.default_rng(seed)
    env = {}
    third = max(n // 5, 1)
    for s in symbols:
        if matrices is None:
            shape = (n, VECTOR_LEN if s in vector else 1)
        elif s in matrices:
            shape = (n, MATRIX_SIZE, MATRIX_SIZE)
        else:
            shape = (n, 1, MATRIX_SIZE if s in vector else 1)
        pos = rng.uniform(0.1, 2.0, size=shape)
        prob = rng.uniform(0.05, 0.95, size=shape)
        mixed = rng.uniform(-2.0, 2.0, size=shape)
        vals = pos.copy()
        vals[third : 2 * third] = prob[third : 2 * third]
        if s not in positive:
            vals[2 * third :] = mixed[2 * third :]
        env[s] = vals
    return env


def _close(a, b):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    a, b = np.broadcast_arrays(a, b)
    valid = np.isfinite(a) & np.isfinite(b)
    tol = REL_TOL * (1 + np.abs(a) + np.abs(b))
    return valid, np.abs(a - b) <= tol


def screen(
    a: sp.Expr,
    b: sp.Expr,
    *,
    positive: set[sp.Symbol] = frozenset(),
    sign: str = "exact",
    samples: int = SAMPLES,
    subs: dict[sp.Symbol, sp.Expr] | None = None,
    confirm: bool = True,
    matrices: frozenset | None = None,
    inputs: frozenset = frozenset(),
) -> Decision:
    """Numeric screen: equal on every valid point, or a confirmed counterexample, or inconclusive.

    Symbols reduced on both sides are vectors; when that leaves too few defined points (a variance of a
    scalar), symbols reduced on either side become vectors and the screen runs once more. ``subs`` maps
    symbols of ``a`` to expressions over ``b``'s symbols, evaluated first (no SymPy substitution needed).
    ``matrices``: the paper's matrix symbols (None: every symbol the paper multiplies as a matrix)."""
    started = time.perf_counter()
    subs = subs or {}
    if expr_nodes(a, MAX_EVAL_NODES) >= MAX_EVAL_NODES or expr_nodes(b, MAX_EVAL_NODES) >= MAX_EVAL_NODES:
        return Decision("undecided", time.perf_counter() - started, reason="expression too large to evaluate")
    b = _elementwise_reading(a, b, subs)
    readings = matrix_readings(a, b, subs, matrices, inputs)
    if readings is None:
        return _screen_shapes(a, b, subs, positive, sign, samples, started, confirm, None)
    return _screen_matrices(a, b, subs, readings, positive, sign, samples, started, confirm)


@dataclass(frozen=True)
class MatrixReadings:
    """Which leaves are matrices: one set per reading of an ambiguous factor (``alpha * x @ W``), and the
    paper's data symbols (lower-case operands such as ``x`` in ``W x``) that a row-vector code transposes."""

    shapes: tuple[frozenset, ...]
    data: tuple[frozenset, ...]  # paper symbols that may be data vectors, most inclusive reading first
    union: frozenset  # every leaf that is a matrix in some reading (what a proof must not commute)
    operands: frozenset = frozenset()  # paper symbols multiplied as matrices


def _screen_matrices(a, b, subs, readings: MatrixReadings, positive, sign, samples, started, confirm) -> Decision:
    """Equal under every reading of the shapes (directly, or with the paper's column vectors as the code's
    rows: ``W x`` is ``x W^T``), or a mismatch under every one; else undecided."""
    results = []
    for shapes in readings.shapes:
        result = _screen_shapes(a, b, subs, positive, sign, samples, started, confirm, shapes)
        for data in readings.data:
            if result.kind == "numerically-equivalent":
                break
            data_matrices = _leaves_of(data, subs) & shapes
            # a weight the data meets (W of W x): transposing every operand would only relabel B A as A B
            weights = _leaves_of(readings.operands - data, subs) & shapes
            if not (data_matrices and weights):
                continue
            for orientation in ORIENTATIONS:
                flipped = flip_orientation(a, data, orientation)
                other = _screen_shapes(flipped, b, subs, positive, sign, samples, started, confirm, shapes)
                if other.kind == "numerically-equivalent":
                    other.orientation, other.data = orientation, data
                    result = other
                    break
                if result.kind == "not-equivalent" and other.kind != "not-equivalent":
                    result = other
        results.append(result)
    kinds = {r.kind for r in results}
    if kinds == {"numerically-equivalent"}:
        out = results[0]
        if any((r.orientation, r.data) != (out.orientation, out.data) for r in results):
            return Decision("undecided", time.perf_counter() - started, reason="equal only in different matrix orientations")
    elif kinds == {"not-equivalent"}:
        out = results[0]
    elif "numerically-equivalent" in kinds and "not-equivalent" in kinds:
        ambiguous = sorted(s.name for s in readings.union - frozenset.intersection(*readings.shapes))
        out = Decision(
            "undecided", reason=f"equal or not depending on which of {', '.join(ambiguous)} is a matrix (give `matrices:`)"
        )
    else:
        out = next(r for r in results if r.kind == "undecided")
    out.seconds = time.perf_counter() - started
    out.matrices = readings.union
    return out


def _leaves_of(paper_symbols: frozenset, subs: dict) -> set[sp.Symbol]:
    out: set[sp.Symbol] = set()
    for p in paper_symbols:
        out |= subs[p].free_symbols if p in subs else {p}
    return out


def _screen_shapes(a, b, subs, positive, sign, samples, started, confirm, shapes) -> Decision:
    ra = set()
    for s in reduction_symbols(a):
        ra |= subs[s].free_symbols if s in subs else {s}
    for target in subs.values():
        ra |= reduction_symbols(target)
    rb = reduction_symbols(b)
    result = _screen(a, b, subs, ra & rb, positive, sign, samples, started, confirm, shapes)
    if result.kind in ("undecided", "constant") and (ra | rb) != (ra & rb):
        result = _screen(a, b, subs, ra | rb, positive, sign, samples, started, confirm, shapes)
    if result.kind == "constant":
        # both sides constant on every point (x - mean(x) of a scalar): says nothing
        result = Decision("undecided", result.seconds, reason="both sides are constant on the sample")
    return result


def _elementwise_reading(a: sp.Expr, b: sp.Expr, subs: dict) -> sp.Expr:
    """A paper formula with no matrix notation compares values elementwise: the code's transposes (``.T``
    of a loss's logits) only reorder entries then, as they did before matrices were modelled."""
    if not any(isinstance(n, AppliedUndef) and n.func is TRANSPOSE for n in sp.preorder_traversal(b)):
        return b
    if has_matrix_ops(a) or any(has_matrix_ops(t) for s, t in subs.items() if s in a.free_symbols):
        return b
    if any(isinstance(n, AppliedUndef) and n.func is MATMUL for n in sp.preorder_traversal(b)):
        return b
    return b.replace(lambda n: isinstance(n, AppliedUndef) and n.func is TRANSPOSE, lambda n: n.args[0])


def _operands(expr: sp.Basic):
    for node in sp.preorder_traversal(expr):
        if is_matrix_op(node):
            yield from node.args


def matrix_leaves(expr: sp.Basic) -> tuple[set[sp.Symbol], list[tuple[sp.Symbol, ...]]]:
    """Leaves that must be matrices (operands of a product or transpose, terms of such a sum) and the
    groups of which one factor is (``(alpha * x) @ W``: alpha or x; which one the code does not say)."""
    definite: set[sp.Symbol] = set()
    products: list[tuple[tuple[sp.Symbol, ...], bool]] = []

    def operand(op: sp.Basic) -> None:
        if op.is_Symbol:
            definite.add(op)
        elif isinstance(op, sp.Add):
            for term in op.args:
                operand(term)
        elif isinstance(op, sp.Mul):
            factors = [f for f in op.args if not f.is_Number]
            if len(factors) == 1:
                operand(factors[0])
                return
            symbols = tuple(sorted((f for f in factors if f.is_Symbol), key=lambda x: x.name))
            valued = any(has_matrix_ops(f) for f in factors if not f.is_Symbol)
            products.append((symbols, valued))
        elif isinstance(op, sp.Pow) and op.args[0].is_Symbol:
            definite.add(op.args[0])  # an elementwise power of a matrix operand
        elif isinstance(op, (sp.exp, sp.log, sp.tanh, sp.Abs, sp.erf)):
            operand(op.args[0])

    for op in _operands(expr):
        operand(op)
    groups = [symbols for symbols, valued in products if symbols and not valued and not (set(symbols) & definite)]
    return definite, groups


def matrix_readings(
    a: sp.Expr, b: sp.Expr, subs: dict, declared: frozenset | None, inputs: frozenset = frozenset()
) -> MatrixReadings | None:
    """The shape readings of a comparison with matrix products or transposes; None when it has none.

    ``inputs``: code names that are the function's inputs; a paper operand mapped to one (``Z`` of ``W_Q Z``)
    is data, like a lower-case operand (``x`` of ``W x``)."""
    targets = [t for s, t in subs.items() if s in a.free_symbols]
    if not (has_matrix_ops(a) or has_matrix_ops(b) or any(has_matrix_ops(t) for t in targets)):
        return None
    definite: set[sp.Symbol] = set()
    groups: list[tuple[sp.Symbol, ...]] = []
    for side in (b, *targets):
        d, g = matrix_leaves(side)
        definite |= d
        groups += g
    paper_definite, paper_groups = matrix_leaves(a)
    operands = paper_definite | {s for g in paper_groups for s in g}
    paper_matrices = paper_definite if declared is None else {s for s in a.free_symbols if s.name in declared}
    for p in paper_matrices:
        target = subs.get(p, p)
        if target.is_Symbol:
            definite.add(target)
    groups = sorted({g for g in groups if not set(g) & definite}, key=lambda g: [s.name for s in g])
    shapes = [frozenset(definite)]
    for group in groups:
        shapes = [s | {choice} for s in shapes for choice in group][:MAX_SHAPE_ASSIGNMENTS]
    lower = frozenset(p for p in operands if p.name[:1].islower())
    given = frozenset(p for p in operands if isinstance(subs.get(p), sp.Symbol) and subs[p].name in inputs)
    data = tuple(dict.fromkeys(d for d in (lower | given, lower, given) if d))  # an input may be a weight too
    union = frozenset().union(*shapes)
    return MatrixReadings(tuple(shapes), data, union, frozenset(operands))


# The paper's column vectors as the code's rows: a column result is the code's row transposed (W x is
# x W^T), a row result is the code's row itself (g^T W is g W).
ORIENTATIONS = ("flipped", "rows")


def flip_orientation(expr: sp.Expr, data: frozenset, orientation: str = "flipped") -> sp.Expr:
    """The paper's formula with its data vectors (columns) written as the code's rows."""
    rows = expr.xreplace({p: transpose(p) for p in data})
    return transpose(rows) if orientation == "flipped" else rows


def _leaf_symbols(a: sp.Expr, b: sp.Expr, subs: dict) -> list[sp.Symbol]:
    out = set(b.free_symbols) | {s for s in a.free_symbols if s not in subs}
    for s, target in subs.items():
        if s in a.free_symbols:
            out |= target.free_symbols
    return sorted(out, key=lambda s: s.name)


def _mapped_env(env: dict, subs: dict, ops) -> dict:
    out = dict(env)
    for s, target in subs.items():
        out[s] = evaluate(target, env, ops)
    return out


def _screen(a, b, subs, vector, positive, sign, samples, started, confirm=True, shapes=None) -> Decision:
    symbols = _leaf_symbols(a, b, subs)
    env = sample_env(symbols, vector, set(positive), samples, matrices=shapes)
    try:
        with np.errstate(all="ignore"):
            va = evaluate(a, _mapped_env(env, {k: v for k, v in subs.items() if k in a.free_symbols}, _FloatOps))
            vb = evaluate(b, env)
    except (_Unsupported, TypeError, ValueError, OverflowError, ZeroDivisionError, RecursionError) as exc:
        return Decision("undecided", time.perf_counter() - started, reason=f"cannot evaluate: {exc}"[:120])
    signs = (1, -1) if sign == "either" else (1,)
    first_failure = None
    for s in signs:
        with np.errstate(all="ignore"):
            valid, close = _close(va, s * np.asarray(vb, dtype=float) if not isinstance(vb, bool) else vb)
        n_valid = int(valid.reshape(valid.shape[0], -1).all(axis=1).sum()) if valid.ndim > 1 else int(valid.sum())
        bad = valid & ~close
        if not bad.any():
            if n_valid >= max(4, samples // 8):
                if _constant(va, valid) and _constant(vb, valid):
                    return Decision("constant", time.perf_counter() - started)
                return Decision("numerically-equivalent", time.perf_counter() - started, sign=s, method="numeric")
            continue
        if first_failure is None:
            row = int(np.argwhere(bad.reshape(bad.shape[0], -1).any(axis=1))[0][0])
            if not confirm and _large_gap(va, vb, s, bad):
                first_failure = {"values": {}, "paper": None, "code": None}  # a search step: no need to confirm
                continue
            confirmed = _confirm(a, b, subs, env, row, s)
            if confirmed is None:
                # float rounding, not a real difference at this point: drop the point and re-judge
                keep = np.ones(bad.shape[0], dtype=bool)
                keep[row] = False
                rest = bad.reshape(bad.shape[0], -1)[keep]
                if not rest.any():
                    return Decision("numerically-equivalent", time.perf_counter() - started, sign=s, method="numeric")
                continue
            first_failure = confirmed
    if first_failure is not None:
        return Decision(
            "not-equivalent", time.perf_counter() - started, counterexample=first_failure, reason="confirmed at 50 digits"
        )
    return Decision("undecided", time.perf_counter() - started, reason="too few points where both sides are defined")


def _large_gap(va, vb, s, bad) -> bool:
    with np.errstate(all="ignore"):  # inf - inf at a point: NaN, no large gap, and no warning on the user's stderr
        a, b = np.broadcast_arrays(np.asarray(va, dtype=float), s * np.asarray(vb, dtype=float))
        gap = np.abs(a - b)[bad]
        scale = (1 + np.abs(a) + np.abs(b))[bad]
        return bool((gap > 1e-3 * scale).any())


def _constant(values, valid) -> bool:
    arr = np.broadcast_to(np.asarray(values, dtype=float), valid.shape)[valid]
    return arr.size == 0 or float(np.ptp(arr)) <= 1e-9 * (1 + float(np.max(np.abs(arr))))


def _shown_value(v: np.ndarray) -> Any:
    """A sample value for a report: a number, a vector, or a matrix as a list of rows."""
    rounded = np.vectorize(lambda t: float(f"{float(t):.6g}"), otypes=[float])(np.asarray(v, dtype=float))
    if rounded.size == 1:
        return float(rounded.ravel()[0])
    if rounded.ndim == 2 and rounded.shape[0] == 1:
        return rounded[0].tolist()
    return rounded.tolist()


def _confirm(a: sp.Expr, b: sp.Expr, subs: dict, env, row: int, s: int) -> dict[str, Any] | None:
    """Re-evaluate one sample point with 50-digit arithmetic; the counterexample if the gap is real."""
    with mpmath.workdps(50):
        point = {sym_: env[sym_][row : row + 1] for sym_ in env}
        to_mp = np.frompyfunc(lambda x: mpmath.mpf(repr(float(x))), 1, 1)
        mp_env = {k: np.asarray(to_mp(v), dtype=object) for k, v in point.items()}
        try:
            used = {k: v for k, v in subs.items() if k in a.free_symbols}
            va = _broadcast_vec(evaluate(a, _mapped_env(mp_env, used, _MpOps), _MpOps))
            vb = _broadcast_vec(evaluate(b, mp_env, _MpOps))
        except (_Unsupported, TypeError, ValueError, ZeroDivisionError, OverflowError, RecursionError):
            return None
        va, vb = np.broadcast_arrays(va, vb)
        for x, y in zip(va.ravel(), vb.ravel()):
            try:
                if mpmath.isnan(x) or mpmath.isnan(y) or mpmath.isinf(x) or mpmath.isinf(y):
                    continue
                gap = abs(x - s * y)
                if gap > mpmath.mpf(10) ** (-30) * (1 + abs(x) + abs(y)):
                    values = {k.name: _shown_value(v[0]) for k, v in point.items()}
                    return {
                        "values": dict(sorted(values.items())),
                        "paper": float(f"{float(x):.8g}"),
                        "code": float(f"{float(y) * s:.8g}"),
                    }
            except (TypeError, ValueError):
                continue
    return None


# ============================================================================== proofs in a worker
def _prove_task(
    a: sp.Expr, b: sp.Expr, positive: list[str], sign: int, quick: bool = False, matrices: list[str] = ()
) -> str:
    """quick: expand and a short z3 call only (the bonus proof after a numeric pass); else simplify too."""
    if matrices or has_matrix_ops(a) or has_matrix_ops(b):
        names = frozenset(matrices)
        a, b = normalize_matrices(a, names), normalize_matrices(b, names)
    diff = a - sign * b
    if diff == 0 or sp.expand(diff) == 0:
        return "expand"
    has_branches = any(isinstance(n, (sp.Min, sp.Max, sp.Piecewise, sp.Abs)) for n in sp.preorder_traversal(diff))
    if has_branches and _z3_equal(a, sign * b, set(positive), 2_000_000 if quick else 200_000_000):
        return "z3"
    if quick:
        return ""
    pos = {s: sp.Symbol(s.name, positive=True) for s in diff.free_symbols if s.name in positive}
    d2 = diff.xreplace(pos) if pos else diff
    if sp.simplify(d2) == 0:
        return "simplify"
    if not has_branches and _z3_equal(a, sign * b, set(positive), 200_000_000):
        return "z3"
    return ""


_ELEMENTWISE = (sp.exp, sp.log, sp.tanh, sp.sin, sp.cos, sp.Abs, sp.erf, sp.sinh, sp.cosh, sp.sign)


def normalize_matrices(expr: sp.Basic, matrices: frozenset) -> sp.Basic:
    """A canonical form for proofs: transposes pushed to the leaves ((A B)^T = B^T A^T, through sums and
    elementwise operations), products distributed over sums, and factors free of matrix symbols (named in
    ``matrices``) pulled out as scalars. Ordered products stay opaque to SymPy, so they never commute."""

    def is_scalar(e: sp.Basic) -> bool:
        return not any(s.name in matrices for s in e.free_symbols) and not has_matrix_ops(e)

    def tr(e: sp.Basic) -> sp.Basic:
        if e.is_Number or (e.is_Symbol and e.name not in matrices) or (not e.free_symbols):
            return e
        if isinstance(e, AppliedUndef) and e.func is TRANSPOSE:
            return e.args[0]
        if isinstance(e, AppliedUndef) and e.func is MATMUL:
            return norm(matmul(*[tr(f) for f in reversed(e.args)]))
        if isinstance(e, sp.Add):
            return sp.Add(*[tr(t) for t in e.args])
        if isinstance(e, sp.Mul):
            return sp.Mul(*[tr(f) for f in e.args])
        if isinstance(e, sp.Pow):
            return sp.Pow(tr(e.args[0]), e.args[1])
        if isinstance(e, _ELEMENTWISE):
            return e.func(*[tr(x) for x in e.args])
        return transpose(e)

    def product(args: list[sp.Basic]) -> sp.Basic:
        options: list[list[sp.Basic]] = [list(sp.Add.make_args(sp.expand(arg))) for arg in args]
        total = 1
        for terms in options:
            total *= len(terms)
        if total > MAX_DISTRIBUTED_TERMS:
            return matmul(*args)
        out = []
        for combo in itertools.product(*options):
            coeff, parts = sp.Integer(1), []
            for term in combo:
                scalars = [f for f in sp.Mul.make_args(term) if is_scalar(f)]
                rest = [f for f in sp.Mul.make_args(term) if not is_scalar(f)]
                coeff *= sp.Mul(*scalars)
                if rest:
                    parts.append(sp.Mul(*rest))
            out.append(coeff * (matmul(*parts) if parts else sp.Integer(1)))
        return sp.Add(*out)

    @functools.lru_cache(maxsize=None)
    def norm(e: sp.Basic) -> sp.Basic:
        if e.is_Atom:
            return e
        if isinstance(e, AppliedUndef) and e.func is TRANSPOSE and len(e.args) == 1:
            return tr(norm(e.args[0]))
        args = [norm(x) for x in e.args]
        if isinstance(e, AppliedUndef) and e.func is MATMUL:
            return product(args)
        return e.func(*args)

    try:
        return norm(expr)
    except (TypeError, ValueError, RecursionError):
        return expr


def _z3_equal(a: sp.Expr, b: sp.Expr, positive: set[str], rlimit: int) -> bool:
    """z3's resource limit (not a clock) bounds the search, so the answer does not depend on machine load."""
    import z3

    builder = _Z3Builder(z3)
    try:
        za, zb = builder.build(a), builder.build(b)
    except _Unsupported:
        return False
    solver = z3.Solver()
    solver.set("rlimit", rlimit)
    for name, var in builder.vars.items():
        if name in positive:
            solver.add(var > 0)
    solver.add(*builder.side)
    solver.add(za != zb)
    return solver.check() == z3.unsat


class _Z3Builder:
    """SymPy -> z3 reals; exp/log/sqrt/reductions become uninterpreted functions (sound for proving)."""

    def __init__(self, z3):
        self.z3 = z3
        self.vars: dict[str, Any] = {}
        self.funcs: dict[tuple[str, int], Any] = {}
        self.side: list = []
        self.memo: dict = {}

    def fn(self, name: str, arity: int):
        key = (name, arity)
        if key not in self.funcs:
            self.funcs[key] = self.z3.Function(name, *([self.z3.RealSort()] * (arity + 1)))
        return self.funcs[key]

    def build(self, e: sp.Basic):
        if e in self.memo:
            return self.memo[e]
        out = self._build(e)
        self.memo[e] = out
        return out

    def _build(self, e: sp.Basic):
        z3 = self.z3
        if e.is_Symbol:
            if e.name not in self.vars:
                self.vars[e.name] = z3.Real(e.name)
            return self.vars[e.name]
        if e.is_Integer:
            return z3.RealVal(int(e))
        if e.is_Rational:
            return z3.RealVal(int(e.p)) / z3.RealVal(int(e.q))
        if e.is_Float:
            return z3.RealVal(str(sp.Rational(e)))
        if e is sp.true or e is sp.false:
            return z3.BoolVal(bool(e))
        args = [self.build(a) for a in e.args] if not isinstance(e, sp.Piecewise) else None
        if isinstance(e, sp.Add):
            return z3.Sum(*args)
        if isinstance(e, sp.Mul):
            return z3.Product(*args)
        if isinstance(e, sp.Pow):
            exp = e.args[1]
            if exp.is_Integer and abs(int(exp)) <= 8:
                k = int(exp)
                if k == 0:
                    return z3.RealVal(1)
                prod = z3.Product(*([args[0]] * abs(k))) if abs(k) > 1 else args[0]
                if k < 0:
                    self.side.append(args[0] != 0)
                    return 1 / prod
                return prod
            return self.fn("pow", 2)(args[0], args[1])
        if isinstance(e, sp.Min):
            out = args[0]
            for v in args[1:]:
                out = z3.If(out <= v, out, v)
            return out
        if isinstance(e, sp.Max):
            out = args[0]
            for v in args[1:]:
                out = z3.If(out >= v, out, v)
            return out
        if isinstance(e, sp.Abs):
            return z3.If(args[0] >= 0, args[0], -args[0])
        if isinstance(e, sp.Piecewise):
            out = None
            for value, cond in reversed(e.args):
                v = self.build(value)
                out = v if out is None else z3.If(self.build(cond), v, out)
            return out
        if isinstance(e, sp.core.relational.Relational):
            return {"<": lambda x, y: x < y, "<=": lambda x, y: x <= y, ">": lambda x, y: x > y, ">=": lambda x, y: x >= y,
                    "==": lambda x, y: x == y, "!=": lambda x, y: x != y}[e.rel_op](*args)
        if isinstance(e, sp.And):
            return z3.And(*args)
        if isinstance(e, sp.Or):
            return z3.Or(*args)
        if isinstance(e, sp.Not):
            return z3.Not(*args)
        if isinstance(e, (sp.Function, AppliedUndef)):
            return self.fn(type(e).__name__ if not isinstance(e, AppliedUndef) else e.func.__name__, len(args))(*args)
        raise _Unsupported(type(e).__name__)


WORKER_POLL = 0.5  # seconds between checks that the parent is still alive


def _exit_when_orphaned(parent_pid: int) -> None:  # pragma: no cover - child process
    while os.getppid() == parent_pid:
        time.sleep(WORKER_POLL)
    os._exit(0)


def _worker_main(conn, parent_end=None, parent_pid: int | None = None) -> None:  # pragma: no cover - child process
    """Serve proof tasks until the pipe closes or the parent is gone (a killed run must leave no orphan)."""
    if parent_end is not None:
        parent_end.close()  # else the child holds the parent's end open and never sees EOF
    if parent_pid is not None:
        # a watchdog, so a parent killed in the middle of a long proof does not wait for the proof to end
        threading.Thread(target=_exit_when_orphaned, args=(parent_pid,), daemon=True).start()
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        a, b, positive, sign, quick, *rest = task  # the matrix symbols, when there are any
        matrices = rest[0] if rest else ()
        try:
            conn.send(_prove_task(a, b, positive, sign, quick, matrices))
        except Exception as exc:  # noqa: BLE001 - anything SymPy/z3 raise only means "no proof"
            conn.send(f"!{type(exc).__name__}")


class ProofWorker:
    """One warm child process; a task that overruns its timeout kills it (a new one starts on demand). A process
    forked after the worker started (``mutate --jobs``, a user's pool) inherits a worker it cannot wait for, so it
    starts its own."""

    def __init__(self) -> None:
        self.proc = None
        self.conn = None
        self.owner = os.getpid()

    def _adopt(self) -> None:
        if self.owner != os.getpid():
            if self.conn is not None:
                self.conn.close()  # this process's copy of the parent's pipe end; the parent's worker is untouched
            self.proc, self.conn, self.owner = None, None, os.getpid()

    def _start(self) -> None:
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        parent, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, parent, os.getpid()), daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent

    def run(self, task: tuple, timeout: float) -> str | None:
        self._adopt()
        try:
            if self.proc is None or not self.proc.is_alive():
                self._start()
        except (OSError, ValueError, RuntimeError):
            self.stop()
            return None  # no worker on this machine: numeric verdicts stand, proofs are skipped
        try:
            self.conn.send(task)
            if self.conn.poll(timeout):
                return self.conn.recv()
        except (OSError, EOFError, BrokenPipeError, TypeError, AttributeError):
            pass
        self.stop()
        return None

    def stop(self) -> None:
        self._adopt()
        if self.proc is not None:
            self.proc.terminate()
            self.proc.join(1.0)
            if self.proc.is_alive():
                self.proc.kill()
                self.proc.join(1.0)
        if self.conn is not None:
            self.conn.close()
        self.proc = None
        self.conn = None


_WORKER = ProofWorker()
atexit.register(_WORKER.stop)


def prove(
    a: sp.Expr, b: sp.Expr, *, positive: set[str] = frozenset(), sign: int = 1, timeout: float = 5.0, quick: bool = False,
    matrices: frozenset = frozenset(),
) -> str | None:
    """The proof method that succeeded, "" if none did, None when it ran out of time."""
    result = _WORKER.run((a, b, sorted(positive), sign, quick, sorted(s.name for s in matrices)), timeout)
    if result is None:
        return None
    return result if not result.startswith("!") else ""


def decide(
    a: sp.Expr,
    b: sp.Expr,
    *,
    positive: set[str] = frozenset(),
    sign: str = "exact",
    timeout: float = 5.0,
    proof_budget: float | None = None,
    subs: dict[sp.Symbol, sp.Expr] | None = None,
    matrices: frozenset | None = None,
    inputs: frozenset = frozenset(),
) -> Decision:
    """Screen, confirm, then prove; ``proof_budget`` caps the bonus proof after a numeric pass."""
    started = time.perf_counter()
    pos_syms = {s for s in _leaf_symbols(a, b, subs or {}) if s.name in positive}
    result = screen(a, b, positive=pos_syms, sign=sign, subs=subs, matrices=matrices, inputs=inputs)
    if result.kind == "not-equivalent":
        result.seconds = time.perf_counter() - started
        return result
    if result.orientation:
        a = flip_orientation(a, result.data, result.orientation)
    if subs:
        a = a.xreplace({k: v for k, v in subs.items() if k in a.free_symbols})
    budget = timeout if result.kind == "undecided" else min(timeout, proof_budget if proof_budget is not None else timeout)
    signs = [result.sign] if result.kind == "numerically-equivalent" else ([1, -1] if sign == "either" else [1])
    for s in signs:
        remaining = budget - (time.perf_counter() - started)
        if remaining <= 0.01:
            break
        quick = result.kind == "numerically-equivalent"
        method = prove(a, b, positive=set(positive), sign=s, timeout=remaining, quick=quick, matrices=result.matrices)
        if method:
            return Decision(
                "proven", time.perf_counter() - started, sign=s, method=method, orientation=result.orientation,
                matrices=result.matrices, data=result.data,
            )
        if method is None:
            break
    if result.kind == "numerically-equivalent":
        result.seconds = time.perf_counter() - started
        return result
    spent = time.perf_counter() - started
    # The message names the bound, not the measured time, so reports stay byte-identical across machines.
    return Decision("undecided", spent, reason=f"undecided within the {budget:.1f} s limit ({result.reason})")


# ============================================================================== reductions
_BOUND_NAMES = re.compile(r"^(n|N|B|batch_size|bsz|bs|numel|num_\w+|n_\w+|\w+_dim|\w+_size)$")


def strip_reductions(expr: sp.Expr, bounds: frozenset = frozenset()) -> sp.Expr:
    """Remove outer mean/sum/expectation (also inside a constant factor, term by term, and 1/N of a sum)."""
    expr = _counted_means(expr)
    for _ in range(8):
        new = _strip_once(expr, bounds)
        if new == expr:
            return expr
        expr = new
    return expr


def _counted_means(expr: sp.Expr) -> sp.Expr:
    """``x.shape[0] * x.mean()`` -> ``rsum(x)``: the length of the array times its mean is its sum, which is
    how code often writes a paper's Σ_{i=1}^n (``n / (n + 1) * losses.mean()`` for ``(1/(n+1)) Σ_i l_i``)."""
    if not isinstance(expr, sp.Basic) or not _has_reduction(expr):
        return expr

    def counted(mul: sp.Mul) -> sp.Expr | None:
        factors = list(mul.args)
        for mean in factors:
            if not (isinstance(mean, AppliedUndef) and mean.func.__name__ == "rmean"):
                continue
            arrays = {_leaf_name(s) for s in mean.args[0].free_symbols}
            size = next((f for f in factors if isinstance(f, sp.Symbol) and f.name.endswith("_dim") and _leaf_name(f)[:-4] in arrays), None)
            if size is not None:
                rest = [f for f in factors if f is not mean and f is not size]
                return sp.Mul(*rest, REDUCTIONS["rsum"](mean.args[0]))
        return None

    return expr.replace(lambda e: isinstance(e, sp.Mul) and counted(e) is not None, counted)


def _is_outer_reduction(e: sp.Basic) -> bool:
    return isinstance(e, AppliedUndef) and e.func.__name__ in ("rmean", "rsum")


def _strip_once(e: sp.Expr, bounds: frozenset) -> sp.Expr:
    if _is_outer_reduction(e):
        return e.args[0]
    if isinstance(e, sp.Mul):
        reds = [f for f in e.args if _is_outer_reduction(f)]
        if len(reds) == 1:
            red = reds[0]
            rest = []
            for f in e.args:
                if f is red:
                    continue
                if (
                    red.func.__name__ == "rsum"
                    and isinstance(f, sp.Pow)
                    and f.args[1] == -1
                    and isinstance(f.args[0], sp.Symbol)
                    and (f.args[0] in bounds or _BOUND_NAMES.match(f.args[0].name))
                ):
                    continue
                rest.append(f)
            if all(not r.free_symbols or not _has_reduction(r) for r in rest):
                return sp.Mul(*rest, red.args[0])
        elif not reds and any(isinstance(f, sp.Add) and any(_has_outer(t) for t in f.args) for f in e.args):
            # (1/(n+1)) (Σ_i l_i + B): distributed, so its terms strip as the code's `Σ/(n+1) + B/(n+1)` do
            return sp.expand(e, deep=False, power_base=False, power_exp=False, multinomial=False, log=False)
    if isinstance(e, sp.Add):
        terms = [_strip_once(t, bounds) if _has_outer(t) else t for t in e.args]
        return sp.Add(*terms)
    return e


def _has_outer(t: sp.Expr) -> bool:
    return _is_outer_reduction(t) or (isinstance(t, sp.Mul) and any(_is_outer_reduction(f) for f in t.args))


def _has_reduction(e: sp.Basic) -> bool:
    return any(isinstance(n, AppliedUndef) and n.func.__name__ in REDUCTIONS for n in sp.preorder_traversal(e))


# ============================================================================== integrals
# A formula whose means came from integrals over the domain (`integral: [dx]`): the code discretises each
# integral as a sum times the cell size (`.sum() * dx`, `* dx * dt`, `L / N * sum`), a mean, or a quadrature
# call (`torch.trapz`, `np.trapezoid`, `scipy.integrate.simpson`); all are the same measure of the integrand.
INTEGRATORS = frozenset({"trapz", "trapezoid", "simpson", "simps"})
CELL = sp.Function("cell")  # the spacing a quadrature call was given (its `dx`, or its grid `x`)
_SPACING_NAMES = re.compile(
    r"^(?:d[xyzst]|d[va]|dvol|h|h[xyzt]|delta_?[xyzt]|cell_(?:size|area|volume)|grid_spacing|spacing|mesh_size)$", re.I
)
_DOMAIN_NAMES = re.compile(r"^(?:L|L[xyzt]|T|length|domain_length|domain_size|t_final|t_end|T_final|T_end|horizon)$")
_COUNT_NAMES = re.compile(r"^(?:n[xyzt]?|num_\w+|n_\w+|\w+_size|resolution|n_?steps|n_?points|n_?grid)$", re.I)


def is_spacing_name(name: str) -> bool:
    """``dx``, ``dt``, ``h``, ``delta_x``, ``cell_area``: a grid's cell size."""
    return bool(_SPACING_NAMES.match(name.removeprefix("self_")))


def _leaf_name(s: sp.Symbol) -> str:
    return re.split(r"[.]", s.name)[-1].removeprefix("self_")


def as_integrals(
    expr: sp.Expr, single: bool, paper_names: frozenset = frozenset(), spacings: frozenset = frozenset()
) -> sp.Expr:
    """The code value with each integral's measure taken off its sum (`dx * rsum(y)` -> `rsum(y)`), so that
    stripping reductions leaves the integrand as it does for the paper. ``single``: the paper's integrals
    share one differential, so every summed term must carry the same measure; when they do not (one term
    has `dx`, another none) the value is returned unchanged and compared as it is. A factor named like a
    paper symbol is never a measure. ``spacings``: numbers the function's own cell-size variables hold
    (``dx = 1.0 / 64`` is inlined as 1/64); such a number is a measure when it divides every summed term's
    coefficient into a plain one (``0.5 * dx`` -> 1/2)."""
    if not isinstance(expr, sp.Expr) or not _has_reduction_or_integrator(expr):
        return expr
    terms_in = _distributed(_quadratures(expr))
    options = []
    for order, value in enumerate([None, *_spacing_values(spacings)]):
        terms, measures, plainness = [], set(), 0
        for term in terms_in:
            out, measure = _measured_term(term, paper_names, value)
            terms.append(out)
            if measure is not None:
                measures.add(measure)
                coefficient = sp.Mul(*[f for f in sp.Mul.make_args(out) if f.is_Number])
                plainness += abs(coefficient.p) + coefficient.q if coefficient.is_Rational else 10**6
        if measures and not (single and len(measures) > 1) and (value is None or all(str(value) in m for m in measures)):
            options.append((plainness, order, terms))
    if not options:
        return expr
    return sp.Add(*min(options, key=lambda o: o[:2])[2])  # the reading whose coefficients are plainest


def _spacing_values(spacings: frozenset) -> list[sp.Number]:
    """The cell sizes one or two spacing variables make (dx, dx * dt, dx ** 2), largest first."""
    base = sorted({sp.nsimplify(v) for v in spacings if v.is_Number and v.is_positive and v != 1}, key=lambda v: (-v, str(v)))
    products = {a * b for a, b in itertools.combinations_with_replacement(base, 2)}
    return base + sorted(products - set(base), key=lambda v: (-v, str(v)))


def _plain(c: sp.Expr) -> bool:
    """A coefficient a formula writes (1/2, 2, 0.1), not a cell size still inside it."""
    return c.is_Rational and c != 0 and abs(c.q) <= 10 and abs(c.p) <= 100


def _has_reduction_or_integrator(e: sp.Basic) -> bool:
    return any(
        isinstance(n, AppliedUndef) and (n.func.__name__ in REDUCTIONS or n.func.__name__ in INTEGRATORS)
        for n in sp.preorder_traversal(e)
    )


def _quadratures(e: sp.Expr) -> sp.Expr:
    """``trapz(y, dx)`` -> ``cell(dx) * rsum(y)``; an integer argument is the axis (``dim=-1``), not a spacing."""

    def rewrite(node):
        y, *rest = node.args
        spacing = [a for a in rest if not a.is_Integer]
        return sp.Mul(*[CELL(a) for a in spacing], REDUCTIONS["rsum"](_quadratures(y)))

    return e.replace(lambda n: isinstance(n, AppliedUndef) and n.func.__name__ in INTEGRATORS and n.args, rewrite)


def _distributed(e: sp.Expr) -> list[sp.Expr]:
    """The additive terms, with a factor multiplying a bracket of summed terms (``(Σa + αΣb) * dx``) carried
    into the bracket: the same value, term by term."""
    out = []
    for term in sp.Add.make_args(e):
        factors = sp.Mul.make_args(term)
        brackets = [f for f in factors if isinstance(f, sp.Add) and _has_reduction(f)]
        if len(brackets) != 1:
            out.append(term)
            continue
        others = [f for f in factors if f is not brackets[0]]
        out.extend(sp.Mul(*others, sub) for sub in _distributed(brackets[0]))
    return out


def _measured_term(term: sp.Expr, paper_names: frozenset, value: sp.Number | None = None) -> tuple[sp.Expr, tuple | None]:
    """A term with one outer sum or mean: (the term without its cell-size factors, the measure they make)."""
    factors = sp.Mul.make_args(term)
    reds = [f for f in factors if _is_outer_reduction(f)]
    if len(reds) != 1:
        return term, None
    red = reds[0]
    inner, inner_measure = _measured_term(red.args[0], paper_names)
    if inner_measure is None:
        inner, inner_measure = red.args[0], ()
        if red.func.__name__ == "rsum":  # (dx * err ** 2).sum(): the cell size inside the sum
            inside = sp.Mul.make_args(inner)
            cells = [f for f in inside if _is_spacing(f, paper_names)]
            if cells and len(cells) < len(inside):
                inner = sp.Mul(*[f for f in inside if all(f is not c for c in cells)])
                inner_measure = tuple(str(c) for c in cells)
    rest = [f for f in factors if f is not red]
    numeric = sp.Mul(*[f for f in rest if f.is_Number])
    if value is not None and red.func.__name__ == "rsum" and _plain(sp.nsimplify(numeric) / value):
        rest = [f for f in rest if not f.is_Number] + [sp.nsimplify(numeric) / value]
        inner_measure = inner_measure + (str(value),)
    spacing = [f for f in rest if _is_spacing(f, paper_names)]
    counts = [f for f in rest if _is_inverse_count(f, paper_names)]
    domains = [f for f in rest if isinstance(f, sp.Symbol) and f.name not in paper_names and _DOMAIN_NAMES.match(_leaf_name(f))]
    taken: list[sp.Expr] = list(spacing)
    if red.func.__name__ == "rsum" and domains and counts:  # L / N * Σ: the cell size of a uniform grid
        taken += domains[:1] + counts[:1]
    elif red.func.__name__ == "rmean" and domains and not counts:  # |Ω| * mean
        taken += domains[:1]
    elif red.func.__name__ == "rsum" and counts and not spacing:  # 1/N * Σ: a mean
        rest.remove(counts[0])
        return sp.Mul(*rest, REDUCTIONS["rmean"](inner)), tuple(sorted(("mean",) + inner_measure))
    if red.func.__name__ == "rmean" and spacing:
        return term, None  # a mean times a cell size is no integral
    kept = [f for f in rest if all(f is not t for t in taken)]
    measure = tuple(sorted(str(f) for f in taken)) or (("mean",) if red.func.__name__ == "rmean" else ("unit",))
    return sp.Mul(*kept, red.func(inner)), tuple(sorted(measure + inner_measure))


def _is_spacing(f: sp.Expr, paper_names: frozenset) -> bool:
    if isinstance(f, AppliedUndef) and f.func is CELL:
        return True
    base = f.args[0] if isinstance(f, sp.Pow) and f.args[1].is_Integer and f.args[1] > 0 else f
    return isinstance(base, sp.Symbol) and base.name not in paper_names and bool(_SPACING_NAMES.match(_leaf_name(base)))


def _is_inverse_count(f: sp.Expr, paper_names: frozenset) -> bool:
    return (
        isinstance(f, sp.Pow) and f.args[1] == -1 and isinstance(f.args[0], sp.Symbol)
        and f.args[0].name not in paper_names and bool(_COUNT_NAMES.match(_leaf_name(f.args[0])) or _BOUND_NAMES.match(f.args[0].name))
    )


# ============================================================================== symbol names
_FILLER = {"t", "i", "j", "k", "tm1", "tp1", "n", "the", "of", "self", "data", "batch", "hat", "tilde"}


@dataclass(frozen=True)
class _Canon:
    tokens: frozenset
    whole: str


def _synonym_index() -> dict[str, str]:
    index: dict[str, str] = {}
    for group in api_table().synonyms:
        head = group[0]
        for word in group:
            index.setdefault(word, head)
    return index


_SYN: dict[str, str] | None = None


@functools.lru_cache(maxsize=1 << 16)
def canonical(name: str) -> _Canon:
    """A name's meaning tokens (``lr`` and ``learning_rate`` share one); pure, so cached: a formula check
    scores every candidate function's names against the claim's words, and a spec holds dozens of formulas."""
    global _SYN
    if _SYN is None:
        _SYN = _synonym_index()
    raw = re.sub(r"__\d+$", "", name)
    raw = raw.replace("self.", "").replace("['", "_").replace("']", "").replace('["', "_").replace('"]', "")
    raw = re.sub(r"([a-z])([A-Z])", r"\1_\2", raw).lower()
    parts = [p for p in re.split(r"[^a-z0-9]+", raw) if p]
    whole = "_".join(parts)
    if whole in _SYN:
        return _Canon(frozenset({_SYN[whole]}), _SYN[whole])
    tokens: set[str] = set()
    i = 0
    while i < len(parts):
        for span in (3, 2, 1):
            chunk = parts[i : i + span]
            if len(chunk) < span or (span == 1 and chunk[0] in _FILLER):
                continue
            joined = "_".join(chunk)
            glued = "".join(chunk)
            if joined in _SYN or glued in _SYN:
                tokens.add(_SYN.get(joined) or _SYN[glued])
                i += span
                break
        else:
            tok = parts[i]
            m = re.fullmatch(r"([a-z]+)(\d+)", tok)
            if m and m.group(1) in _SYN:
                tokens.add(_SYN[m.group(1)])
                tokens.add(m.group(2))
            else:
                tokens.add(tok)
            i += 1
    meaningful = {t for t in tokens if t not in _FILLER}
    return _Canon(frozenset(meaningful or tokens), whole)


def similarity(paper: str, code: str) -> float:
    if paper == code:
        return 1.0
    a, b = canonical(paper), canonical(code)
    if a.whole == b.whole:
        return 1.0
    if not a.tokens or not b.tokens:
        return 0.0
    if a.tokens == b.tokens:
        return 0.95
    inter = len(a.tokens & b.tokens)
    return inter / len(a.tokens | b.tokens)


# ============================================================================== matching
@dataclass
class MatchResult:
    decision: Decision
    mapping: dict[str, str]  # paper symbol -> code name / expression text
    how: dict[str, str]  # paper symbol -> spec | name | identity | search
    name_inconsistent: list[str] = field(default_factory=list)
    mapped: sp.Expr | None = None
    tried: int = 0
    paper: sp.Expr | None = None
    subs: dict | None = None

    @property
    def paper_expr(self) -> sp.Expr | None:
        """The paper formula with the mapping applied (built on first use: Min/Max rebuilds are slow)."""
        if self.mapped is None and self.paper is not None:
            self.mapped = self.paper.xreplace(self.subs or {})
        return self.mapped


@dataclass(frozen=True)
class Target:
    name: str  # code name as shown to the user
    expr: sp.Expr


def match(
    paper: sp.Expr,
    code: sp.Expr,
    targets: list[Target],
    fixed: dict[sp.Symbol, Target],
    *,
    positive: set[str] = frozenset(),
    sign: str = "exact",
    timeout: float = 5.0,
    proof_budget: float = 1.0,
    budget: int = MAX_ASSIGNMENTS,
    scope_names: tuple[str, ...] = (),
    matrices: frozenset | None = None,
    inputs: frozenset = frozenset(),
) -> MatchResult:
    """Map paper symbols to code values (spec first, then names, then a bounded numeric search) and decide.

    Bounded by size (unmapped symbols, expression nodes) and by ``timeout`` for the whole search."""
    started = time.perf_counter()
    mapping: dict[sp.Symbol, Target] = dict(fixed)
    how = {s.name: "spec" for s in fixed}
    code_leaves = {s.name: s for s in code.free_symbols}
    for s in sorted(paper.free_symbols, key=lambda x: x.name):
        if s not in mapping and s.name in code_leaves:
            mapping[s] = Target(s.name, code_leaves[s.name])
            how[s.name] = "identity"
    rest = sorted((s for s in paper.free_symbols if s not in mapping), key=lambda x: x.name)
    too_large = ""
    if len(rest) > MAX_UNMAPPED:
        too_large = f"formula too large: {len(rest)} unmapped symbols (limit {MAX_UNMAPPED})"
    elif expr_nodes(paper, MAX_EVAL_NODES) >= MAX_EVAL_NODES or expr_nodes(code, MAX_EVAL_NODES) >= MAX_EVAL_NODES:
        too_large = f"expression too large: {MAX_EVAL_NODES} nodes or more"
    if too_large:
        decision = Decision("undecided", time.perf_counter() - started, reason=too_large, limit=too_large)
        return MatchResult(decision, _show(mapping), how, [], None, 0, paper, {s: t.expr for s, t in mapping.items()})
    used = {t.name for t in mapping.values()}
    pool = [t for t in targets if t.name not in used]
    choices: list[list[tuple[float, Target]]] = []
    width = 4 if len(rest) <= 4 else (3 if len(rest) <= 6 else 2)
    logged = set().union(*(n.args[0].free_symbols for n in sp.preorder_traversal(paper) if isinstance(n, sp.log)))
    for s in rest:
        ranked = sorted(((_target_similarity(s, t, s in logged), t) for t in pool), key=lambda x: (-x[0], x[1].name))
        choices.append(ranked[: width + 2] if ranked and ranked[0][0] < 0.3 else ranked[:width])
    assignments = _ranked_assignments(choices, budget)
    best_names = assignments[0] if assignments else ()
    tried = 0
    first_fail: tuple[Decision, dict] | None = None
    pos_syms = {s for s in code.free_symbols if s.name in positive}
    code_syms = code.free_symbols
    for assignment in assignments or [()]:
        spent = time.perf_counter() - started
        if spent >= timeout:
            why = f"undecided: the symbol search hit the {timeout:.1f} s time limit"
            return MatchResult(Decision("undecided", spent, reason=why, limit=why), _show(mapping), how, [], None, tried)
        full = dict(mapping)
        for s, (_, t) in zip(rest, assignment):
            full[s] = t
        covered = set().union(*(t.expr.free_symbols for t in full.values())) if full else set()
        covered |= {s for s in paper.free_symbols if s not in full}
        if covered != code_syms and assignment != best_names:
            continue  # cannot be equal unless symbols cancel: not worth a screen
        subs = {s: t.expr for s, t in full.items()}
        if covered != code_syms:
            decision = Decision("not-equivalent", reason="the mapped formula and the code use different values")
            sample = screen(paper, code, positive=pos_syms, sign=sign, subs=subs, confirm=False, matrices=matrices, inputs=inputs)
            if sample.kind == "not-equivalent":
                decision = sample
            if first_fail is None:
                first_fail = (decision, full)
            tried += 1
            continue
        tried += 1
        quick = screen(paper, code, positive=pos_syms, sign=sign, samples=QUICK_SAMPLES, subs=subs, confirm=False, matrices=matrices, inputs=inputs)
        if quick.kind == "not-equivalent":
            if first_fail is None:
                first_fail = (quick, full)
            continue
        decision = decide(
            paper, code, positive=positive, sign=sign, timeout=max(timeout - spent, 0.05),
            proof_budget=proof_budget, subs=subs, matrices=matrices, inputs=inputs,
        )
        if decision.kind == "not-equivalent":
            if first_fail is None:
                first_fail = (decision, full)
            continue
        inconsistent = _inconsistent(rest, assignment, choices, scope_names)
        hows = dict(how)
        for s, (score, _) in zip(rest, assignment):
            hows[s.name] = "name" if assignment == best_names and score >= 0.3 else "search"
        return MatchResult(decision, _show(full), hows, inconsistent, None, tried, paper, subs)
    if first_fail is None and not assignments and rest:
        return MatchResult(Decision("undecided", reason="nothing to compare"), _show(mapping), how, [], None, tried)
    decision = first_fail[0] if first_fail is not None else Decision("undecided", reason="no mapping covers the code")
    # report the mismatch under the name-best mapping (what a reader expects), with its counterexample
    full = dict(mapping)
    for s, (_, t) in zip(rest, best_names):
        full[s] = t
    subs = {s: t.expr for s, t in full.items()}
    named = screen(paper, code, positive=pos_syms, sign=sign, subs=subs, matrices=matrices, inputs=inputs)
    if named.kind == "not-equivalent":
        decision = named
    hows = dict(how)
    for s, (score, _) in zip(rest, best_names):
        hows[s.name] = "name" if score >= 0.3 else "search"
    for s in rest:
        hows.setdefault(s.name, "unmapped")
    return MatchResult(decision, _show(full), hows, [], None, tried, paper, subs)


def _target_similarity(s: sp.Symbol, t: Target, logged: bool) -> float:
    """Name similarity; a paper probability under a log prefers exp(code log-prob) and vice versa."""
    if t.name.startswith("exp(") and t.name.endswith(")"):
        base = similarity(s.name, t.name[4:-1])
        return base + 0.1 if logged else base - 0.1
    return similarity(s.name, t.name)


def _show(mapping: dict[sp.Symbol, Target]) -> dict[str, str]:
    return {s.name: t.name for s, t in sorted(mapping.items(), key=lambda kv: kv[0].name)}


def _ranked_assignments(choices: list[list[tuple[float, Target]]], budget: int) -> list[tuple]:
    if not choices:
        return []
    if any(not c for c in choices):
        return []
    combos = []
    for combo in itertools.islice(itertools.product(*choices), 20000):
        names = [t.name for _, t in combo]
        if len(set(names)) != len(names):
            continue
        combos.append(combo)
    combos.sort(key=lambda c: (-sum(score for score, _ in c), [t.name for _, t in c]))
    return combos[:budget]


def _application_head(name: str) -> str:
    """``D__x_hat`` (the paper's D(x̂), one opaque quantity) -> ``D``; any other name as it is (``x__2`` is a version)."""
    m = re.match(r"^([A-Za-z]\w*?)__(?!\d+$)\w", name)
    return m.group(1) if m else name


def _inconsistent(rest: list[sp.Symbol], assignment: tuple, choices: list, scope_names=()) -> list[str]:
    """Mapped symbols whose name fits another value of the function clearly better (m -> exp_avg_sq while
    exp_avg exists): an equivalence found that way can hide a real bug."""
    out = []
    chosen = {target.name for _, target in assignment}
    for s, (score, target), ranked in zip(rest, assignment, choices):
        head = _application_head(s.name)
        if head != s.name:  # `L__theta` is L applied to θ: its arguments say nothing of what L's code name is
            score = similarity(head, target.name)
            ranked = [(similarity(head, t.name), t) for _, t in ranked]
        options = [(sc, t.name) for sc, t in ranked] + [(similarity(head, n), n) for n in scope_names]
        options = [(sc, n) for sc, n in options if n != target.name and n not in chosen]
        if not options:
            continue
        best_score, best = max(options, key=lambda o: (o[0], o[1]))
        if best_score >= 0.5 and best_score > score + 0.2:
            out.append(f"{s.name}->{target.name} although {best} matches the name")
    return sorted(out)
