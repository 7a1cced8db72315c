"""Method statements existing check kinds decide: initialisation, frozen parts, adapter placement.

"R is initialized to zero" (or ``R_init = 0``) is an ``init`` check on R, "B and A remain frozen throughout training" two
``frozen`` protocol checks, "only R is trained" a ``trainable`` check with ``only``, "R (trainable)" one without,
"LoRA applied to W_Q and W_V" (or to q_proj and v_proj) a ``target-modules`` check on the families query and value
(module names differ by architecture; the families do not). A statement is
typed only when it is the whole fragment (subjects, the predicate, at most a qualifier of when it holds): a
sentence that says more stays with the judge. Names are the claim's own symbols and code names (``R``,
``lora_B``) or the code name of a noun (rules/claim_methods.yaml ``parts``); the checks resolve a bare symbol
to the code names ending in it (``lora_R``). What is recognised but cannot be checked (several parts
that alone are trained, a placement no module family maps to, a baseline's or an ablation's parts) is reported with the reason.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from verifier import rules
from verifier.compiler import placement as block_placement
from verifier.spec.model import CallCheck, InitCheck, ProtocolCheck, ValueCheck


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
    nouns = _alternation(list(_mapping("parts")) + _words("not_parts") + _words("base_parts"))
    one = (rf"(?:the\s+|all\s+|its\s+)?(?:pre-?trained\s+|original\s+|whole\s+|entire\s+)?"
           rf"(?:{_MODEL_MODIFIER}(?:{nouns}){_PART_SUFFIX}|{_IDENT}|{_BASE_SYMBOL}|{_SYMBOL})(?![\w'])")
    # "the A and B matrices are trainable": a plural noun after symbols names what they are, not another part
    symbols_noun = r"(?:\s+(?:matrix|matrices|tensors?|vectors?)(?![\w']))?"
    return rf"(?P<subjects>{one}{_DIMS}(?:\s*(?:,\s*(?:and\s+)?|\band\b|&|/)\s*{one}{_DIMS})*){symbols_noun}"


def _split_subjects(text: str) -> list[str]:
    protected = re.sub(r"\{[^{}]*\}|\([^()]*\)", lambda m: m.group(0).replace("/", "\0").replace(",", "\1"), text.strip())
    parts = [p.replace("\0", "/").replace("\1", ",") for p in re.split(r"\s*(?:,\s*(?:and\s+)?|\band\b|&|(?<=\w)/(?=\w))\s*", protected)]
    out = []
    for part in parts:
        part = re.sub(r"\s*\([^()]*\)|\s*∈\s*\S+", "", part).strip()
        part = re.sub(r"^(?:the|all|its)\s+", "", part, flags=re.IGNORECASE)
        part = re.sub(r"^(?:pre-?trained|original|whole|entire)\s+(?!weights\b|parameters\b|model\b)", "", part, flags=re.IGNORECASE)
        if part:
            out.append(part)
    return out


@functools.cache
def _not_parts() -> frozenset[str]:
    return frozenset(w.lower() for w in _words("not_parts"))


_UNICODE_SUBSCRIPT = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")


# "the ViT backbone", "the CLIP text encoder": a model name before a part noun says which model, the part stays
_MODEL_MODIFIER = r"(?:[A-Z][A-Za-z0-9]*[A-Z0-9][\w.-]*\s+)?"
# "the adapter weights", "head parameters": a part named with the word for its parameters
_PART_SUFFIX = r"(?:\s+(?:weights|parameters|params|layers|modules|blocks))?(?:\s+[A-Za-z](?:_\{?\w+\}?)?(?![\w']))?"  # "bias terms b"
_BASE_SYMBOL = r"W(?:₀|_0|_\{0\}|0)"  # W₀, W_0, W_{0}, W0: the pretrained weight of LoRA-style papers
BASE_WEIGHTS = "base_weights"  # the frozen rule's name for every pretrained parameter but the adapter's


@functools.lru_cache(maxsize=256)
def about_adaptation(claim: str) -> bool:
    """The claim is about adapting a pretrained model (LoRA, adapters, prompt tuning, fine-tuning)."""
    cues = _words("adaptation_cues")
    return bool(cues) and bool(re.search(rf"(?<![\w-])(?:{_alternation(cues)})(?![\w])", claim, re.IGNORECASE))


def _code_name(subject: str, aliases: dict[str, list[str]], claim: str = "") -> tuple[str | None, str]:
    """The name a check looks for, or (None, why not)."""
    lowered = re.sub(r"\s+", " ", subject.lower())
    if lowered in _not_parts():
        return None, f"'{subject}' is optimiser or runtime state, not a parameter"
    plain = subject.translate(_UNICODE_SUBSCRIPT)
    known = {a for a, spellings in aliases.items() for a in [a, *spellings]}
    base = lowered in {w.lower() for w in _words("base_parts")} or re.fullmatch(_BASE_SYMBOL, subject)
    if base and not (plain in known or subject in known):
        if about_adaptation(claim) or re.search(r"\b(?:weights|parameters)$", lowered):
            return BASE_WEIGHTS, ""  # frozen pretrained weights are what an adaptation trains around
        if lowered not in _mapping("parts"):
            return None, (f"the paper symbol {subject} names no code object (add an alias)" if re.fullmatch(_BASE_SYMBOL, subject)
                          else f"'{subject}' of a claim that names no adaptation method: which model stays frozen is not said")
    parts = _mapping("parts")
    if lowered in parts:
        return parts[lowered], ""
    stem = re.sub(r"(?:\s+(?:weights|parameters|params|layers|modules|blocks))?(?:\s+[a-z](?:_\{?\w+\}?)?)?$", "", lowered)
    if re.fullmatch(_MODEL_MODIFIER + r"\S.*", subject) and " " in stem and stem.split(" ", 1)[1] in parts:
        stem = stem.split(" ", 1)[1]  # "ViT backbone" -> backbone
    if stem != lowered and stem in parts:
        return parts[stem], ""  # "the adapter weights", "the prompt parameters": the part's own parameters
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
        # "B and A are fixed matrices": a matrix held fixed is not trained ("a_1 and a_2 are fixed" is a constant)
        ("frozen", rf"{lead}{subjects}\s+(?:is|are)\s+(?:kept\s+)?fixed\s+(?:\(?(?:non-?trainable|frozen)\)?\s+)?(?:matrix|matrices|weights|tensors|projections?|parameters)(?:\s*\([^()]*\))?{qualifier}\s*$"),
        ("frozen", rf"{lead}{subjects}\s+(?:is|are)\s+not\s+(?:trained|updated|fine-?tuned){qualifier}\s*$"),
        ("frozen", rf"{lead}(?:(?:uses?|keeps?|on|over)\s+)?(?:an?\s+|the\s+)?frozen\s+{subjects}{qualifier}\s*$"),
        ("only-trained", rf"^(?:(?:and|while|whereas)\s+)?(?:only|solely)\s+{subjects}\s+(?:is|are)\s+(?:trained|updated|learned|tuned|fine-?tuned|optimi[sz]ed|trainable|learnable){qualifier}\s*$"),
        ("only-trained", rf"^(?:(?:and|while|whereas)\s+)?(?:only|solely)\s+{subjects}\s+(?:trained|updated|learned|tuned|fine-?tuned|optimi[sz]ed){qualifier}\s*$"),
        ("only-trained", rf"{lead}{subjects}(?:\s+(?:is|are))?\s+(?:the\s+)?(?:sole|only)\s+(?:trainable|learnable|trained)(?:\s+(?:parameters?|matrix|matrices|part|weights?))?{qualifier}\s*$"),
        ("only-trained", rf"^(?:(?:we|it|[A-Z][\w-]*(?:\s+[a-z][\w-]*){{0,2}})\s+)?(?:trains?|tunes?|fine-?tunes?|updates?|optimi[sz]es?|learns?)\s+(?:only|solely)\s+{subjects}{qualifier}\s*$"),  # "Prompt tuning fine-tunes only ..."
        ("trained", rf"{lead}{subjects}\s*\((?:trainable|learnable)\)\s*$"),
        # "A learnable class token x_0^{(cls)} is prepended": a part added to the model as a learned parameter
        ("trained", rf"^(?:(?:and|with|then)\s+)?(?:an?\s+|the\s+)?(?:learnable|trainable|learned)\s+{subjects}(?:\s+[^\s,;]*[_^][^\s,;]*)?\s+(?:is|are)\s+(?:prepended|appended|added|inserted|concatenated|introduced)\b[^,;]*$"),
        ("trained", rf"{lead}{subjects}\s+(?:(?:is|are)\s+)?(?:both\s+|all\s+)?(?:trained|updated|learned|tuned|fine-?tuned|trainable|learnable){qualifier}\s*$"),
    ]
    return tuple((kind, re.compile(regex, re.IGNORECASE)) for kind, regex in forms)


@functools.cache
def _placement_re() -> re.Pattern | None:
    verbs = _words("placement_verbs")
    return re.compile(rf"\b(?:{_alternation(verbs)})\b\s*(?P<where>.*)$", re.IGNORECASE | re.DOTALL) if verbs else None


# "MegaVid v2.1 initialization", "SD 2.1 weights": a project's release, by name and version
_RELEASE_INIT = re.compile(r"^(?P<name>[A-Z][\w.-]*(?:\s+[A-Z][\w.-]*){0,2}\s+v?\d+(?:\.\d+)*)\s+(?:initiali[sz]ation|init|weights|checkpoint)$")


@functools.cache
def _release_projects() -> frozenset[str]:
    return frozenset(str(p).lower() for p in rules.load("claim_protocol.yaml").get("models", {}).get("releases") or [])


def _known_release(name: str) -> bool:
    """A project whose releases the model rule's table spells out: "Open-Sora v1.0", not an unknown "MegaVid v2.1"."""
    return re.sub(r"\s+v?\d+(?:\.\d+)*$", "", name).lower() in _release_projects()


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
            name, reason = _code_name(subject, aliases, claim or body)
            if name is None:
                why = why or reason
            elif name not in names:
                names.append(name)
        if kind == "init":
            scheme = _scheme(match)
            checks: list[Any] = [InitCheck(name=n, expect=scheme) for n in names if n not in _UNNAMED_INIT]  # type: ignore[arg-type]
            written = match.groupdict().get("prefix") or match.groupdict().get("scheme") or ""
            if len(checks) < len(names) and (target := _family_calls(written) or scheme_calls(scheme)):
                checks.append(CallCheck(target=target))  # "all weights are Xavier-initialized": the scheme's API runs
            elif len(checks) < len(names):
                why = why or "an initialisation of every layer's weights or biases: the init check needs one named tensor"
        elif kind == "only-trained":
            if why or not names:
                return MethodFacts([], why or f"which parts alone are trained ({', '.join(subjects)}): no code name")
            kinds = set(_mapping("parameter_kinds").values())  # every bias, every norm: the task head aside
            # "only A and B are trained": each trains, and `only` is over their union (the first, `besides` the rest)
            besides = [*names[1:], *([_KIND_HEAD] if names[0] in kinds and _KIND_HEAD not in names else [])]
            checks = [ProtocolCheck(rule="trainable", name=names[0], only=True, **({"besides": besides} if besides else {}))]
            checks += [ProtocolCheck(rule="trainable", name=n) for n in names[1:]]
        elif kind == "trained":
            checks = [ProtocolCheck(rule="trainable", name=n) for n in names]
        else:
            checks = [ProtocolCheck(rule="frozen", name=n) for n in names]
        return MethodFacts(checks, why)
    if (mention := scheme_mention(body)) is not None:
        return MethodFacts([mention])
    if _INIT_FROM.search(body):
        return MethodFacts([], "initialised from another tensor or model: no init scheme to check")
    if (release := _RELEASE_INIT.match(body)) is not None:
        name = release.group("name")
        if _known_release(name):
            return MethodFacts([ProtocolCheck(rule="model", expect=name)])
        return MethodFacts([], f"initialised from a release named by project and version ({name}): the model rule "
                               "knows the weights files and hub ids of the releases of rules/claim_protocol.yaml's "
                               "`releases` only")
    placed = block_placement.covering(body, claim or body)  # "a single adapter placed after the MLP block"
    if placed is not None:
        if describes_variant(claim) or _variant_heading(claim):
            return MethodFacts([], "describes a baseline or an ablation: its parts are not the main method's code")
        return MethodFacts([placed])
    covering = _covering(body, claim or body)
    if covering is not None and covering.checks and _variant_heading(claim):
        return MethodFacts([], "describes a baseline or an ablation: its parts are not the main method's code")
    if covering is not None:
        return covering  # "... applied to W_Q and W_V", "target modules: key, value, query"
    placement = _placement_re()
    found = placement.search(body) if placement else None
    if found and _MODULE_WORDS.search(found.group("where")) and not _SUBJECT.search(claim or body):
        return MethodFacts([], "placement of something no adaptation method names (no LoRA or adapter in the claim): "
                               "the target-modules rule reads where an adapter is attached")
    if found and _MODULE_WORDS.search(found.group("where")):
        return _placement_leftover(found.group("where"), found.group(0)[: found.start("where") - found.start()])
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


def _placement_leftover(where: str, verb: str) -> MethodFacts:
    if re.fullmatch(_alternation(_words("position_verbs")), verb.strip(), re.IGNORECASE):
        return MethodFacts([], "placement by position in the block that the placement rule does not read (a part "
                               "other than the MLP or the attention, a hidden state, a qualifier or a second subject)")
    return MethodFacts([], "placement (which modules the method is attached to) in plain words no module family "
                           f"maps to ('{where.strip()[:60]}'): module names differ by architecture, no check decides it")


# ----- placements: which module families a method is attached to --------------------------------------------
_FAMILY_ORDER = ("query", "key", "value", "qkv", "attention-output", "attention", "mlp-in", "mlp-out", "mlp",
                 "all-linear", "embedding", "head")
_SUBJECT = re.compile(r"(?<![a-z])(?:ada|q)?lora|adapter|low[- ]rank|(?<![a-z])(?:dora|vera|loha|lokr|ia3|peft)(?![a-z])",
                      re.IGNORECASE)
_ITEM_SPLIT = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*|(?<=\w)/(?=\w)")
_W_SYMBOL = re.compile(r"w\s*[_^]?\s*\{?\s*([a-z]{1,3})\s*\}?")
_QUALIFIER_TAIL = re.compile(r"\s+(?:in|of|within|inside|for|across)\s+(?:each|every|all|the|its)\b.*$")
_CODE_NAME = re.compile(r"[a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)*")


@functools.cache
def _rule_modules() -> dict[str, list[str]]:
    try:
        data = rules.load("protocol/target-modules.yaml")
    except (FileNotFoundError, OSError):
        return {}
    table = ((data or {}).get("lexicon") or {}).get("modules") or {}
    return {str(k).lower(): [str(f) for f in v] for k, v in table.items()}


def _code_families(code: str) -> list[str] | None:
    """A code name's families by the rule's table, its longest dotted suffix first (``attn.c_proj``)."""
    pieces = code.split(".")
    table = _rule_modules()
    return next((table[".".join(pieces[-k:])] for k in range(len(pieces), 0, -1) if ".".join(pieces[-k:]) in table), None)


_CODE_ITEM = re.compile(r"[a-z][a-z0-9]*(?:[._][a-z0-9]+)+|qkv|wqkv|c_attn|fc\d")
# A module name as code writes it: lower case, a first piece of two letters or more (``h_3``, ``DeltaW_1`` are
# the paper's symbols for hidden states and updates, not modules).
_CODE_SPELLING = re.compile(r"[a-z]{2,}[a-z0-9]*(?:[._][a-z0-9]+)+")


def _item_families(item: str) -> tuple[list[str] | None, str]:
    """The families one listed module names, and the code name it was written as ("" for plain words)."""
    raw = re.sub(r"\s+", " ", item.strip().strip("`'\"").lower())
    raw = _QUALIFIER_TAIL.sub("", raw)
    raw = re.sub(r"\s+", " ", re.sub(r"\b(?:only|both|the|its)\b", " ", raw)).strip()
    table = {re.sub(r"\s+", " ", k): v for k, v in _data().get("placement_families", {}).items()}
    suffixes = _alternation(_words("placement_suffixes"))
    bare = re.sub(rf"(?:\s+(?:{suffixes}))+$", "", raw).strip() if suffixes else raw
    code = bare.strip("` ")
    written = re.sub(r"\s+", " ", item.strip().strip("`'\"")).split(" ")
    if _CODE_ITEM.fullmatch(code) and not _W_SYMBOL.fullmatch(code) and (
            code in _rule_modules() or _CODE_SPELLING.fullmatch(written[-1] if len(written) == 1 else code)):
        return _code_families(code), code
    for text in (raw, bare):
        if text in table:
            return [str(f) for f in table[text]], ""
        symbol = _W_SYMBOL.fullmatch(text)
        if symbol and symbol.group(1) in table:
            return [str(f) for f in table[symbol.group(1)]], ""
    return None, ""


def _ordered(families: list[str]) -> list[str]:
    unique = dict.fromkeys(families)
    return sorted(unique, key=lambda f: (_FAMILY_ORDER.index(f) if f in _FAMILY_ORDER else len(_FAMILY_ORDER), f))


def _masked(text: str) -> str:
    """Parentheticals blanked and slashes inside braces protected (positions kept): "(Mistral-7B/Gemma-2 9B)"
    says for which runs, not which module; ``W_{Q/V}`` is one item until it is expanded."""
    text = re.sub(r"\([^()]*\)", lambda m: " " * len(m.group(0)), text)
    return re.sub(r"\{[^{}]*\}", lambda m: m.group(0).replace("/", "\0").replace(",", "\1"), text)


def _expand_symbols(text: str) -> list[str]:
    """``W_{Q/V}`` -> [W_Q, W_V]; ``W_{Q,K,V}`` likewise."""
    found = re.fullmatch(r"(.*?)\bW_\{([A-Za-z](?:[\0\1]\s*[A-Za-z])+)\}(.*)", text)
    if found is None:
        return [text.replace("\0", "/").replace("\1", ",")]
    letters = re.split(r"[\0\1]\s*", found.group(2))
    return [f"{found.group(1)}W_{c}{found.group(3)}".strip() for c in letters]


@dataclass(frozen=True)
class _Listed:
    end: int
    families: list[str]
    codes: list[str]  # the items as code names when every one is written so ([] otherwise)
    unmapped: str = ""  # the first item that names a module no family maps to
    subject: bool = False  # the claim names the adaptation method being placed


def _read_list(claim: str, begin: int, stop: int, subject: bool) -> _Listed | None:
    """The modules listed in claim[begin:stop] (the longest prefix of items that all name modules); None when
    the text is no module list at all."""
    masked = _masked(claim[:stop])
    spans, pos = [], begin
    for piece in _ITEM_SPLIT.finditer(masked + ",", begin):
        spans.append((pos, piece.start()))
        pos = piece.end()
        if pos >= len(masked):
            break
    families: list[str] = []
    codes: list[str] = []
    unmapped, end, plain = "", begin, False
    for a, b in spans:
        text = masked[a:b].strip()
        if not text:
            continue
        read = [_item_families(p) for p in _expand_symbols(text)]
        if all(f is not None or code for f, code in read):
            for f, code in read:
                families += f or []
                if code:
                    codes.append(code)
                plain = plain or not code
                unmapped = unmapped or ("" if f is not None else code)
            end = b
            continue
        if _MODULE_WORDS.search(text):
            unmapped = unmapped or text  # "query, value and the gating layers": the list says more than it maps
        break
    if end == begin and not unmapped:
        return None
    if plain and not subject:
        return None  # "dropout applied to the attention weights": no adaptation method is placed
    tail = re.match(r"(?:\s*\([^()]*\))?(?:\s+only)?", claim[end:stop])
    return _Listed(end + (tail.end() if tail else 0), _ordered(families), [] if plain else codes, unmapped, subject)


_LORA_WORDS = re.compile(r"\b(?:q?lora|low[- ]rank)", re.IGNORECASE)
_ADAPTER_WORDS = re.compile(r"\b(?:adapters?|adaptformer)\b", re.IGNORECASE)  # not "bottleneck": LoRA papers call r one


def _placed_method(text: str) -> str:
    """Which method's placements the check reads: LoRA or a bottleneck adapter when the sentence names one of
    them alone (a repo comparing PEFT methods has both; an adapter's sites must not answer a LoRA claim)."""
    text = re.sub(r"\b(?:q?lora|low[- ]rank)\s+adapters?\b", "LoRA", text, flags=re.IGNORECASE)  # "LoRA adapters"
    lora, adapter = bool(_LORA_WORDS.search(text)), bool(_ADAPTER_WORDS.search(text))
    return "lora" if lora and not adapter else "adapter" if adapter and not lora else "any"


def _listed_facts(listed: _Listed, verb: str, method: str = "any") -> MethodFacts:
    if not listed.unmapped:
        extra = {"method": method} if method != "any" else {}
        return MethodFacts([ProtocolCheck(rule="target-modules", expect=listed.families, **extra)])
    if listed.codes and listed.subject:
        return MethodFacts([ValueCheck(name="target_modules", expect=listed.codes)])  # code names the rule's table lacks
    return _placement_leftover(listed.unmapped, verb)


@functools.lru_cache(maxsize=256)
def _placements(claim: str) -> tuple[tuple[int, int, MethodFacts], ...]:
    """Placements read on the whole claim (once per claim, not per fragment): a list runs past the commas the
    fragments are cut at ("applied to q_proj, k_proj and v_proj", "LoRA target modules: key, value, query")."""
    if not claim:
        return ()
    out: list[tuple[int, int, MethodFacts]] = []
    lead = claim[:120].split(":", 1)[0]
    stops = [m.start() for m in re.finditer(r"\.(?=\s|$)|;|\n", claim)] + [len(claim)]

    def stop_after(i: int) -> int:
        return next(s for s in stops if s >= i)

    def sentence_before(i: int) -> str:
        return claim[max([s for s in stops if s < i] or [-1]) + 1 : i]

    def subject_before(i: int) -> bool:
        return bool(_SUBJECT.search(sentence_before(i)) or _SUBJECT.search(lead))

    def method_before(i: int) -> str:  # the sentence's method words, else the claim's lead's
        sentence = sentence_before(i)
        named = _LORA_WORDS.search(sentence) or _ADAPTER_WORDS.search(sentence)
        return _placed_method(sentence if named else lead)

    verbs = _alternation(_words("placement_verbs") + _words("position_verbs"))
    for verb in re.finditer(rf"\b(?:{verbs})\b\s*", claim, re.IGNORECASE):
        stop = stop_after(verb.end())
        if re.fullmatch(_alternation(_words("position_verbs")), verb.group(0).strip(), re.IGNORECASE):
            if _MODULE_WORDS.search(claim[verb.end():stop]):
                out.append((verb.start(), stop, _placement_leftover(claim[verb.end():stop], verb.group(0))))
            continue
        listed = _read_list(claim, verb.end(), stop, subject_before(verb.start()))
        if listed is not None:
            facts = _listed_facts(listed, verb.group(0), method_before(verb.start()))
            out.append((verb.start(), listed.end if facts.checks else stop, facts))
    headings = _alternation(_words("placement_headings"))
    for head in re.finditer(rf"\b(?:{headings})\s*(?::|=|\bare\b|\bis\b)\s*", claim, re.IGNORECASE) if headings else ():
        begin = head.end()
        sentence_end = next((m.start() for m in re.finditer(r"\.(?=\s|$)|\n", claim) if m.start() >= begin), len(claim))
        first = True
        for segment in re.finditer(r"[^;]+", claim[begin:sentence_end]):
            a, b = begin + segment.start(), begin + segment.end()
            a += len(claim[a:b]) - len(claim[a:b].lstrip())
            listed = _read_list(claim, a, b, True)
            if listed is None or claim[listed.end:b].strip():
                break  # a segment that is not wholly a module list ends the heading's lists
            facts = _listed_facts(listed, "", _placed_method(claim[: head.end()]))
            out.append((head.start() if first else a, listed.end, facts))
            first = False
    return tuple(out)


def _variant_heading(claim: str) -> bool:
    """The claim is headed by a baseline or an ablation ("Standard LoRA (baseline): applied to ..."); a setup
    sentence that compares against baselines still places the main method's modules."""
    head = re.match(r"[^:\n]{0,120}:", claim or "")
    cues = _words("variant_cues")
    return bool(head and cues and re.search(rf"\b(?:{_alternation(cues)})\b", head.group(0), re.IGNORECASE))


def _covering(body: str, claim: str) -> MethodFacts | None:
    """The placement a fragment belongs to: it lies inside the placement's span (a short lead such as "LoRA"
    before it allowed)."""
    at = claim.find(body)
    if at < 0:
        return None
    for start, end, facts in _placements(claim):
        if at < end and at + len(body) <= end and start <= at + len(body) and (
                at >= start or (start - at <= 40 and not re.search(r"[\d=:]", claim[at:start]))):
            return facts
    return None


def merge(body: str, b: Any, made: list[int], reason: str) -> tuple[list[int], str]:
    """Fold a fragment's method statement into what the rest of the compiler made of it: the statement is
    the whole fragment, so its reading replaces the reason another reading gave up with."""
    facts = read(body, b.claim, b.aliases)
    if facts is None:
        return made, reason
    added = [b.add(check) for check in facts.checks]
    return [*made, *added], facts.reason or (reason if not added else "")


# ----- parameter kinds: "LayerNorm tuning", "tunes bias terms in ..." ----------------------------------------
_KIND_HEAD = "head"  # the task head a fine-tuning method trains beside any kind


@dataclass(frozen=True)
class KindTraining:
    """A statement that a parameter kind is trained: its check and the span of the claim it covers."""

    check: ProtocolCheck
    span: tuple[int, int]
    reason: str = ""  # what of the span the check leaves out ("scale factors" of "bias + LN tuning + scale factors")


@functools.cache
def _kind_res() -> tuple[re.Pattern, re.Pattern] | None:
    kinds = _alternation(list(_mapping("parameter_kinds")))
    if not kinds:
        return None
    tuning = re.compile(rf"(?<![\w-])(?P<kind>{kinds})(?:[\s-]+only)?[\s-]+(?:fine-?)?tun(?:ing|e)\b", re.IGNORECASE)
    verb = re.compile(
        rf"\b(?:tunes?|trains?|updates?|fine-?tunes?|learns?)\s+(?P<only>only\s+|solely\s+)?(?:the\s+|all\s+)?(?P<kind>{kinds})"
        r"(?:\s+terms)?(?![\w-])(?P<where>\s+(?:in|of)\s+(?:the\s+)?[^.,;:=\d]+)?",
        re.IGNORECASE,
    )
    return tuning, verb


_COMPARED_BEFORE = re.compile(r"\b(?:outperform\w*|than|vs\.?|versus|compar\w*|beats?|surpass\w*|unlike|instead\s+of|"
                              r"baselines?|against|over)\b", re.IGNORECASE)
_ONLY_AFTER = re.compile(r"\s*[:(–—-]\s*(?:the\s+)?(?:only|solely)\b", re.IGNORECASE)  # "LayerNorm tuning: only the LN ..."
_COMBINED = re.compile(r"[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*)?(?:\s*\+\s*[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*)?)+")
_TUNABLE_COUNT = re.compile(r"\d[\d.,]*\s*[KMB]?\s+(?:tunable|trainable|learnable)\s+param(?:eter)?s\b", re.IGNORECASE)
_LIST_ITEM = re.compile(r",\s*(?:and\s+)?")
# a list item that is a new clause, not one more place the kind sits in ("..., with a cosine schedule")
_NOT_A_PLACE = re.compile(r"\s*(?:with|using|via|for|at|while|which|where|to|on|then|trained|optimi[sz]ed|learning|lr|batch)\b", re.IGNORECASE)


def find_kind_training(claim: str) -> list[KindTraining]:
    """"LN tuning: 40K tunable params", "Bias tuning: ... tunes bias terms in the stem, attention blocks, MLP
    layers": a `trainable` check on the kind. With the method's tunable-parameter count or "only",
    the kind is what trains (`only`; the task head beside it: every fine-tuning method trains its classifier). The
    places a "tunes bias terms in ..." list names are all of the kind's (every bias of the blocks named), so the span
    runs over the list; a list that goes on with numbers or settings ends before them."""
    found = _kind_res()
    if found is None or describes_variant(claim):
        return []
    tuning, verb = found
    counted = bool(_TUNABLE_COUNT.search(claim))
    out: list[KindTraining] = []
    kinds = _mapping("parameter_kinds")
    for combined in _COMBINED.finditer(claim):  # "bias + LN tuning + scale factors": each kind trains, not alone
        items = [re.sub(r"[\s-]+(?:only[\s-]+)?(?:fine-?)?tun(?:ing|e)$", "", i.strip(), flags=re.IGNORECASE)
                 for i in re.split(r"\s*\+\s*|\s+plus\s+", combined.group(0))]
        keys = [re.sub(r"\s+", " ", i.lower()) for i in items]
        named = [kinds[k] for k in keys if k in kinds]
        rest = [i for i, k in zip(items, keys) if k not in kinds]
        window = claim[max(0, combined.start() - 80) : combined.end() + 20]
        if not named or ("=" in window and rest) or not re.search(r"\b(?:tun\w*|train\w*|learnable|fine-?tun\w*|updat\w*)", window, re.IGNORECASE):
            continue  # "Wx + bias": a sum in a formula, not what is tuned ("DiffFit = BitFit + LN-Tune" names only kinds)
        why = (f"{', '.join(repr(r) for r in rest)}: no name the trainable rule can look for (only parameter kinds and "
               "named parts)") if rest else ""
        for kind in dict.fromkeys(named):
            out.append(KindTraining(ProtocolCheck(rule="trainable", name=kind), combined.span(), why))
    for match in [*tuning.finditer(claim), *verb.finditer(claim)]:
        if _COMPARED_BEFORE.search(re.split(r"[.;:]\s", claim[: match.start()])[-1]):
            continue  # "outperforms LN tuning", "unlike bias tuning": another method, named to compare
        if re.search(r"\+|\bplus\b", claim[max(0, match.start() - 12) : match.end() + 20]):
            continue  # "bias + LN tuning + scale factors": one part of a combined method, typed above
        # "combined with BitFit and LayerNorm tuning": the kind trains beside another part, not alone
        beside = bool(re.search(r"\b(?:and|with|combined\s+with|together\s+with)\s+(?:\S+\s+){0,6}$", claim[max(0, match.start() - 60) : match.start()])
                      or re.match(r"[^.;]{0,40}?\b(?:and|with|combined\s+with)\s+[\w-]+(?:\s+[\w-]+)?\s+(?:tuning|scaling|\()", claim[match.end():]))
        kind = kinds[re.sub(r"\s+", " ", match.group("kind").lower())]
        end = match.end()
        if "where" in match.groupdict() and match.group("where"):
            tail = re.split(r"[.;]", claim[end:], maxsplit=1)[0]
            for item in _LIST_ITEM.split(tail)[1:] if tail.startswith(",") else []:
                if re.search(r"[\d=:()]", item) or len(item.split()) > 4 or _NOT_A_PLACE.match(item):
                    break
                end = claim.index(item, end) + len(item)
        said_only = bool(match.groupdict().get("only")) or bool(_ONLY_AFTER.match(claim, match.end()))
        only = said_only or (counted and not beside)  # a count of tunable params beside another part is theirs together
        check = ProtocolCheck(rule="trainable", name=kind, **({"only": True, "besides": [_KIND_HEAD]} if only else {}))
        if all(k.check != check or k.span != (match.start(), end) for k in out):
            out.append(KindTraining(check, (match.start(), end)))  # the builder keeps one check; each span is typed
    return out


# ----- a scheme for the whole model: "Kaiming initialization", "all weights are Xavier-initialized" -----------
@functools.cache
def scheme_calls(scheme: str) -> str:
    """The APIs that implement ``scheme`` (torch.nn.init, timm, jax/flax initializers), as a `call` target of
    alternatives, read from rules/init_schemes.yaml; "" for a scheme with no call of its own (zeros, normal)."""
    if scheme not in _words("call_schemes"):
        return ""
    try:
        table = rules.load("init_schemes.yaml") or {}
    except (FileNotFoundError, OSError):
        return ""
    torch_apis = [f"torch.nn.init.{leaf}" for leaf, entry in (table.get("functions") or {}).items()
                  if leaf.endswith("_") and "_tf_" not in leaf and (entry or {}).get("scheme") == scheme]
    torch_apis += [str(api) for api in (table.get("scheme_call_extras") or {}).get(scheme) or []]
    flax_apis = [f"{space}.{leaf}" for leaf, entry in (table.get("flax") or {}).items() if (entry or {}).get("scheme") == scheme
                 for space in table.get("scheme_call_flax_namespaces") or []]
    return " | ".join(dict.fromkeys(torch_apis + flax_apis))


def _family_calls(written: str) -> str:
    """"kaiming" -> both Kaiming variants' APIs; "xavier uniform" -> that scheme's."""
    lowered = re.sub(r"[\s-]+", " ", written.lower()).strip()
    family = (_data().get("scheme_families") or {}).get(lowered)
    schemes = [str(s) for s in family] if family else [_scheme_table().get(lowered, "")]
    return " | ".join(dict.fromkeys(t for s in schemes if s for t in scheme_calls(s).split(" | ") if t))


@functools.cache
def _bare_scheme_re() -> re.Pattern:
    words = list(_data().get("scheme_families") or {}) + [w for w, s in _mapping("init_schemes").items() if s in _words("call_schemes")]
    return re.compile(
        rf"^(?:(?:a|an|the|with|using|uses?)\s+)?(?P<scheme>{_alternation(words)})(?:\s+random)?[\s-]+init(?:iali[sz]ation)?"
        r"(?:\s+(?:is\s+|was\s+)?(?:also\s+)?(?:used|applied|tested|adopted)\b[^=\d\[\]()]*)?\s*$",
        re.IGNORECASE,
    )


def scheme_mention(text: str) -> Any:
    """"Kaiming initialization", "Xavier uniform init is used": a scheme named for no tensor in particular, a `call`
    check on its APIs; None when the fragment says more (a flag's values "Xavier init [true, false]", arguments)."""
    found = _bare_scheme_re().match(text.strip().rstrip("."))
    if found is None:
        return None
    target = _family_calls(found.group("scheme"))
    return CallCheck(target=target) if target else None
