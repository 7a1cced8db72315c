"""The SymPy vocabulary code and paper formulas share: real symbols, opaque reductions, the power bound.

Below the compiler and the analyses alike, so the claim compiler can read a paper formula with the very
parser the formula check uses, without importing the repository analyses.
"""

from __future__ import annotations

from typing import Any

import sympy as sp

MAX_EXPONENT = 1000  # |numeric exponent| SymPy may evaluate
MAX_POWER_BITS = 40_000  # an exact numeric power stays below ~12,000 digits

# Opaque reductions and label picking: dims are ignored, tensors are compared elementwise.
RMEAN = sp.Function("rmean")
RSUM = sp.Function("rsum")
RMAX = sp.Function("rmax")
RMIN = sp.Function("rmin")
RVAR1 = sp.Function("rvar1")  # unbiased (Bessel-corrected) variance
RPROD = sp.Function("rprod")  # a product over the entries (Π_i p_i, np.prod)
PICK = sp.Function("pick")
REDUCTIONS = {"rmean": RMEAN, "rsum": RSUM, "rmax": RMAX, "rmin": RMIN, "rvar1": RVAR1, "rprod": RPROD}

# Matrix algebra: `*` stays the elementwise (Hadamard, commutative) product of tensors, so the matrix
# product is its own ordered operator and the transpose its own function; equivalence.py evaluates them on
# random matrices and normalises them (transposes pushed to the leaves, products distributed) for proofs.
MATMUL = sp.Function("matmul")
TRANSPOSE = sp.Function("transpose")
# The matrix inverse is evaluated like an opaque function (elementwise on the random matrices): it tells
# inv(A Aᵀ) from inv(Aᵀ A) but proves no identity such as inv(A B) = inv(B) inv(A).
INV = sp.Function("inv")
MATRIX_OPS = {"matmul": MATMUL, "transpose": TRANSPOSE, "inv": INV}


def is_matrix_op(expr: Any) -> bool:
    return isinstance(expr, sp.Basic) and getattr(expr, "func", None) in (MATMUL, TRANSPOSE, INV)


def has_matrix_ops(expr: sp.Basic) -> bool:
    """A matrix product, transpose or inverse anywhere in ``expr``."""
    return any(is_matrix_op(n) for n in sp.preorder_traversal(expr))


def matmul(*factors: sp.Expr) -> sp.Expr:
    """The ordered product, nested products flattened (matmul is associative); one factor is itself."""
    flat: list[sp.Expr] = []
    for f in factors:
        flat.extend(f.args if isinstance(f, sp.Basic) and f.func is MATMUL else (f,))
    return flat[0] if len(flat) == 1 else MATMUL(*flat)


def transpose(x: sp.Expr) -> sp.Expr:
    """x^T; numbers are their own transpose and (x^T)^T is x."""
    if isinstance(x, sp.Basic) and x.is_Number:
        return x
    if isinstance(x, sp.Basic) and x.func is TRANSPOSE:
        return x.args[0]
    return TRANSPOSE(x)


def sym(name: str) -> sp.Symbol:
    """Every symbol is real: code and paper symbols stand for real tensors and scalars."""
    return sp.Symbol(name, real=True)


def power_too_large(base: Any, exp: Any) -> bool:
    """SymPy evaluates numeric powers eagerly: `10 ** (10 ** 10)` would never return."""
    if not isinstance(exp, sp.Basic) or not exp.is_Number:
        return False
    if abs(exp) > MAX_EXPONENT:
        return True
    if isinstance(base, sp.Basic) and base.is_Rational and exp.is_Integer:
        bits = max(int(base.p).bit_length(), int(base.q).bit_length())
        return bits * abs(int(exp)) > MAX_POWER_BITS
    return False
