"""D1 calibration: how far an actual value is from the claimed one, on SA-Bench's five levels.

    compare(expected, actual, tolerance=None, substitutes=None, *, library_default=False)
        -> (Status, score, reason)

Numbers: equal up to float rounding (or the relative ``tolerance``) = pass; within 3x = 0.75; more than 3x =
0.5; an order of magnitude or more = 0.25; a sign flip, a wrong type or a different boolean = mismatch 0.
A value the code left at a library default that differs from the claim = 0.25 (SA-Bench: "left at a library
default"). Numeric strings ("3e-4") equal numbers. Strings compare case-insensitively without `_ - . space`;
``rules/substitutes.yaml`` says which spellings are the same (1.0) and which are equivalent substitutes such
as Adam for AdamW (0.75). Lists compare element-wise, or as sets when only the order differs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from verifier import rules
from verifier.analysis.fold import parse_number_text
from verifier.results import Status

FLOAT_RTOL = 1e-9
FLOAT_ATOL = 1e-12

Outcome = tuple[Status, float, str]


@dataclass(frozen=True)
class Substitutes:
    """Normalised groups from rules/substitutes.yaml."""

    same: tuple[frozenset[str], ...]
    substitutes: tuple[frozenset[str], ...]

    @classmethod
    def from_data(cls, data: Mapping[str, Any] | None) -> Substitutes:
        data = data or {}

        def groups(key: str) -> tuple[frozenset[str], ...]:
            out = []
            for group in data.get(key) or ():
                if isinstance(group, (list, tuple)):
                    out.append(frozenset(normalise_text(str(g)) for g in group))
            return tuple(out)

        return cls(groups("same"), groups("substitutes"))

    def relation(self, a: str, b: str) -> str | None:
        """"same", "substitute" or None for two normalised names."""
        if a == b:
            return "same"
        if any(a in g and b in g for g in self.same):
            return "same"
        canon_a, canon_b = self._canon(a), self._canon(b)
        if canon_a & canon_b:
            return "same"
        for group in self.substitutes:
            if canon_a & group and canon_b & group:
                return "substitute"
        return None

    def _canon(self, name: str) -> set[str]:
        out = {name}
        for group in self.same:
            if name in group:
                out |= group
        return out


_DEFAULT: Substitutes | None = None


def default_substitutes() -> Substitutes:
    global _DEFAULT
    if _DEFAULT is None:
        try:
            _DEFAULT = Substitutes.from_data(rules.load("substitutes.yaml"))
        except (OSError, ValueError):
            _DEFAULT = Substitutes((), ())
    return _DEFAULT


def normalise_text(text: str) -> str:
    return re.sub(r"[\s_\-\.]+", "", text.strip().lower())


def compare(
    expected: Any,
    actual: Any,
    tolerance: float | None = None,
    substitutes: Substitutes | Mapping[str, Any] | None = None,
    *,
    library_default: bool = False,
) -> Outcome:
    """Grade ``actual`` against ``expected``; the reason is one short phrase for the verdict message."""
    subs = (
        substitutes
        if isinstance(substitutes, Substitutes)
        else (Substitutes.from_data(substitutes) if substitutes is not None else default_substitutes())
    )
    status, score, reason = _compare(expected, actual, tolerance, subs)
    if library_default and status is not Status.pass_:
        return Status.partial, 0.25, f"left at the library default ({reason})"
    return status, score, reason


def _compare(expected: Any, actual: Any, tolerance: float | None, subs: Substitutes) -> Outcome:
    if isinstance(expected, (list, tuple, set, frozenset)) or isinstance(actual, (list, tuple, set, frozenset)):
        return _compare_sequences(expected, actual, tolerance, subs)
    if expected is None or actual is None:
        if expected is None and actual is None:
            return Status.pass_, 1.0, "both None"
        return Status.mismatch, 0.0, f"{fmt(actual)} where {fmt(expected)} is claimed"
    exp_b, act_b = _as_bool(expected), _as_bool(actual)
    if isinstance(expected, bool) or isinstance(actual, bool):
        if exp_b is None or act_b is None:
            return Status.mismatch, 0.0, f"{fmt(actual)} is not a boolean like {fmt(expected)}"
        if exp_b == act_b:
            return Status.pass_, 1.0, "same boolean"
        return Status.mismatch, 0.0, f"{fmt(actual)} where {fmt(expected)} is claimed"
    exp_n, act_n = as_number(expected), as_number(actual)
    if exp_n is not None and act_n is not None:
        status, score, reason = _compare_numbers(exp_n, act_n, tolerance)
        if isinstance(expected, int) and isinstance(actual, (int, str)) and exp_n.is_integer() and act_n.is_integer():
            reason = reason.replace(fmt(act_n), fmt(int(act_n))).replace(fmt(exp_n), fmt(int(exp_n)))
        return status, score, reason
    if exp_n is not None or act_n is not None:
        return Status.mismatch, 0.0, f"{fmt(actual)} is not the same kind of value as {fmt(expected)}"
    return _compare_strings(str(expected), str(actual), subs)


def _compare_numbers(expected: float, actual: float, tolerance: float | None) -> Outcome:
    rtol = max(tolerance or 0.0, FLOAT_RTOL)
    if math.isinf(expected) or math.isinf(actual):
        if expected == actual:
            return Status.pass_, 1.0, "equal"
        return Status.mismatch, 0.0, f"{fmt(actual)} where {fmt(expected)} is claimed"
    if math.isclose(expected, actual, rel_tol=rtol, abs_tol=FLOAT_ATOL):
        return Status.pass_, 1.0, "equal" if not tolerance else f"within the tolerance {tolerance:g}"
    if expected == 0 or actual == 0:
        return Status.partial, 0.25, f"{fmt(actual)} where {fmt(expected)} is claimed (one of them is zero)"
    if (expected < 0) != (actual < 0):
        return Status.mismatch, 0.0, f"{fmt(actual)} has the opposite sign of {fmt(expected)}"
    ratio = max(abs(expected), abs(actual)) / min(abs(expected), abs(actual))
    shown = f"{ratio:.3g}" if ratio < 100 else f"{ratio:,.0f}"
    factor = f"{shown}x {'larger' if abs(actual) > abs(expected) else 'smaller'}"
    if ratio <= 3.0 + 1e-9:
        return Status.partial, 0.75, f"{fmt(actual)} is {factor} than the claimed {fmt(expected)} (within 3x)"
    if ratio < 10.0 - 1e-9:
        return Status.partial, 0.5, f"{fmt(actual)} is {factor} than the claimed {fmt(expected)} (more than 3x)"
    return Status.partial, 0.25, f"{fmt(actual)} is {factor} than the claimed {fmt(expected)} (an order of magnitude)"


def _compare_strings(expected: str, actual: str, subs: Substitutes) -> Outcome:
    a, b = normalise_text(expected), normalise_text(actual)
    relation = subs.relation(a, b)
    if relation is None:
        # `torch.optim.AdamW` vs `AdamW`: compare the last components.
        la, lb = normalise_text(expected.rsplit(".", 1)[-1]), normalise_text(actual.rsplit(".", 1)[-1])
        if (la, lb) != (a, b):
            relation = subs.relation(la, lb)
    if relation == "same":
        return Status.pass_, 1.0, "same name"
    if relation == "substitute":
        return Status.partial, 0.75, f"{fmt(actual)} is an equivalent substitute for {fmt(expected)}"
    return Status.mismatch, 0.0, f"{fmt(actual)} where {fmt(expected)} is claimed"


def _compare_sequences(expected: Any, actual: Any, tolerance: float | None, subs: Substitutes) -> Outcome:
    exp = _as_list(expected)
    act = _as_list(actual)
    if exp is None or act is None:
        return Status.mismatch, 0.0, f"{fmt(actual)} is not a list like {fmt(expected)}"
    if len(exp) == len(act):
        results = [_compare(e, a, tolerance, subs) for e, a in zip(exp, act)]
        worst = min(results, key=lambda r: r[1])
        if worst[1] == 1.0:
            return Status.pass_, 1.0, "equal element-wise"
        if _same_multiset(exp, act, tolerance, subs):
            return Status.pass_, 1.0, "same elements (order differs)"
        if worst[0] is not Status.mismatch:
            return worst[0], worst[1], f"{fmt(actual)} vs claimed {fmt(expected)}: {worst[2]}"
    matched = sum(1 for e in exp if any(_compare(e, a, tolerance, subs)[1] == 1.0 for a in act))
    if matched == len(exp):
        return Status.partial, 0.75, f"{fmt(actual)} contains the claimed {fmt(expected)} and more"
    if matched:
        return Status.partial, 0.5, f"{fmt(actual)} has {matched} of the {len(exp)} claimed elements"
    return Status.mismatch, 0.0, f"{fmt(actual)} where {fmt(expected)} is claimed"


def _same_multiset(exp: list, act: list, tolerance: float | None, subs: Substitutes) -> bool:
    remaining = list(act)
    for e in exp:
        for i, a in enumerate(remaining):
            if _compare(e, a, tolerance, subs)[1] == 1.0:
                del remaining[i]
                break
        else:
            return False
    return True


def _as_list(value: Any) -> list | None:
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if isinstance(value, str):
        parts = [p for p in re.split(r"[,\s]+", value.strip().strip("[]()")) if p]
        return parts if len(parts) > 1 else None
    return None


def as_number(value: Any) -> float | None:
    """A number, or a string that writes one ("3e-4", "inf"); None for a bool or anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if not math.isnan(value) else None
    if isinstance(value, str):
        parsed = parse_number_text(value)
        if isinstance(parsed, (int, float)) and not isinstance(parsed, bool):
            return float(parsed)
        low = value.strip().lower()
        if low in ("inf", "+inf", "infinity", "-inf", "-infinity"):
            return float(low.replace("infinity", "inf"))
    return None


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        parsed = parse_number_text(value)
        if isinstance(parsed, bool):
            return parsed
    return None


def fmt(value: Any) -> str:
    """A value the way a paper writes it: 0.0003 -> 3e-4, 1000000 -> 1000000, (0.9, 0.999) -> (0.9, 0.999)."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        if value == 0:
            return "0.0"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if abs(value) < 1e-3 or abs(value) >= 1e7:
            mantissa, _, exponent = f"{value:.6e}".partition("e")
            mantissa = mantissa.rstrip("0").rstrip(".")
            return f"{mantissa}e{int(exponent)}"
        text = repr(value)
        return text if len(text) <= 12 else f"{value:.6g}"
    if isinstance(value, tuple):
        inner = ", ".join(fmt(v) for v in value)
        return f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, list):
        return "[" + ", ".join(fmt(v) for v in value) + "]"
    if isinstance(value, str):
        return value if len(value) <= 60 else value[:57] + "..."
    return str(value)
