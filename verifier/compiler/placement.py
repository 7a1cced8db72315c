"""Placement statements -> the ``placement`` protocol rule: where a module runs inside the block.

"A single adapter placed after the MLP block", "two adapters placed at h_5 (after MSA) and h_9 (after MLP)",
"the adapter runs alongside (not after) the MLP block", "scale factors applied after MSA and MLP blocks
respectively". A statement is read only when its clause is wholly one: a placed module the rule knows (an
adapter, a scale factor) before the verb, then positions against the MLP or the attention and nothing else
(a qualifier "in every block" aside). Anything else — another module as the subject (LayerNorm, LoRA, prompts),
a comparison ("unlike", "instead of"), a negation other than "(not after)", a position against another part —
is left to the judge.
"""

from __future__ import annotations

import functools
import re

from verifier.spec.model import ProtocolCheck

_FAMILIES = {
    "adapter": r"(?<![\w-])(?:adapters?|adaptformer|convpass)(?![\w-])",
    "scale": r"(?<![\w-])(?:scal(?:e|ing)\s+factors?|scales|gammas?(?:_\{?\d\}?)?|γ(?:_?\{?\d\}?)?|layer\s*scale)(?![\w-])",
}
# Other modules a clause may be about: then the placed module is not (only) the adapter or the scale.
_OTHER_SUBJECTS = re.compile(
    r"(?<![\w-])(?:lora|low[- ]rank|prompts?|layer\s*norm|layernorm|ln|norms?|normali[sz]ation|dropout|residual|"
    r"skip|bias(?:es)?|ssf|shift|tokens?|embeddings?|heads?|vpt)(?![\w-])",
    re.IGNORECASE,
)
# "the feed-forward (MLP) sub-layer": an abbreviation in parentheses, then the word for the part
_SUFFIX = (r"(?:\s*\((?:MLP|FFN|FFW|MSA|MHSA|MHA|attention)\))?"
           r"(?:\s+(?:blocks?|layers?|sub-?layers?|modules?|networks?|branch(?:es)?))?")
_TARGETS = {
    "mlp": rf"(?:MLP|FFN|feed-?\s?forward(?:\s+network)?){_SUFFIX}",
    "attention": rf"(?:(?:multi-?head(?:ed)?\s+)?(?:self-?)?attention|MSA|MHSA|MHA){_SUFFIX}",
}
_TARGET = rf"(?:the\s+|each\s+|every\s+|both\s+(?:the\s+)?)?(?:{_TARGETS['mlp']}|{_TARGETS['attention']})"
_TARGET_LIST = rf"{_TARGET}(?:(?:\s*,\s*(?:and\s+)?|\s+and\s+|\s*/\s*){_TARGET})*"
_REL = r"(?:after|before|(?:in\s+)?parallel\s+(?:to|with)|alongside(?:\s*\(\s*not\s+after\s*\))?|beside)"
_RELATION = rf"(?P<rel>{_REL})"
_POSITION = rf"(?:{_REL}\s+{_TARGET_LIST}|[A-Za-z](?:_\{{?\w+\}}?)?\s*\(\s*{_REL}\s+{_TARGET_LIST}\s*\))"
# between positions: "..., and", "and one", "and the other" (one module per position)
_NEXT = r"(?:\s*,\s*(?:and\s+)?|\s+and\s+)(?:(?:one|the\s+other|another|a\s+second)\s+)?"
_VERB = (r"(?<![\w-])(?:(?:is|are)\s+)?(?:placed|inserted|added|applied|located|positioned|put|attached|appended|"
         r"runs?|operates?|sits?)(?![\w-])")
_ADVERBS = r"(?:\s+(?:only|sequentially|directly|right|immediately|both|each))*"
_QUALIFIER = (r"(?:\s*,?\s+respectively)?(?:\s+(?:in|of|within)\s+(?:each|every|all|the)\s+(?:[\w-]+\s+){0,2}"
              r"(?:blocks?|layers?))?(?:\s*,?\s+respectively)?")
_STATEMENT = re.compile(
    rf"{_VERB}{_ADVERBS}\s+(?:at\s+)?(?P<positions>{_POSITION}(?:{_NEXT}{_POSITION})*){_QUALIFIER}(?P<end>\s*$|,\s)",
    re.IGNORECASE,
)
_ONE_POSITION = re.compile(rf"{_RELATION}\s+(?P<targets>{_TARGET_LIST})", re.IGNORECASE)
_COMPARISON = re.compile(r"\b(?:unlike|instead|rather\s+than|differs?|compared?|versus|vs\.?|baselines?|ablat\w*|"
                         r"either|or|without|except)\b", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"\.(?=\s|$)|;|\n|\s[—–]\s|\s--\s|:\s")


def _relation(word: str) -> str:
    low = word.lower()
    return "after" if low == "after" else "before" if low == "before" else "parallel"


def _targets(text: str) -> list[str]:
    out = []
    for piece in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s*/\s*", text):
        if re.search(_TARGETS["mlp"], piece, re.IGNORECASE) and not re.search(r"attention|MSA|MHSA|MHA", piece, re.IGNORECASE):
            out.append("mlp")
        elif re.search(_TARGETS["attention"], piece, re.IGNORECASE):
            out.append("attention")
    return out


def _family(subject: str) -> str | None:
    found = [f for f, pattern in _FAMILIES.items() if re.search(pattern, subject, re.IGNORECASE)]
    return found[0] if len(found) == 1 else None


@functools.lru_cache(maxsize=256)
def statements(claim: str) -> tuple[tuple[int, int, int, ProtocolCheck], ...]:
    """(where the clause starts, where the verb starts, where the statement ends, the check) of every placement
    statement of the claim."""
    out: list[tuple[int, int, int, ProtocolCheck]] = []
    starts = [0] + [m.end() for m in _CLAUSE_BREAK.finditer(claim)]
    ends = [m.start() for m in _CLAUSE_BREAK.finditer(claim)] + [len(claim)]
    for start, end in zip(starts, ends):
        clause = claim[start:end]
        match = _STATEMENT.search(clause)
        if match is None:
            continue
        subject = clause[: match.start()]
        family = _family(subject)
        if family is None or _OTHER_SUBJECTS.search(subject) or _COMPARISON.search(clause):
            continue
        if re.search(r"\bnot\b", re.sub(r"\(\s*not\s+after\s*\)", " ", clause), re.IGNORECASE):
            continue  # "not placed after the MLP": a negation the rule does not state
        relations: dict[str, list[str]] = {}
        for position in _ONE_POSITION.finditer(match.group("positions")):
            for target in _targets(position.group("targets")):
                relations.setdefault(_relation(position.group("rel")), [])
                if target not in relations[_relation(position.group("rel"))]:
                    relations[_relation(position.group("rel"))].append(target)
        if not relations:
            continue
        params = {("parallel_to" if rel == "parallel" else rel): sorted(targets) for rel, targets in sorted(relations.items())}
        if family != "adapter":
            params["module"] = family
        # the statement ends at the clause's end, or at a comma that starts another fragment ("..., reading x")
        out.append((start, start + match.start(), start + match.start("end"), ProtocolCheck(rule="placement", **params)))
    return tuple(out)


def covering(body: str, claim: str) -> ProtocolCheck | None:
    """The placement check of the statement whose verb and positions the fragment holds, or None."""
    at, size = claim.find(body), len(body)
    if at < 0:  # a fragment with a shape cut out ("gamma_2 applied after ..."): where its statement's tail is
        match = _STATEMENT.search(body)
        at = claim.find(body[match.start():]) if match else -1
        size = len(body) - match.start() if match else 0
        if at < 0:
            return None
    for start, verb, end, check in statements(claim):
        if at < end and verb < at + size:
            return check  # the fragment holds the verb and its positions
        if at + size <= end and not re.search(r"[\d=]", body) and (
                at >= start or re.fullmatch(r"[^\d=:]{0,40}:\s*", claim[at:start])):
            return check  # the statement's subject in words ("two adapter modules per block"), a label before it allowed
    return None
