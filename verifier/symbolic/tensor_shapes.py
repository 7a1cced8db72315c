"""Paper notation of tensor shapes, shared by the claim compiler and the ``shape`` rule: which paper tensor names
the rule can map to code names, and paper dimensions (``4D``, ``D/G``, ``P^2*C``) as SymPy expressions."""

from __future__ import annotations

import re

import sympy

GREEK = frozenset("alpha beta gamma delta epsilon eta theta lambda mu sigma tau phi psi omega".split())
PAPER_NAME = re.compile(r"^\\?(?P<base>[A-Za-z]+)(?:_\{?(?P<sub>[^{}^]*)\}?)?(?:\^\{?(?P<sup>[^{}]*)\}?)?$")


def mappable(paper: str, words: list[str] | None = None) -> bool:
    """Can the rule map this paper name to code names at all? (The compiler asks before it emits a check.)"""
    if words:
        return True
    m = PAPER_NAME.match(paper.strip())
    if not m:
        return False
    base, sub = m.group("base"), (m.group("sub") or "").strip()
    return bool(
        base.lower() in GREEK
        or (re.fullmatch(r"[A-Za-z]{2,}", sub) and base in ("W", "w", "b", "E", "P", "h", "M"))
        or (sub.isdigit() and base in ("W", "w", "b"))
        or (len(base) == 1 and base.isupper() and (not sub or re.fullmatch(r"\d|[a-z]|[a-z][-+]\d", sub)))
    )


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def paper_dim(text: str) -> sympy.Expr | None:
    """``4*D``, ``D/G``, ``12M``, ``P^2*C`` in paper symbols (each symbol prefixed so no code atom collides)."""
    written = str(text).strip().replace("^", "**").replace("·", "*").replace("×", "*")
    written = re.sub(r"(?<=\d)(?=[A-Za-z(])", "*", written)  # 4D -> 4*D
    names = {n: sympy.Symbol(f"paper_{n}", positive=True) for n in _IDENT.findall(written)}
    if not names and not re.fullmatch(r"[\d\s*/+()-]+", written):
        return None
    from verifier.symbolic.latex import literal_size_problem

    if literal_size_problem(written):
        return None  # "2^(2^(2^(2^10)))", "D^(10^12)": SymPy would build the number without end
    try:
        from sympy.parsing.sympy_parser import parse_expr

        return parse_expr(written, local_dict=names, evaluate=True)
    except Exception:  # noqa: BLE001 - an unreadable paper dimension is a spec problem reported as unverified
        return None
