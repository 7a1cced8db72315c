"""Sequences in claim text -> ``order`` checks: ``A -> B -> C``, numbered steps and phases, "first ... then".

A step becomes a short snake_case name from its leading words ("Compute FVD scores on ..." ->
``compute_fvd_scores``): the order check matches step names against repo functions and calls, so the
name is the verb and its object, not the whole sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from verifier.compiler.terms import ascii_symbol

ARROW_RE = re.compile(r"\s*(?:→|->|=>|⇒|⟶)\s*")
_NUMBERED_RE = re.compile(
    r"(?:(?<=^)|(?<=[\s:;.,—–-]))(?:\((?P<a>\d{1,2})\)|(?P<b>\d{1,2})[.)](?=\s)|(?:Step|Phase|Stage)\s+(?P<c>\d{1,2})\b\s*[:.—–-]?)",
    re.IGNORECASE,
)
_FIRST_THEN_RE = re.compile(r"\bfirst(?:ly)?\b[, ]+(?P<a>.+?)[,;]?\s+\bthen\b\s+(?P<b>.+?)(?:[,;]?\s+\b(?:then|finally)\b\s+(?P<c>.+?))?(?:[.;]|$)", re.IGNORECASE)
_STOP = {
    "the", "a", "an", "of", "to", "for", "on", "in", "with", "and", "each", "all", "its", "their", "via", "using",
    "from", "by", "at", "per", "as", "is", "are", "be", "then", "once", "it", "this", "that", "one", "time",
}  # fmt: skip
# "for each batch, (1) ... (2) ...": the loop the numbered steps run in, part of the sequence's statement
_LOOP_LEAD_IN = re.compile(
    r"(?:\b(?:for|in|at)\s+(?:each|every)|\bper|\bfor\s+all)\s+(?:(?:training|mini-?|outer|inner)\s*)?"
    r"(?:batch(?:es)?|epochs?|steps?|iterations?|samples?|episodes?|rounds?|updates?)\s*[:,]?\s*$",
    re.IGNORECASE,
)
_CUT = re.compile(r"[:(\[,;—–]|\s-\s|\s(?:via|using|with|on|for|from|at|by|where|so|until|into|over)\s", re.IGNORECASE)


@dataclass(frozen=True)
class OrderFind:
    steps: tuple[str, ...]
    relation: str
    items: tuple[str, ...]  # the text of each step, for the compile listing
    span: tuple[int, int]  # where in the claim the sequence sits


def step_name(text: str, max_words: int = 3) -> str:
    """``Phase 1 — Initialization (one-time)`` -> ``initialization``; ``Compute FVD scores`` -> ``compute_fvd_scores``."""
    body = _NUMBERED_RE.sub(" ", text).strip(" :.-—–")
    body = re.sub(r"^(?:setup|entry condition|exit)\s*:\s*", "", body, flags=re.IGNORECASE)
    head = _CUT.split(body, maxsplit=1)[0] if _CUT.search(body[1:] or " ") else body
    if len(head.strip()) < 3:
        head = body
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z0-9]*", ascii_symbol(head)) if w.lower() not in _STOP]
    return "_".join(w.lower() for w in words[:max_words])


def _from_items(items: list[str], relation: str, span: tuple[int, int]) -> OrderFind | None:
    names = [step_name(i) for i in items]
    pairs = [(n, i.strip()) for n, i in zip(names, items) if n]
    if len(pairs) < 2:
        return None
    return OrderFind(tuple(n for n, _ in pairs), relation, tuple(i for _, i in pairs), span)


def find_arrows(text: str, relation: str) -> OrderFind | None:
    """``A → B → C`` anywhere in the text (the label before a leading colon is not a step)."""
    if not ARROW_RE.search(text):
        return None
    head, colon, rest = text.partition(":")
    body, offset = (rest, len(head) + 1) if colon and not ARROW_RE.search(head) and len(head) < 160 else (text, 0)
    items = [p for p in ARROW_RE.split(body) if p.strip()]
    return _from_items(items, relation, (offset, len(text)))


def find_numbered(text: str, relation: str) -> OrderFind | None:
    """(1) ... (2) ..., 1. ... 2. ..., Step 1: ... Step 2: ..., Phase 1 ... Phase 2 ... numbered 1, 2, 3 in order."""
    marks = []
    for match in _NUMBERED_RE.finditer(text):
        number = int(match.group("a") or match.group("b") or match.group("c"))
        marks.append((number, match.start(), match.end()))
    # keep the longest run 1, 2, 3, ... (a "Phase 2" claim may list Step 1..3 inside it)
    best: list[tuple[int, int, int]] = []
    best_key = (0, 0)
    for i in range(len(marks)):
        run, skipped = [marks[i]], 0
        for later in marks[i + 1 :]:
            if later[0] == run[-1][0] + 1:
                run.append(later)
            else:
                skipped += 1
        key = (len(run), -skipped)
        if key > best_key:
            best, best_key = run, key
    if len(best) < 2:
        return None
    items = []
    for k, (_, _, end) in enumerate(best):
        stop = best[k + 1][1] if k + 1 < len(best) else len(text)
        items.append(text[end:stop])
    lead_in = _LOOP_LEAD_IN.search(text, 0, best[0][1])
    start = lead_in.start() if lead_in else best[0][1]
    return _from_items(items, relation, (start, len(text)))


def find_first_then(text: str) -> OrderFind | None:
    match = _FIRST_THEN_RE.search(text)
    if not match:
        return None
    items = [g for g in (match.group("a"), match.group("b"), match.group("c")) if g]
    return _from_items(items, "before", (match.start(), match.end()))


def find_order(text: str, phases: bool) -> OrderFind | None:
    """The sequence a claim states; ``phases`` for repo-level workflows (ordering claims), else ``before``."""
    relation = "phases" if phases else "before"
    arrows = find_arrows(text, relation)
    if arrows and (phases or len(arrows.steps) >= 3):  # in method prose a single arrow reads "implies"
        return arrows
    return find_numbered(text, relation) or find_first_then(text)
