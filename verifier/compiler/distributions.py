"""Distributions written in claims: ``X ~ U(0, 4)``, ``initialised from N(0, 0.02)``, ``Uniform(0,1)``.

A distribution is a code fact of two kinds: the repo samples from it (a ``call`` of the sampling API with
the stated parameters), or, when the text says a tensor is *initialised* from it, an ``init`` check on that
tensor. Spellings and API names are data (rules/claim_terms.yaml ``distributions``). Arguments that are not
plain numbers (``N(0, X^2)``, ``U(a, b)``) are left out: the check then asks only for the API.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from verifier.compiler import numbers, terms


@dataclass(frozen=True)
class Distribution:
    family: str
    call: str
    call_args: dict[str, Any]
    init: str | None
    init_args: dict[str, Any]
    variable: str | None
    start: int
    end: int


@functools.cache
def _families() -> tuple[tuple[str, str, dict], ...]:
    out = []
    for family, entry in (terms.section("distributions").items()):
        if isinstance(entry, dict):
            for spelling in entry.get("spellings") or []:
                out.append((str(spelling), str(family), entry))
    return tuple(sorted(out, key=lambda t: (-len(t[0]), t[0])))


@functools.cache
def _regex() -> re.Pattern:
    names = "|".join(re.escape(s) for s, _, _ in _families())
    return re.compile(
        rf"(?:(?P<var>[A-Za-z][\w{{}}+\-]*)\s*(?:\|\s*\w+\s*)?~\s*)?(?<![\w.])(?P<dist>{names})\s*\((?P<args>[^()]{{0,60}})\)"
    )


_INIT_RE = re.compile(r"\b(?P<what>[A-Za-z][\w\-]*(?:\s+[A-Za-z][\w\-]*){0,2})\s+(?:are\s+|is\s+)?initiali[sz]ed\s+(?:from|with|as|by)\b", re.IGNORECASE)


def find(text: str) -> list[Distribution]:
    """Every distribution with numeric or symbolic parameters in the text, in reading order."""
    if not _families():
        return []
    lookup = {s: (f, e) for s, f, e in _families()}
    out = []
    for match in _regex().finditer(text):
        family, entry = lookup[match.group("dist")]
        if match.group("dist") in ("N", "U", "TN") and ("," not in match.group("args") or re.search(r"[×x]\s*[A-Za-z\d]", match.group("args"))):
            continue  # "U (d×k)": a matrix named U with its shape, not a uniform distribution
        raw = [a.strip() for a in match.group("args").split(",")] if match.group("args").strip() else []
        values = [_arg(a) for a in raw]
        call_names = list(entry.get("call_args") or [])
        init_names = list(entry.get("init_args") or [])
        call_args = {n: v for n, v in zip(call_names, values) if v is not None}
        init_args = {n: v for n, v in zip(init_names, values) if v is not None}
        call = str(entry.get("call") or family)
        standard = entry.get("standard_call")
        if standard and _is_standard(raw, entry.get("standard_args") or []):
            call, call_args = str(standard), {}  # N(0, I) is torch.randn as much as torch.normal(0, 1)
        out.append(
            Distribution(family, call, call_args, entry.get("init"), init_args, match.group("var"), match.start(), match.end())
        )
    return out


def _is_standard(raw: list[str], standard: list[Any]) -> bool:
    """``N(0, 1)``, ``N(0, I)``, ``U(0, 1)``: the parameters of the family's standard form (an identity matrix is 1)."""
    if len(raw) != len(standard):
        return False
    values = [1 if re.fullmatch(r"\s*(?:σ²?\s*=\s*)?(?:I|𝐈|\\mathbf\{I\}|1)\s*", a) else _arg(a) for a in raw]
    return all(v is not None and float(v) == float(w) for v, w in zip(values, standard))


def _arg(text: str) -> Any:
    """A parameter value: a plain number (``0.02``, ``μ=0`` -> 0); None for symbols and expressions."""
    text = text.split("=", 1)[1] if "=" in text else text
    value = numbers.parse_number(text)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def initialised(text: str, start: int) -> str | None:
    """The tensor or layer the text says is initialised from the distribution at ``start``, if any."""
    window = text[max(0, start - 80) : start]
    match = None
    for match in _INIT_RE.finditer(window):
        pass
    if match is None:
        return None
    words = [w for w in match.group("what").split() if w.lower() not in ("the", "all", "are", "is", "weights", "weight")]
    return terms.identifier(" ".join(words)).lower() or "weight" if words else "weight"
