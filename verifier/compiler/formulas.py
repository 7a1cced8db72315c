"""ASCII, Unicode and LaTeX formulas in claim text -> ``formula`` checks.

The SymPy text is validated with ``ast`` against a whitelist of node types (never evaluated here), then read
by the formula check's own parser (``verifier.symbolic.latex``): a check is only emitted when its paper side
parses and has something to compare. Papers' notation is translated where it has one reading under the
check's semantics (``E_{x}[...]`` a mean, ``‖x‖²₂`` a squared norm, ``Σ_{i=1}^{n}`` a sum and
``(1/n) Σ_{i=1}^{n}`` a mean, ``⊙`` the elementwise product, ``√x``, ``s B A`` the scalar s times the matrix
product ``matmul(B, A)``, ``Kᵀ`` a transpose, ``(BᵀB)⁻¹`` the matrix inverse ``inv``, an integral over the domain that is a term of its own a mean of
its integrand, ``β KL(q || p)`` the named quantity ``KL``, ``log p(x)`` the log of ``p(x)``); a running
product ``ᾱ_k = ∏_{i=1}^{k} α_i`` is the library's ``cumprod`` (a ``call`` check); ``∇_x f``, ``∂f/∂x``,
``grad_x f`` the check's one gradient object ``grad(f, x)``. Notation with no such reading (∇ with no
variable, second derivatives, other products, a scalar's ^-1, mode-n products, one capital applied to a vector with no sign it is a
matrix, set membership, sampling ``~``) is reported with the reason instead of being guessed.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass

from verifier.compiler.numbers import parse_value
from verifier.compiler.terms import GREEK_NAMES, ascii_symbol
from verifier import pysource

_LATEX_CMD = re.compile(r"\\(frac|sqrt|log|exp|sum|prod|mathbb|mathrm|hat|bar|tilde|sigma|alpha|beta|gamma|cdot|left|min|max|lambda|theta|pi|epsilon|mu|nabla)\b")
_UNTRANSLATABLE = {
    "Σ": "a sum with bounds (Σ)",
    "∑": "a sum with bounds (∑)",
    "∇": "a gradient (∇)",
    "∂": "a partial derivative (∂)",
    "∈": "set membership (∈)",
    "≈": "an approximation (≈)",
    "∫": "an integral",
    "integral": "an integral",
    "\\int": "an integral",
    "∀": "a quantifier",
    "inf{": "an infimum over a set",
    "argmax": "an argmax",
    "argmin": "an argmin",
    "D_KL": "a KL divergence between distributions",
    "KL(": "a KL divergence between distributions",
    "~": "a sampling statement (~)",
    "|": "a conditional or norm bar",
    "⁻¹": "a matrix inverse",
    "^{-1}": "a matrix inverse",
    "[": "indexing or concatenation",
    "{": "braces (sets or grouping)",
    "d/dt": "a time derivative",
    "partial_": "a partial derivative (partial_u/partial_p)",
    "/dx": "a derivative",
    "/dt": "a derivative",
}
_KNOWN_FUNCS = {
    "exp", "log", "sqrt", "sigmoid", "tanh", "relu", "gelu", "softmax", "log_softmax", "logsigmoid", "softplus",
    "min", "max", "clip", "clamp", "abs", "sin", "cos", "mean", "sum", "norm", "sign", "ceil", "floor", "erf",
    "e", "var", "sinh", "cosh", "minimum", "maximum", "where", "softmax", "sigma", "phi", "ln", "tr", "diag",
    "transpose", "matmul", "inv", "grad", "concat", "prod",
}  # fmt: skip
# an opaque function applied to plain arguments ("epsilon_theta(x, empty)"): a known function is not one
# "logvar", "logits", "logprob": the names code gives a log-quantity, symbols of a formula rather than prose
_CODE_COMPOUND = re.compile(r"log(?:var|vars|its|prob|probs|std|sigma|det|pi|alpha|scale|density|lik|likelihood|partition)")
_OPAQUE_CALL = re.compile(r"\b(?!(?:" + "|".join(sorted(_KNOWN_FUNCS)) + r")\()([A-Za-z_]\w*)\([^()]*\)")
_NEEDS_ARGUMENT = frozenset("log ln exp sqrt sin cos tanh sigmoid softmax norm mean sum max min".split())
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
    unchecked: str = ""  # a condition stated after the formula ("with a causal mask") that it does not check
    call: str = ""  # the library operation the formula names when it has no elementwise reading ("cumprod")
    integral: tuple[str, ...] = ()  # the differentials of the integrals translated to means ("dx", "dt dx")
    assume: tuple[tuple[str, str], ...] = ()  # the check's `assume:` (a Gaussian draw's noise: standard_normal)
    update: str = ""  # the symbol an update rule gives a new value (θ of θ ← θ − η g); the check's `expect` is its right side
    update_arrow: bool = False  # the rule is written with an arrow (θ ← ...): an assignment, not an equation


_SHORT_SYMBOL = r"[A-Za-zα-ωΑ-Ω](?:_\{[^{}\s]*\}|_[A-Za-z0-9]+|\^\{?[A-Za-z]\}?)*'?(?![\w{])"
_JUXTAPOSED_SYMBOLS = re.compile(
    rf"(?<![\w}}])(?:[A-Z](?:_\{{[^{{}}\s]*\}}|_[A-Za-z0-9]+)*'?\s+{_SHORT_SYMBOL}|{_SHORT_SYMBOL}\s+[A-Z](?![\w{{]))"
)


_LIST_BRACKET = re.compile(r"(?<![\w)\]'])\[([^\[\]]*,[^\[\]]*)\]")  # "[a, b]" after an operator: a list or a concatenation, not an index


def looks_like_formula(text: str) -> bool:
    """An equation whose right-hand side is an expression, not a plain number or a name."""
    if _LATEX_CMD.search(text):
        # "H = 50 actions for $50\,\mathrm{Hz}$ control": a value and its unit, the LaTeX later in the sentence
        return not re.search(r"(?<![<>!=])=\s*[-−]?\d[\d.,]*\s+[A-Za-z]{2,}", text.split("$")[0] if "$" in text else text)
    sides = _top_level_sides(text)
    if len(sides) < 2:
        return False
    lhs, rhs = sides[0], "=".join(sides[1:]).strip()
    if re.match(r"[-−]?\d[\d,.]*[kKM]?\s*/\s*(?:GPU|gpu|device|node|worker|replica|core|TPU|tpu|card)s?\b", rhs):
        return False  # "max_tokens=3584/GPU × 8 GPUs": a per-device setting, not an expression
    bare = re.sub(r"\s*\([^()]*\)\s*$", "", rhs)
    if not rhs or rhs.startswith("=") or parse_value(rhs) is not None or parse_value(bare) is not None:
        return False
    operators = len(re.findall(r"[+\-*/^·×−√⊙‖Σ∑∏∫ᵀ⊤∇∂]|\b(?:exp|log|sqrt|sigmoid|tanh|softmax|min|max|clip)\s*\(|\b(?:prod|sum|grad|partial)_", rhs))
    operators += len(_JUXTAPOSED_SYMBOLS.findall(rhs))  # "s B A": one-letter symbols side by side, a capital among them
    operators += len(_SLICE_TEXT.findall(rhs)) + (1 if _math_list(rhs) else 0)  # "U[:, :r]", "[P, Z]"
    idents = re.findall(r"[A-Za-zα-ωΑ-Ω_][\w']*", ascii_symbol(rhs))
    return operators >= 1 and len(idents) >= 1 and len(lhs.strip()) <= 40


_SLICE_TEXT = re.compile(r"(?<=[\w)\]'])\[[^\[\]]*:[^\[\]]*\]")
_ELLIPSIS = r"(?:\.\.\.|…|⋯|\\ldots|\\cdots|\\dots)"
_LIST_SYMBOL = re.compile(r"[A-Za-zα-ωΑ-Ω][\u0300-\u036f]?(?:_\{[^{}]*\}|_[A-Za-z0-9]+|\^\{[^{}]*\}|\^\w)*(?:\([^()]*\))?'?")


def _math_list(rhs: str) -> bool:
    """``[P, Z]``, ``[x_cls, x_1, ..., x_N]``: a bracket of math symbols (one letter with its indexes, a
    capital among them, or a run with an ellipsis), not a list of settings or module names (``[q_proj, v_proj]``)."""
    for m in _LIST_BRACKET.finditer(rhs):
        items = [i.strip() for i in m.group(1).split(",")]
        if any(re.fullmatch(_ELLIPSIS, i) for i in items):
            return True
        if all(_LIST_SYMBOL.fullmatch(i) for i in items) and any(re.match(r"[A-ZΑ-Ω]", i) for i in items):
            return True
    return False


def _sequence_item(item: str) -> tuple[str, str, str] | None:
    """(base, index, application) of ``x_1``, ``x_{N}``, ``x_0^{(1)}``, ``Attn^0(Z)``; None otherwise."""
    text = item.strip()
    application = ""
    call = re.search(r"\([^()]*\)$", text)
    if call:
        application, text = call.group(0), text[: call.start()]
    for pattern in (r"(.+?)\^\{?\(\s*(\w+)\s*\)\}?", r"(.+?)\^\{\s*(\w+)\s*\}", r"(.+?)\^(\w+)", r"(.+)_\{\s*(\w+)\s*\}", r"(.+)_(\w+)"):
        m = re.fullmatch(pattern, text)
        if m and re.fullmatch(r"[A-Za-zα-ωΑ-Ω][\w'\u0300-\u036f{}^_()]*", m.group(1)):
            return m.group(1), m.group(2), application
    return None


def _hide_braced_brackets(expr: str) -> str:
    out, depth = [], 0
    for ch in expr:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        out.append({"[": "\x02", "]": "\x03"}.get(ch, ch) if depth > 0 else ch)
    return "".join(out)


def _bracket_lists(expr: str) -> tuple[str, str]:
    """``[x_cls, x_1, ..., x_N]`` -> ``concat(x_cls, x)`` (the run as its sequence, one operand), ``[P, Z]``
    -> ``concat(P, Z)``, ``V[:, :r]`` -> ``slice_ah(V, r)`` (verifier.symbolic.latex.bracket_structures);
    (text, reason). Index ranges inside a bracket (``[K_0^{0:P}, K_t^{P:L}]``) do not say which axis they cut:
    refused."""
    if "[" not in expr:
        return expr, ""
    from verifier.symbolic.latex import FormulaSyntaxError, bracket_structures

    hidden = _hide_braced_brackets(expr)  # `W_{u,[0,T]}`: a bracket inside an index is part of the name
    if hidden != expr:
        out, reason = _bracket_lists(hidden)
        return out.replace("\x02", "[").replace("\x03", "]"), reason

    if re.search(r"\[[^\[\]]*\^\{[^{}]*:[^{}]*\}", expr):
        return expr, "uses a concatenation of index ranges (which axis they cut is not stated)"
    run = re.compile(rf"(?P<first>[^\[\],]+?)\s*,\s*{_ELLIPSIS}\s*,\s*(?P<last>[^\[\],]+?)(?=\s*[\],])")
    for _ in range(4):
        m = run.search(expr)
        if not m:
            break
        first, last = _sequence_item(m.group("first")), _sequence_item(m.group("last"))
        if first is None or last is None or first[0] != last[0] or first[2] != last[2] or first[1] == last[1]:
            return expr, "uses a list with an ellipsis whose ends are not one indexed sequence"
        expr = expr[: m.start()] + first[0] + first[2] + expr[m.end() :]
    if re.search(_ELLIPSIS, expr):
        return expr, "uses an ellipsis"
    for m in _LIST_BRACKET.finditer(expr):
        if sum(1 for item in m.group(1).split(",") if re.search(r"[A-Za-zα-ωΑ-Ω]", item)) < 2:
            return expr, "uses a list of numbers (a range or a set of values, not a concatenation)"
    try:
        return bracket_structures(expr), ""
    except FormulaSyntaxError as exc:
        return expr, f"uses {exc.reason}"


def _symbol_names(expr: str) -> tuple[str, ...]:
    try:
        tree = pysource.parse(expr, mode="eval")
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
        tree = pysource.parse(expr, mode="eval")
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


def closing_bracket(text: str | list[str], start: int, open_: str, close: str) -> int:
    """Index just past the bracket closing the one at ``start`` (-1 when it never closes)."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == open_:
            depth += 1
        elif text[i] == close:
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def _subscript_end(text: str, i: int) -> int:
    """Past a ``_{...}`` / ``_x`` subscript (or a ``^{...}`` / ``^x`` superscript) starting at ``i``; ``i`` if none."""
    if i < len(text) and text[i] in "_^":
        if text[i + 1 : i + 2] == "{":
            end = closing_bracket(text, i + 1, "{", "}")
            return end if end > 0 else i
        m = re.match(r"[_^](?:\w+|[α-ωΑ-Ω]\w*)", text[i:])
        if m:
            return i + m.end()
    return i


def _expectation_brackets(expr: str) -> str:
    """``E[ ... ]``, ``E_{z,ε,t} [ ... ]`` and ``𝔼_x[ ... ]`` -> ``mean( ... )`` when the brackets balance: an
    expectation is a mean over the sampled symbols (the subscript says which; it names nothing in code)."""
    out = expr.replace("𝔼", "E")
    for _ in range(5):
        match = re.search(r"(?<![\w.])E(?=[_\s]*[\[_])", out)
        if not match:
            break
        i = _subscript_end(out, match.end())
        while i < len(out) and out[i] == " ":
            i += 1
        if i >= len(out) or out[i] != "[":
            break
        end = closing_bracket(out, i, "[", "]")
        if end < 0:
            break
        out = out[: match.start()] + "mean(" + out[i + 1 : end - 1] + ")" + out[end:]
    return out


_NORM_OPEN = re.compile(r"‖|\|\|")
_NORM_SUFFIX = re.compile(r"(?:_\{?(?:2|F|p)\}?|[₂])?(?:\^\{?2\}?|²)?(?:_\{?(?:2|F)\}?|[₂])?")


_L1_SUFFIX = re.compile(r"(?:_\{?1\}?|₁)(?![\d\w])")


def _norms(expr: str) -> str:
    """``‖x‖``, ``‖x‖²₂``, ``||x||^2_F`` -> ``norm(x)`` / ``norm(x)**2``: the L2 and Frobenius norms are both
    the root of a sum of squares, elementwise."""
    out = expr
    for _ in range(8):
        m = _NORM_OPEN.search(out)
        if not m:
            break
        bar = m.group(0)
        close = out.find(bar, m.end())
        if close < 0:
            break
        inner = out[m.end() : close]
        l1 = _L1_SUFFIX.match(out, close + len(bar))
        if l1:  # "||W||_1": the L1 norm, the sum of absolute values
            out = out[: m.start()] + f"sum(abs({inner}))" + out[l1.end() :]
            continue
        suffix = _NORM_SUFFIX.match(out, close + len(bar))
        tail = suffix.group(0) if suffix else ""
        squared = "2" in re.sub(r"_\{?2\}?|₂", "", tail) or "²" in tail
        out = out[: m.start()] + f"norm({inner})" + ("**2" if squared else "") + out[close + len(bar) + len(tail) :]
    return out


def _top_level_separator(text: str) -> bool:
    """A ``,``, ``;`` or ``:`` outside every bracket of ``text``."""
    depth = 0
    for ch in text:
        depth += (ch in "([{") - (ch in ")]}")
        if depth == 0 and ch in ",;:":
            return True
    return False


def _abs_bars(expr: str) -> str:
    """``|v| / c_s`` -> ``abs(v) / c_s`` when every bar is outside brackets; a bar inside ``p(z|x)`` is a
    conditional, and then none is read as an absolute value."""
    bars = [i for i, ch in enumerate(expr) if ch == "|"]
    if not bars or len(bars) % 2:
        return expr
    depth, depths = 0, {}
    for i, ch in enumerate(expr):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "|":
            depths[i] = depth
    if any(depths.values()):
        return expr
    out, last = [], 0
    for k in range(0, len(bars), 2):
        a, b = bars[k], bars[k + 1]
        inner = expr[a + 1 : b]
        if not inner.strip() or _top_level_separator(inner):
            return expr  # "|a, b|" is no absolute value; "|grad(y_c, x)|" is one
        out.append(expr[last:a] + f"abs({inner})")
        last = b + 1
    return "".join(out) + expr[last:]


_SUM_HEAD = re.compile(r"(?<![\w.])(?:Σ|∑|∏)(?=_)|(?<![\w.])(?:sum|prod)(?=_\{|_[A-Za-z]\b)")  # not an identifier sum_loss


def _summand_end(text: str, i: int) -> int:
    """End of the product term a sum applies to: the next top-level binary + or -, a comma, or the bracket
    closing the sum's own group."""
    depth = 0
    j = i
    while j < len(text):
        ch = text[j]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return j
            depth -= 1
        elif depth == 0 and ch in "+-−=<>,":
            before = text[i:j].strip()
            if ch in "+-−" and (not before or before[-1] in "*/^(_"):
                j += 1
                continue  # a sign, not a binary operator
            return j
        j += 1
    return j


def _bounds(sub: str) -> tuple[str, str | None]:
    """(index, upper bound) of ``_{i=1}^{n}`` / ``_{i=1..n}`` / ``_i``; the upper bound may be None."""
    lower, _, upper = sub.partition("^")
    lower = lower.lstrip("_").strip("{}")
    upper = upper.strip("{}") or None
    index = re.split(r"[=∈<>≤≥!]|\bin\b", lower, maxsplit=1)[0].strip()
    ranged = re.search(r"(?:\.\.|…|\bto\b)\s*(\w+)\s*$", lower)
    if upper is None and ranged:
        upper = ranged.group(1)
    return index, upper


def _sums(expr: str) -> tuple[str, str]:
    """``Σ_{i=1}^{n} x_i`` -> ``sum(x_i)``, ``(1/n) Σ_{i=1}^{n} x_i`` -> ``mean(x_i)`` and ``∏_{i=1}^{n} p_i`` ->
    ``prod(p_i)``; (text, reason)."""
    out = expr
    for _ in range(8):
        m = _SUM_HEAD.search(out)
        if not m:
            return out, ""
        end = _subscript_end(out, m.end())
        if out[end : end + 1] == "^":
            end = _subscript_end(out, end)
        index, upper = _bounds(out[m.end() : end])
        if not index or not re.fullmatch(r"[A-Za-zα-ω]\w*(?:\s*,\s*[A-Za-zα-ω]\w*)*|[A-Za-zα-ω]\w*\s*!=\s*\w+", index):
            return out, "a sum over a set with no index to read"
        start = end
        while start < len(out) and out[start] == " ":
            start += 1
        stop = _summand_end(out, start)
        summand = out[start:stop].strip()
        if not summand:
            return out, "a sum with no summand"
        head = out[: m.start()]
        if m.group(0) in ("∏", "prod"):  # Π_{i=1}^{n} p_i: the product of the entries (np.prod)
            out = head + f"prod({summand})" + out[stop:]
            continue
        mean = None
        if upper:
            mean = re.search(rf"\(?\s*1\s*/\s*\(?{re.escape(upper)}\)?\s*\)?\s*\*?\s*$", head)
        if mean:
            out = head[: mean.start()] + f"mean({summand})" + out[stop:]
        else:
            out = head + f"sum({summand})" + out[stop:]
    return out, ""


_COMBINING = {"\u0303": "_tilde", "\u0302": "_hat", "\u0304": "_bar", "\u0305": "_bar", "\u0307": "_dot"}
_CAPITAL_FUNCS = {"Softmax": "softmax", "SoftMax": "softmax", "GELU": "gelu", "ReLU": "relu", "RELU": "relu",
                  "Sigmoid": "sigmoid", "Tanh": "tanh", "Softplus": "softplus", "LogSoftmax": "log_softmax"}  # fmt: skip
_TRANSPOSE = re.compile(r"\s*(?:\^\s*\{?\s*(?:T|⊤|\\top)\s*\}?(?![A-Za-z0-9_])|ᵀ(?=[\sA-Z(),+\-−*/)]|$))")
# the superscript ᵀ is never part of a name, so "BᵀB" is transpose(B) B; "^T" before a letter may be "^Tx"
_GREEK_HEADS = frozenset(
    "alpha beta gamma delta epsilon eps zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau upsilon phi chi "
    "psi omega ell".split()
)


# "Σ ×_2 U^T ×_3 V^T", "A x_1 B": a tensor's mode-n product, written between its operands
_MODE_PRODUCT = re.compile(r"(?<=\S)\s+(?:×|x)_\{?\d+\}?\s+(?=[A-Z(])")


_INVERSE = re.compile(r"\s*(?:\^\s*\{\s*[-−]\s*1\s*\}|\^\s*\(\s*[-−]\s*1\s*\)|\^\s*[-−]\s*1(?![\d.])|⁻¹)")


def _group_start(head: str) -> int:
    """Where the bracketed group that ``head`` ends with opens (-1 when unbalanced)."""
    depth = 0
    for i in range(len(head) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(head[i], 0)
        if depth == 0:
            return i
    return -1


def _inverses(expr: str) -> tuple[str, str]:
    """``(BᵀB)⁻¹``, ``K^{-1}``, ``(K + λI)^{-1}`` -> ``inv(...)``: the inverse of a matrix (a Latin capital, or a
    group with a capital or a transpose in it), the opaque function the formula check also reads
    ``torch.linalg.inv`` / ``torch.inverse`` as (rules/sympy_map.yaml). A scalar's ``^{-1}`` is refused:
    ``s^{-1}`` could be a reciprocal or a functional inverse."""
    out = expr
    for _ in range(8):
        m = _INVERSE.search(out)
        if not m:
            return out, ""
        head = out[: m.start()]
        if head.endswith(")"):
            start = _group_start(head)
            if start < 0:
                return out, "uses a matrix inverse of an unbalanced group"
            call = re.search(r"[A-Za-z_]\w*$", head[:start])
            if call and call.group(0) != "transpose":
                return out, "uses the inverse of a function (^-1)"
            start = call.start() if call else start
            inner = head[start:]
            names = [ascii_symbol(n) for n in re.findall(r"[A-Za-zα-ωΑ-Ω][\w'α-ωΑ-Ω]*", inner)]
            if not any(n in ("transpose", "matmul") or _capital(n) for n in names):
                return out, "uses an inverse or power -1 of a scalar"
        else:
            base = re.search(r"[A-Za-zα-ωΑ-Ω][\w'α-ωΑ-Ω]*(?:_\{[^{}]*\})*$", head)
            if not base or not _capital(ascii_symbol(base.group(0))):
                return out, "uses an inverse or power -1 of a scalar"
            start = base.start()
        out = head[:start] + "inv(" + head[start:] + ")" + out[m.end() :]
    return out, "uses too many inverses"


def _transposes(expr: str) -> tuple[str, str]:
    """``K^T``, ``Kᵀ``, ``(Q K)^⊤`` -> ``transpose(K)``; a Greek base (``γ^T``) is not a matrix: refused."""
    out = expr
    for _ in range(12):
        m = _TRANSPOSE.search(out)
        if not m:
            return out, ""
        head = out[: m.start()]
        if head.endswith(")"):
            start = _group_start(head)
            if start < 0:
                return out, "uses a matrix transpose of an unbalanced group"
            call = re.search(r"[A-Za-z_]\w*$", head[:start])
            if call:
                start = call.start()
        else:
            base = re.search(r"[A-Za-zα-ωΑ-Ω][\w'α-ωΑ-Ω]*(?:_\{[^{}]*\}|\^\{\([^{}]*\)\})*$", head)
            if not base:
                return out, "uses a matrix transpose with no operand"
            start = base.start()
            if re.fullmatch(r"[A-Z]{2}", base.group(0)):
                start += 1  # QK^T, XW^T: two matrices written together, the second transposed
                head = head[:start] + " " + head[start:]
                start += 1
            name = ascii_symbol(base.group(0)).split("_")[0].rstrip("0123456789'").lower()
            if name in _GREEK_HEADS:
                return out, "uses a transpose or power of a scalar (^T)"
        out = head[:start] + "transpose(" + head[start:] + ")" + out[m.end() :]
    return out, "uses too many transposes"
_SQRT_ATOM = re.compile(r"√\s*(?![\s(])((?:[A-Za-zα-ωΑ-Ω]\w*(?:_\{[^{}]*\}|\^\{[^{}]*\})*'?)|\d+(?:\.\d+)?)")


_ARG_EXTREMUM = re.compile(r"^\s*arg\s?(?:max|min)(?:_\{[^{}]*\}|_[\wα-ω]+)?\s*")


def _objective(expr: str) -> str:
    """``argmin_θ Σ_i (y_i − f_θ(x_i))²`` -> the objective the code computes before it is minimised (or the
    scores before the argmax); anything after the optimised expression is left in place, and so rejected."""
    match = _ARG_EXTREMUM.match(expr)
    if not match:
        return expr
    rest = expr[match.end() :].strip()
    if rest.startswith("(") and closing_bracket(rest, 0, "(", ")") == len(rest):
        rest = rest[1:-1]
    return rest or expr


_SET_EXTREMUM = re.compile(r"^\s*(?:inf|sup|min|max)\s*\{\s*(?P<var>[A-Za-zα-ωΑ-Ω]\w*(?:_\{[^{}]*\}|_\w+)?'?)\s*(?::|\|)\s*")
_COMPARISON = re.compile(r"<=|>=|≤|≥|<|>")


def _set_extremum(expr: str) -> tuple[str, str]:
    """``inf{λ : (1/(n+1)) (Σ_i l(z_i, λ) + B) ≤ α}`` -> the quantity the search compares with its bound,
    ``(1/(n+1)) (Σ_i l(z_i, λ) + B)``: code finds the threshold by scanning candidates and testing that
    quantity, so the formula check looks for it. The side that holds the search variable is taken, and only
    when the set is one comparison of it with a bound written without it. (text, reason when it has no reading.)"""
    match = _SET_EXTREMUM.match(expr)
    if not match:
        return expr, ""
    close = closing_bracket(expr, expr.index("{"), "{", "}")
    if close != len(expr.rstrip()):
        return expr, "uses an infimum over a set"
    body = expr[match.end() : close - 1]
    depth, cuts = 0, []
    for i, ch in enumerate(body):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(ch, 0)
        if depth == 0 and _COMPARISON.match(body, i) and not (i and body[i - 1] in "<>"):
            cuts.append(_COMPARISON.match(body, i))
    if len(cuts) != 1:
        return expr, "uses an infimum over a set"
    var = re.escape(match.group("var"))
    sides = [body[: cuts[0].start()].strip(), body[cuts[0].end() :].strip()]
    holds = [bool(re.search(rf"(?<![\w\\]){var}(?!\w)", side)) for side in sides]
    if holds.count(True) != 1 or not all(sides):
        return expr, "uses an infimum over a set"
    return sides[holds.index(True)], ""


_INTEGRAL_HEAD = re.compile(r"(?<![\w.])(?:∫|\\int|integral)(?![A-Za-z])")
_DIFFERENTIALS = re.compile(r"(?:\s*\bd[A-Za-zα-ωΩ]\b)+\s*")


def _integrals(expr: str) -> tuple[str, str]:
    """``-∫_Ω |u - u_d|^2 dx - α ∫_Ω |f|^2 dx`` -> ``-mean(|u - u_d|^2) - α mean(|f|^2)``: an integral over the
    domain that is a term of its own is, discretised, a sum or mean over the grid, and the formula check
    compares the integrand (its outer reduction is stripped). An integral inside a bracket or a product, or
    one whose differential is not found, has no such reading: (text, reason)."""
    out = expr
    for _ in range(6):
        m = _INTEGRAL_HEAD.search(out)
        if not m:
            return out, ""
        depth = sum({"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(ch, 0) for ch in out[: m.start()])
        before = out[: m.start()].rstrip()
        coefficient = re.search(r"(?:^|[+\-−=])\s*(?:[\w.α-ω]+\s*\*?\s*)?$", before)
        if depth or coefficient is None:
            return expr, "uses an integral inside a bracket or a product"
        end, differential = _integral_parts(out, m)
        if differential is None or not out[end : differential.start()].strip():
            return expr, "uses an integral with no differential (dx) to close it"
        after = out[differential.end() :]
        if after.strip() and not re.match(r"\s*[+\-−]", after):
            return expr, "uses an integral inside a bracket or a product"
        out = out[: m.start()] + f"mean({_abs_bars(out[end : differential.start()].strip())})" + (" " + after.lstrip() if after.strip() else "")
    return expr, "uses too many integrals"


def integral_differentials(expr: str) -> tuple[str, ...]:
    """The distinct differentials (``dx``, ``dt dx``) of the integrals ``_integrals`` reads as means: the
    formula check then takes a sum times the cell size, or a quadrature call, as the same measure."""
    out = set()
    for m in _INTEGRAL_HEAD.finditer(expr):
        _, differential = _integral_parts(expr, m)
        if differential is not None:
            out.add(" ".join(sorted(ascii_symbol(differential.group(0)).split())))
    return tuple(sorted(out))


def _integral_parts(expr: str, head: re.Match) -> tuple[int, re.Match | None]:
    """Where the integrand of the integral at ``head`` starts (after its bounds), and its closing differential
    (the first ``dx`` outside brackets after that), or None."""
    end = _subscript_end(expr, head.end())
    if expr[end : end + 1] == "^":
        end = _subscript_end(expr, end)
    level = 0
    for k in range(end, len(expr)):
        level += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(expr[k], 0)
        if level == 0 and (d := _DIFFERENTIALS.match(expr, k)) and d.group(0).strip() and (k == 0 or not expr[k - 1].isalnum()):
            return end, d
    return end, None


_KL_HEAD = re.compile(r"(?<![\w.])(?:D_\{?KL\}?|D_\{?\\mathrm\{KL\}\}?|KL)\s*(?=[(\[])")


def _divergences(expr: str) -> str:
    """``β KL(q(y|x) || p(y))``, ``D_KL[q ‖ p]`` -> ``β KL``: the divergence between two distributions is one
    quantity the code computes (a closed form, ``kl_divergence``), which the formula check finds under its
    name (``kl``, ``kld``, ``kl_loss``); what the formula says is how that term is combined with the others.
    Only a bracket holding the ``||`` between the two distributions is read so."""
    out = expr
    for _ in range(4):
        m = _KL_HEAD.search(out)
        if not m:
            return out
        open_ = out[m.end()]
        end = closing_bracket(out, m.end(), open_, ")" if open_ == "(" else "]")
        inner = out[m.end() + 1 : end - 1] if end > 0 else ""
        depth, separated = 0, False
        for k, ch in enumerate(inner):
            depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(ch, 0)
            if depth == 0 and (ch == "‖" or inner[k : k + 2] == "||"):
                separated = True
        if not separated:
            return out
        out = out[: m.start()] + "KL" + out[end:]
        if re.fullmatch(r"[\s\-−]*KL\s*", out):
            return expr  # the divergence alone: nothing of the formula is left to compare
    return out


_CAPITAL_OPERAND = r"[A-Z][A-Za-z0-9]*(?:_\{[^{}]*\}|_\w+|\^\{[^{}]*\}|\^\w)*"
_CAPITALS_TIMES = re.compile(rf"(?:{_CAPITAL_OPERAND}|\))\s*×\s*(?:{_CAPITAL_OPERAND}|\()")


def _letter_times(expr: str) -> str:
    """``V x Softmax(...)``: the letter x between two capital operands is a times sign, not a vector."""
    out, last = [], 0
    for m in re.finditer(r"\s+x\s+(?=[A-Z])", expr):
        if re.search(rf"(?:(?<![\w^_{{]){_CAPITAL_OPERAND}|\))$", expr[: m.start()]):
            out.append(expr[last : m.start()] + " × ")
            last = m.end()
    return "".join(out) + expr[last:]


# ----- gradients: ∇_x f, ∂f/∂x, grad_x f, partial_u/partial_p -> grad(f, x) -----------------------------------
_NAME = r"[A-Za-zα-ωΑ-Ω][\wα-ωΑ-Ω']*(?:_\{[^{}]*\}|\^\{[^{}]*\}|\^[A-Za-z0-9]\w*)*"
_NAME_RE = re.compile(_NAME)
_GRAD_VARIABLE = rf"(?:_\{{\s*(?P<braced>{_NAME})\s*\}}|_(?P<plain>{_NAME}))"
_GRAD_HEAD = re.compile(rf"(?:∇|\bgrad(?=_)|∂)(?P<wrt>{_GRAD_VARIABLE})?")
_LEIBNIZ = re.compile(rf"∂\s*(?P<f>\((?:[^()]|\([^()]*\))*\)|{_NAME}(?:\([^()]*\))?)\s*/\s*∂\s*(?P<x>{_NAME})(?![\w(])")
_PARTIAL_WORDS = re.compile(rf"\bpartial_(?P<f>{_NAME})\s*/\s*partial_(?P<x>{_NAME})(?![\w(])")


def _grad_operand(text: str, i: int) -> int:
    """End of what a gradient at ``text[i:]`` is taken of: a bracket, ``log`` of an operand, or one name
    with its application (``D(x̂)``, ``L(W₀, x_i)``, ``q_t(x)``); -1 when there is none."""
    while i < len(text) and text[i] == " ":
        i += 1
    if text.startswith(("log ", "ln "), i):
        return _grad_operand(text, text.index(" ", i))
    if text.startswith(("log(", "ln("), i):
        i = text.index("(", i)
    if i < len(text) and text[i] == "(":
        return closing_bracket(text, i, "(", ")")
    name = _NAME_RE.match(text, i)
    if not name:
        return -1
    end = name.end()
    if text[end : end + 1] == "(":
        end = closing_bracket(text, end, "(", ")")
    return end


def _gradients(expr: str) -> tuple[str, str]:
    """Papers' gradient notation as the check's ``grad(f, x)`` (one object on both sides, see
    ``verifier.symbolic.latex.Grad``): ``∇_x L(x)``, ``∇_{x̂} D(x̂)``, ``grad_x log q(x)``, ``∂_t u``,
    ``∂L/∂W``, ``∂(x²)/∂x``, ``partial_u/partial_p`` (a Jacobian). A gradient with no variable (``∇L``),
    a second derivative (``∇²``, ``∂²u/∂x²``), a divergence (``∇·u``) or anything else is refused."""
    if not re.search(r"∇|∂|\bgrad_|\bpartial[_^]", expr):
        return expr, ""
    if re.search(r"∇\s*(?:²|\^|·|⋅|\*|×)|∂\s*(?:²|\^)|\bpartial\^", expr):
        return expr, "uses a second derivative, divergence or curl"
    out = _PARTIAL_WORDS.sub(lambda m: f"grad({m.group('f')}, {m.group('x')})", expr)
    out = _LEIBNIZ.sub(lambda m: f"grad({m.group('f')}, {m.group('x')})", out)
    start = 0
    for _ in range(8):
        m = _GRAD_HEAD.search(out, start)
        if not m:
            return out, ""
        if m.group(0).startswith("grad") and not re.match(r"\s+(?:log\b|ln\b)?\s*[A-Za-zα-ωΑ-Ω(]", out[m.end() :]):
            start = m.end()  # `grad_norm * c`: an identifier, not the operator
            continue
        if not m.group("wrt"):
            return expr, "uses a gradient with no variable it is taken with respect to"
        wrt = m.group("braced") or m.group("plain")
        if "^" in wrt:
            return expr, "uses a second derivative, divergence or curl"
        end = _grad_operand(out, m.end())
        if end < 0:
            return expr, "uses a gradient of nothing it can read"
        if out[end : end + 1] in ("^", "_", "(", "²"):
            return expr, "uses a gradient whose operand cannot be delimited (∇_x f(x)^2: of f or of f²?)"
        operand = out[m.end() : end].strip()
        if operand.startswith(("log ", "ln ")):
            head, _, rest = operand.partition(" ")
            operand = f"{head}({rest.strip()})"
        out = out[: m.start()] + f"grad({operand}, {wrt})" + out[end:]
    return expr, "uses too many gradients"


def _paper_notation(expr: str) -> tuple[str, str]:
    """The notation papers write that has one elementwise reading, rewritten; (text, reason when it has none)."""
    expr = _objective(expr)
    expr, reason = _set_extremum(expr)
    if reason:
        return expr, reason
    expr, reason = _integrals(expr)
    if reason:
        return expr, reason
    expr = _divergences(expr)
    for mark, name in _COMBINING.items():
        expr = re.sub(rf"(\w){mark}", rf"\1{name}", expr)  # L̃ -> L_tilde
    expr = re.sub(r"(?<=[A-Z0-9_])-(?=[A-Z]{2,}[A-Za-z0-9]*\b)(?<=[A-Z]-)", "_", expr)  # F_SC-FNO: one hyphenated name
    expr, reason = _gradients(expr)
    if reason:
        return expr, reason
    expr = _norms(expr)
    expr = re.sub(r"(?<![\w.])(?:avg|average)\s*(?=\||\()", "mean", expr)  # "avg |a - b|": the mean, not a symbol avg
    expr = re.sub(r"(?<![\w.])mean\|([^|]+)\|", r"mean(abs(\1))", expr)
    expr = _abs_bars(expr)
    expr = _expectation_brackets(expr)
    expr, reason = _bracket_lists(expr)
    if reason:
        return expr, reason
    expr, reason = _sums(expr)  # first: the bound of sum_{i=1}^{T} is not a transpose
    if reason:
        return expr, reason
    if _MODE_PRODUCT.search(expr):
        return expr, "uses a mode-n tensor product (×_n)"
    expr = _letter_times(expr)
    expr = re.sub(r"\^\{\((\w+)\)\s*\^\s*\{?\s*(?:T|⊤|\\top)\s*\}?\}", r"^{(\1)}^T", expr)  # K^{(i)^T}: the i-th K, transposed
    expr, reason = _transposes(expr)
    if reason:
        return expr, reason
    expr, reason = _inverses(expr)
    if reason:
        return expr, reason
    if "×" in expr and (re.search(r"\b(?:transpose|matmul)\(", expr) or _CAPITALS_TIMES.search(expr)):
        return expr, "uses × beside matrices (a matrix or an elementwise product?)"
    expr = re.sub(r"\s*(?:⊙|∘|\bodot\b)\s*", " * ", expr)  # the elementwise product: `*` on tensors
    expr = expr.replace("√(", "sqrt(")
    expr = _SQRT_ATOM.sub(r"sqrt(\1)", expr)
    # "log p_θ(x)": the log of the applied function written after it, a bracket papers leave out
    expr = re.sub(r"\b(log|ln)\s+([A-Za-zα-ωΑ-Ω][\w'^{}]*\([^()]*\))", r"\1(\2)", expr)
    for capital, name in _CAPITAL_FUNCS.items():
        expr = re.sub(rf"\b{capital}(?=\s*\()", name, expr)
    return expr, ""


def to_sympy(text: str, code: bool = False) -> tuple[str | None, str]:
    """SymPy syntax for an ASCII/Unicode expression, or (None, reason). ``code``: the text is a parsed
    expression of a pseudo-code listing, whose long lower-case names are identifiers, not prose."""
    expr = text.strip().rstrip(".,;")
    expr = re.sub(r"\s*\((?:Eq|eq)\.?\s*\d+\)\s*$", "", expr)
    expr, reason = _paper_notation(expr)
    if reason:
        return None, reason
    for token, reason in _UNTRANSLATABLE.items():
        if token in expr and token not in "[{":
            return None, f"uses {reason}"
    if re.search(r"(?<![\w.])grad(?:_\{?[\w,]+\}?)?\s+(?=[A-Za-zα-ω(])", expr):
        return None, "uses a gradient (grad_x)"  # "grad_x log q(x)": an operator, not a factor
    expr = (
        expr.replace("−", "-").replace("×", "*").replace("·", " ").replace("⋅", " ").replace("²", "**2").replace("³", "**3")
        .replace("√", "sqrt").replace("’", "'")
    )  # fmt: skip
    expr = _flatten_subscripts(expr)
    expr = re.sub(r"\^\{?\((\w+)\)\}?", r"_\1", expr)  # W^{(i)}: the i-th, not a power
    # a letter superscript names a variant (x_t^k, x^{k_s}), a numeric one is a power
    expr = re.sub(r"([A-Za-z]\w*)\^\{([A-Za-z][\w,/]*)\}", lambda m: m.group(1) + "_" + re.sub(r"[,/]", "", m.group(2)), expr)
    expr = re.sub(r"([A-Za-z]\w*)\^\{?([A-Za-z][A-Za-z0-9]*)\}?", r"\1_\2", expr)
    expr = re.sub(r"\^\{([^{}]*)\}", r"**(\1)", expr).replace("^", "**")
    expr = ascii_symbol(expr)
    expr = re.sub(r"(?<![\w.])lambda(?!\w)", "lam", expr)  # "L + lambda * R": λ spelled out (a Python keyword)
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
        implicit = False
        if operand_start and prev_operand_end:
            # sigma(x), g_theta(x, t): a name written right against "(" is applied; "s (x - y)" multiplies
            is_call = tok == "(" and re.match(r"[A-Za-z_]", prev or "") and (prev_end == m.start() or prev.lower() in _KNOWN_FUNCS)
            if not is_call:
                out.append(_JUXTAPOSED)
                implicit = True
        out.append(tok)
        prev, prev_end = tok, m.end()
    tokens, found = out, set()
    out, reason = _juxtapositions(tokens, frozenset(), found)
    if found:  # a matrix of one product (`B A x`) is one in the others too (`W_0 x`)
        out, reason = _juxtapositions(tokens, frozenset(found), set())
    if reason:
        return None, reason
    bare = [t for i, t in enumerate(out) if t in _NEEDS_ARGUMENT and (i + 1 >= len(out) or out[i + 1] != "(")]
    if bare:
        return None, f"a function name without its argument in brackets ({bare[0]})"
    result = " ".join(out).replace("( ", "(").replace(" )", ")").replace(" ,", ",")
    result = re.sub(r"(\w) \(", r"\1(", result).replace("- (", "-(")
    result = re.sub(r"\s*\*\*\s*", "**", result)
    if not _valid(result):
        return None, "not a well-formed expression after translation"
    # the arguments of an opaque function are names ("epsilon_theta(x, empty)"), not prose
    outside_args = result
    for _ in range(6):
        outside_args = _OPAQUE_CALL.sub(r"\1", outside_args)
    words = [w for w in re.findall(r"[A-Za-z_]\w*", outside_args) if re.fullmatch(r"[a-z]{5,}", w)]
    prose = [w for w in words if w not in _KNOWN_FUNCS and w not in GREEK_NAMES and not _CODE_COMPOUND.fullmatch(w)]
    prose += [w for w in re.findall(
        r"\b(?:vs|to|of|in|is|and|or|the|for|at|by|from|with|down|up|over|each|then|else|when|into|only|until|per|via)\b",
        result,
    )]
    prose += [f"{w} without brackets" for w in re.findall(r"\b(?:sum|mean|prod|E)\b(?!\()", result)]
    if prose and not code:
        return None, f"mixes prose into the expression ({prose[0]})"
    if not re.search(r"[-+*/]|\w\(", result):
        return None, "a bare symbol, not an expression"
    return result, ""


_JUXTAPOSED = "\x00"  # implicit multiplication, until _juxtapositions decides scalar or matrix product


def _operand_end(tokens: list[str], i: int) -> int:
    """Past the operand starting at ``i``: a name (applied to a group), a number or a group, and its powers."""
    def atom_end(j: int) -> int:
        if j < len(tokens) and tokens[j] == "(":
            close = closing_bracket(tokens, j, "(", ")")
            return close if close > 0 else len(tokens)
        if j + 1 < len(tokens) and re.match(r"[A-Za-z_]", tokens[j]) and tokens[j + 1] == "(":
            return atom_end(j + 1)
        return j + 1

    end = atom_end(i)
    while end + 1 < len(tokens) and tokens[end] == "**":
        end = atom_end(end + 1 if tokens[end + 1] != "-" else end + 2)
    return end


def _rewrite_groups(tokens: list[str], start: int, end: int, known: frozenset, found: set) -> tuple[list[str], str]:
    """The operand ``tokens[start:end]`` with the juxtapositions inside its brackets resolved."""
    out: list[str] = []
    i = start
    while i < end:
        if tokens[i] == "(":
            depth, j = 0, i
            for j in range(i, end):
                depth += {"(": 1, ")": -1}.get(tokens[j], 0)
                if depth == 0:
                    break
            inner, reason = _juxtapositions(tokens[i + 1 : j], known, found)
            if reason:
                return [], reason
            out += ["(", *inner, ")"]
            i = j + 1
        else:
            out.append(tokens[i])
            i += 1
    return out, ""


def _capital(name: str) -> bool:
    return bool(re.match(r"[A-Z]", name)) and name.lower() not in _KNOWN_FUNCS and name.split("_")[0] not in GREEK_NAMES


def _known_matrix(operand: list[str], known: frozenset) -> bool:
    """Transposed or multiplied as a matrix (here or elsewhere in the formula)."""
    return any(t in ("transpose", "matmul", "inv") or t in known for t in operand)


def _matrix_like(operand: list[str], known: frozenset) -> bool:
    """``B``, ``W_q``, ``transpose(K)``, ``(W_0 + B A)``, ``softmax(Q K^T)``: capitals are matrices."""
    if _known_matrix(operand, known):
        return True
    head = operand[0]
    if head == "concat":
        return True  # a tensor: `W_O [h_1, ..., h_H]` multiplies it as a matrix, `s [P, Z]` scales it
    if head.startswith("slice_") and len(operand) > 2:
        return _matrix_like(operand[2:3], known)  # a slice of a matrix is one
    if _capital(head):
        return len(operand) == 1 or operand[1] == "**"
    if head == "(":
        return any(_capital(t) for t in operand[1:-1])
    return False


def _juxtapositions(tokens: list[str], known: frozenset, found: set) -> tuple[list[str], str]:
    """Operands written side by side: a matrix product ``matmul(B, A)`` when two of them are matrices or one
    is transposed (``s B A`` -> ``s*matmul(B, A)``, ``W^T x``): leading numbers, Greek and lower-case names
    are scalar coefficients, a lower-case name after a matrix is the vector it acts on. A single capital
    applied to a vector (``W h``) has no sign that it is a matrix: refused rather than read elementwise."""
    items: list[tuple[str, list[str]]] = []  # ("operand", tokens) | ("op", [tok])
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in ("+", "-", "*", "/", ",", _JUXTAPOSED):
            items.append(("op", [tok]))
            i += 1
            continue
        end = _operand_end(tokens, i)
        operand, reason = _rewrite_groups(tokens, i, end, known, found)
        if reason:
            return [], reason
        items.append(("operand", operand))
        i = end
    out: list[str] = []
    refused = ""
    k = 0
    while k < len(items):
        kind, toks = items[k]
        if kind == "op":
            out += ["*"] if toks == [_JUXTAPOSED] else toks
            k += 1
            continue
        chain = [toks]
        while k + 2 < len(items) and items[k + 1] == ("op", [_JUXTAPOSED]) and items[k + 2][0] == "operand":
            chain.append(items[k + 2][1])
            k += 2
        k += 1
        made = _chain(chain, known, found) if len(chain) > 1 else toks
        if made and made[0] == "\x01":
            refused = refused or made[1]  # read on: a matrix found later decides a second reading
            made = ["x"]
        out += made
    return (out, "") if not refused else ([], refused)


def _chain(chain: list[list[str]], known: frozenset, found: set) -> list[str]:
    matrices = [n for n, operand in enumerate(chain) if _matrix_like(operand, known)]
    evident = len(matrices) >= 2 or any(_known_matrix(chain[n], known) for n in matrices)
    if not matrices or (not evident and matrices[-1] == len(chain) - 1):
        return [t for n, operand in enumerate(chain) for t in (["*"] if n else []) + operand]  # "2 x", "λ L"
    if not evident:  # "W h", "U (x + b)": a matrix applied to what follows, or a scalar?
        return ["\x01", "a product of one capital symbol and what follows it, with no sign it is a matrix"]
    first = matrices[0]
    if first == len(chain) - 1:
        # "x W^T": a lone matrix last; a leading Latin name is the row vector it multiplies, not a scalar
        while first > 0 and re.fullmatch(r"[A-Za-z]\w*", chain[first - 1][0]) and len(chain[first - 1]) == 1 and (
            chain[first - 1][0].split("_")[0].rstrip("0123456789").lower() not in _GREEK_HEADS
        ):
            first -= 1
    for operand in chain[first:]:
        if len(operand) == 1 and re.match(r"[A-Za-z_]", operand[0]):
            found.add(operand[0])
    coefficient = [t for n, operand in enumerate(chain[:first]) for t in (["*"] if n else []) + operand]
    product = ["matmul", "("]
    for n, operand in enumerate(chain[first:]):
        product += ([","] if n else []) + operand
    product.append(")")
    return coefficient + (["*"] if coefficient else []) + product


def latex_of(text: str) -> str:
    return text.strip().strip("$").strip()


def _latex_prose_words(body: str) -> list[str]:
    r"""English words of a LaTeX segment outside commands, their arguments and sub/superscripts (``L_{Dice}``,
    ``\text{softmax}`` are names)."""
    bare = re.sub(r"\\[A-Za-z]+\s*(?:\{[^{}]*\})?|[_^]\{[^{}]*\}|[_^]\w+", " ", body)
    return [w for w in re.findall(r"(?<![\w\\])[A-Za-z]{3,}(?![\w(])", bare) if w.lower() not in _LATEX_FUNCTION_WORDS]


_LATEX_FUNCTION_WORDS = frozenset("exp log sin cos tan max min sum mean softmax sigmoid relu tanh std var".split())


_PROSE_CUT = re.compile(
    r":\s|\s[—–]\s|\s#|\s(?:where|with|for|when|if|otherwise|i\.e\.|e\.g\.|during|via|using|and|which|is|are|as|in|on|per|to)\s"
    r"|\s[a-z]{3,}ed\s+(?:by|with|from|over|across|along|at|after|until|between)\s"  # "... - 1 ramped by the progress p"
    r"|\s(?:over|across|among)\s+(?:the|all|each|every|its|their|[A-Z]\s)",  # "σ(r_w - r_l) over the K outcomes"
)
# "(per spatial grid)", not sqrt(a * b) nor "(logp - logp_ref)" (a spaced minus is an operator, a hyphen is not)
_TRAILING_REMARK = re.compile(r"\s+\((?=[A-Za-z]{3,}\s)(?![^()]*\s[-−]\s)[^()*/^=+]*\)\s*$")


def _trim_prose(rhs: str) -> str:
    """``P_max + l: maximum sequence length`` -> ``P_max + l``: the expression, not the sentence after it."""
    text = _TRAILING_REMARK.sub("", rhs)  # "P + l (total frames in a clip)"
    whole = _SET_EXTREMUM.match(text)  # "inf{λ: ...}": the colon is the set's, not the start of prose
    if whole and (close := closing_bracket(text, text.index("{"), "{", "}")) > 0:
        return text[:close].strip()
    head = _PROSE_CUT.split(text, maxsplit=1)[0]
    return _TRAILING_REMARK.sub("", head).strip()


_CONDITION = re.compile(r"\s(?P<word>with|using|via|if|otherwise|when|unless|except)\s+(?P<rest>.*[A-Za-z]{3}.*)$", re.DOTALL)


def _condition_after(rhs: str) -> str:
    """The condition a formula's prose adds (``... with a causal mask``, ``... if i >= P``): a description of
    the left-hand side is not one, but a condition is part of the claim the formula check does not see."""
    match = _CONDITION.search(_TRAILING_REMARK.sub("", rhs))
    if not match or match.start() < len(_trim_prose(rhs)):
        return ""
    return f"{match.group('word')} {match.group('rest').strip()}"[:60]


_STANDARD_NOISE = re.compile(
    r"^(?:with|where)\s+(?P<sym>[A-Za-zα-ωΑ-Ωε][\w{}]*)\s*~\s*(?:N|𝒩|Normal|\\mathcal\{N\})\s*\(\s*0\s*,\s*(?:I|1|𝐈|\\mathbf\{I\})\s*\)$"
)


def _standard_noise(condition: str, names: tuple[str, ...]) -> str:
    """``z = μ + σ ε with ε ~ N(0, I)``: the condition says ε is a standard-normal draw (the check's noise
    role), so it is checked, not left over. The formula's name for it, "" for any other condition."""
    match = _STANDARD_NOISE.match(condition.strip().rstrip(".;,"))
    if not match:
        return ""
    name = ascii_symbol(match.group("sym"))
    return name if name in names else ""


@functools.lru_cache(maxsize=4096)  # a fragment's formula is asked for by the guard, the check and the glossary
def find_formula(segment: str) -> FormulaFind | None:
    """The formula a text segment states (``lhs = rhs``), translated where possible and read back by the
    formula check's parser; None if not a formula."""
    draw = _gaussian(segment)
    if draw is not None:
        return draw
    if not looks_like_formula(segment):
        return None
    if not _LATEX_CMD.search(segment) and re.search(r"\$[^$\s][^$]*\$", segment):
        segment = segment.replace("$", " ")  # "$V_t = H_t (1 - S_t) + V_{reset} S_t$": math delimiters, no LaTeX inside
    if _LATEX_CMD.search(segment):
        lhs, sep, rhs = segment.partition("=")
        body = latex_of(_trim_prose(rhs) if sep else segment)  # "\sum_i \exp(z_i) is the softmax normaliser"
        if len(_latex_prose_words(body)) >= 2:
            # "where \mu and \sigma are the channel-wise mean ...": a sentence with symbols in it, which the
            # parser would read as a product of letters
            return None if not sep else FormulaFind(lhs.strip(), None, None, (), "mixes prose into the expression")
        reason = paper_side_problem(None, body)
        if reason:
            return FormulaFind(lhs.strip() if sep else "", None, None, (), reason)
        return FormulaFind(lhs.strip() if sep else "", None, body, ())
    raw = _top_level_sides(segment)
    parts = [p.strip() for p in raw]
    lhs = parts[0]
    arrow = segment[len(raw[0]) : len(raw[0]) + 1] in ("←", "<", ":")  # θ ← ..., θ <- ..., θ := ...
    if len(parts) == 2 and (operation := _prefix_product(lhs, _trim_prose(parts[1]))):
        return FormulaFind(lhs, None, None, (), "uses a product with bounds (prod)", call=operation)
    if len(parts) == 2 and _running_product(lhs, _trim_prose(parts[1])):
        return FormulaFind(lhs, None, None, (), "uses a running product up to the left side's own index (prod)")
    # "grad log q = -(x - mu)/sigma^2 = -z/((1-t)(1-k))": the last side is the closed form
    sides = [(p, _trim_prose(p)) for p in parts[1:] if p]
    reason = "no right-hand side"
    for side, rhs in reversed([s for s in sides if s[1]]):
        expect, reason = to_sympy(rhs)
        if expect is not None and re.search(r"[A-Za-z_]", expect):
            problem = paper_side_problem(expect, None)
            if problem:
                reason = problem
                continue
            condition = _condition_after(side)
            noise = _standard_noise(condition, _symbol_names(expect))
            return FormulaFind(
                lhs, expect, None, _symbol_names(expect), unchecked="" if noise else condition,
                integral=integral_differentials(rhs), assume=((noise, "standard_normal"),) if noise else (),
                # "θ ← θ − η g", "w_{t+1} = w_t − α g_t": a new value of θ, w_t (only `lhs = rhs`: in a chain
                # "For k = K down to 1: W^{(k-1)} = ..." the first side is no symbol of the rule)
                update=_updated_symbol(lhs, expect, arrow) if len(parts) == 2 else "",
                update_arrow=arrow and len(parts) == 2,
            )
    return FormulaFind(lhs, None, None, (), reason)


def _updated_symbol(lhs: str, expect: str, arrow: bool = False) -> str:
    """The symbol an update rule gives a new value (``θ`` of ``θ ← θ − η g``, ``w_t`` of ``w_{t+1} = w_t −
    ...``): its left side, or its previous value, is on the right; "" for a definition of something else."""
    import sympy

    from verifier.symbolic.latex import update_target

    key = symbol_key((lhs.split() or [""])[-1]) if lhs.strip() else ""
    if not key:
        return ""
    names = _symbol_names(expect)
    return update_target(key, sympy.Add(*[sympy.Symbol(n) for n in names]), arrow=arrow) or ""


_CLAIM_SEGMENTS = re.compile(r"[;\n]|(?<=[.!?])\s+(?=[A-Z])|,\s+(?=[^,=←]{1,40}(?:=|←|<-))")


@functools.lru_cache(maxsize=1024)
def update_in_claim(claim: str, expect: str) -> tuple[str, bool]:
    """(the symbol a claim's update rule gives a new value, written with an arrow?) for the compiled check
    whose ``expect`` is that rule's right side (("", False) when the claim states no such rule): the check's
    semantics (the X on the right is the old value of the variable assigned) without a second check field."""
    for segment in _CLAIM_SEGMENTS.split(claim):
        for piece in (segment, segment.split(": ", 1)[-1]):
            found = find_formula(piece.strip()) if piece.strip() else None
            if found is not None and found.expect == expect and found.update:
                return found.update, found.update_arrow
    return "", False


def _gaussian(segment: str) -> FormulaFind | None:
    """``x_t ~ N(t x_1 + (1-t) x_0, (1-t)^2 I)`` -> the reparameterised draw ``mean + std * noise``, its noise a
    standard-normal draw (``assume: {noise: standard_normal}``: the check maps it to a randn-like leaf only)."""
    from verifier.compiler import distributions

    draw = distributions.gaussian_draw(segment)
    if draw is None:
        return None
    if draw.expect is None:
        return FormulaFind(draw.variable, None, None, (), draw.reason)
    problem = paper_side_problem(draw.expect, None)
    if problem:
        return FormulaFind(draw.variable, None, None, (), problem)
    rest = draw.rest if re.search(r"[A-Za-z]{3}", draw.rest) else ""
    return FormulaFind(
        draw.variable, draw.expect, None, _symbol_names(draw.expect), unchecked=rest,
        assume=((draw.noise, distributions.NOISE_ROLE),),
    )


_PRODUCT_HEAD = re.compile(r"^(?:∏|\\prod|prod)_\{?\s*(?P<i>[a-z])\s*=\s*[01]\s*(?:\.\.|…|,\s*\.\.\.\s*,|\}\^\{?)\s*(?P<k>[a-z])\s*\}?\s*")


def _prefix_product(lhs: str, rhs: str) -> str:
    """``ᾱ_k = ∏_{i=1}^{k} α_i`` (the product up to the left-hand side's own index, for every k): the running
    product of a sequence, which code computes with ``cumprod`` (torch, NumPy, JAX, the tensor method); the
    formula check has no elementwise reading of it. "" for any other product."""
    head = _PRODUCT_HEAD.match(rhs)
    if head is None:
        return ""
    index, upper = head.group("i"), head.group("k")
    factor = rhs[head.end() :].strip()
    lhs_index = re.fullmatch(r"[^\s=]+?_\{?([a-z])\}?", ascii_symbol((lhs.split() or [""])[-1]))  # "where ᾱ_k"
    if index == upper or lhs_index is None or lhs_index.group(1) != upper:
        return ""
    term = rf"[A-Za-zα-ω]\w*?_\{{?{index}\}}?"
    if not re.fullmatch(rf"{term}|\(\s*1\s*[-−]\s*{term}\s*\)", ascii_symbol(factor)):
        return ""  # a product of one indexed sequence, nothing else
    return "cumprod"


def _running_product(lhs: str, rhs: str) -> bool:
    """``a_k = ∏_{i=1}^{k} b_i c``: a product up to the left side's own index is one value per k (a cumulative
    product), not the product over all entries that ``prod`` reads."""
    head = _PRODUCT_HEAD.match(rhs)
    lhs_index = re.fullmatch(r"[^\s=]+?_\{?([a-z])\}?", ascii_symbol((lhs.split() or [""])[-1]))
    return bool(head and lhs_index and head.group("k") == lhs_index.group(1))


def _top_level_sides(segment: str) -> list[str]:
    """The sides of ``a = b = c`` cut at ``=`` outside brackets (``sum_{j=1}^{M}`` keeps its bound)."""
    sides, depth, start = [], 0, 0
    for i, ch in enumerate(segment):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        elif ch == "=" and depth == 0 and segment[i - 1 : i] not in ("<", ">", "!", "=", ":") and segment[i + 1 : i + 2] != "=":
            sides.append(segment[start:i])
            start = i + 1
        elif depth == 0 and not sides and (ch == "←" or segment.startswith(("<-", ":="), i) and segment[i - 1 : i] != "<"):
            sides.append(segment[start:i])  # "θ ← θ − η g": an update rule, its left side the updated symbol
            start = i + (1 if ch == "←" else 2)
    sides.append(segment[start:])
    return sides


_REDUCTIONS = frozenset({"rmean", "rsum", "rmax", "rmin", "rprod", "pick"})


@functools.lru_cache(maxsize=2048)
def paper_side_problem(expect: str | None, latex: str | None) -> str:
    """Why the formula check could not use this paper side ("" when it can): it must parse with the check's
    own parser and leave something to compare (not one opaque quantity)."""
    import sympy

    from verifier.symbolic.latex import FormulaSyntaxError, Grad, parse_formula  # sympy: only when a formula is found

    try:
        formula = parse_formula(expect, latex)
    except FormulaSyntaxError as exc:
        return f"the formula check cannot read it: {exc.reason}"
    except (RecursionError, ValueError, TypeError) as exc:
        return f"the formula check cannot read it: {type(exc).__name__}"
    expr = formula.expr
    if expr.is_Symbol or expr.is_Number:
        return "one opaque quantity, nothing to compare"
    bare = expr.replace(lambda n: isinstance(n, Grad) and n.args[0].is_Symbol and n.args[1].is_Symbol, lambda n: n.args[0])
    if bare != expr and (bare.is_Symbol or (bare.is_Mul and len(bare.free_symbols) == 1 and bare.as_coeff_Mul()[1].is_Symbol)):
        # ∂L/∂W, partial_u/partial_p alone: any gradient the code takes maps onto it by name alone
        return "one gradient of one quantity, nothing to compare"
    shaping = [f for f in expr.atoms(sympy.Function) if type(f).__name__ not in _REDUCTIONS]
    if len(expr.free_symbols) < 2 and not shaping:
        return "one symbol and constants, nothing to compare"  # mean(f(x)) matches any mean
    return ""


# ----- indexes inside formulas ---------------------------------------------------------------------------
# "{α_k}_{k=1..K}", "prod_{i=1}^{n}", "W_{u,[0,T]}^{(K)}", "W^{(0)}": bounds of an index and the index of a
# variant; their numbers are positions, never a setting the code must have
_INDEX_SPANS = re.compile(
    r"_\{[^{}\n]*(?:=|\.\.|…|:|,|\[)[^{}\n]*\}(?:\^\{?[A-Za-z]\w*\}?)?"  # _{i=1}^{n}, _{k=1..K}, _{u,[0,T]}, _{0:P}
    r"|\^\{?\(\s*[A-Za-z0-9]+(?:\s*[-+]\s*\d+)?\s*\)\}?"  # ^{(0)}, ^{(k-1)}
    r"|\^\{[^{}\n]*:[^{}\n]*\}"  # z_0^{0:P}: an index range
    r"|(?<=\w)\[\s*\w+\s*:\s*\w+\s*\]"  # u[0:M]: a slice of a sequence
)


def mask_indexes(text: str) -> str:
    """The digits of index bounds and variant indexes blanked (as ``§``), so no value is read from them."""
    return _INDEX_SPANS.sub(lambda m: re.sub(r"\d", "§", m.group(0)), text)


# ----- symbol glossaries ("where: - s: scaling factor") ----------------------------------------------------
@dataclass(frozen=True)
class GlossaryEntry:
    symbols: tuple[str, ...]  # as the formula check's paper side names them
    span: tuple[int, int]
    description: str


_GLOSS_SYMBOL = (
    r"[A-Za-zα-ωΑ-Ω][\w'\u0300-\u036f]*(?:_\{[^{}\n]{1,20}\}|\^\{[^{}\n]{1,20}\}|[_^][\w'α-ω]{1,12})*"
    r"(?:\([^()\n]{1,20}\))?"
)
_GLOSS_LINE = re.compile(
    rf"^[ \t]*(?:[-•*][ \t]+)?(?P<syms>{_GLOSS_SYMBOL}(?:[ \t]*,[ \t]*{_GLOSS_SYMBOL}){{0,4}})"
    r"(?:[ \t]*(?:∈|\bin\b)[ \t]*(?:R|ℝ)\^?\{?[^:\n]{0,30}?\}?)?[ \t]*:[ \t]+(?P<desc>\S[^\n]*)$",
    re.MULTILINE,
)
_GLOSS_INLINE = re.compile(
    rf"(?:(?<=^)|(?<=[\s(]))(?:where[ \t]+)?(?P<syms>{_GLOSS_SYMBOL})[ \t]+(?:is|denotes|represents)[ \t]+"
    r"(?P<desc>(?:the|a|an)[ \t][^.;,\n()=]{3,80}?)(?=[ \t]*(?:\([^()]*\))?[ \t]*(?:[.;,\n]|$))",
)
# a description stating a property (trainable, frozen, only, ...) is a claim of its own, not a name
_PROPERTY_WORDS = re.compile(
    r"\b(?:only|sole|solely|frozen|freeze|fixed|trainable|learnable|learned|learnt|trained|not|never|always|shared|"
    r"updated|initiali[sz]ed|zero|constant|random|randomly|sampled|clipped|normali[sz]ed|projected|computed|"
    r"obtained|derived|produced|generated|extracted|averaged|summed|concatenated|permuted|applied|masked)\b",
    re.IGNORECASE,
)


def symbol_key(symbol: str) -> str:
    """A paper symbol as the formula's SymPy side spells it: ``Q_i`` -> ``Q_i``, ``ε_θ`` -> ``eps_theta``,
    ``x_t^k`` -> ``x_t_k``, ``L̃_vlb(θ)`` -> ``L_tilde_vlb``."""
    s = symbol.strip()
    for mark, name in _COMBINING.items():
        s = re.sub(rf"(\w){mark}", rf"\1{name}", s)
    s = re.sub(r"\([^()]*\)$", "", s).strip()
    s = re.sub(r"\^\{[^{}]*:[^{}]*\}", "", s)  # z_0^{0:P}: an index range, not part of the name
    s = _flatten_subscripts(s)
    s = re.sub(r"\^\{?\((\w+)\)\}?", r"_\1", s)
    s = re.sub(r"([A-Za-z]\w*)\^\{([A-Za-z][\w,]*)\}", lambda m: m.group(1) + "_" + m.group(2).replace(",", ""), s)
    s = re.sub(r"([A-Za-z]\w*)\^\{?([A-Za-z][A-Za-z0-9]*)\}?", r"\1_\2", s)
    s = ascii_symbol(s)
    s = re.sub(r"(?<![\w.])lambda(?!\w)", "lam", s)  # as to_sympy spells it
    s = re.sub(r"(\w)'", r"\1_prime", s)
    return s if re.fullmatch(r"[A-Za-z_]\w*", s) else ""


def formula_names(expect: str) -> frozenset[str]:
    """Every name a translated formula uses, its opaque functions included (``g_theta`` of ``g_theta(x, t)``)."""
    return frozenset(n for n in re.findall(r"[A-Za-z_]\w*", expect) if n not in _KNOWN_FUNCS and not re.fullmatch(r"slice_[ahlbie]+", n))


def find_glossary(text: str) -> list[GlossaryEntry]:
    """Lines and clauses that only say what a symbol stands for ("s: scaling factor", "Q_i, Q_j: ratings",
    "where η is the learning rate"). A description stating a value, a formula or a property (frozen,
    trainable, only ...) is not a glossary entry: it is a claim of its own."""
    out: list[GlossaryEntry] = []
    for regex in (_GLOSS_LINE, _GLOSS_INLINE):
        for m in regex.finditer(text):
            desc = m.group("desc").strip()
            bare = re.sub(r"\([^()]*\)", " ", desc)
            if re.search(r"[=<>≤≥←]|\d", bare) or _PROPERTY_WORDS.search(desc) or looks_like_formula(desc):
                continue
            raw = [p.strip() for p in re.split(r"\s*,\s*", m.group("syms")) if p.strip()]
            keys = tuple(symbol_key(p) for p in raw)
            if not keys or not all(keys) or any(_is_word(p) for p in raw):
                continue
            if any(e.span[0] <= m.start() < e.span[1] for e in out):
                continue
            out.append(GlossaryEntry(keys, (m.start(), m.end()), desc))
    return sorted(out, key=lambda e: e.span)


def _is_word(symbol: str) -> bool:
    """``Input``, ``Output``, ``Assumption``: a heading word, not a symbol (``lambda``, ``sigma``: letters)."""
    return bool(re.fullmatch(r"[A-Za-z][a-z]{3,}", symbol.strip())) and symbol.strip() not in _GREEK_HEADS


def glossary_spans(text: str, fragments: list[tuple[int, int]], body_of, add_formula) -> list[tuple[int, int, list[int]]]:
    """Spans of the glossary entries that define symbols of a formula the claim states, each with that
    formula's check (``add_formula(body)`` -> check indexes): "s: scaling factor" is part of the formula's
    statement, not a fact of its own. An entry defining a symbol no emitted formula uses is left alone."""
    entries = find_glossary(text)
    if not entries:
        return []
    formulas_here: list[tuple[str, frozenset[str]]] = []
    for start, end in fragments:
        body = body_of(text[start:end])
        found = find_formula(body)
        if found is not None and found.expect is not None:
            formulas_here.append((body, formula_names(found.expect)))
    out = []
    for entry in entries:
        for body, names in formulas_here:
            if set(entry.symbols) <= names:
                made = [i for i in add_formula(body) if i >= 0]
                if made:
                    out.append((entry.span[0], entry.span[1], made))
                break
    return out
