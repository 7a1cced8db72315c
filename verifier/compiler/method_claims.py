"""Method statements existing check kinds decide: initialisation, frozen parts, adapter placement.

"R is initialized to zero" (or ``R_init = 0``) is an ``init`` check on R, "B and A remain frozen throughout training" two
``frozen`` protocol checks, "only R is trained" a ``trainable`` check with ``only``, "R (trainable)" one without,
"LoRA applied to q_proj and v_proj" a ``target_modules`` value. A statement is
typed only when it is the whole fragment (subjects, the predicate, at most a qualifier of when it holds): a
sentence that says more stays with the judge. Names are the claim's own symbols and code names (``R``,
``lora_B``) or the code name of a noun (rules/claim_methods.yaml ``parts``); the checks resolve a bare symbol
to the code names ending in it (``lora_R``). What is recognised but cannot be checked (several parts
that alone are trained, a placement in plain words, a baseline's or an ablation's parts) is reported with the reason.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from verifier import rules
from verifier.spec.model import InitCheck, ProtocolCheck, ValueCheck


@dataclass(frozen=True)
class MethodFacts:
    """What a method statement became: its checks, and why part of it is not checked ("" when all is)."""

    checks: list[Any] = field(default_factory=list)
    reason: str = ""


@functools.cache
def _data() -> dict:
    try:
        data = rules.load("claim_methods.yaml")
    except (FileNotFoundError, OSError):
        return {}
    return data if isinstance(data, dict) else {}


def _words(key: str) -> list[str]:
    return sorted((str(w) for w in _data().get(key) or []), key=lambda w: (-len(w), w))


@functools.cache
def _mapping(key: str) -> dict[str, str]:
    raw = _data().get(key) or {}
    return {str(k).lower(): str(v) for k, v in raw.items()}


def _alternation(words: list[str]) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=lambda w: (-len(w), w)))


# ----- subjects --------------------------------------------------------------------------------------------
_SYMBOL = r"[A-Za-z](?:[₀-₉]+|_\{?[A-Za-z0-9]{1,6}\}?(?:\^\{?[^\s{}]{1,8}\}?)?|\^\{?[^\s{}]{1,8}\}?)?"
_IDENT = r"(?:self\.)?[A-Za-z][A-Za-z0-9]*(?:[._][A-Za-z0-9]+)+"
_DIMS = r"(?:\s*\([^()]{1,30}\)|\s*∈\s*\S+)?"  # "B (m×r)", "R ∈ ℝ^{r×r}": the shape, not part of the name


@functools.cache
def _subject_re() -> str:
    nouns = _alternation(list(_mapping("parts")) + _words("not_parts"))
    one = rf"(?:the\s+|all\s+|its\s+)?(?:pre-?trained\s+|original\s+|whole\s+|entire\s+)?(?:{nouns}|{_IDENT}|{_SYMBOL})(?![\w'])"
    return rf"(?P<subjects>{one}{_DIMS}(?:\s*(?:,\s*(?:and\s+)?|\band\b|&|/)\s*{one}{_DIMS})*)"


def _split_subjects(text: str) -> list[str]:
    protected = re.sub(r"\{[^{}]*\}|\([^()]*\)", lambda m: m.group(0).replace("/", "\0").replace(",", "\1"), text.strip())
    parts = [p.replace("\0", "/").replace("\1", ",") for p in re.split(r"\s*(?:,\s*(?:and\s+)?|\band\b|&|(?<=\w)/(?=\w))\s*", protected)]
    out = []
    for part in parts:
        part = re.sub(r"\s*\([^()]*\)|\s*∈\s*\S+", "", part).strip()
        part = re.sub(r"^(?:the|all|its)\s+", "", part, flags=re.IGNORECASE)
        part = re.sub(r"^(?:pre-?trained|original|whole|entire)\s+(?!weights\b)", "", part, flags=re.IGNORECASE)
        if part:
            out.append(part)
    return out


@functools.cache
def _not_parts() -> frozenset[str]:
    return frozenset(w.lower() for w in _words("not_parts"))


_UNICODE_SUBSCRIPT = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")


def _code_name(subject: str, aliases: dict[str, list[str]]) -> tuple[str | None, str]:
    """The name a check looks for, or (None, why not)."""
    lowered = re.sub(r"\s+", " ", subject.lower())
    if lowered in _not_parts():
        return None, f"'{subject}' is optimiser or runtime state, not a parameter"
    parts = _mapping("parts")
    if lowered in parts:
        return parts[lowered], ""
    if re.fullmatch(r"pre-?trained weights", lowered):
        return parts.get("pretrained weights"), ""
    plain = subject.translate(_UNICODE_SUBSCRIPT)
    known = {a for a, spellings in aliases.items() for a in [a, *spellings]}
    if plain in known or subject in known:
        return plain, ""
    code = plain.removeprefix("self.")
    if re.fullmatch(r"[A-Z]", code) or (re.fullmatch(_IDENT, code) and re.match(r"[A-Za-z][A-Za-z0-9]+[._]", code)):
        return code, ""  # R, lora_B: the checks match code names ending in a symbol; W_0 is the paper's
    return None, f"the paper symbol {subject} names no code object (add an alias)"


# ----- predicates ------------------------------------------------------------------------------------------
@functools.cache
def _qualifier_re() -> str:
    words = _words("qualifiers") + _words("fixed_qualifiers")
    return rf"(?:\s+(?:{_alternation(words)}))?" if words else ""


@functools.cache
def _scheme_re() -> str:
    return _alternation(list(_data().get("init_schemes") or {}))


@functools.cache
def _statements() -> tuple[tuple[str, re.Pattern], ...]:
    subjects, qualifier = _subject_re(), _qualifier_re()
    schemes = _scheme_re()
    prefixes = _alternation(list(_data().get("init_prefixes") or {}))
    fixed = _alternation(_words("fixed_qualifiers"))
    lead = r"^(?:(?:where|with|and|while|whereas|here|then|thus)\s+)?"
    be = r"(?:\s+(?:is|are|was|were|is\s+kept|are\s+kept|remains?|stays?|kept|left|is\s+left|are\s+left|is\s+held|are\s+held))?"
    init_verb = r"(?:\s+(?:is|are|each|both))*\s+initiali[sz]ed"
    tail = rf"(?:\s+(?:initiali[sz]ation|init))?(?:\s*\([^()]*\))?{qualifier}\s*$"
    forms = [
        ("init", rf"{lead}{subjects}{init_verb}\s+(?:to|as|with|at)\s+(?:be\s+)?(?:an?\s+)?(?P<scheme>{schemes})(?![\w-]){tail}"),
        ("init", rf"{lead}{subjects}{init_verb}\s+(?:(?:to|as|with)\s+)?(?:an?\s+)?(?P<scheme>{schemes})[\s-]+init(?:iali[sz]ation)?{qualifier}\s*$"),
        ("init", rf"{lead}{subjects}(?:\s+(?:is|are))?\s+(?P<prefix>{prefixes})[\s-]+initiali[sz]ed{qualifier}\s*$"),
        ("init", rf"{lead}(?P<prefix>{prefixes})[\s-]+initiali[sz]ed\s+{subjects}{qualifier}\s*$"),
        ("frozen", rf"{lead}{subjects}{be}\s+(?:kept\s+)?frozen{qualifier}\s*$"),
        ("frozen", rf"{lead}(?:freeze|freezes|freezing)\s+{subjects}{qualifier}\s*$"),
        ("frozen", rf"{lead}{subjects}{be}\s+(?:kept\s+|held\s+)?fixed\s+(?:{fixed})\s*$" if fixed else r"(?!)"),
        ("frozen", rf"{lead}{subjects}\s+(?:is|are)\s+not\s+(?:trained|updated|fine-?tuned){qualifier}\s*$"),
        ("only-trained", rf"^(?:(?:and|while|whereas)\s+)?(?:only|solely)\s+{subjects}\s+(?:is|are)\s+(?:trained|updated|learned|tuned|fine-?tuned|optimi[sz]ed|trainable|learnable){qualifier}\s*$"),
        ("only-trained", rf"^(?:(?:and|while|whereas)\s+)?(?:only|solely)\s+{subjects}\s+(?:trained|updated|learned|tuned|fine-?tuned|optimi[sz]ed){qualifier}\s*$"),
        ("only-trained", rf"{lead}{subjects}(?:\s+(?:is|are))?\s+(?:the\s+)?(?:sole|only)\s+(?:trainable|learnable|trained)(?:\s+(?:parameters?|matrix|matrices|part|weights?))?{qualifier}\s*$"),
        ("only-trained", rf"^(?:we|it|[A-Z][\w-]*)\s+(?:trains?|tunes?|fine-?tunes?|updates?|optimi[sz]es?|learns?)\s+(?:only|solely)\s+{subjects}{qualifier}\s*$"),
        ("trained", rf"{lead}{subjects}\s*\((?:trainable|learnable)\)\s*$"),
        ("trained", rf"{lead}{subjects}\s+(?:is|are)\s+(?:trained|updated|learned|tuned|fine-?tuned|trainable|learnable){qualifier}\s*$"),
    ]
    return tuple((kind, re.compile(regex, re.IGNORECASE)) for kind, regex in forms)


@functools.cache
def _placement_re() -> re.Pattern | None:
    verbs = _words("placement_verbs")
    return re.compile(rf"\b(?:{_alternation(verbs)})\b\s*(?P<where>.*)$", re.IGNORECASE | re.DOTALL) if verbs else None


_INIT_FROM = re.compile(r"\binitiali[sz]ed\s+(?:from|by\s+copying|with\s+the\s+weights\s+of)\s+(?!(?:N|U|TN|Normal|Uniform|Gaussian)\s*\()", re.IGNORECASE)


@functools.lru_cache(maxsize=256)
def describes_variant(claim: str) -> bool:
    """The claim describes a baseline or an ablation ("Standard LoRA (baseline): ...", "Ablated variant: ...")."""
    cues = _words("variant_cues")
    if not cues:
        return False
    cut = re.search(r":|\.\s|\n", claim)
    lead = claim[: cut.start()] if cut and cut.start() <= 120 else claim[:120]
    return bool(re.search(rf"\b(?:{_alternation(cues)})\b", lead, re.IGNORECASE))


def read(text: str, claim: str = "", aliases: dict[str, list[str]] | None = None) -> MethodFacts | None:
    """The checks a whole-fragment method statement compiles to; None when the fragment is not one."""
    body = text.strip().rstrip(".").strip()
    aliases = aliases or {}
    for kind, regex in _statements():
        match = regex.match(body)
        if match is None:
            continue
        subjects = _split_subjects(match.group("subjects"))
        if describes_variant(claim):
            return MethodFacts([], "describes a baseline or an ablation: its parts are not the main method's code")
        names, why = [], ""
        for subject in subjects:
            name, reason = _code_name(subject, aliases)
            if name is None:
                why = why or reason
            elif name not in names:
                names.append(name)
        if kind == "init":
            scheme = _scheme(match)
            checks: list[Any] = [InitCheck(name=n, expect=scheme) for n in names if n not in _UNNAMED_INIT]  # type: ignore[arg-type]
            if len(checks) < len(names):
                why = why or "an initialisation of every layer's weights or biases: the init check needs one named tensor"
        elif kind == "only-trained":
            if why or len(names) != 1:  # "only A and B are trained": `only` is over their union, one name per check
                return MethodFacts([], why or f"which parts alone are trained ({', '.join(subjects)}): the trainable "
                                              "rule's `only` takes one part")
            checks = [ProtocolCheck(rule="trainable", name=names[0], only=True)]
        elif kind == "trained":
            checks = [ProtocolCheck(rule="trainable", name=n) for n in names]
        else:
            checks = [ProtocolCheck(rule="frozen", name=n) for n in names]
        return MethodFacts(checks, why)
    if _INIT_FROM.search(body):
        return MethodFacts([], "initialised from another tensor or model: no init scheme to check")
    for start, end, modules in _code_placements(claim):
        at = claim.find(body)
        if modules and at >= 0 and start <= at + len(body) and at < end and (at >= start or _placement_re().search(body)):
            return MethodFacts([ValueCheck(name="target_modules", expect=list(modules))])  # "... to q_proj, k_proj and v_proj"
    placement = _placement_re()
    found = placement.search(body) if placement else None
    if found and _MODULE_WORDS.search(found.group("where")):
        return _placement(found.group("where"))
    return None


# "R_init = I", "B_{init} = 0", "lora_R^{init} = 0": the initial value of a tensor written as an assignment.
_INIT_VALUES = {"0": "zeros", "𝟎": "zeros", "zeros": "zeros", "I": "identity", "𝐈": "identity", "identity": "identity"}
_INIT_ASSIGNMENT = re.compile(
    rf"^(?:(?:where|with|and|set)\s+)?(?P<subject>{_IDENT}|[A-Za-z](?:_[A-Za-z0-9]{{1,4}})?)"
    r"(?:_\{?init\}?|\^\{?init\}?|_\{?\(init\)\}?|\^\{?\(init\)\}?)\s*(?:=|←|:=)\s*"  # not X_0: a time step's state
    r"(?P<value>0|𝟎|zeros|I|𝐈|identity)(?:_\{?[A-Za-z0-9]{1,3}\}?)?\s*$"
)


def init_assignment(text: str, claim: str = "", aliases: dict[str, list[str]] | None = None) -> MethodFacts | None:
    """``R_init = I`` -> an ``init`` check of R with the identity scheme (``0`` -> zeros; ``I_r`` is the r×r
    identity); None when the fragment is not such an assignment. A value check on a key ``r_init`` would look
    for a setting no repository has: the assignment states how a tensor starts, which the init check reads."""
    match = _INIT_ASSIGNMENT.match(text.strip().rstrip(".;").strip())
    if match is None:
        return None
    if describes_variant(claim):
        return MethodFacts([], "describes a baseline or an ablation: its parts are not the main method's code")
    name, why = _code_name(match.group("subject"), aliases or {})
    if name is None:
        return MethodFacts([], why)
    return MethodFacts([InitCheck(name=name, expect=_INIT_VALUES[match.group("value")])])  # type: ignore[arg-type]


_ITEM = r"`?[a-z][a-z0-9]*(?:_[a-z0-9]+)+`?|`?(?:c_attn|c_proj|qkv|fc1|fc2)`?"
_LISTED = re.compile(rf"(?:the\s+)?(?P<list>(?:{_ITEM})(?:\s*(?:,\s*(?:and\s+|or\s+)?|\band\b|\bor\b)\s*(?:{_ITEM}))*)(?:\s+(?:modules?|layers?|projections?))?(?:\s+only)?(?=\s*(?:[.;)]|$))")


@functools.lru_cache(maxsize=256)
def _code_placements(claim: str) -> tuple[tuple[int, int, tuple[str, ...]], ...]:
    """Placements whose modules are code names, read on the whole claim (once per claim, not per fragment): its
    list runs past the commas the fragments are cut at ("applied to q_proj, k_proj and v_proj")."""
    placement = _placement_re()
    if placement is None or not claim:
        return ()
    out = []
    for verb in re.finditer(rf"\b(?:{_alternation(_words('placement_verbs'))})\b\s*", claim, re.IGNORECASE):
        match = _LISTED.match(claim, verb.end())
        if match:
            modules = tuple(m.strip("`") for m in re.split(r"\s*(?:,\s*(?:and\s+|or\s+)?|\band\b|\bor\b)\s*", match.group("list")) if m.strip("`"))
            out.append((verb.start(), match.end(), modules))
    return tuple(out)


_UNNAMED_INIT = {"weight", "bias"}  # the init check reads these as slots, not as one tensor's name


@functools.cache
def _scheme_table() -> dict[str, str]:
    return {re.sub(r"\s+", " ", k): v for k, v in _mapping("init_schemes").items()}


def _scheme(match: re.Match) -> str:
    groups = match.groupdict()
    if groups.get("prefix"):
        return _mapping("init_prefixes")[re.sub(r"\s+", " ", groups["prefix"].lower())]
    table = _scheme_table()
    written = re.sub(r"\s+", " ", groups["scheme"])
    return table.get(written.lower()) or table.get(written, "zeros")


_MODULE_WORDS = re.compile(
    r"\b(?:projections?|layers?|blocks?|modules?|attention|self-attention|mlp|msa|ffn|feed-forward|matri(?:x|ces)|"
    r"heads?|[a-z][a-z0-9]*_[a-z0-9_]+|qkv)\b",
    re.IGNORECASE,
)  # "applied to ODE1 and ODE2" is where an experiment runs, not where a module goes
_CODE_MODULE = re.compile(r"`?\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+|c_attn|c_proj|qkv|fc1|fc2)\b`?")


def _placement(where: str) -> MethodFacts:
    """``target_modules`` when the modules are written as code names, else the reason it is left."""
    listed = re.split(r"\s*(?:,\s*(?:and\s+)?|\band\b|\bor\b)\s*", re.sub(r"\b(?:only|the|modules?|layers?|projections?)\b", " ", where).strip())
    listed = [w.strip(" `'\"") for w in listed if w.strip(" `'\"")]
    if listed and all(_CODE_MODULE.fullmatch(w) for w in listed):
        return MethodFacts([ValueCheck(name="target_modules", expect=listed)])
    return MethodFacts([], "placement (which modules the method is attached to) in plain words: module names "
                           "differ by architecture (q_proj, query, qkv), no check decides it")


def merge(body: str, b: Any, made: list[int], reason: str) -> tuple[list[int], str]:
    """Fold a fragment's method statement into what the rest of the compiler made of it: the statement is
    the whole fragment, so its reading replaces the reason another reading gave up with."""
    facts = read(body, b.claim, b.aliases)
    if facts is None:
        return made, reason
    added = [b.add(check) for check in facts.checks]
    return [*made, *added], facts.reason or (reason if not added else "")
