"""Distributions written in claims: ``X ~ U(0, 4)``, ``initialised from N(0, 0.02)``, ``Uniform(0,1)``.

A distribution is a code fact of two kinds: the repo samples from it (a ``call`` of the sampling API with
the stated parameters), or, when the text says a tensor is *initialised* from it, an ``init`` check on that
tensor. Spellings and API names are data (rules/claim_terms.yaml ``distributions``). Arguments that are not
plain numbers (``N(0, X^2)``, ``U(a, b)``) are left out: the check then asks only for the API.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from typing import Any

from verifier.compiler import numbers, terms
from verifier.compiler.formulas import closing_bracket
from verifier.compiler.terms import ascii_symbol
from verifier.symbolic.latex import literal_size_problem


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
        rf"(?:(?P<var>[A-Za-z][\w{{}}+\-]*)\s*(?:\|\s*\w+\s*)?~\s*)?(?<![\w.])(?P<dist>{names})\s*\((?P<args>(?:[^()]|\([^()]*\)){{0,60}})\)"
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
        if family == "normal":
            draw = gaussian_draw(text[max(0, match.start() - 60) : match.end()])
            if draw is not None and draw.expect is None and not draw.sampler_check:
                continue  # "N(mean, σ_min² I)": a repo with σ_min = 0 draws nothing, so no sampler call is required
        if match.group("dist") in ("N", "U", "TN") and ("," not in match.group("args") or re.search(r"[×x]\s*[A-Za-z\d]", match.group("args"))):
            continue  # "U (d×k)": a matrix named U with its shape, not a uniform distribution
        raw = [a.strip() for a in _top_level(match.group("args"), ",")] if match.group("args").strip() else []
        values = [_arg(a) for a in raw]
        call_names = list(entry.get("call_args") or [])
        init_names = list(entry.get("init_args") or [])
        call_args = {n: v for n, v in zip(call_names, values) if v is not None}
        init_args = {n: v for n, v in zip(init_names, values) if v is not None}
        call = str(entry.get("call") or family)
        standard = entry.get("standard_call")
        if standard and _is_standard(raw, entry.get("standard_args") or []):
            call, call_args = str(standard), {}  # N(0, I) is torch.randn as much as torch.normal(0, 1)
        elif standard and len(raw) == len(entry.get("standard_args") or []) and None in values:
            # N(0, σ² I) is σ * randn(...), U(a, b) is a + (b - a) * rand(...): with a symbolic parameter, any of
            # the family's samplers, its parameters applied outside the call
            call, call_args = str(standard), {}
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


# ----------------------------------------------------------------------------------------- Gaussian draws
@dataclass(frozen=True)
class GaussianDraw:
    """``x_t ~ N(mean, var)`` with expression parameters, read as the draw ``x_t = mean + std * noise``."""

    variable: str
    expect: str | None  # SymPy syntax of mean + std * noise, None when not translated
    noise: str  # the formula's name for the standard-normal draw
    reason: str = ""
    start: int = 0
    end: int = 0
    rest: str = ""  # what the text says after the distribution (a condition the draw does not check)
    sampler_check: bool = True  # when not translated: whether a call of a Gaussian sampler is still right


NOISE_ROLE = "standard_normal"  # the formula check's `assume:` value for a symbol that is a randn-like draw
_GAUSSIAN_HEAD = re.compile(r"(?<![\w\\])(?:N|𝒩|\\mathcal\{N\}|Normal|Gaussian)\s*\(")
_IDENTITY = re.compile(
    r"\s*(?:\*|·|⋅|\\cdot)?\s*(?:I(?:_\{?[A-Za-z]\}?)?|𝐈|𝕀|\\mathbf\{I\}|\\mathbb\{I\}|\\boldsymbol\{I\})\s*$"
)
_COVARIANCE = re.compile(r"Σ|\\Sigma|\bSigma\b|\b[Cc]ov\b|\bC\b")  # a matrix: no elementwise square root
_SCALE_NAME = re.compile(r"(?:σ|sigma|std|s)(?:_\w+)?", re.IGNORECASE)  # a name papers give a standard deviation


def gaussian_draw(text: str) -> GaussianDraw | None:
    """The Gaussian a text states with an expression parameter (``q(x_t | x_0) = N(√ᾱ_t x_0, (1 - ᾱ_t) I)``,
    ``x_t ~ N(t x_1 + (1 - t) x_0, (1 - t)^2 I)``), read as its reparameterised draw; a variance that is a
    perfect square gives its root (``(1-t)^2 (1-k)^2 I`` -> ``(1-t)(1-k)``), an identity factor is dropped.
    None when the text states none, or only numbers (``N(0, 0.02)``, ``N(0, I)``: a sampler's call)."""
    for head in _GAUSSIAN_HEAD.finditer(text):
        open_at = head.end() - 1
        close = closing_bracket(text, open_at, "(", ")")
        if close < 0:
            continue
        before = text[: head.start()].rstrip()
        relation = before[-1:] if before[-1:] in "~=" else ""
        if not relation:
            continue
        variable = _sampled_variable(before[:-1].rstrip(), relation)
        if variable is None:
            continue
        given = _given(before[:-1].rstrip())
        inner = text[open_at + 1 : close - 1]
        parts = _top_level(inner, ";")
        if len(parts) == 2:  # N(x; mu, Sigma): the density's variable first
            variable, inner = parts[0].strip() or variable, parts[1]
        params = _top_level(inner, ",")
        if len(params) != 2:
            continue
        mean, variance = (p.strip() for p in params)
        if _arg(mean) is not None and (_arg(variance) is not None or _IDENTITY.fullmatch(" " + variance)):
            continue  # plain numbers: the distribution's call check reads them
        start = len(text) - len(text.lstrip())
        return replace(_draw(variable, mean, variance, start, close, given), rest=text[close:].strip(" .,;"))
    return None


def _top_level(text: str, sep: str) -> list[str]:
    parts, depth, begin = [], 0, 0
    for i, ch in enumerate(text):
        depth += 1 if ch in "([{" else -1 if ch in ")]}" else 0
        if ch == sep and depth == 0:
            parts.append(text[begin:i])
            begin = i + 1
    return [*parts, text[begin:]]


def _sampled_variable(left: str, relation: str) -> str | None:
    """``q_t(x_t | x_0)`` -> x_t (a conditional density: its first argument); ``x_t`` before ``~``."""
    if left.endswith(")"):
        depth, i = 0, len(left) - 1
        while i >= 0:
            depth += {")": 1, "(": -1}.get(left[i], 0)
            if depth == 0:
                break
            i -= 1
        if i <= 0 or not re.search(r"[A-Za-zα-ω][\w^{}]*$", left[:i]):
            return None
        return re.split(r"[|,;]", left[i + 1 : -1])[0].strip() or None
    if relation != "~":
        return None  # "x = N(...)" is no density and no sampling statement
    if "|" in left:  # "Y | X ~ N(0, X^2)": Y given X
        left = left.rsplit("|", 1)[0].rstrip()
    token = re.search(r"([A-Za-zα-ωΑ-Ω\\][\w\\]*(?:[_^](?:\{[^{}]*\}|[\w\\]+))*'?)$", left)
    return token.group(1) if token else None


def _given(left: str) -> frozenset[str]:
    """The conditioning variables (``q(x_t | x_0, x_1)``, ``Y | X``), as SymPy names: they vary, no setting."""
    head = left.rsplit("|", 1)[1] if "|" in left else ""
    names = [ascii_symbol(n.strip(" ()")) for n in head.split(",")]
    return frozenset(re.sub(r"[{}^]", "", n.replace("^", "_")) for n in names if n)


def _draw(variable: str, mean: str, variance: str, start: int, end: int, given: frozenset[str] = frozenset()) -> GaussianDraw:
    import unicodedata

    from verifier.compiler import formulas

    def refuse(reason: str) -> GaussianDraw:
        return GaussianDraw(variable, None, "", reason, start, end)

    if _COVARIANCE.search(variance):
        return refuse("a Gaussian with a covariance matrix: its square root (Cholesky) has no elementwise reading")
    if _SCALE_NAME.fullmatch(ascii_symbol(variance.strip())):
        return refuse(f"a Gaussian N(μ, {variance.strip()}): whether {variance.strip()} is the std or the variance is not written")
    variance = _IDENTITY.sub("", " " + variance).strip() or "1"
    variance = re.sub(r"^diag\s*\((.*)\)$", r"\1", variance)  # a diagonal covariance: the elementwise variance
    mean, variance = _juxtaposed(mean, variance)
    mean_expr = _sympy_of(formulas, unicodedata.normalize("NFD", mean))
    var_expr = _sympy_of(formulas, unicodedata.normalize("NFD", variance))
    if isinstance(mean_expr, str) or isinstance(var_expr, str):
        return refuse(f"a Gaussian whose parameter is not translated ({mean_expr if isinstance(mean_expr, str) else var_expr})")
    std = _root(var_expr)
    if std.is_zero:
        return refuse("a Gaussian with zero variance: no draw")
    names = {s.name for s in mean_expr.free_symbols | std.free_symbols}
    noise = "noise" if "noise" not in names else "noise_draw"
    constant = [s.name for s in std.free_symbols if not _varies(s.name, mean_expr, given)]
    if std.free_symbols and len(constant) == len(std.free_symbols):
        return replace(refuse(
            f"the noise scale {std} is a constant a faithful repo may set to 0 (then it computes only the mean): "
            "which one the repo must do is not stated"
        ), sampler_check=False)
    if mean_expr.is_zero and _monomial(std):
        return refuse(f"a zero-mean draw scaled by {std}: nothing distinctive to compare")
    if _atom(mean_expr) and _monomial(std):
        # "N(μ_θ(x_t, t), σ_t² I)": every a + b * noise of the repo (a forward step too) would match it
        return refuse(f"a draw {mean_expr} + {std} * noise: one quantity plus a scaled noise, nothing distinctive to compare")
    sampled = mean_expr + std * _symbol(noise)
    return GaussianDraw(variable, str(sampled), noise, "", start, end)


def _juxtaposed(mean: str, variance: str) -> tuple[str, str]:
    """"σ² t(1-t)": a one-letter symbol the parameters also use on its own (``t`` in the mean ``t x_1 + ...``)
    multiplies the bracket after it; it is not a function of it."""
    both = f"{mean} , {variance}"
    plain = {m.group(1) for m in re.finditer(r"(?<![\w.])([A-Za-z])(?![\w(])", both)}
    if not plain:
        return mean, variance
    pattern = re.compile(rf"(?<![\w.])({'|'.join(sorted(plain))})\s*\(")
    return pattern.sub(r"\1*(", mean), pattern.sub(r"\1*(", variance)


def _atom(expr) -> bool:
    import sympy
    from sympy.core.function import AppliedUndef

    return isinstance(expr, (sympy.Symbol, AppliedUndef))


def _monomial(expr) -> bool:
    """``σ_t``, ``2 σ``, ``σ_t s``: a product of symbols and a number, no structure of its own."""
    return expr.is_Symbol or (expr.is_Mul and all(f.is_Symbol or f.is_Number for f in expr.args))


def _symbol(name: str):
    import sympy

    return sympy.Symbol(name)


def _sympy_of(formulas, text: str):
    """A SymPy expression (every name a plain symbol), or the reason the text has none."""
    import sympy
    from sympy.parsing.sympy_parser import parse_expr

    if "\\" in text:
        return _latex_of(text)
    expect, reason = formulas.to_sympy(f"1 * ({text})")  # "1 * (beta_t)": a bare symbol is a parameter too
    if expect is None:
        return reason or "not an expression"
    if too_large := literal_size_problem(expect):
        return too_large  # "2^(2^(2^(2^10)))": SymPy would evaluate it without end
    try:
        tree = __import__("ast").parse(expect, mode="eval")
    except SyntaxError:
        return "not an expression"
    import ast

    calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - calls
    known = {"sqrt": sympy.sqrt, "exp": sympy.exp, "log": sympy.log}
    local: dict = {n: sympy.Symbol(n) for n in names}
    local.update({c: known.get(c) or sympy.Function(c) for c in calls})  # mu_theta(x_t, t): a model's output
    try:
        return parse_expr(expect, local_dict=local, global_dict={"Integer": sympy.Integer, "Float": sympy.Float, "Symbol": sympy.Symbol}, evaluate=True)
    except Exception:  # noqa: BLE001 - a parameter SymPy cannot read is a reason, not a crash
        return "not an expression"


def _latex_of(text: str):
    """A LaTeX parameter (``\\sqrt{\\bar\\alpha_t} x_0``) read by the formula check's own parser."""
    import sympy

    from verifier.symbolic.latex import FormulaSyntaxError, parse_latex

    text = re.sub(r"\\(bar|hat|tilde)\s*(\\[A-Za-z]+|[A-Za-z])", r"\\\1{\2}", text)  # \bar\alpha -> \bar{\alpha}
    text = re.sub(r"\\[,;!]|\\left|\\right", " ", text)
    try:
        expr = parse_latex(text).expr
    except (FormulaSyntaxError, ValueError, TypeError):
        return "a LaTeX parameter the formula parser does not read"
    plain = (sympy.Symbol, sympy.Number, sympy.Add, sympy.Mul, sympy.Pow, sympy.exp, sympy.log)
    if not all(isinstance(node, plain) for node in sympy.preorder_traversal(expr)):
        return "a LaTeX parameter with an operation that has no elementwise reading"
    return expr


def _root(variance):
    """The std of a variance: each even power halved (``(1-t)**2`` -> ``1-t``), a number's square root, the
    square root of what is left."""
    import sympy

    roots, rest = [], []
    for factor in sympy.Mul.make_args(variance):
        base, power = factor.as_base_exp()
        if factor.is_Number and factor.is_positive:
            roots.append(sympy.sqrt(factor))
        elif power.is_Integer and int(power) % 2 == 0:
            roots.append(base ** (int(power) // 2))
        else:
            rest.append(factor)
    return sympy.Mul(*roots) * (sympy.sqrt(sympy.Mul(*rest)) if rest else 1)


def _varies(name: str, mean, given: frozenset[str] = frozenset()) -> bool:
    """A symbol of the std that changes along the process or with the data (``t``, ``σ_t``, ``β_k``, ``X`` in
    ``Y | X``, one the mean uses too), not a constant setting (``σ``, ``σ_min``) a repo may put at 0."""
    if name in {s.name for s in mean.free_symbols} or name in given:
        return True
    return bool(re.fullmatch(r"[A-Za-z]|[A-Za-z]\w*?_[a-z]", name))
