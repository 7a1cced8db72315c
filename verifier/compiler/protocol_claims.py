"""Protocol prose -> what the `protocol` rules check: the baselines a claim compares against, the component
an ablation switches, and the fragments of a protocol claim that no repository implements.

SA-Bench's D3 claims name their comparisons in running prose ("Compare WDNO against WNO, MWT, FNO and DDPM on
2D simulation", "Baselines: PID, SAC (pseudo-online/offline)", "PEFT baselines (LoRA, DoRA)"). Each helper
reads one textual shape; the words that decide (baseline families, spellings, libraries) are data in
rules/claim_protocol.yaml. A name the helpers are unsure of is left out: a fragment without a check goes to
the judge, a wrong check does not.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass

from verifier.compiler import numbers, terms

_norm = terms.normalise_phrase  # "Full fine-tuning" = "full_fine tuning"

# ----- baseline lists -------------------------------------------------------------------------------------
_CUE = re.compile(
    r"\b(?:(?P<strong>(?:compared?|compares|comparing)\s+(?:against|with|to)|against|versus|vs\.?)"
    r"|(?P<compare>compare[sd]?|comparing)|(?P<label>baselines?)(?:\s+(?:include|includes|are|is))?"
    r"|(?P<counted>(?:two|three|four|five|six|seven|eight|nine|ten|\d+)\s+(?:[\w\-]+\s+){0,4}?"
    r"(?:architectures|methods|baselines|operators|variants|approaches|algorithms)\s*(?:--|—|:)))(?![\w-])",
    re.IGNORECASE,
)  # "counted": "four distinct neural operator architectures -- A, B, C and D --"
_STRONG_INSIDE = re.compile(r"\b(?:against|versus|vs\.?)(?![\w-])|\bcompared?\s+(?:with|to)\b", re.IGNORECASE)
# Words after a name that start a qualifier, not another name: "DDPM on 2D simulation", "LoRA at rank 8".
_TAIL = re.compile(
    r"\s(?:on|at|in|across|for|with|without|to|under|using|over|from|by|via|when|where|which|that|as|per|during|"
    r"through|trained|evaluated|tested|measured|based|against|versus|vs\.?|—|--)(?![\w-])",
    re.IGNORECASE,
)
_FAMILY_TAIL = re.compile(
    r"\s+(?:baselines?|variants?|models?|methods?|approaches|approach|versions?|configurations?|solvers?|samplers?|"
    r"agents?|policy|policies|networks?|classifiers?|regressors?)$",
    re.IGNORECASE,
)
_ABBREVIATED = re.compile(r"(?:^|\s)[A-Z][a-z]{1,5}\.(?=\s)")  # "Houl. Adapter": a shortened qualifier
_QUOTED = re.compile(
    r"\b(?:results?|numbers?|scores?)\s+(?:are\s+)?(?:from|taken from|copied from|quoted from)\b|"
    r"\breported (?:in|by)\b|\bfrom (?:their|the original) papers?\b",
    re.IGNORECASE,
)
_NAME_TOKEN = re.compile(
    r"^(?=[^\s]*[A-Za-z])(?:[A-Z0-9][\w\-+./']*|[a-z]+[A-Z][\w\-+./']*|[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]{2,}\d+[a-z]{2,}[\w\-]*)$"
)  # TreeNet, mTAN, wide_resnet, wav2vec
_VERSION = re.compile(r"^v?\d+(?:\.\d+)+$")  # "wav2vec 2.0", "YOLO v5.1": a release, part of the name
_QUANTITY = re.compile(r"^(?![123]D$)[-+~]?\d[\d.,\-]*[A-Za-z%]{0,3}(?:/\w+)?$")  # 8, 29.46GB, 0.77-0.86GB, 16M, 2x
_SIZE_SUFFIX = re.compile(r"-\d+(?:\.\d+)?[KMB](?:/\w+)?$")
_BILLIONS = re.compile(r"-\d+(?:\.\d+)?B$")
_SHORT_NAME = re.compile(r"[A-Z][A-Za-z0-9\-+]{1,15}")  # "(CoxPH)", "(RSF)": a spelled-out method's short name
_TITLE_WORDS = frozenset(
    "comparison analysis evaluation study ablation table figure section results result benchmark experiment "
    "experiments setup protocol".split()
)
_GENERIC = frozenset(
    "ours our it them others all each both none n/a na baseline baselines sota state-of-the-art prior work "
    "previous work existing methods".split()
)


_METHOD_APIS = frozenset({"architecture", "peft", "diffusion", "operators", "layers"})  # rules/claim_apis.yaml categories


@dataclass(frozen=True)
class BaselineList:
    names: list[str]
    spans: list[tuple[int, int]]  # the parts of the text that only list names (they count as compiled)


@functools.cache
def _vocabulary() -> tuple[frozenset[str], frozenset[str], dict[str, str]]:
    """(baseline families, library names, lower-case baseline spelling -> name) of rules/claim_protocol.yaml."""
    families = frozenset(w.lower() for w in terms.protocol_words("baseline_families"))
    libraries = frozenset(w.lower() for w in terms.protocol_words("libraries"))
    named: dict[str, str] = {}
    for name, spellings in terms.protocol_mapping_lists("baselines").items():
        for spelling in [name, *spellings]:
            named[_norm(spelling)] = name
    return families, libraries, named


def baseline_name(item: str) -> str | None:
    """The baseline an item of a comparison list names ("and DDPM baselines" -> DDPM), or None when it names a
    family ("PEFT baselines"), a count ("8 PEFT methods"), a library, a dataset or metric, or is prose."""
    families, libraries, named = _vocabulary()
    text = re.sub(r"^(?:and|or|as well as|plus|the|a|an)\s+", "", item.strip(" \t,;:'\"*"), flags=re.IGNORECASE)
    text = re.sub(r"^(?:and|or|the)\s+", "", text, flags=re.IGNORECASE).strip()
    if (lowered := _norm(text)) in named:
        return named[lowered]
    text = _FAMILY_TAIL.sub("", text).strip()
    text = re.sub(r"'s$", "", _ABBREVIATED.sub(" ", f" {text}").strip())
    if _SIZE_SUFFIX.search(text) and not (_model_patterns()[0].fullmatch(text) or _BILLIONS.search(text)):
        # "VICON-88M", "FMT-S-6M": a method's size is not part of its name; a public checkpoint's is ("Pythia-1.4B",
        # "Canary-1B": a size in billions is a released model's)
        text = re.sub(r"-(?:XXS|XS|S|B|M|L|XL|XXL|H|G)$", "", _SIZE_SUFFIX.sub("", text))
    lowered = _norm(text)
    if lowered in named:
        return named[lowered]
    tokens = text.split()
    if not tokens or len(tokens) > 4 or len(text) > 40 or "=" in text:
        return None
    if lowered in families or lowered in _GENERIC or any(t.lower() in libraries for t in tokens):
        return None
    named_tokens = tokens[:-1] if len(tokens) >= 2 and _VERSION.match(tokens[-1]) else tokens
    if any(t.lower().strip(".") in _TITLE_WORDS for t in tokens) or any(_QUANTITY.match(t) for t in named_tokens):
        return None
    if not all(_NAME_TOKEN.match(t) for t in named_tokens) or terms.find_protocol_terms(text):
        return None
    if len(tokens) == 1 and len(text) == 1:
        return None  # a bare symbol ("J", "M") is not a method's name
    if any(h.start == 0 and h.end == len(text) and h.category.split("_")[0] not in _METHOD_APIS for h in terms.find_apis(text)):
        return None  # "compared with Adam and SGD": optimizers, not baselines (their call checks say it)
    return text


def _list_end(text: str, start: int) -> int:
    """Where a list that starts at ``start`` ends: a sentence end, ``;``, ``|``, a line, a colon or the close
    of a bracket it sits in (brackets inside the list are skipped)."""
    depth = 0
    i = start
    while i < len(text):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return i
            depth -= 1
        elif depth == 0 and ch in ";|\n:":
            return i
        elif depth == 0 and ch == "." and (i + 1 == len(text) or text[i + 1] in " \n"):
            before = text[max(0, i - 6) : i].lower()
            if not re.search(r"(?:\bvs|\be\.g|\bi\.e|\bet al|\betc)$", before) and not re.search(r"(?:^|\s)[A-Z][a-z]{1,5}$", text[max(0, i - 7) : i]):
                return i
        i += 1
    return len(text)


def _top_level_groups(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of the comma-separated groups of text[start:end] (commas inside brackets do not cut)."""
    groups, depth, a = [], 0, start
    for i in range(start, end):
        ch = text[i]
        depth += ch in "([{"
        depth -= ch in ")]}" and depth > 0
        if ch == "," and depth == 0:
            groups.append((a, i))
            a = i + 1
    groups.append((a, end))
    return [(x, y) for x, y in groups if text[x:y].strip()]


def _parenthetical(item: str) -> tuple[str, str | None]:
    """(the item without its parentheticals, the text of its first one)."""
    inner = None
    out, depth, current = [], 0, []
    for ch in item:
        if ch == "(":
            depth += 1
            if depth == 1:
                current = []
                continue
        elif ch == ")" and depth:
            depth -= 1
            if depth == 0:
                inner = "".join(current) if inner is None else inner
                out.append(" ")
                continue
        if depth:
            current.append(ch)
        else:
            out.append(ch)
    return re.sub(r"\s+", " ", "".join(out)).strip(), inner


def _acronym_of(name: str, inner: str | None) -> str | None:
    """"Wavelet Neural Operator (WNO)" -> WNO: the short name the paper (and its code) uses."""
    inner = (inner or "").strip()
    if re.fullmatch(r"[A-Z][A-Za-z0-9\-]{1,8}", inner) and " " in name and inner[0].lower() == name[0].lower():
        return inner
    return None


def _members(inner: str | None) -> list[str]:
    """The names of a parenthetical that lists a family's members: "(LoRA, DoRA, PiSSA)"; [] otherwise."""
    if not inner:
        return []
    if re.search(r"[:=]|^\s*(?:e\.g|i\.e|via|see|cf)\b", inner, re.IGNORECASE):
        return []  # "(via provider APIs: A, B)", "(e.g., A, B)": a remark, not the family's members
    items = [i for i in re.split(r",|;|\band\b|\bor\b", inner) if i.strip()]
    names = [n for n in (baseline_name(_parenthetical(i)[0]) for i in items) if n]
    return names if len(names) >= 2 and len(names) == len(items) else []


def _top_level_parts(group: str) -> list[str]:
    """A group cut at " and " / " or " / " & " outside brackets: "text-conditioned (A, B) and image (C, D)"."""
    parts, depth, a = [], 0, 0
    for match in re.finditer(r"[()\[\]{}]|\s+(?:and|or|&)\s+", group):
        token = match.group(0)
        if token in "([{":
            depth += 1
        elif token in ")]}":
            depth = max(depth - 1, 0)
        elif depth == 0:
            parts.append(group[a : match.start()])
            a = match.end()
    parts.append(group[a:])
    return [p for p in parts if p.strip()]


def _tail_at(part: str) -> re.Match | None:
    """The first qualifier word of a list item outside its brackets ("DDPM (x) on 2D simulation" -> " on")."""
    for match in _TAIL.finditer(part):
        before = part[: match.start()]
        if before.count("(") <= before.count(")") and before.count("[") <= before.count("]"):
            return match
    return None


def _read_list(
    text: str, start: int, end: int, compare: bool = False, labelled: bool = False
) -> tuple[list[str], list[tuple[int, int]], int, int]:
    """Names, the spans of groups made only of names, the number of items, and where reading stopped, of the
    list text[start:end]. ``compare``: the list follows a bare "Compare", whose first item may be the subject
    of a stronger cue ("Compare WDNO vs PID, SAC"): then that cue reads the list."""
    names: list[str] = []
    spans: list[tuple[int, int]] = []
    items = 0
    for a, b in _top_level_groups(text, start, end):
        group = text[a:b]
        if _QUOTED.search(group):
            items += 1
            continue  # "StreamT2V (results from GitHub)": numbers quoted, not a baseline the code runs
        found: list[str] = []
        named: list[bool] = []  # per part: it names a baseline or lists a family's members
        offset = 0
        parts = _top_level_parts(group)
        for number, part in enumerate(parts):
            offset = group.index(part, offset)
            tail = _tail_at(" " + part)
            if compare and not items and tail and _STRONG_INSIDE.match(tail.group(0).strip()):
                return [], [], 0, start
            raw = part[: tail.start() - 1] if tail else part
            head, inner = _parenthetical(raw)
            name = baseline_name(head) if head else None
            if (name is None and head and inner and len(head.split()) >= 2 and _SHORT_NAME.fullmatch(inner.strip())
                    and len(re.findall(r"[A-Z]", inner)) >= 2):
                name = baseline_name(inner.strip())  # "the Cox proportional-hazards model (CoxPH)": its short name
            if name is None and labelled and head and _METHOD_ACRONYM.fullmatch(head.strip()) and items:
                name = head.strip()  # "Baselines: DANN, CDAN and MCC": among methods, MCC is a method, not the metric
            name = (_acronym_of(name, inner) or name) if name else None
            members = [] if name else _members(inner)
            found.extend([name] if name else members)  # "PEFT baselines (LoRA, DoRA)": its members
            named.append(bool(name or members))
            items += max(1, len(members))
            if tail:
                names.extend(found)
                if found and len(found) >= number + 1 and all(named[:number]):
                    spans.append(_trimmed(text, a, a + offset + tail.start() - 1))
                return names, spans, items, a + offset + tail.start() - 1
            offset += len(part)
        names.extend(found)
        if found and all(named):
            spans.append(_trimmed(text, a, b))
    return names, spans, items, end


_METHOD_ACRONYM = re.compile(r"[A-Z][A-Z0-9]{1,5}")


def _trimmed(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


def find_baseline_lists(text: str) -> BaselineList:
    """Every comparison list of the text: after "against"/"vs"/"compared with"/"Baselines:", or "Compare A, B
    and C"; a list counts when at least half its items are names."""
    names: list[str] = []
    spans: list[tuple[int, int]] = []
    taken_until = -1
    for cue in _CUE.finditer(text):
        if cue.start() < taken_until:
            continue
        after = cue.end()
        if cue.group("counted"):
            end = _list_end(text, after)
            found, found_spans, items, stopped = _read_list(text, after, end)
            if found and len(found) * 2 >= items:
                names.extend(n for n in found if n not in names)
                spans.extend(found_spans)
                taken_until = stopped
            continue
        colon = re.match(r"[^().;:|\n]{0,40}?:\s*", text[after:])
        words_to_colon = len(text[after : after + colon.end()].split()) if colon else 0
        if colon and words_to_colon <= (2 if cue.group("label") else 4):  # "Baselines:", "against VDMs:"
            start = after + colon.end()
        elif cue.group("label") and re.match(r"\s*\(", text[after:]):
            start = text.index("(", after) + 1  # "three baselines (A, B, C)"
        elif cue.group("label") and re.search(r"\s(?:include|includes|are)$", cue.group(0), re.IGNORECASE):
            start = after  # "Baselines include A, B and C"
        elif cue.group("label"):
            continue  # "the baseline method": a baseline list needs "Baselines: ..." or "baselines (...)"
        else:
            start = after
            if cue.group("compare") and not re.match(r"\s+(?:\d+\s+)?[A-Z]", text[after:]):
                continue  # "compared across M splits": not followed by a name
        end = _list_end(text, start)
        found, found_spans, items, stopped = _read_list(text, start, end, compare=bool(cue.group("compare")) and not colon,
                                                        labelled=bool(cue.group("label") and colon))
        if not found or len(found) * 2 < items:
            continue
        if found_spans and found_spans[0][0] <= start + 1:
            found_spans[0] = (cue.start(), found_spans[0][1])  # "Compare against WNO": the cue is part of it
        names.extend(n for n in found if n not in names)
        spans.extend(found_spans)
        taken_until = stopped
    return BaselineList(names, spans)


def code_spellings(name: str) -> list[str]:
    """How code spells a baseline whose paper name has dashes, spaces or symbols ("OS-Ext" -> os_ext, OSExt):
    the rule looks names up literally before it compares them, so these go into its ``aliases``."""
    words = [w for w in re.split(r"[^0-9A-Za-z]+", name) if w]
    if len(words) < 2:
        return []
    snake = "_".join(w.lower() for w in words)
    camel = "".join(w if w[:1].isupper() else w.capitalize() for w in words)
    return [s for s in dict.fromkeys([snake, camel]) if s != name]


# ----- ablations ----------------------------------------------------------------------------------------
_WITH_AND_WITHOUT = re.compile(
    r"\b(?:with\s+(?:and|or)\s+without|with\s*/\s*without|w/\s*and\s*w/o|"
    r"in\s+(?:its|their)\s+(?:standard|original|base|vanilla|default|plain)\s+(?:form|version|setting)s?\s+and\s+with)\s+"
    r"(?:the\s+|a\s+|an\s+)?(?P<what>[A-Za-z][\w\-+]*(?:\s+[A-Za-z][\w\-+]*){0,3}?)\s*"
    r"\((?P<short>[A-Za-z][\w]{1,10})-?(?:\s+(?:variant|version|term|module))?\)",
    re.IGNORECASE,
)  # "evaluated with and without prefix-enhancement (PE)", "in its standard form and with the constraint (SC- variant)"


def ablated_components(text: str) -> list[tuple[str, list[str]]]:
    """"evaluated with and without prefix-enhancement (PE)": the component an ablation switches, as (name,
    code spellings). Only a component the paper names (an abbreviation follows it): "with and without data
    augmentation" names no code, it stays for the judge. The rule then checks the component is implemented
    and run; that the run without it also happens is not checked."""
    out = []
    for match in _WITH_AND_WITHOUT.finditer(text):
        what, short = match.group("what").strip(), match.group("short")
        initials = "".join(w[0] for w in re.split(r"[\s\-]+", what) if w).lower()
        if not initials.startswith(short[0].lower()):
            continue  # "(see Sec. 3)": a remark, not the component's abbreviation
        spellings = code_spellings(what) + ([short] if len(short) >= 3 else [])
        out.append((what, [s for s in dict.fromkeys(spellings) if s != what]))
    return out


# ----- fragments of protocol claims that no repository implements ------------------------------------------
_TABLE_NOTE = re.compile(r"\bmarked with\s*(?:an?\s+)?[*†‡§]|^\s*[*†‡]\s", re.IGNORECASE)
_NOT_APPLICABLE = re.compile(r"^\s*(?:n/?a|none|not applicable)\s*(?:\([^()]*\))?\s*$", re.IGNORECASE)
_CONNECTIVE = re.compile(
    r"^(?:additionally|moreover|furthermore|in addition|also|finally|similarly|likewise|overall|meanwhile)$", re.IGNORECASE
)
_LEAD_IN = re.compile(r"^for\s+(?:each|every|all|the|a|an)?\s*[A-Za-z][\w\-' ]{1,50}$", re.IGNORECASE)
# "after training on parameters in range [a, b], the models are tested on ...": a clause the next one completes
_SUBORDINATE = re.compile(r"^(?:after|before|once|when|whenever|while|upon)\s+[A-Za-z][^\d=;:]{2,80}$", re.IGNORECASE)
_TIME_UNIT = r"\d\s*(?:ms|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?)\b"
_COST = re.compile(
    r"\b(?:pric(?:e|es|ing)|fees?|billing)\b|"
    r"\b(?:negligible|minimal|modest|marginal|little|no|zero)\s+(?:extra\s+|additional\s+|computational\s+|memory\s+|runtime\s+)?(?:overhead|cost)\b|"
    rf"\boverhead\b.*{_TIME_UNIT}|{_TIME_UNIT}.*\boverhead\b",
    re.IGNORECASE,
)
_MEASURED_COST = re.compile(
    r"^(?:(?:total|average|mean|peak|overall|wall-clock|gpu|cpu)\s+)*(?:[a-z][\w\-]*\s+)?(?:time|runtime|latency|memory)"
    r"(?:\s+\([^()]*\))?$",
    re.IGNORECASE,
)  # "total transform time (seconds)", "time", "GPU memory": what a run costs, measured
_COUNT_ONLY = re.compile(
    r"^(?:parameter counts?|params|number of parameters|#\s*params|model sizes?|(?:trainable|tunable) parameters)$", re.IGNORECASE
)
_EXPECTED = re.compile(
    r"^(?:verify|verifies|confirm|confirms|check|checks|expect|expects)\s+(?:that\s+)?.*\b(?:slower|faster|better|worse|"
    r"lower|higher|smaller|larger|fewer|improv\w*|reduc\w*|degrad\w*|outperform\w*)\b",
    re.IGNORECASE,
)
_PHYSICAL = re.compile(r"\d+(?:\.\d+)?\s*(?:deg|degrees?|°|km|hPa)\b", re.IGNORECASE)
_STUDY_HEADS = frozenset(
    "impact importance effect effects effectiveness influence dependency dependence robustness sensitivity synergy "
    "verification validation invariance generalization generalisation efficiency fidelity contribution benefit "
    "role necessity trade-off tradeoff scaling stability analysis study ablation comparison evaluation protocol "
    "benchmark experiment experiments".split()
)
_NOT_IN_TITLES = re.compile(
    r"\b(?:is|are|was|were|be|has|have|uses?|used|using|applie[sd]|apply|trained|evaluated?|compared?|measured?|"
    r"reports?|reported|computed?|runs?|added|predicts?|learns?|generates?|samples?|on|at|with|without|for|from|to|"
    r"by|per|across|over|under|via)\b",
    re.IGNORECASE,
)


def _study_title(text: str) -> bool:
    """"Ablation: long-term dependency" (the body after the label), "Wavelet reconstruction fidelity test",
    "wavelet vs Fourier transform": a noun phrase naming what the experiment studies, no verb, no value."""
    title = re.sub(r"\s*\([^()]*\)\s*$", "", text).strip()
    if not title or re.search(r"[\d=:;]", title) or title.startswith("(") or _NOT_IN_TITLES.search(title):
        return False
    sides = re.split(r"\s+vs\.?\s+", title)
    if len(sides) == 2:
        return all(1 <= len(side.split()) <= 3 for side in sides)
    words = title.lower().split()
    if not 1 <= len(words) <= 6 or words[0].endswith("ing"):
        return False  # "balancing risk and efficiency": a gerund starts a clause, not a title
    return words[-1] in _STUDY_HEADS or (words[-1] == "test" and len(words) > 1 and words[-2] in _STUDY_HEADS)


def context_note(text: str) -> str | None:
    """The context category of a protocol-claim fragment with nothing typed: what no repository implements
    (a table footnote, numbers quoted from other work, "N/A", a cost statement, a lone connective or lead-in,
    a parameter count named without a value, an expected outcome, the study's title). None otherwise."""
    stripped = text.strip().strip(".")
    if _TABLE_NOTE.search(stripped):
        return "citation: a footnote of the paper's table, not something the code runs"
    if _QUOTED.search(stripped):
        return "reported result: numbers quoted from other work, not produced by the code"
    if _NOT_APPLICABLE.match(stripped):
        return "not applicable: the claim states there is none"
    if _CONNECTIVE.match(stripped):
        return "connective: a discourse word with no content of its own"
    if (_LEAD_IN.match(stripped) and len(stripped.split()) <= 5) or (_SUBORDINATE.match(stripped) and len(stripped.split()) <= 10):
        return "heading of the parts that follow: a lead-in clause"
    if _COST.search(stripped) or _MEASURED_COST.match(stripped):
        return "compute budget: time, memory or cost of a run"
    if _COUNT_ONLY.match(stripped):
        return "parameter count: follows from the architecture, not set by code"
    if _EXPECTED.match(stripped):
        return "reported result: an outcome the experiment is expected to show"
    numbers = re.findall(r"(?<![\w.])\d+(?:\.\d+)?", stripped)
    if numbers and re.search(r"\bdata(?:set)?\b", stripped, re.IGNORECASE) and len(_PHYSICAL.findall(stripped)) == len(numbers):
        return "dataset statistic: a property of the data, not set by code"
    if _study_title(stripped):
        return "heading: the title of the study, whose facts follow"
    return None


# ----- training-set sizes an ablation sweeps ----------------------------------------------------------------
_SIZE = r"\d+(?:\.\d+)?(?:\s*(?:%|[kK](?!\w)))?"
_SIZE_LIST = rf"{_SIZE}(?:\s*,\s+{_SIZE})*(?:\s*,?\s+(?:and|or)\s+{_SIZE}|(?:\s*,\s+{_SIZE}))"  # 2+ items; "2,000" is one
_UNITS = r"(?:samples|examples|instances|trajectories|images|sequences|points|episodes)"
_OF_FULL = (
    rf"\s+of\s+(?:the\s+)?(?:(?:full|whole|entire|original|complete)\s+)?(?:\d[\d,]*\s+)?(?:training\s+)?"
    rf"(?:{_UNITS}|data(?:set)?|(?:training\s+)?set)|\s+{_UNITS}"
)
_TRAIN_SET = r"train(?:ing)?(?:[\s-]+(?:set|data(?:set)?|split|samples?))(?:\s+sizes?)?"
_TRAIN_SIZE_SWEEPS = (
    # "Reduce training set to 0.2, 0.4, 0.6, 0.8 of full 9000 samples", "subsample the training data to 10%, 25% and 50%"
    re.compile(
        r"\b(?:reduc\w*|subsampl\w*|limit\w*|restrict\w*|shrink\w*|downsampl\w*|truncat\w*|var(?:y|ies|ied|ying))\s+"
        rf"(?:the\s+)?(?:size\s+of\s+(?:the\s+)?)?{_TRAIN_SET}\s+(?:to|over|across|among|in|of|between)\s+\{{?"
        rf"(?P<list>{_SIZE_LIST})\}}?(?:{_OF_FULL})?",
        re.IGNORECASE,
    ),
    # "trained with systematically decreasing sample sizes -- 2000, 1000, 500, 100 samples"
    re.compile(
        r"\btrain(?:ed|ing|s)?\s+(?:\w+\s+){0,2}?(?:with|on|using)\s+(?:[a-z]+\s+){0,2}?"
        r"(?:training\s+)?(?:sample|data(?:set)?|training[\s-]set|set)\s+sizes?\s*(?:--|—|:|of|=)?\s*\{?"
        rf"(?P<list>{_SIZE_LIST})\}}?(?:\s+{_UNITS})?",
        re.IGNORECASE,
    ),
    # "using 10%, 25% and 50% of the training data"
    re.compile(
        rf"(?P<list>{_SIZE_LIST})\s+of\s+(?:the\s+)?(?:(?:full|whole|original)\s+)?(?:training\s+(?:data(?:set)?|set|{_UNITS})|train\s+set)",
        re.IGNORECASE,
    ),
)


def training_size_sweeps(text: str) -> list[tuple[str, list[float | int], tuple[int, int]]]:
    """"Reduce training set to 0.2, 0.4, 0.6 of full 9000 samples": the training-set sizes a data-volume
    ablation runs, as (``train_size``, values, span) - one run per size, fractions or counts, never both. The
    size of the full set the fractions are of is a property of the data and is not checked."""
    out: list[tuple[str, list[float | int], tuple[int, int]]] = []
    taken: list[tuple[int, int]] = []
    for regex in _TRAIN_SIZE_SWEEPS:
        for match in regex.finditer(text):
            if any(a < match.end() and match.start() < b for a, b in taken):
                continue
            items = re.split(r"\s*,?\s+(?:and|or)\s+|\s*,\s+", match.group("list").strip())
            values = [numbers.parse_value(i.replace(" ", "")) for i in items]
            if len(values) < 2 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in values):
                continue
            fractions = [v for v, i in zip(values, items) if v < 1 or (v == 1 and ("%" in i or "." in i))]
            if fractions and len(fractions) != len(values):
                continue  # "0.5, 2, 10": fractions and counts mixed is not a list of sizes
            if not fractions and not all(float(v).is_integer() for v in values):
                continue
            if len(set(values)) != len(values):
                continue
            taken.append((match.start(), match.end()))
            out.append(("train_size", values, (match.start(), match.end())))
    return sorted(out, key=lambda x: x[2])


# ----- study headings -------------------------------------------------------------------------------------
_STUDY_LABEL = re.compile(
    r"^\s*(?P<label>ablations?(?:\s+(?:study|studies|experiment))?|sensitivity(?:\s+(?:analysis|study|test))?|"
    r"robustness(?:\s+(?:test|study|check|analysis|evaluation))?|(?:hyper)?parameter\s+(?:sensitivity|study|analysis)|"
    r"stress\s+test|scaling\s+(?:study|analysis))\s*:\s*(?P<title>[^:;]+?)\s*\.?\s*$",
    re.IGNORECASE,
)
_TITLE_VERBS = re.compile(
    r"\b(?:is|are|was|were|be|been|has|have|had|uses?|used|using|appl(?:y|ies|ied)|train(?:s|ed)|evaluat(?:e|es|ed)|"
    r"compar(?:e|es|ed)|measur(?:e|es|ed)|reports?|reported|comput(?:e|es|ed)|runs?|add(?:s|ed)?|test(?:s|ed)|"
    r"show(?:s|n|ed)?|vary|varies|varied|reduc(?:e|es|ed))\b",
    re.IGNORECASE,
)
_TITLE_STOP = frozenset("the a an of and or in on at for to with across over per vs versus between under".split())


def _stems(text: str) -> set[str]:
    words = re.findall(r"[a-z][a-z\-]+", text.lower())
    return {w[:5] for w in words if w not in _TITLE_STOP and w not in _STUDY_HEADS and len(w) > 2}


def study_heading(text: str) -> str | None:
    """The title of "Ablation: training sample size." / "Robustness test: variance across test samples.": a
    study label, then a noun phrase with no value, verb or formula. None otherwise."""
    match = _STUDY_LABEL.match(text.strip())
    if not match:
        return None
    title = match.group("title")
    if re.search(r"[\d=<>≤≥(){}\[\]]", title) or _TITLE_VERBS.search(title) or not 1 <= len(title.split()) <= 8:
        return None
    return title


def headed_study(heading: str, following: str) -> bool:
    """The heading names what the rest of the claim states: most content words of the title (by their first
    five letters, "training" ~ "trained") recur there. "Ablation: frozen backbone. The backbone is trained
    ..." does not: "frozen" is said only in the heading, which then stays with the judge."""
    title = study_heading(heading)
    stems = _stems(title or "")
    return bool(stems) and 2 * len(stems & _stems(following)) > len(stems)


def credit_study_heading(fragments: list) -> list:
    """The claim's first fragment, when it is a study heading whose words the rest of the claim states and
    whose next fragment is typed, becomes context (the title of the study whose facts follow); a heading over
    a fragment left to the judge stays with it."""
    if len(fragments) < 2 or fragments[0].outcome != "leftover" or fragments[1].outcome != "typed":
        return fragments
    if not headed_study(fragments[0].text, " ".join(f.text for f in fragments[1:])):
        return fragments
    heading = dataclasses.replace(fragments[0], outcome="context", reason="heading: the title of the study, whose facts follow")
    return [heading, *fragments[1:]]


def heading_label(text: str) -> str | None:
    """"Sensitivity analysis: DDIM sampling steps." opening a claim: the whole heading, which says what the
    claim's values are ("Test steps in {20, 50}" are DDIM's steps); None when the claim opens otherwise."""
    first = re.split(r"(?<=[.;])\s|\n|\|", text.strip(), maxsplit=1)[0].strip()
    return first.rstrip(".;").strip() if study_heading(first) else None


def checkable_metric(name: str) -> bool:
    """A listed metric the `metric` rule can look for by name: not a one-letter symbol ("Metric: J"), which
    names the paper's own quantity (see ``metric_symbol``)."""
    return len(re.sub(r"[^A-Za-z0-9]", "", name)) > 1


_SYMBOL = r"[A-Z](?:_[A-Za-z0-9]+)?"  # J, J_T: the metric rule's symbol form
_DEFINING_NOUNS = r"(?:objective|cost|criterion|functional|score)"
_NAMED_SYMBOL = re.compile(rf"^(?:[a-z][a-z\-]*\s+){{0,3}}{_DEFINING_NOUNS}\s+(?:function\s+)?(?P<sym>{_SYMBOL})$")


def metric_symbol(item: str, claim: str) -> str | None:
    """The paper's symbol a listed metric is, when the claim says what the symbol is: "Metrics: control
    objective J" (the item names it), or "Metric: J" in a claim that defines J ("objective J = ...", "the
    control objective J", "J = percentage of ..."). The `metric` rule then looks for that symbol computed and
    reported (``total_J = mse + w * energy; return total_J``). A bare "J" the claim never defines is left to
    the judge: it could be any quantity."""
    item = item.strip()
    named = _NAMED_SYMBOL.match(item)
    if named:
        return named.group("sym")
    if not re.fullmatch(_SYMBOL, item):
        return None
    sym = re.escape(item)
    defined = re.search(
        rf"\b{_DEFINING_NOUNS}\s+(?:function\s+)?{sym}(?![\w'])|(?<![\w'])(?<!\{{){sym}\s*(?::=|=|≡)(?!\s*[-+]?[\d.]+\s*(?:$|[,;)]))"
        rf"|(?<![\w']){sym}\s+(?:denotes|is defined as|measures)\b",
        claim,
    )
    return item if defined else None


_SKIPS_INITIAL = re.compile(
    r"^(?:excluding|except(?:\s+for)?|without)\s+(?:the\s+)?(?:given\s+)?(?:initial|first)\s+"
    r"(?:conditions?|states?|time\s*steps?|steps?|frames?|snapshots?)$",
    re.IGNORECASE,
)


def skips_initial(qualifier: str) -> bool:
    """"MSE excluding initial conditions" / "except the first frame": the metric is taken on the steps after
    the given initial state, which the `metric` rule checks (``skip_initial``) by the slices its operands take
    (``u[:, 1:]``). A longer qualifier ("on state sequences excluding ...") says more and stays unchecked."""
    return bool(_SKIPS_INITIAL.match(qualifier.strip().rstrip(".")))


# ----- one setting varied across runs ---------------------------------------------------------------------
_VARIED = re.compile(r"\b(?:vary|varies|varied|varying|sweep(?:s|ing)?|swept)\b", re.IGNORECASE)


def merge_varied_values(checks: list, fragments: list, claim: str) -> tuple[list, list]:
    """"vary the assumed detection accuracy (1.0, 0.95, 0.9) ... detector_acc = 1.0 (perfect), detector_acc =
    0.95 (main), detector_acc = 0.9 (degraded)": the claim runs the setting at each value, so one ``sweep``
    check (each value among the runs') replaces the value checks that would each demand a different single
    value - of which a faithful repo can meet only one. Only in a claim that says it varies a setting."""
    from verifier.spec.model import ValueCheck  # the spec model imports nothing of the compiler

    if not _VARIED.search(claim):
        return checks, fragments
    groups: dict[str, list[int]] = {}
    for i, check in enumerate(checks):
        if isinstance(check, ValueCheck) and check.sweep is None and isinstance(check.expect, (int, float)) and not isinstance(check.expect, bool):
            groups.setdefault(check.name, []).append(i)
    merged = {name: ix for name, ix in groups.items() if len({checks[i].expect for i in ix}) >= 2}
    if not merged:
        return checks, fragments
    new_checks, where = [], {}
    for i, check in enumerate(checks):
        name = getattr(check, "name", None)
        if name in merged and i in merged[name]:
            first = merged[name][0]
            if i == first:
                values = list(dict.fromkeys(checks[j].expect for j in merged[name]))
                where[i] = len(new_checks)
                new_checks.append(ValueCheck(name=name, names=check.names, sweep=values))
            else:
                where[i] = where[first]
            continue
        where[i] = len(new_checks)
        new_checks.append(check)
    new_fragments = [dataclasses.replace(f, checks=tuple(sorted({where[c] for c in f.checks if c in where}))) for f in fragments]
    return new_checks, new_fragments


# ----- models a run loads or queries -----------------------------------------------------------------------
_MODEL_SIZE = r"(?:\d+(?:\.\d+)?[BbMm]|base|large|small|xl|xxl|tiny|huge)"
_MODEL_TUNING = r"(?:-(?:Instruct|instruct|it|chat|Chat|v\d+(?:\.\d+)*))*"
_API_ID = r"(?=[\w.\-/]*\d)[A-Za-z][\w.]*(?:[-/][\w.]+)+"  # a versioned id: "gpt-4o-2024-05-13", not "open-source"


@functools.cache
def _model_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(a public model named with its size or variant, an API id followed by its provider in parentheses)."""
    data = terms.protocol_mapping_lists("models")
    families = "|".join(sorted(map(re.escape, data.get("families", [])), key=len, reverse=True)) or "(?!)"
    numbered = "|".join(sorted(map(re.escape, data.get("numbered", [])), key=len, reverse=True)) or "(?!)"
    providers = "|".join(sorted(map(re.escape, data.get("providers", [])), key=len, reverse=True)) or "(?!)"
    sized = (rf"(?:{families})(?:[-\s]?v?\d+(?:\.\d+)*)?(?:[-\s]{_MODEL_SIZE}(?![\w.])|-[BLSHbl]/\d+)"
             rf"|(?:{numbered})-?\d+")
    model = re.compile(rf"(?<![\w./-])(?:{sized}){_MODEL_TUNING}(?![\w/-])")
    api = re.compile(rf"(?<![\w./-])(?P<id>{_API_ID})\s*\((?:via\s+)?(?:{providers})(?:\s+(?:API|Inference(?:\s+API)?))?\)")
    return model, api


_BEFORE_ROLE = re.compile(r"(?:^|[\s(:;,])$")
_QUALIFIER = re.compile(r"(?:^|\s)(?=\S*(?:[A-Z]\S*[A-Z]|\d))\S+\s+$")  # "CLIP ", "DINOv2 ": a name qualifying the next
_ROLE_AFTER = re.compile(r"\s*(?:\([^()]*\)\s*)?(?:(?:is|are|was|were)\s+)?(?:fine-?tuned|finetuned|pre-?trained)\b"
                         r"|\s+(?:backbone|base model|text encoder|image encoder)\b(?!s)", re.IGNORECASE)
_ROLE_BEFORE = re.compile(r"(?:\b(?:fine-?tunes?|fine-?tuned|fine-?tuning|finetunes?|finetuned|finetuning)"
                          r"(?:\s+(?:a|the))?(?:\s+pre-?trained)?|\bpre-?trained|\b(?:backbone|base model|pretrained model)\s*:)\s*$",
                          re.IGNORECASE)
_LIST_JOIN = re.compile(r"\s*(?:\([^()]*\)\s*)?(?:,\s*(?:and\s+)?|and\s+|&\s*)")


def model_names(text: str) -> list[str]:
    """The public models a fragment says the run fine-tunes, starts from or queries: "Llama-3.2 3B fine-tuned
    on ...", "using ViT-B/16 pre-trained on ImageNet-21K", "Backbone: ResNet-50", "claude-3-haiku-20240307
    (Anthropic API)". A name qualified by a word before it ("CLIP ViT-B/16") or used as a plural
    ("ViT-B/16 backbones", a comparison) is left out: the check would not say the same thing."""
    model, api = _model_patterns()
    out = [m.group("id") for m in api.finditer(text)]
    spans = [m for m in model.finditer(text)
             if _BEFORE_ROLE.search(text[: m.start()]) and not _QUALIFIER.search(text[max(0, m.start() - 40) : m.start()])]
    # A list of names shares the role written after its last member: "Mistral-7B and Gemma-2 9B fine-tuned on".
    for i, m in enumerate(spans):
        j = i
        while j + 1 < len(spans) and _LIST_JOIN.fullmatch(text[spans[j].end() : spans[j + 1].start()]):
            j += 1
        before = text[max(0, spans[i].start() - 60) : spans[i].start()]
        if _ROLE_AFTER.match(text, spans[j].end()) or (i == j and _ROLE_BEFORE.search(before)):
            out.append(m.group(0))
    return list(dict.fromkeys(out))


# ----- GPUs named in prose (claims, and the repo docs the `hardware` rule reads) -----------------------------
@functools.cache
def hardware_lexicon() -> dict:
    """The ``hardware`` rule's lexicon (accelerator families, count words): one vocabulary for claims and repos."""
    from verifier import rules as rule_data

    return rule_data.load("protocol/hardware.yaml").get("lexicon") or {}


def _spelling_pattern(spelling: str) -> str:
    """``RTX 6000 Ada`` -> ``RTX[\\s_-]?6000[\\s_-]?Ada``: the words of a spelling may be joined, spaced or dashed;
    a word itself is kept whole (``A100``, never ``a 100``: the lexicon lists ``TPUv4`` beside ``TPU v4``)."""
    words = [re.sub(r"(?<=[A-Za-z])(?=\d)", "-?", re.escape(w)) for w in spelling.split()]  # "H-100", "V-100"
    return r"[\s_-]?".join(words)


@functools.cache
def _family_regex() -> tuple[re.Pattern, dict[str, str]]:
    """One alternation of every spelling (longest first, so ``RTX 6000 Ada`` wins over ``RTX 6000``), with a group
    per family; the map turns a group name back into the family."""
    families: dict[str, list[str]] = hardware_lexicon().get("accelerators") or {}
    spellings = sorted(((s, fam) for fam, spells in families.items() for s in [fam, *spells]), key=lambda x: -len(x[0]))
    groups: dict[str, str] = {}
    alternatives = []
    for i, (spelling, family) in enumerate(dict.fromkeys(spellings)):
        name = f"f{i}"
        groups[name] = family
        alternatives.append(f"(?P<{name}>{_spelling_pattern(spelling)})")
    pattern = rf"(?:(?<![A-Za-z0-9])|(?<=\d[xX×]))(?:{'|'.join(alternatives)})(?![0-9]|[A-Za-z](?<![sS]))"
    return re.compile(pattern, re.IGNORECASE), groups


def family_of(text: str) -> list[tuple[str, int, int]]:
    """The accelerator families named in ``text``, as (family, start, end)."""
    regex, groups = _family_regex()
    out = []
    for m in regex.finditer(text):
        family = groups[next(k for k, v in m.groupdict().items() if v is not None)]
        end = m.end()
        if text[m.start():end][-1:] in "sS" and not family.upper().endswith("S"):
            end -= 1  # "8 A100s": the plural is not part of the name
        out.append((family, m.start(), end))
    return out


_VENDOR = r"(?:(?:NVIDIA|Nvidia|nVidia|Tesla|GeForce|Quadro|AMD|Instinct|Google|Cloud)\s+)*"
_GPU_WORD = re.compile(r"\s*(?:\(\s*\d+\s*G(?:i)?B\s*\)\s*)?(?:GPUs?|graphics cards?|cards?|accelerators?|chips?|TPUs?)\b", re.IGNORECASE)
_MEMORY_AFTER = re.compile(r"\s*(?:GPUs?\s*)?[(\[-]?\s*(?:with\s+)?(?P<gb>\d{1,3})\s*G(?:i)?B\b", re.IGNORECASE)
_NOT_A_DEVICE_AFTER = re.compile(r"[\s-]*(?:kernels?|implementations?|code|versions?|operations?|ops\b|computations?|"
                                 r"utili[sz]ation|friendly|efficient|compatible|support|programming)", re.IGNORECASE)
_COMPUTE_AFTER = re.compile(r"[\s-]*(?:hours?|hrs?|days?|weeks?|h\b|memory|mem\b|RAM|VRAM)", re.IGNORECASE)
_MEMORY_BEFORE = re.compile(r"(?P<gb>\d{1,3})\s*G(?:i)?B\s*$", re.IGNORECASE)


@functools.cache
def _ambiguous_families() -> frozenset[str]:
    """Short family names (T4, A40) that count only next to a GPU word or a vendor."""
    return frozenset(str(a) for a in hardware_lexicon().get("ambiguous") or [])


@functools.cache
def _count_regexes() -> tuple[re.Pattern, re.Pattern, dict[str, int]]:
    words: dict[str, int] = {str(k).lower(): int(v) for k, v in (hardware_lexicon().get("count_words") or {}).items()}
    spelled = "|".join(sorted(map(re.escape, words), key=len, reverse=True))
    before = re.compile(rf"(?:(?<![\w.])(?P<n>\d{{1,4}})\s*[x×*]?\s*|(?<![\w-])(?P<w>{spelled})(?:\s+single)?\s+|(?<![\w.])(?P<nx>\d{{1,4}})[x×])"
                        rf"{_VENDOR}(?:\d{{1,3}}\s*G(?:i)?B\s+)?$", re.IGNORECASE)
    bare = re.compile(rf"(?:(?<![\w.-])(?P<n>\d{{1,4}})|(?<![\w-])(?P<w>{spelled}))(?:\s+|-)(?:{_VENDOR})(?:GPUs?|TPUs?)\b"
                      rf"|(?<![\w-])(?P<single>single|one)-GPU\b", re.IGNORECASE)
    return before, bare, words


_NODES_BEFORE = re.compile(r"(?:(?<![\w.])(?P<n>\d{1,3})|(?P<w>[a-z]+))\s+(?:nodes?|machines?|servers?|hosts?)\s*"
                           r"(?:,\s*)?(?:of|with|each with|each having|x|×)\s+(?:\w+\s+)?$", re.IGNORECASE)
_PER_NODE_AFTER = re.compile(r"\s*(?:GPUs?\s*)?(?:per|each|/)\s*(?:node|machine|server|host)\b", re.IGNORECASE)


def _with_nodes(text: str, start: int, stop: int, count: int | None, words: dict[str, int]) -> int | None:
    """"2 nodes of 8 H100" is 16 GPUs; "8 GPUs per node" with no node count is no total at all."""
    if count is None:
        return None
    nodes = _NODES_BEFORE.search(text[max(0, start - 40) : start])
    if nodes:
        n = int(nodes.group("n")) if nodes.group("n") else words.get(nodes.group("w").lower())
        return count * n if n else None
    return None if _PER_NODE_AFTER.match(text, stop) else count


@dataclass(frozen=True)
class Stated:
    """One hardware statement of a text: a count, a family, a memory size (any may be missing)."""

    count: int | None
    family: str | None
    memory_gb: int | None
    start: int
    end: int
    budget: bool = False  # "1000 A100 hours", "2 GPU days": a compute budget, whose count is not of GPUs at once


def gpu_statements(text: str) -> list[Stated]:
    """What a sentence says about GPUs: "8x NVIDIA A100 (80GB)" -> (8, A100, 80); "a single V100" -> (1, V100);
    "on 4 GPUs" -> (4, None); "A100 GPUs" -> (None, A100). A short family name (T4, A40) counts only next to a
    GPU word or a vendor; counts are read only right before the name (or as "A100 x 8"), never from a memory
    size ("24GB GPU")."""
    before, bare, words = _count_regexes()
    ambiguous = _ambiguous_families()
    out: list[Stated] = []
    taken: list[tuple[int, int]] = []
    for family, start, end in family_of(text):
        head = text[max(0, start - 40) : start]
        after_gpu = _GPU_WORD.match(text, end)
        if family in ambiguous and not (after_gpu or re.search(r"(?:NVIDIA|Tesla|GeForce|Quadro)\s+$", head, re.IGNORECASE)):
            continue
        count = None
        m = before.search(head)
        if m:
            if m.group("n") or m.group("nx"):
                count = int(m.group("n") or m.group("nx"))
            else:
                count = words.get(m.group("w").lower())
            start = start - (len(head) - m.start())
        times = re.match(r"\s*(?:GPUs?\s*)?[x×]\s*(\d{1,4})(?![\w.])", text[end:])
        if count is None and times:
            count = int(times.group(1))
        memory = None
        mem_after = _MEMORY_AFTER.match(text, end)
        mem_before = _MEMORY_BEFORE.search(text[max(0, start - 12) : start])
        if mem_after:
            memory = int(mem_after.group("gb"))
        elif mem_before:
            memory = int(mem_before.group("gb"))
        stop = after_gpu.end() if after_gpu else end
        budget = bool(_COMPUTE_AFTER.match(text, stop))
        count = None if budget else _with_nodes(text, start, stop, count, words)  # a budget: not how many ran at once
        out.append(Stated(count, family, memory, start, stop, budget))
        taken.append((start, stop))
    for m in bare.finditer(text):
        if any(a <= m.start() < b for a, b in taken) or _COMPUTE_AFTER.match(text, m.end()) or _NOT_A_DEVICE_AFTER.match(text, m.end()):
            continue
        if m.group("single"):
            count = 1
        elif m.group("n"):
            count = int(m.group("n"))
        else:
            count = words.get(m.group("w").lower())
        if m.group("w") and m.group("w").lower() in ("a", "an"):
            continue  # "requires a GPU": that one is needed, not how many were used
        count = _with_nodes(text, m.start(), m.end(), count, words)
        if count:
            out.append(Stated(count, None, None, m.start(), m.end()))
    return sorted(out, key=lambda s: (s.start, s.end))


# ----- the GPUs a run used ------------------------------------------------------------------------------------
def gpu_params(text: str) -> dict | None:
    """``hardware`` rule parameters of a fragment that states the GPUs of a run: "single NVIDIA A100 GPU (80GB)"
    -> {gpus: 1, gpu: A100, gpu_memory_gb: 80}; "8x NVIDIA RTX 6000 Ada GPUs" -> {gpus: 8, gpu: RTX 6000 Ada}.
    None when it names none, names several ("1 A100 (1D) / 2xA100 (2D)": which run is which is the judge's), or
    states a budget ("1000 A100 hours"). CPUs and RAM in the same fragment are context beside it."""
    stated = gpu_statements(text)
    found = [s for s in stated if not s.budget]
    if len(found) != 1 or len(found) != len(stated):
        return None
    one = found[0]
    params: dict = {}
    if one.count is not None:
        params["gpus"] = one.count
    if one.family is not None:
        params["gpu"] = one.family
    if one.memory_gb is not None and one.family is not None:
        params["gpu_memory_gb"] = one.memory_gb
    return params or None


_SETUP_DIMENSIONS = frozenset({"numerical", "protocol", "D1", "D3"})


def type_hardware(checks: list, fragments: list, dimension=None) -> tuple[list, list]:
    """Hardware fragments that state GPUs become ``hardware`` checks (a repo configures its GPU count and states
    its GPU type), and so does a typed fragment's named accelerator; the rest of the hardware (CPUs, RAM) stays
    context. Only in a settings or protocol claim: in a method or ordering claim the setup is not what the
    claim is about ("fused into a single GPU kernel" is no run's hardware). When the claim gives different counts
    for different experiments ("1D on 1 A100 GPU; 2D on 2 A100 GPUs"), each check passes on one run with its
    count (``any_run``), since no run can have both."""
    from verifier.spec.model import ProtocolCheck  # the spec model imports nothing of the compiler

    if dimension is not None and str(getattr(dimension, "value", dimension)) not in _SETUP_DIMENSIONS:
        return checks, fragments
    wanted: list[tuple[int, dict]] = []
    for i, fragment in enumerate(fragments):
        if fragment.outcome == "context" and fragment.reason.startswith("hardware"):
            params = gpu_params(fragment.text)
        elif fragment.outcome == "typed" and not fragment.reason:
            # "batch size 1024 on 8 TPU v3 chips": the values are typed, the accelerator was only masked. A
            # bare count needs its family here ("fused into a single GPU kernel" names no hardware of a run).
            params = gpu_params(fragment.text)
            params = params if params and "gpu" in params else None
        else:
            params = None
        if params:
            wanted.append((i, params))
    if not wanted:
        return checks, fragments
    counts = {p["gpus"] for _, p in wanted if "gpus" in p}
    checks, fragments = list(checks), list(fragments)
    made: dict[str, int] = {}
    for i, params in wanted:
        if len(counts) > 1 and "gpus" in params:
            params = {**params, "any_run": True}
        key = repr(sorted(params.items()))
        if key not in made:
            made[key] = len(checks)
            checks.append(ProtocolCheck(rule="hardware", **params))
        fragments[i] = dataclasses.replace(fragments[i], outcome="typed", reason="",
                                           checks=tuple(sorted({*fragments[i].checks, made[key]})))
    return checks, fragments


# ----- datasets named in an evaluation list -------------------------------------------------------------
# "SR benchmarks: Set5, Set14, BSD100 and Urban100", "We evaluate on VQAv2 test-dev and GQA, TextVQA ...": the
# names the vocabulary does not know are still datasets when a data cue introduces the list and they look like
# proper names (a digit or two capitals: "Office-31", "MMBench", "CrowdPose"), not a metric, model or GPU.
_DATA_CUE = re.compile(
    r"\b(?:(?P<label>(?:data\s*sets?|benchmarks?|test\s+sets?|evaluation\s+sets?|eval|evaluation))\s*:\s*"
    r"|(?P<verb>evaluat(?:e|es|ed|ing)|tested|testing|report(?:s|ed)?|results?|experiments?|adaptation|train(?:s|ed|ing)?|"
    r"fine-?tun(?:e|es|ed|ing)|pre-?train(?:s|ed|ing)?)\s+(?:[a-z][\w-]*\s+){0,3}?on\s+(?:the\s+)?)",
    re.IGNORECASE,
)
_DATASET_NAME = re.compile(r"(?:the\s+)?(?P<name>[A-Z0-9][\w\-.+/']*(?:\s+(?:[A-Z0-9][\w\-.+/']*))*)")
# what may follow a dataset's name in a list and still leave the item a plain name: its split, a bracket
_SPLIT_TAIL = re.compile(r"^\s*(?:(?:val|validation|test|test-dev|test-std|dev|train|training|split|set|subset|sets)\b\s*)*"
                         r"(?:\([^()]*\))?\s*$", re.IGNORECASE)


_MEASURE_AFTER = re.compile(r"\s+(?:score|scores|accuracy|loss|error|metric|distance|similarity|rate)\b", re.IGNORECASE)


@dataclass(frozen=True)
class DatasetList:
    names: list[str]
    spans: list[tuple[int, int]]  # items that are only a name (and its split): nothing else for a fragment to type


def _looks_like_dataset(name: str) -> bool:
    first = name.split()[0]
    if not re.search(r"[A-Za-z]{2}", name):
        return False  # "70/15/15", "80:10:10": a split, not a name
    if not (re.search(r"\d", first) or len(re.findall(r"[A-Z]", first)) >= 2) or len(name) < 3:
        return False  # "Evaluate PEFT methods": a sentence's first word, not a name
    if re.match(r"[\d.,]+[kKMB]?(?:$|[x×\s]|-(?:fold|shot|way)\b)", name) or "§" in context_mask(name):
        return False  # a number, a size (81x120), "5-fold", "8-shot GSM8K", a GPU or a budget
    hits = terms.find_protocol_terms(name) + terms.find_apis(name)
    if any(h.start == 0 or h.category == "dataset" for h in hits):
        return False  # a known dataset (typed per fragment), a metric (FID-50K), a model family, an API
    model, _ = _model_patterns()
    return not model.fullmatch(name) and name.lower() not in _vocabulary()[1]  # not a model, nor PyTorch or JAX


def _known_dataset(name: str) -> bool:
    return any(h.category == "dataset" and h.start == 0 for h in terms.find_protocol_terms(name))


def context_mask(text: str) -> str:
    from verifier.compiler import context  # context imports this module

    return context.mask(text)


def find_dataset_lists(text: str) -> DatasetList:
    """Datasets the vocabulary does not know, from the lists a data cue introduces; a list introduced by a verb
    ("evaluate on") counts only when two of its items look like datasets or are known ones."""
    names: list[str] = []
    spans: list[tuple[int, int]] = []
    for cue in _DATA_CUE.finditer(text):
        clause = re.split(r"[.;]\s", text[: cue.start()])[-1]
        if re.search(r"\bbaselines?\b|\bvs\.?\s|\bversus\b|\bcompared?\b", clause, re.IGNORECASE):
            continue  # "baselines: OpenCLIP trained on LAION-2B, EVA-CLIP": a baseline's data, or the baselines
        end = _list_end(text, cue.end())
        groups = _top_level_groups(text, cue.end(), end)
        while cue.group("label") and text[end : end + 1] == ";":  # "Pose eval: COCO val (AP); MPII val (PCKh)"
            nxt = _list_end(text, end + 1)
            more = _top_level_groups(text, end + 1, nxt)
            first = _DATASET_NAME.match(text[more[0][0] : more[0][1]].strip()) if more else None
            if first is None or not (_looks_like_dataset(first.group("name")) or _known_dataset(first.group("name"))):
                break  # "...; single-scale, flip test on; vs HRNet": the datasets' list has ended
            groups += more
            end = nxt
        found: list[tuple[str, tuple[int, int] | None]] = []
        known = 0  # "VQAv2 and GQA": a known dataset beside it makes the list one of datasets too
        kinds = [{h.category for h in terms.find_protocol_terms(text[a:b])} for a, b in groups]
        for index, (a, b) in enumerate(groups):
            group = text[a:b]
            beside = kinds[index] | (kinds[index - 1] if index else set())
            if "metric" in beside and "dataset" not in kinds[index]:
                continue  # "... test set with HOTA, DetA and AssA": next to a known metric, a list of metrics
            offset = 0
            for part in _top_level_parts(group):
                offset = group.index(part, offset)
                match = _DATASET_NAME.match(part.strip())
                if match and _MEASURE_AFTER.match(part.strip(), match.end()):
                    pass  # "CLIP score with ViT-L/14": a metric named after a model
                elif match and _looks_like_dataset(name := match.group("name")):
                    plain = _SPLIT_TAIL.match(part.strip()[match.end() :])
                    found.append((name, _trimmed(text, a + offset, a + offset + len(part)) if plain else None))
                elif match and _known_dataset(match.group("name")):
                    known += 1
                offset += len(part)
        label = (cue.group("label") or "").lower()
        if found and ((label and not label.startswith("eval")) or len(found) + known >= 2):  # "Evaluation:" lists metrics too
            names.extend(n for n, _ in found if n not in names)
            spans.extend(s for _, s in found if s)
    return DatasetList(names, spans)
