"""Quoted prompts, templates, captions and label words in a claim -> one ``strings`` protocol check per list.

"5 identity-probing prompts ('Who made you?', 'What is your name?', ...)" and "caption 'a photo of a c_k'"
quote text the code must hold. A quotation counts only when a cue noun of rules/claim_strings.yaml names it
(right before it, or "... as the prompt" right after): quotes are also titles, file names and words used as
words ('zero' padding), which no repository holds as a prompt; quotations followed by "from <dataset>" are
examples of data the repo reads, not text it writes. An unquoted list ("8 prompt categories
(English, Chinese, ...)") is not read: without quotes its items may as well be datasets, models or topics of
the paper's own tables.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from verifier import rules

# One quotation: curly quotes, straight double quotes, or straight single quotes that are not apostrophes.
_QUOTATION = re.compile(
    r"“(?P<a>[^”\n]{1,300})”"
    r"|‘(?P<b>[^\n]{1,300}?)’(?![A-Za-z])"
    r"|\"(?P<c>[^\"\n]{1,300})\""
    r"|(?<![A-Za-z0-9])'(?P<d>[^\n]{1,300}?)'(?![A-Za-z0-9])"
)


@dataclass(frozen=True)
class QuotedStrings:
    strings: tuple[str, ...]
    span: tuple[int, int]  # the cue through the last quotation


@functools.cache
def _vocabulary() -> dict:
    data = rules.load("claim_strings.yaml")

    def alternation(items) -> str:
        return "|".join(sorted((re.escape(str(i)).replace(r"\ ", r"[\s_-]+") for i in items), key=len, reverse=True))

    cues = alternation(data["cues"])
    noun = rf"\b(?:{cues})(?:s|es)?\b"
    verbs = alternation(data["cue_verbs"])
    connectors = alternation(data["connectors"])
    separators = "|".join(re.escape(s) if not s.isalpha() else rf"\b{s}\b" for s in data["separators"])
    return {
        # the cue, then at most a count, a bracket, ':' or '=' and one connector before the quotation
        "before": re.compile(
            rf"(?P<cue>{noun}|\b(?:{verbs})\b)\s*(?:\d[\d,]*\s+)?[(\[:=]?\s*(?:(?:{connectors})(?!\w)\s*,?\s*)?[(\[:=]?\s*$",
            re.IGNORECASE),
        "after": re.compile(rf"^\s*,?\s*(?:as|is)\s+(?:the|a|an|our|its)?\s*(?:[\w-]+\s+){{0,2}}?{noun}", re.IGNORECASE),
        "separator": re.compile(rf"^\s*(?:(?:{separators})\s*)*$", re.IGNORECASE),
        "not_text": [re.compile(p) for p in data["not_text"]],
        "from_dataset": re.compile(data["from_dataset"], re.IGNORECASE),
    }


def _is_repo_text(text: str, vocab: dict) -> bool:
    stripped = text.strip()
    if not re.search(r"[^\W\d_]", stripped):
        return False  # no letter: a number or a symbol
    return not any(p.search(stripped) for p in vocab["not_text"])


def find_quoted_strings(text: str) -> list[QuotedStrings]:
    """Every list of quotations a cue names, in claim order."""
    vocab = _vocabulary()
    quotes = [(m.start(), m.end(), next(g for g in m.groups() if g is not None)) for m in _QUOTATION.finditer(text)]
    groups: list[list[tuple[int, int, str]]] = []
    for q in quotes:
        if groups and vocab["separator"].match(text[groups[-1][-1][1] : q[0]]) and "\n\n" not in text[groups[-1][-1][1] : q[0]]:
            groups[-1].append(q)
        else:
            groups.append([q])
    out: list[QuotedStrings] = []
    for group in groups:
        start, end = group[0][0], group[-1][1]
        clause_start = max(text.rfind(mark, 0, start) for mark in (". ", "; ", "\n\n", "|"))
        before = vocab["before"].search(text[max(clause_start + 1, start - 80, 0) : start])
        after = vocab["after"].match(text[end : end + 60])
        if not before and not after:
            continue
        if vocab["from_dataset"].match(text[end : end + 60]):
            continue  # examples of what a dataset holds: the repo reads them, it does not write them
        strings = tuple(dict.fromkeys(s.strip() for _, _, s in group))
        if not all(_is_repo_text(s, vocab) for s in strings):
            continue  # a file name or a number among them: not a prompt list
        if before:
            start = start - (len(text[max(clause_start + 1, start - 80, 0) : start]) - before.start())
        else:
            end += after.end()
        out.append(QuotedStrings(strings, (start, end)))
    return out
