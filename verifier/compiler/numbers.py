"""Numbers as papers write them: ``150K``, ``2×10^3``, ``10⁻²``, ``1e-4 to 3e-4``, ``{0.05, 0.1}``, ``10%``.

Papers and SA-Bench claims never write a number the way code does, so a value check is only as good as the
reading of its expectation. Everything here is pure text processing; nothing is evaluated.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SUFFIX = {"k": 1_000, "m": 1_000_000, "b": 1_000_000_000, "g": 1_000_000_000, "t": 1_000_000_000_000}  # T: "3T tokens" only

# One scalar: 1,000 / 3.5e-4 / 2x10^3 / 2×10⁻³ / 2×10-3 / 10^-4 / 150K / 1.2M / 5/3 / 10%; in a slash list
# (512×1024 is a size: an exponent needs ^, **, braces or a minus sign; only a one-digit mantissa takes a bare
# exponent of 1-12, the "5×105" a PDF's lost superscript leaves)
# (8000/1000/1000) a number after a slash is an item, never the numerator of a fraction
_MANTISSA = r"[-+−]?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+(?:\.\d+)?|\.\d+)"
NUMBER_RE = re.compile(
    rf"""
    (?<![\w.^{{])
    (?P<m>{_MANTISSA})
    (?:
        (?P<e>[eE][-+−]?\d+)
      | \s*[x×*·]\s*10\s*(?=\^|\*\*|\{{|[-−]\d)(?:\^|\*\*)?\s*\{{?(?P<p>[-+−]?\d+)\}}?
      | (?<![\d.]\d)(?<=\d)\s*[x×]\s*10(?P<bare>[1-9]|1[0-2])(?![\d.])
      | \s*[x×*·]\s*10(?P<sp>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)
      | (?<!/\d)(?<!/\d\d)(?<!/\d{{3}})(?<!/\d{{4}})(?<!/\d{{5}})(?<!/\d{{6}})(?P<frac>/\d+(?:\.\d+)?)(?![\w/])
    )?
    (?P<suf>[kKMB](?![a-zA-Z])|T(?=\s+(?:training\s+|pre-?training\s+)?tokens\b))?
    (?P<pct>\s?%)?
    """,
    re.VERBOSE,
)
_SCHEDULE_MULTIPLE = re.compile(r"\s*[x×]\s+(?:training\s+)?schedules?\b", re.IGNORECASE)
_TIMES_A_SYMBOL = re.compile(r"\s*[/*]\s*(?:sqrt\b|√|\\sqrt|\\frac|\((?!\s*\d+(?:\.\d+)?\s*\))|[A-Za-zα-ωΑ-Ω](?:_|(?![A-Za-z0-9])))")
_POW10_RE = re.compile(r"(?<![\w.])10\s*(?:\^|\*\*)\s*\{?(?P<p>[-+−]?\d+)\}?|(?<![\w.])10(?P<sp>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)")


@dataclass(frozen=True)
class Quantity:
    """A number read from text, with where it was and what unit followed it."""

    value: int | float
    raw: str
    start: int
    end: int
    percent: bool = False
    unit: str = ""


def _clean(text: str) -> str:
    return text.replace("−", "-").replace("–", "-").replace(",", "")


def to_number(value: float) -> int | float:
    """Integral floats become ints so ``1e3`` and ``1000`` compare and print the same."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    return value


def _exact(mantissa: str, power: int = 0, factor: int = 1, divisor: str | None = None, percent: bool = False):
    if abs(power) > 300 or len(mantissa) > 40:
        return None  # no hyperparameter is that large or small; OCR noise must not cost seconds
    num = Fraction(mantissa) * factor
    num *= Fraction(10) ** power
    if divisor:
        den = Fraction(divisor)
        if den == 0:
            return None
        num /= den
    if percent:
        num /= 100
    if num.denominator == 1:
        return int(num)
    return float(num)


def _from_match(match: re.Match) -> int | float | None:
    mantissa = _clean(match.group("m"))
    power = 0
    if match.group("e"):
        power = int(_clean(match.group("e")[1:]))
    elif match.group("p"):
        power = int(_clean(match.group("p")))
    elif match.group("sp"):
        power = int(match.group("sp").translate(_SUPERSCRIPTS))
    elif match.group("bare"):
        power = int(match.group("bare"))
    factor = _SUFFIX[match.group("suf").lower()] if match.group("suf") else 1
    divisor = match.group("frac")[1:] if match.group("frac") else None
    try:
        return _exact(mantissa, power, factor, divisor, bool(match.group("pct")))
    except (ValueError, ZeroDivisionError, OverflowError):
        return None


_UNIT_RE = re.compile(r"\s*(?P<unit>[A-Za-z][A-Za-z_\-]*)")


_STEP_LABEL_RE = re.compile(r"[A-JL-Z](?![A-Za-z0-9])")  # "2A" (not 2K, 2M, 2B: thousands, millions, billions)
_LABEL_LIST_RE = re.compile(r"(?<![\w.])\d+[A-Z](?:\s*,\s*(?:and\s+|or\s+)?\d+[A-Z])+(?![\w.])")  # "2A, 2B, 2C"
# "8M weight matrices", "4K attention heads": parts of a network are never counted in thousands or millions, so the
# letter is a symbol the count multiplies (12 x M matrices), not a magnitude
_STRUCTURE_AFTER = re.compile(
    r"\s+(?:weight\s+|projection\s+|attention\s+|transformer\s+)?(?:matri(?:x|ces)|layers?|heads?|blocks?|modules?|"
    r"experts?|kernels?|filters?|stages?)\b", re.IGNORECASE)


_GREEK_COMMANDS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "eta": "η",
    "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "rho": "ρ", "sigma": "σ", "tau": "τ",
    "phi": "φ", "omega": "ω", "Gamma": "Γ", "Lambda": "Λ",
}
_LATEX_POWER = r"10\s*\^\s*\{?\s*(?P<exp>[-−]?\s*\d+)\s*\}?"
_LATEX_SCIENTIFIC = re.compile(rf"(?P<m>\d+(?:\.\d+)?)\s*(?:\\times|\\cdot|×|·)\s*{_LATEX_POWER}")
_LATEX_BARE_POWER = re.compile(rf"(?<![\w.^]){_LATEX_POWER}(?![\w.])")
_ASSIGNED_POWER = re.compile(rf"(?P<lead>(?:=|\bof|\bat|\bto)\s*){_LATEX_POWER}(?![\w.^])")
_ASSIGNED_GREEK = re.compile(r"\\([A-Za-z]+)(?=\s*=\s*[-+−]?\d)")
_LATEX_THOUSANDS = re.compile(r"(?<=\d)\{,\}(?=\d{3})")
_LATEX_TIMES = re.compile(r"(?<=\d)\s*\\times\s*(?=\d)")
# a math span that only writes a value, or one symbol's value: "$10^{-5}$", "$224\times224$", "$\eta = 3\times10^{-4}$"
_VALUE_MATH = re.compile(
    r"\$(?P<body>\s*(?:(?:\\[A-Za-z]+|[A-Za-z])(?:_(?:\{(?:\\(?:mathrm|text|rm|mathit|operatorname)\{\w+\}|\\?\w+)\}|\w+))?\s*=\s*)?[-−]?(?:10\s*\^\s*\{?\s*[-−]?\s*\d+\s*\}?|"
    r"[\d.]+(?:\s*(?:\\times|\\cdot|\{,\})\s*[\d.]+)*(?:\s*(?:\\times|\\cdot)\s*10\s*\^\s*\{?\s*[-−]?\s*\d+\s*\}?)?)"
    r"\s*(?:\\mathrm\{[kKMB]\}|\\text\{[kKMB]\}|[kKMB])?\s*(?:\\%|%)?\s*)\$"
)


def plain_latex_numbers(text: str) -> str:
    r"""Values written in LaTeX read as the plain text papers also write: "$5\times10^{-3}$" -> "5e-3",
    "$10^{-5}$" -> "1e-5", "$224\times224$" -> "224×224", "$2{,}048$" -> "2048", "$\eta = 3\times10^{-4}$" ->
    "η = 3e-4". A formula's math span (operators, fractions, functions) is left as it is written."""
    def plain(body: str) -> str:
        body = _LATEX_SCIENTIFIC.sub(_scientific, body)
        body = _LATEX_BARE_POWER.sub(lambda m: f"1e{_exponent(m)}", body)
        body = _LATEX_THOUSANDS.sub("", body)
        body = _LATEX_TIMES.sub("×", body)
        body = re.sub(r"\\%", "%", body)
        body = re.sub(r"\\(?:mathrm|text)\{([kKMB])\}", r"\1", body)
        body = re.sub(r"\\(?:mathrm|text|rm|mathit|operatorname)\{(\w+)\}", r"\1", body)  # λ_{\mathrm{gp}}: λ_{gp}
        body = re.sub(r"(?<=[A-Za-z\\]|[α-ω])_\{\\?(\w+)\}(?=\s*=)", r"_\1", body)  # p_{uncond}, σ_{\max}: p_uncond, σ_max
        return re.sub(r"\\([A-Za-z]+)", lambda m: _GREEK_COMMANDS.get(m.group(1), m.group(0)), body).strip()

    text = _VALUE_MATH.sub(lambda m: plain(m.group("body")), text)
    # outside math spans, the unambiguous forms only: "5 \times 10^{-4}", "2{,}048", "224\times224", a power of ten
    # set as a value ("\epsilon = 10^{-4}"), and a Greek command that is given one ("\beta = 1000": β)
    text = _LATEX_SCIENTIFIC.sub(_scientific, text)
    text = _ASSIGNED_POWER.sub(lambda m: f"{m.group('lead')}1e{_exponent(m)}", text)
    text = _ASSIGNED_GREEK.sub(lambda m: _GREEK_COMMANDS.get(m.group(1), m.group(0)), text)
    return _LATEX_TIMES.sub("×", _LATEX_THOUSANDS.sub("", text))


def _exponent(match: re.Match) -> str:
    return match.group("exp").replace(" ", "").replace("−", "-")


def _scientific(match: re.Match) -> str:
    return f"{match.group('m')}e{_exponent(match)}"


def times_a_symbol(text: str) -> bool:
    """A number in ``text`` is a factor of an expression in symbols ("1/sqrt(d_k)", "4*d")."""
    return any(_TIMES_A_SYMBOL.match(text, m.end()) for m in NUMBER_RE.finditer(text))


def find_numbers(text: str) -> list[Quantity]:
    """Every number in ``text`` in reading order, with its unit word (``150K steps`` -> unit ``steps``)."""
    out: list[Quantity] = []
    taken: list[tuple[int, int]] = []
    powers = [(m.start(), m.end()) for m in _POW10_RE.finditer(text)]
    labels = [(m.start(), m.end()) for m in _LABEL_LIST_RE.finditer(text)
              if set(re.findall(r"\d([A-Z])", m.group(0))) - set("KMBT")]  # "7B, 13B and 70B" are sizes
    for match in NUMBER_RE.finditer(text):
        if any(a < match.start() < b for a, b in powers):
            continue  # the exponent of a bare power of ten
        if _STEP_LABEL_RE.match(text, match.end()) or any(a <= match.start() < b for a, b in labels):
            continue  # "Steps 2A, 2B, 2C", "Figure 3a": a numbered item's label, not a quantity
        if match.group("suf") and match.group("suf") in "KMB" and not match.group("e") and "." not in match.group("m") \
                and _STRUCTURE_AFTER.match(text, match.end()):
            continue  # "8M weight matrices": 8 times a symbol M, not eight million
        if _SCHEDULE_MULTIPLE.match(text, match.end()):
            continue  # "a 1× schedule of 90K iterations": the schedule's name, its length is the number after it
        if _TIMES_A_SYMBOL.match(text, match.end()):
            continue  # "1/sqrt(d_k)", "4*d", "1/(2σ²)": a factor of an expression in symbols, not a value
        value = _from_match(match)
        if value is None:
            continue
        if match.group("m") == "10" and not match.group("e") and text[match.end() : match.end() + 1] in tuple("^⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹"):
            continue  # a bare power of ten, read below
        unit_match = _UNIT_RE.match(text, match.end())
        unit = unit_match.group("unit").lower() if unit_match else ""
        out.append(
            Quantity(value, match.group(0).strip(), match.start(), match.end(), bool(match.group("pct")), unit)
        )
        taken.append((match.start(), match.end()))
    for match in _POW10_RE.finditer(text):
        if any(a <= match.start() < b for a, b in taken):
            continue
        power = match.group("p") or match.group("sp").translate(_SUPERSCRIPTS)
        try:
            value = _exact("1", int(_clean(power)))
        except ValueError:
            continue
        out.append(Quantity(value, match.group(0), match.start(), match.end()))
    out.sort(key=lambda q: q.start)
    return out


_PI_RE = re.compile(r"^(?P<k>[-+−]?(?:\d+(?:\.\d+)?)?)\s*\*?\s*(?:pi|π)$", re.IGNORECASE)


def parse_number(text: str) -> int | float | None:
    """The number ``text`` is, as a whole (``"150K"`` -> 150000, ``"10⁻⁴"`` -> 0.0001, ``"5pi"`` -> 15.70796...),
    else None. Multiples of pi are domain bounds of PDE claims ("t in [0, pi]"); code writes them ``5 * np.pi``."""
    stripped = text.strip().strip("~≈").strip()
    if not stripped:
        return None
    pi = _PI_RE.match(stripped)
    if pi:
        k = _clean(pi.group("k"))
        return float((float(k) if k not in ("", "+", "-") else (-1.0 if k == "-" else 1.0)) * math.pi)
    nums = find_numbers(stripped)
    if len(nums) == 1 and nums[0].start == 0 and nums[0].end == len(stripped.rstrip()):
        return nums[0].value
    return None


_SET_RE = re.compile(r"^\s*[\{\[\(]\s*(?P<body>[^{}\[\]()]*?)\s*[\}\]\)]\s*$")
# "[9, 10, 11.5] x1e4", "{1, 2} × 10^3": one multiplier written after a whole set
SCALE_FACTOR = r"\d+(?:\.\d+)?[eE][-+]?\d+|10\s*(?:\^|\*\*)\s*\{?[-+]?\d+\}?"  # x1e4, × 10^3 (also claims._SET_SCALE)
_SCALED_SET_RE = re.compile(rf"^\s*(?P<set>[\{{\[\(][^{{}}\[\]()]*[\}}\]\)])\s*[x×*·]\s*(?P<factor>{SCALE_FACTOR}|10[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)\s*$")
_TIMES_RE = re.compile(r"^\s*(?P<n>\d+(?:\.\d+)?)\s*[x×]\s*$")  # "downsample=8x": a factor of 8
_SHAPE_RE = re.compile(r"^\s*\d{1,5}(?:\s*[x×]\s*\d{1,5}){1,4}\s*$")
RANGE_RE = re.compile(r"^\s*(?P<a>\S+?)\s*(?:to|-|–|~|\.\.\.?)\s*(?P<b>\S+)\s*$")


_FLAG_WORDS = {"true": True, "false": False}


def parse_value(text: str) -> Any:
    """An expectation from a value text: a number, a list (set or range), a bool, or None when unreadable.

    ``{8, 16}`` and ``[0.05, 0.1]`` -> list; ``1e-4 to 3e-4`` -> [lo, hi]; ``true`` -> True.
    """
    text = text.strip().rstrip(".").strip()
    lowered = text.lower()
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off"):
        return False
    number = parse_number(text)
    if number is not None:
        return number
    times = _TIMES_RE.match(text)
    if times:
        return parse_number(times.group("n"))
    scaled = _SCALED_SET_RE.match(text)
    if scaled:
        items, factor = parse_value(scaled.group("set")), parse_number(scaled.group("factor"))
        if isinstance(items, list) and factor is not None and all(isinstance(v, (int, float)) for v in items):
            return [to_number(round(v * factor, 12)) for v in items]
        return None
    shape = _SHAPE_RE.match(text)
    if shape:  # 256×256, 16x256x256: a resolution or tensor shape, compared as a list
        return [int(p) for p in re.split(r"\s*[x×]\s*", text.strip())]
    set_match = _SET_RE.match(text)
    if set_match:
        items = [p for p in re.split(r"\s*,\s*", set_match.group("body")) if p]
        flags = [_FLAG_WORDS.get(p.lower()) for p in items]
        if len(flags) >= 2 and all(f is not None for f in flags):
            return flags  # "[true, false]": a switch tried both ways
        values = [parse_number(p) for p in items]
        if len(values) >= 2 and all(v is not None for v in values):
            return values
        return None
    range_match = RANGE_RE.match(text)
    if range_match and not text.startswith("-"):
        lo, hi = parse_number(range_match.group("a")), parse_number(range_match.group("b"))
        if lo is not None and hi is not None and lo < hi:
            return [lo, hi]
    return None
