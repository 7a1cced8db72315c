"""ASCII, Unicode and LaTeX formulas in claim text -> ``formula`` checks.

The SymPy text is validated with ``ast`` against a whitelist of node types (never evaluated here): the
formula check parses it later. Notation with no SymPy reading (Σ with bounds, ∇, ⊙, set membership,
sampling ``~``) is reported with the reason instead of being guessed.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from verifier.compiler.numbers import parse_value
from verifier.compiler.terms import GREEK_NAMES, ascii_symbol

_LATEX_CMD = re.compile(r"\\(frac|sqrt|log|exp|sum|mathbb|mathrm|hat|bar|tilde|sigma|alpha|beta|gamma|cdot|left|min|max|lambda|theta|pi|epsilon|mu|nabla)\b")
_UNTRANSLATABLE = {
    "Σ": "a sum with bounds (Σ)",
    "∑": "a sum with bounds (∑)",
    "∇": "a gradient (∇)",
    "∂": "a partial derivative (∂)",
    "⊙": "an element-wise product over a mask (⊙)",
    "∈": "set membership (∈)",
    "←": "an update rule (←)",
    "≈": "an approximation (≈)",
    "∫": "an integral",
    "∀": "a quantifier",
    "inf{": "an infimum over a set",
    "argmax": "an argmax",
    "argmin": "an argmin",
    "D_KL": "a KL divergence between distributions",
    "KL(": "a KL divergence between distributions",
    "~": "a sampling statement (~)",
    "|": "a conditional or norm bar",
    "ᵀ": "a matrix transpose",
    "⁻¹": "a matrix inverse",
    "[": "indexing or concatenation",
    "{": "braces (sets or grouping)",
    "d/dt": "a time derivative",
    "/dx": "a derivative",
    "/dt": "a derivative",
}
_KNOWN_FUNCS = {
    "exp", "log", "sqrt", "sigmoid", "tanh", "relu", "gelu", "softmax", "log_softmax", "logsigmoid", "softplus",
    "min", "max", "clip", "clamp", "abs", "sin", "cos", "mean", "sum", "norm", "sign", "ceil", "floor", "erf",
    "e", "var", "sinh", "cosh", "minimum", "maximum", "where", "softmax", "sigma", "phi", "ln", "tr", "diag",
}  # fmt: skip
_ALLOWED = (
    ast.Expression, ast.BinOp, ast.UnaryOp, ast.Call, ast.Name, ast.Constant, ast.Load, ast.Add, ast.Sub,
    ast.Mult, ast.Div, ast.Pow, ast.USub, ast.UAdd, ast.Mod, ast.FloorDiv,
)  # fmt: skip


@dataclass(frozen=True)
class FormulaFind:
    lhs: str
    expect: str | None  # SymPy syntax, when translated
    latex: str | None
    symbols: tuple[str, ...]
    reason: str = ""  # why not translated (expect and latex both None)


def looks_like_formula(text: str) -> bool:
    """An equation whose right-hand side is an expression, not a plain number or a name."""
    if _LATEX_CMD.search(text):
        return True
    if "=" not in text:
        return False
    lhs, _, rhs = text.partition("=")
    rhs = rhs.strip()
    bare = re.sub(r"\s*\([^()]*\)\s*$", "", rhs)
    if not rhs or rhs.startswith("=") or parse_value(rhs) is not None or parse_value(bare) is not None:
        return False
    operators = len(re.findall(r"[+\-*/^·×−]|\b(?:exp|log|sqrt|sigmoid|tanh|softmax|min|max|clip)\s*\(", rhs))
    idents = re.findall(r"[A-Za-zα-ωΑ-Ω_][\w']*", ascii_symbol(rhs))
    return operators >= 1 and len(idents) >= 1 and len(lhs.strip()) <= 40


def _symbol_names(expr: str) -> tuple[str, ...]:
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return ()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            names.discard(node.func.id)
    calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return tuple(sorted(names - calls))


def _valid(expr: str) -> bool:
    try:
        tree = ast.parse(expr, mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        return False
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            return False
        if isinstance(node, ast.Call) and (not isinstance(node.func, ast.Name) or node.keywords):
            return False
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
            return False
    return True


def _flatten_subscripts(text: str) -> str:
    """``x_{t-1}`` -> ``x_tm1``, ``z_0^{0:P}`` -> ``z_0`` + note: identifiers the formula check can map."""

    def sub(match: re.Match) -> str:
        body = re.sub(r"(?<=[A-Za-z])-(?=[A-Za-z])", "", match.group(1))
        body = body.replace("-", "m").replace("+", "p")
        return "_" + re.sub(r"[^0-9A-Za-z]", "", body)

    return re.sub(r"_\{([^{}]*)\}", sub, text)


def _expectation_brackets(expr: str) -> str:
    """``E[ ... ]`` and ``E_{x}[ ... ]`` -> ``E( ... )`` when the brackets balance."""
    out = expr
    for _ in range(5):
        match = re.search(r"\bE(?:_\w+)?\s*\[", out)
        if not match:
            break
        depth, i = 1, match.end()
        while i < len(out) and depth:
            depth += {"[": 1, "]": -1}.get(out[i], 0)
            i += 1
        if depth:
            break
        out = out[: match.start()] + "E(" + out[match.end() : i - 1] + ")" + out[i:]
    return out


def to_sympy(text: str) -> tuple[str | None, str]:
    """SymPy syntax for an ASCII/Unicode expression, or (None, reason)."""
    expr = text.strip().rstrip(".,;")
    expr = re.sub(r"\s*\((?:Eq|eq)\.?\s*\d+\)\s*$", "", expr)
    expr = re.sub(r"\|\|(.+?)\|\|", r"norm(\1)", expr)
    expr = re.sub(r"‖(.+?)‖", r"norm(\1)", expr)
    expr = _expectation_brackets(expr)
    for token, reason in _UNTRANSLATABLE.items():
        if token in expr and token not in "[{":
            return None, f"uses {reason}"
    expr = (
        expr.replace("−", "-").replace("×", "*").replace("·", "*").replace("²", "**2").replace("³", "**3")
        .replace("√", "sqrt").replace("’", "'")
    )  # fmt: skip
    expr = _flatten_subscripts(expr)
    expr = re.sub(r"\^\{?\((\w+)\)\}?", r"_\1", expr)  # W^{(i)}: the i-th, not a power
    # a letter superscript names a variant (x_t^k), a numeric one is a power
    expr = re.sub(r"([A-Za-z]\w*)\^\{?([A-Za-z][A-Za-z0-9]*)\}?", r"\1_\2", expr)
    expr = re.sub(r"\^\{([^{}]*)\}", r"**(\1)", expr).replace("^", "**")
    expr = ascii_symbol(expr)
    expr = re.sub(r"(\w)'", r"\1_prime", expr)
    for token in ("[", "{"):
        if token in expr:
            return None, f"uses {_UNTRANSLATABLE[token]}"
    if re.search(r"[^\w\s+\-*/().,]", expr):
        bad = sorted(set(re.findall(r"[^\w\s+\-*/().,]", expr)))
        return None, f"uses notation with no SymPy reading ({' '.join(bad)})"
    # implicit multiplication: "s B A", "2 x", ") (", "x (" unless x is a function
    matches = list(re.finditer(r"\d+(?:\.\d+)?[eE][-+]?\d+|\d+\.\d+|\d+|[A-Za-z_]\w*|\*\*|[+\-*/(),]", expr))
    if "".join(m.group(0) for m in matches) != re.sub(r"\s+", "", expr):
        return None, "could not tokenise the expression"
    out: list[str] = []
    prev, prev_end = "", -1
    for m in matches:
        tok = m.group(0)
        operand_start = tok == "(" or re.match(r"[\w.]", tok)
        prev_operand_end = prev == ")" or (prev and re.match(r"[\w.]", prev))
        if operand_start and prev_operand_end:
            # sigma(x), g_theta(x, t): a name written right against "(" is applied; "s (x - y)" multiplies
            is_call = tok == "(" and re.match(r"[A-Za-z_]", prev or "") and (prev_end == m.start() or prev.lower() in _KNOWN_FUNCS)
            if not is_call:
                out.append("*")
        out.append(tok)
        prev, prev_end = tok, m.end()
    result = " ".join(out).replace("( ", "(").replace(" )", ")").replace(" ,", ",")
    result = re.sub(r"(\w) \(", r"\1(", result).replace("- (", "-(")
    result = re.sub(r"\s*\*\*\s*", "**", result)
    if not _valid(result):
        return None, "not a well-formed expression after translation"
    words = [w for w in re.findall(r"[A-Za-z_]\w*", result) if re.fullmatch(r"[a-z]{5,}", w)]
    prose = [w for w in words if w not in _KNOWN_FUNCS and w not in GREEK_NAMES]
    prose += [w for w in re.findall(r"\b(?:vs|to|of|in|is|and|or|the|for|at|by|from|with)\b", result)]
    prose += [f"{w} without brackets" for w in re.findall(r"\b(?:sum|mean|prod|E)\b(?!\()", result)]
    if prose:
        return None, f"mixes prose into the expression ({prose[0]})"
    if not re.search(r"[-+*/]|\w\(", result):
        return None, "a bare symbol, not an expression"
    return result, ""


def latex_of(text: str) -> str:
    return text.strip().strip("$").strip()


_PROSE_CUT = re.compile(
    r":\s|\s[—–]\s|\s(?:where|with|for|when|if|otherwise|i\.e\.|e\.g\.|during|via|using|and|which|is|are|as|in|on|per)\s",
)
_TRAILING_REMARK = re.compile(r"\s*\((?=[A-Za-z]{3,}\s)[^()]*\)\s*$")


def _trim_prose(rhs: str) -> str:
    """``P_max + l: maximum sequence length`` -> ``P_max + l``: the expression, not the sentence after it."""
    head = _PROSE_CUT.split(rhs, maxsplit=1)[0]
    return _TRAILING_REMARK.sub("", head).strip()


def find_formula(segment: str) -> FormulaFind | None:
    """The formula a text segment states (``lhs = rhs``), translated where possible; None if not a formula."""
    if not looks_like_formula(segment):
        return None
    if _LATEX_CMD.search(segment):
        lhs, sep, rhs = segment.partition("=")
        body = rhs if sep else segment
        return FormulaFind(lhs.strip() if sep else "", None, latex_of(body), ())
    parts = [p.strip() for p in segment.split("=")]
    lhs = parts[0]
    # "grad log q = -(x - mu)/sigma^2 = -z/((1-t)(1-k))": the last side is the closed form
    candidates = [_trim_prose(p) for p in parts[1:] if p]
    reason = "no right-hand side"
    for rhs in reversed([c for c in candidates if c]):
        expect, reason = to_sympy(rhs)
        if expect is not None and re.search(r"[A-Za-z_]", expect):
            return FormulaFind(lhs, expect, None, _symbol_names(expect))
    return FormulaFind(lhs, None, None, (), reason)
