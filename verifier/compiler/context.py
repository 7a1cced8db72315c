"""Which parts of a claim are *context*: true statements no static check of the code can confirm or refute.

Coverage must not count them against the compiler (a repo does not "implement" an A100 or a citation), but
they must not vanish either: each is recorded with the category below as its reason. The categories are
closed and each is a textual shape, never a claim id:

* hardware      - accelerators, CPUs, RAM, nodes ("8x NVIDIA A100 (80GB)", "2x AMD EPYC 64-Core CPUs"); a repo
                  does configure its GPU count and state its GPU type, so a fragment stating a run's GPUs is then
                  compiled into a ``hardware`` protocol check (``protocol_claims.type_hardware``) and only the
                  CPUs, RAM and the rest stay context;
* compute       - wall-clock time, GPU-hours, memory use, money ("722MB", "3 days", "$5 per 1M tokens");
* param-count   - model sizes ("86M params", "102K tunable params", "S-6M", "(355M)");
* data-stat     - sizes of a dataset the repo downloads ("2.5M trajectories", "3952 test examples" in prose
                  that names no parameter, "233GB");
* citation      - references to literature or to the paper ("(Ho et al., 2020)", "[12]", "Eq. (3)",
                  "as in X", "following X", "Reference: ...");
* result        - reported outcomes, which a run produces and code does not fix ("21.2% [20.4%, 22.0%]",
                  "0.336 +/- 0.001", "achieves", "outperforms");
* rationale     - motivation and explanation ("to enable ...", "so that ...", "which improves ...").

``mask`` blanks the spans of the first five inside a fragment so their numbers are not read as unnamed
values; ``classify`` says whether a whole fragment is context and why.
"""

from __future__ import annotations

import re

from verifier.compiler import protocol_claims

_HARDWARE = re.compile(
    r"(?<![\w.])(?:\d+\s*[x×]?\s*)?(?:NVIDIA|AMD|Intel|Xeon|EPYC|Tesla|GeForce|RTX|TPU(?:v\d)?|GPUs?|CPUs?|A100|H100|V100|"
    r"A6000|A40|L40S?|P100|K80|RTX\s?\d{4}|RAM|VRAM|workstation|\d+-Core|processors?)\b(?:\s+[A-Z]?\d{2,5}[A-Za-z]*\b)?",
    re.IGNORECASE,
)
_BRACKET_CITE = re.compile(r"\[\d{1,3}(?:\s*[,–-]\s*\d{1,3})*\]")  # "[12]": only a whole fragment, a list looks the same
_MEMORY = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s*(?:[KMGT]i?B|bytes?)\b")
_TIME = re.compile(
    r"(?<![\w.])\d+(?:\.\d+)?(?:\s*[-–]\s*\d+(?:\.\d+)?)?\s*(?:GPU[- ]?)?(?:hours?|hrs?|h|minutes?|mins?|seconds?|secs?|days?|weeks?|ms)\b|"
    r"\bwall[- ]?clock\b|\bGPU[- ]hours?\b|"
    r"\$\s*\d[\d,.]*(?:\s*(?:per|/)\s*(?:\d+(?:\.\d+)?\s*[KMB]?\s+)?(?:[a-z]+\s+){0,2}(?:tokens?|requests?|queries|calls?|hours?))?",
    re.IGNORECASE,
)
_PARAM_COUNT = re.compile(
    r"(?<![\w.])~?\d+(?:\.\d+)?\s*[KMB]\s*(?:\w+\s+)?(?:params|parameters)\b|"
    r"\b(?:params?|parameters)\b(?:\s+(?:count|range|budget|cap))?\s*[:=(\[]?\s*(?:<=|≤|~)?\s*\d+(?:\.\d+)?\s*[KMB%]"
    r"(?:\s*,\s*~?\d+(?:\.\d+)?\s*[KMB])?\s*\]?|"
    r"\(\s*~?\d+(?:\.\d+)?\s*[MB]\s*\)|\b[A-Z]{1,2}-\d+(?:\.\d+)?[MB]\b|"
    r"(?<![\w.])\d+(?:\.\d+)?%\s+of\s+(?:the\s+)?(?:total\s+)?(?:\w+\s+)?(?:params|parameters|backbone)|"
    # a count written in the architecture's symbols ("4DM params", "2Dr parameters") or of parameter tensors
    # ("2 trainable parameters {W, b}")
    r"(?<![\w.])\d*[A-Z]{1,3}[a-z]?\s+(?:params|parameters)\b|"
    r"(?<![\w.])\d+\s+(?:trainable|learnable|tunable)\s+(?:params|parameters)\b|"
    r"\b(?:total\s+)?(?:trainable|learnable|tunable)\s+(?:params|parameters)\s*(?::|=|is|are)\s*[\w()+*·×/^ ]{1,30}$|"  # "r(m+n)"
    # how many weight matrices a method stacks or adapts ("12M weight matrices (12 layers x 6 matrices)")
    r"(?<![\w.])\d+[A-Z]?\s+weight\s+(?:matrices|tensors)\b(?:\s*\(\s*\d+\s+layers?\s*[x×]\s*\d+\s+(?:weight\s+)?(?:matrices|tensors)\b[^()]*\))?",
    re.IGNORECASE,
)
_DATA_STAT = re.compile(
    r"(?<![\w.,])(?<!=)(?<!=\s)(?P<count>(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+(?:\.\d+)?)\s*[kKMB]?"
    r"(?:\s*(?:,\s*and\s+|and\s+|or\s+|/\s*)(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+(?:\.\d+)?)\s*[kKMB]?)*)"  # "50K and 10K images": all of them
    r"\s+(?:(?!\d)\w+\s+){0,2}?(?:videos?|clips?|images?|captions?|trajectories|"
    r"votes?|users?|documents?|sentences?|families|combinations|conversations?|annotations?|"
    r"subjects?|patients?|recordings?)\b|"
    r"(?<![\w.])(?P<extent>\d+(?:\.\d+)?\s*(?:km|m|hPa))\s+(?:altitude|height|depth|elevation)\b",
    re.IGNORECASE,
)
# "uniform category distribution", "class-balanced": how the (evaluation) data is composed
_DATA_BALANCE = re.compile(
    r"(?:an?\s+)?(?:uniform|balanced|equal|even)\s+(?:category|class|label)\s+(?:distribution|balance|proportions)|"
    r"(?:category|class|label)[- ]balanced(?:\s+(?:data|samples|set))?",
    re.IGNORECASE,
)
_CITATION = re.compile(
    r"\([A-Z][A-Za-z\-]+(?:\s+(?:et al\.?|&|and)\s*[A-Za-z\-]*)?,?\s*(?:19|20)\d\d[a-z]?(?:[;,][^()]*)?\)|"
    r"\b(?:Eqs?|Equations?|Secs?|Sections?|Tables?|Tabs?|Figures?|Figs?|Appendix|Appendices|Algorithms?|Alg)\.?\s*"
    r"\(?[A-Z]?\d+(?:\.\d+)*\)?(?:\([a-z]\))?(?:\s*(?:,|and|&|[-–])\s*\(?[A-Z]?\d+(?:\.\d+)*\)?(?:\([a-z]\))?)*|"
    r"\b(?:as in|following|follows|mirrors|adopted from|borrowed from|taken from|per|see)\s+[A-Z][\w\-]+(?![\w\-])(?!\s+(?:layers?|blocks?|heads?|tokens?|steps?|modules?|stages?|sub-?layers?)\b)"
    r"(?:\s+(?:et al\.?|&|and)\s+[A-Z][\w\-]+)*\s*(?:\(?(?:19|20)\d\d[a-z]?\)?)?",  # not "per Transformer layer"
)
# "By Eckart-Young theorem", "from Jensen's inequality": the result a step rests on, named
_NAMED_RESULT = re.compile(
    r"(?:by|from)\s+(?:the\s+)?[A-Z][\w'’\-]*(?:[\s\-–]+[A-Z][\w'’\-]*){0,3}\s+(?:theorem|lemma|inequality|corollary)",
    re.IGNORECASE,
)
_RESULT_NUM = re.compile(
    r"[+-]?\d+(?:\.\d+)?%?\s*(?:±|\+/-|\+-)\s*\d+(?:\.\d+)?%?|"
    r"\d+(?:\.\d+)?%\s*\[\s*\d+(?:\.\d+)?%\s*,\s*\d+(?:\.\d+)?%\s*\]|"
    r"(?:approx\w*\s+)?\d+(?:\.\d+)?\s*(?:%|x|×)\s+(?:increase|decrease|reduction|improvement|faster|slower|"
    r"shorter|longer|smaller|larger|speed-?up|fewer|more)\b",
    re.IGNORECASE,
)
_RESULT_WORDS = re.compile(
    r"\b(?:achiev\w*|outperform\w*|improv\w*|reduc\w* by|increase\w* by|surpass\w*|beats?|wins?|"
    r"under-control|over-control|closest to|shorter|longer|smaller|larger|higher|lower|best|worst)\b",
    re.IGNORECASE,
)
_RATIONALE = re.compile(
    r"^\s*(?:where|which|this|these|that|so|thus|hence|therefore|i\.e|e\.g|because|since|while|whereas|"
    r"enabl\w*|allow\w*|ensur\w*|prevent\w*|avoid\w*|balanc\w*|making|leading|resulting|motivat\w*|"
    r"inspired|intended|designed to|in order to|to (?:ensure|enable|allow|avoid|prevent|isolate|demonstrate|"
    r"show|validate|assess|measure|test|reduce|improve)|demonstrat\w*|validat\w*|showing|shows?|"
    r"isolat\w*|benefit\w*|relat\w*|note|see|source|as (?:a|an|the)|same as|both|all other)\b",
    re.IGNORECASE,
)
_WORDS = re.compile(r"[A-Za-z][A-Za-z\-]*")
# "WiSE functions as a feature ensemble where alpha controls how strongly ... blend": what the method amounts to
_INTERPRETATION = re.compile(
    r"^(?:the\s+)?[A-Za-z][\w\-]{1,30}(?:\s+[A-Za-z][\w\-]{1,30}){0,2}\s+(?:functions|acts|serves|works|behaves)\s+as\s+(?:an?\s+)?"
    r"[a-z][\w\-]*(?:\s+[a-z][\w\-]*){0,3}(?:\s*,?\s+where\s+\S{1,12}\s+controls\s+how\s+(?:much|strongly)\b.*)?$",
    re.IGNORECASE,
)
# "The first term penalizes deviation from the target", "the second term penalizes control energy": what each
# term of the formula beside it is for
_TERM_GLOSS = re.compile(
    r"^(?:the\s+)?(?:first|second|third|fourth|last|final|other|latter|former)\s+(?:term|part|component)\s+"
    r"(?:penali[sz]es|encourages|rewards|measures|enforces|represents|ensures|keeps|regulari[sz]es|promotes|"
    r"discourages|captures|accounts\s+for)\b[^=<>≤≥\d]*$",
    re.IGNORECASE,
)
# "Same form as SAC reward with state u and control f": the formula beside it restated as another's, its
# symbols renamed; nothing beyond that formula
_SAME_FORM = re.compile(
    r"(?:it\s+(?:has|takes)\s+(?:the\s+)?)?same\s+(?:functional\s+)?(?:form|formula|expression)\s+as\s+(?:the\s+|in\s+(?:the\s+)?)?"
    r"[A-Z][\w\-]*(?:\s+[a-z]+){0,2}"
    r"(?:\s*,?\s*(?:with|but with)\s+[a-z]+\s+[^\W\d]\w{0,7}(?:\s*(?:,|and)\s+[a-z]+\s+[^\W\d]\w{0,7})*)?\s*\.?",
    re.IGNORECASE,
)


def mask(text: str) -> str:
    """``text`` with the spans of hardware, compute, parameter counts, data sizes, citations and reported
    numbers blanked (same length, so offsets still hold)."""
    out = text
    for regex in (_CITATION, _HARDWARE, _MEMORY, _TIME, _PARAM_COUNT, _RESULT_NUM):
        out = regex.sub(lambda m: "§" * len(m.group(0)), out)
    # a data size: only the number is blanked, the noun stays ("trajectories of length 4" still names the 4)
    return _DATA_STAT.sub(lambda m: _blank_data_size(m, out) if m.group("count") else "§" * len(m.group(0)), out)


# Before "50K and 10K images" only words that introduce data keep the list whole; after a setting's name
# ("batch size 64 and 1.2M images") the first number is the setting's
_DATA_LEAD = re.compile(r"(?:^|[,;:(]\s*|\b(?:on|of|from|with|contains?|containing|has|have|over|across|totalling|total|and)\s+)$",
                        re.IGNORECASE)


def _blank_data_size(match: re.Match, text: str) -> str:
    count = match.group("count")
    joined = re.search(r"\s*(?:,\s*and\s+|and\s+|or\s+|/\s*)", count)
    if joined and not _DATA_LEAD.search(text[max(0, match.start() - 40) : match.start()]):
        keep = joined.end()  # "batch size 64 and 1.2M images": blank only the numbers after the setting's
        whole = match.group(0)
        start = match.start("count") - match.start() + keep
        end = match.end("count") - match.start()
        return whole[:start] + "§" * (end - start) + whole[end:]
    return _blank_group(match, "count")


def _blank_group(match: re.Match, group: str) -> str:
    start, end = match.start(group) - match.start(), match.end(group) - match.start()
    whole = match.group(0)
    return whole[:start] + "§" * (end - start) + whole[end:]


def classify(text: str, result_allowed: bool = True, measured: bool = False) -> str | None:
    """The context category of a whole fragment with no typed fact, or None when it states something a
    repo could get wrong. ``result_allowed``: reported outcomes count as context (protocol and value claims
    quote them; a method description does not). ``measured``: the claim describes an evaluation, so a
    fragment whose only numbers are fractional or percentages ("set size 3.04", "CRC 45.05%") is a
    measurement it reports, not a setting."""
    stripped = text.strip()
    if not stripped:
        return None
    if measured and (note := protocol_claims.context_note(stripped)):
        return note  # protocol-claim shapes: table footnotes, quoted numbers, "N/A", study titles (protocol_claims)
    if _CITATION.fullmatch(stripped) or _BRACKET_CITE.fullmatch(stripped) or re.match(r"^\s*(?:reference|references|source|cf)\b", stripped, re.IGNORECASE):
        return "citation: a reference to the literature or the paper"
    if _NAMED_RESULT.fullmatch(stripped):
        return "citation: a named theorem or inequality the method rests on (what follows from it is checked)"
    if _SAME_FORM.fullmatch(stripped):
        return "citation: a reference to another formula of the paper (the claim's own formula is what is checked)"
    checks = (
        ("hardware", _HARDWARE, "hardware: what it ran on, not what the code does"),
        ("compute", re.compile(f"{_MEMORY.pattern}|{_TIME.pattern}", re.IGNORECASE), "compute budget: time, memory or cost of a run"),
        ("param-count", _PARAM_COUNT, "parameter count: follows from the architecture, not set by code"),
        ("data-stat", _DATA_STAT, "dataset statistic: a property of the data, not set by code"),
    )
    for _, regex, reason in checks:
        if regex.search(stripped) and not _has_free_number(stripped):
            return reason
    if _DATA_BALANCE.fullmatch(stripped):
        return "dataset statistic: a property of the data, not set by code"
    reported = _RESULT_NUM.search(stripped) or (_RESULT_WORDS.search(stripped) and re.search(r"\d", stripped))
    reported = reported or (measured and _only_measurements(stripped))
    if result_allowed and reported and "=" not in stripped:
        return "reported result: an outcome of running the code, not a code fact"
    if _CITATION.search(stripped) and not _has_free_number(stripped) and len(_WORDS.findall(_CITATION.sub("", stripped))) <= 4:
        return "citation: a reference to the literature or the paper"
    if _RATIONALE.match(stripped.strip("( ")):
        return "rationale: explanation or motivation"
    if _TERM_GLOSS.match(stripped):
        return "rationale: explanation of a formula's term"
    if _INTERPRETATION.match(stripped) and not re.search(r"\d|[=<>≤≥]", stripped):
        return "rationale: an interpretation of the method (what it amounts to), not a step of it"
    return None


def _only_measurements(text: str) -> bool:
    numbers = re.findall(r"(?<![\w.§])\d+(?:\.\d+)?%?", mask(text))
    return bool(numbers) and all("." in n or n.endswith("%") for n in numbers)


def _has_free_number(text: str) -> bool:
    """A number left once every context span is blanked: the fragment states a value besides its context."""
    return bool(re.search(r"(?<![\w.§])\d", mask(text)))


# ----- method claims: a "where ..." / "this is ..." / "both ..." clause that states how the method works -------
# The rationale shapes above are read off a fragment's first word. In a method description the same words
# also lead facts a repository implements ("where B and A both trainable", "Both losses use the same t",
# "This is used to compute J on the clean estimate"), so there a lead word alone is not enough: the clause
# must carry no relation, shape, trainability, sharing or data flow, and a "where" clause must only gloss
# symbols ("where c_L are coarse coefficients").
_RELATION = re.compile(r"[=<>≤≥∈]|ℝ|\bin\s+R\^|\(\s*[\w']+\s*[×x*]\s*[\w']+\s*\)")
_FACT_WORDS = re.compile(
    r"\b(?:trainable|learnable|learned|frozen|fixed|trained|updated|shared|same|identical|detach\w*|"
    r"stop[- ]gradients?|no[- ]grad|instead of|rather than|per (?:layer|block|step|token|head))\b",
    re.IGNORECASE,
)
_DATA_FLOW = re.compile(
    r"\b(?:used|uses|use)\s+(?:\w+\s+){0,3}?(?:to|for)\s+(?:compute|computing|produce|producing|predict|predicting|generate|"
    r"generating|update|updating|estimate|estimating|evaluate|evaluating|obtain|calculate|feed|condition|conditioning)\b",
    re.IGNORECASE,
)
_PURPOSE_LEAD = re.compile(
    r"^\s*(?:to|so|thus|hence|therefore|because|since|making|leading|resulting|enabl\w*|allow\w*|ensur\w*|"
    r"prevent\w*|avoid\w*|balanc\w*|motivat\w*|inspired|intended|designed to|in order to|demonstrat\w*|"
    r"validat\w*|showing|shows?|isolat\w*|benefit\w*|relat\w*|yield\w*|note|see|source|this|these|that|which|"
    r"where|whereas|while|i\.e|e\.g|as (?:a|an|the)|used to (?:isolate|ensure|enable|allow|avoid|prevent|"
    r"demonstrate|show|validate|assess|test|reduce|improve|study|measure|compare))\b",
    re.IGNORECASE,
)
_GLOSS = re.compile(
    r"^(?:each\s+|the\s+)?[^\s,]{1,25}(?:\s*\([^()]*\))?\s+"
    r"(?:is|are|denotes?|represents?|stands?\s+for|is\s+defined\s+as|encapsulates|collects|holds)\s+\S",
    re.IGNORECASE,
)


# "This logistic function maps the rating difference to a probability in (0, 1)": the range of a formula's output
_EXPLAINS_RANGE = re.compile(
    r"^(?:this|the|which|it)\s+(?:[\w\-]+\s+){0,2}?(?:function|formula|term|expression|mapping|transform|nonlinearity|activation)?\s*"
    r"(?:maps|squashes|converts|turns|transforms|bounds|normali[sz]es)\b[^=<>\d]*?\b(?:in|into|to|within)\s+(?:the\s+(?:range|interval)\s+)?"
    r"[(\[]\s*-?\d+(?:\.\d+)?\s*,\s*-?\d+(?:\.\d+)?\s*[)\]]\s*\.?$",
    re.IGNORECASE,
)


def explains_output_range(text: str) -> bool:
    """A method claim's sentence that only says what range the formula beside it maps into."""
    return bool(_EXPLAINS_RANGE.match(text)) and not method_fact(text, "rationale")


def method_fact(text: str, category: str) -> str:
    """Why a fragment of a method claim that ``category`` calls context states something a repository
    implements ("" when it really is context). Only rationale and heading categories are re-read; hardware,
    citations and counts keep their reading."""
    stripped = text.strip().strip("( ").rstrip(".;)")
    if category.startswith("heading"):
        value = re.search(r"\(\s*([A-Za-z_]\w*)\s*=\s*\d[\d.eE+-]*\s*\)", stripped)
        return f"a heading that sets {value.group(1)} = ...: a value no check was compiled for" if value else ""
    if not category.startswith(("rationale", "explanation")):
        return ""
    if re.fullmatch(r"(?:where|which|this|these|that|both)?\s*:?", stripped, re.IGNORECASE) or _TERM_GLOSS.match(stripped) or (
        category.startswith("rationale: an interpretation")
    ):
        return ""  # "where:": a connective leading the definitions that follow, each its own fragment
    if not _PURPOSE_LEAD.match(stripped):
        lead = stripped.split()[0] if stripped.split() else stripped
        return f"states how the method works ('{lead} ...'), not why: no check kind decides it"
    if (found := _RELATION.search(stripped)) or (found := _FACT_WORDS.search(stripped)) or (found := _DATA_FLOW.search(stripped)):
        return f"a clause that states a method fact ('{found.group(0).strip()}'): no check kind decides it"
    where = re.match(r"where\s+(?P<rest>.+)$", stripped, re.IGNORECASE | re.DOTALL)
    if where and not _glosses_only(where.group("rest")):
        return "a 'where' clause that says what a part does, not what a symbol means: no check kind decides it"
    return ""


def _glosses_only(rest: str) -> bool:
    """``x_i is a vote for one model``, ``c_L are coarse coefficients and d_L are detail coefficients``: each
    item names a symbol and what it stands for."""
    protected = re.sub(r"\([^()]*\)", lambda m: m.group(0).replace(",", "\0").replace(" and ", "\1"), rest)
    items = [i.replace("\0", ",").replace("\1", " and ").strip() for i in re.split(r",\s*(?:and\s+)?|\s+and\s+(?=\S+(?:\s*\([^()]*\))?\s+(?:is|are|denotes?|represents?)\b)", protected)]
    items = [i for i in items if i]
    # "\mu and \sigma are the mean and std": a bare symbol shares the gloss after it
    return bool(items) and _GLOSS.match(items[-1]) is not None and all(_GLOSS.match(i) or re.fullmatch(r"\S{1,25}", i) for i in items)
