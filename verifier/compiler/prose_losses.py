"""Losses stated in words: "the MSE loss between predicted and true noise", "MAE between current and target states".

A faithful repository computes them with a library call (``F.mse_loss``) or by hand (``((a - b) ** 2).mean()``);
a ``formula`` check accepts both (rules/sympy_map.yaml maps the calls, the outer mean is stripped), where a call
check on ``mse_loss`` would fail the hand-written one, and it tells an L1 loss from an L2 one. The operands'
words name the formula's symbols, so the search prefers the code values named like them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from verifier.compiler import terms

# the loss's elementwise term, in the operands A and B (the mean over elements is stripped on both sides)
_TERMS = {"squared": "({a} - {b})**2", "absolute": "Abs({a} - {b})"}
_KIND = (
    r"(?P<squared>MSE|mean[- ]squared[- ]error|squared[- ](?:L2[- ])?error|L2[- ](?:loss|distance))|"
    r"(?P<absolute>MAE|mean[- ]absolute[- ]error|absolute[- ]error|L1[- ](?:loss|distance))"
)
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*(?:\([^()]{0,20}\))?"  # "u_pred(T)", "u_target": the claim's own code names
_PHRASE = rf"(?:[A-Za-z][A-Za-z-]*(?:\s+[A-Za-z][A-Za-z-]*){{0,2}}?|{_IDENT})"
_LOSS_BETWEEN = re.compile(
    rf"\b(?:{_KIND})(?:\s+loss)?\s+between\s+(?:the\s+)?(?P<a>{_PHRASE})\s+and\s+(?:the\s+)?(?P<b>{_PHRASE})"
    r"(?=\s*(?:$|[,.;:(]|\s(?:using|with|for|over|at|on|in|via|computed|averaged|across|per|as|minus|plus)\b))",
    re.IGNORECASE,
)
# "predicted and true noise": an adjective that shares the second operand's noun
_SHARED = frozenset("predicted estimated reconstructed generated current target true clean noisy actual real final".split())
_TRUE = re.compile(r"^(?:true|ground[- ]truth|actual|real)\s+", re.IGNORECASE)  # "true noise" is the noise itself
_NOT_OPERANDS = frozenset("them it each all both respect".split())


@dataclass(frozen=True)
class ProseLoss:
    expect: str
    start: int
    end: int


# "negative MSE between A and B minus alpha * MSE of C": a reward or a regularised loss, term by term
_NEGATED = re.compile(r"\b(?:negative|minus)(?:\s+(?:of\s+)?the)?\s+$", re.IGNORECASE)
_NEXT_TERM = re.compile(
    rf"\s*,?\s+(?P<sign>minus|plus)\s+(?:(?P<coef>[A-Za-z_]\w{{0,10}}|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*(?:\*|·|times)\s*)?"
    rf"(?:the\s+)?(?:{_KIND})(?:\s+loss)?\s+of\s+(?:the\s+)?(?P<a>{_PHRASE})"
    r"(?=\s*(?:$|[,.;:(]|\s(?:using|with|for|over|at|on|in|via|computed|averaged|across|per|as)\b))",
    re.IGNORECASE,
)


def find(text: str) -> list[ProseLoss]:
    """Each "<MSE | MAE | L1 | L2> (loss) between A and B" in ``text`` as the formula of its elementwise term; one
    negated or followed by "minus / plus (c *) <MSE | MAE> of C" as the whole sum, each term its own mean."""
    out = []
    for match in _LOSS_BETWEEN.finditer(text):
        a, b = match.group("a").strip(), match.group("b").strip()
        if a.lower() in _SHARED and " " in b:
            a = f"{a} {b.split()[-1]}"
        names = [_symbol(a), _symbol(b)]
        if None in names or names[0] == names[1]:
            continue
        kind = "squared" if match.group("squared") else "absolute"
        term = _TERMS[kind].format(a=names[0], b=names[1])
        start, end, negated = match.start(), match.end(), _NEGATED.search(text[: match.start()])
        more = []
        while (following := _NEXT_TERM.match(text, end)) and (operand := _symbol(following.group("a").strip())):
            inner = _TERMS["squared" if following.group("squared") else "absolute"].format(a=operand, b=0)
            coef = following.group("coef")
            more.append(f" {'-' if following.group('sign').lower() == 'minus' else '+'} "
                        f"{f'{coef} * ' if coef else ''}mean({inner.replace(' - 0', '')})")
            end = following.end()
        if negated or more:
            start = negated.start() if negated else start
            term = f"{'-' if negated else ''}mean({term}){''.join(more)}"
        out.append(ProseLoss(term, start, end))
    return out


def _symbol(phrase: str) -> str | None:
    """"predicted noise" -> predicted_noise, "true noise" -> noise; None for a phrase that names no value."""
    if re.fullmatch(_IDENT, phrase) and ("_" in phrase or "(" in phrase):
        return phrase  # written as code
    words = _TRUE.sub("", phrase).lower().split()
    if not words or set(words) & _NOT_OPERANDS or terms.find_apis(phrase):
        return None
    if len(words) > 1 and re.fullmatch(r"[A-Za-z](?:_\w+)?", phrase.split()[-1]):
        return phrase.split()[-1]  # "control force f": the paper's own symbol for it
    if len(words) > 1 and words[-1].endswith("s") and not words[-1].endswith("ss"):
        words[-1] = words[-1][:-1]  # "current and target states": one state each
    name = "_".join(w.replace("-", "_") for w in words)
    return name if re.fullmatch(r"[a-z][a-z0-9_]*", name) else None
