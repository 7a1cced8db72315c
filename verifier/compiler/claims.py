"""Free-text claims -> typed checks: what the claim compiler does with a SAU that has no ``check``.

A claim is cut into fragments (top-level ``,``/``;``/sentences, never inside brackets); each fragment becomes
typed checks (value, call, formula, protocol) or is reported: *context* (a label, hardware, timing, a
rationale: nothing a repo implements) or *leftover* (a fact the compiler could not type, with the reason,
for the judge). Claim-level structure (step sequences, split ratios, baseline lists) is read first and the
fragments it covers count as typed. Deterministic: the same text always compiles to the same checks.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from verifier.compiler import context, distributions, formulas, numbers, orders, terms
from verifier.spec.model import (
    SAU,
    CallCheck,
    Check,
    Dimension,
    FormulaCheck,
    InitCheck,
    OrderCheck,
    ProtocolCheck,
    ValueCheck,
)

Coverage = Literal["full", "partial", "none"]
_CHECK_ADAPTER: TypeAdapter = TypeAdapter(Check)


@dataclass(frozen=True)
class Fragment:
    """One piece of the claim and what it became: ``typed`` (with the check indexes), ``context`` or ``leftover``."""

    text: str
    outcome: Literal["typed", "context", "leftover"]
    reason: str = ""
    checks: tuple[int, ...] = ()


@dataclass
class CompiledClaim:
    sau_id: str
    checks: list[Any] = field(default_factory=list)
    leftover: list[str] = field(default_factory=list)  # "<fragment>: <reason>"
    coverage: Coverage = "none"
    fragments: list[Fragment] = field(default_factory=list)

    @property
    def strict_coverage(self) -> Coverage:
        """Coverage that also counts context fragments as not typed: the lower bound ``coverage`` is
        measured against (``coverage`` excuses hardware, citations, reported results...; this does not)."""
        if not self.checks:
            return "none"
        return "full" if all(f.outcome == "typed" and not f.reason for f in self.fragments) else "partial"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.sau_id,
            "coverage": self.coverage,
            "strict_coverage": self.strict_coverage,
            "checks": [c.model_dump(by_alias=True, exclude_none=True, exclude_defaults=False) for c in self.checks],
            "leftover": list(self.leftover),
            "fragments": [
                {"text": f.text, "outcome": f.outcome, "reason": f.reason, "checks": list(f.checks)}
                for f in self.fragments
            ],
        }


# ----- cutting the text ------------------------------------------------------------------------------------
_OPEN, _CLOSE = "([{", ")]}"
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bet al)(?<!\bEq)(?<!\bSec)\.\s+(?=[A-Z(]|\d[A-Za-z])")


def split_fragments(text: str) -> list[tuple[int, int]]:
    """Spans of top-level fragments: cut at , ; newlines and sentence ends outside brackets."""
    spans: list[tuple[int, int]] = []
    depth, start = 0, 0
    sentence_cuts = {m.start() for m in _SENTENCE_END.finditer(text)}
    for i, ch in enumerate(text):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(depth - 1, 0)
        piped = ch == "|" and text[i - 1 : i] == " " and text[i + 1 : i + 2] == " "  # "Data: ... | Baselines: ..."
        cut = depth == 0 and (ch in ";\n" or piped or (ch == "," and not _thousands(text, i)) or i in sentence_cuts)
        if cut:
            spans.append((start, i))
            start = i + 1
    spans.append((start, len(text)))
    out = []
    for a, b in spans:
        while a < b and text[a] in " \t\r\n-•*|":
            a += 1
        while b > a and text[b - 1] in " \t\r\n.":
            b -= 1
        if b > a:
            out.append((a, b))
    return out


def _thousands(text: str, i: int) -> bool:
    return 0 < i < len(text) - 3 and text[i - 1].isdigit() and text[i + 1 : i + 4].isdigit() and not text[i + 4 : i + 5].isdigit()


# ----- claim-level structure ------------------------------------------------------------------------------
_SPLIT_RATIO_RE = re.compile(
    r"\(?(?P<nums>\d+(?:\.\d+)?%?(?:\s*[/:]\s*\d+(?:\.\d+)?%?){1,2})\)?\s*(?:\(?\s*(?P<names>(?:train\w*|val\w*|test\w*|dev)(?:\s*/\s*(?:train\w*|val\w*|test\w*|dev)){1,2})\s*\)?)?\s*split",
    re.IGNORECASE,
)
_NAMED_SPLIT_RE = re.compile(r"(?P<names>(?:train\w*|val\w*|test\w*)(?:\s*/\s*(?:train\w*|val\w*|test\w*)){1,2})\s+split\s+(?P<nums>\d+(?:\.\d+)?(?:\s*/\s*\d+(?:\.\d+)?){1,2})", re.IGNORECASE)
_PCT_SPLIT_RE = re.compile(r"(?P<pct>\d+(?:\.\d+)?)\s*%\s*(?:for\s+)?(?P<part>train(?:ing)?|validation|val|test(?:ing)?)\b", re.IGNORECASE)


def _split_part(word: str) -> str:
    w = word.lower()
    return "train" if w.startswith("train") else "val" if w.startswith(("val", "dev")) else "test"


def find_split_ratios(text: str) -> list[tuple[dict[str, float], tuple[int, int]]]:
    """Every split ratio stated in the text ("80/10/10 split", "70% training, 15% validation, 15% testing")."""
    out = []
    rest = text
    while True:
        found = find_split_ratio(rest)
        if not found:
            return out
        ratio, (a, b) = found
        out.append((ratio, (a, b)))
        rest = rest[:a] + " " * (b - a) + rest[b:]


def find_split_ratio(text: str) -> tuple[dict[str, float], tuple[int, int]] | None:
    match = _SPLIT_RATIO_RE.search(text) or _NAMED_SPLIT_RE.search(text)
    if match:
        raw = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", match.group("nums"))]
        total = sum(raw)
        names_text = match.group("names")
        if names_text:
            parts = [_split_part(n) for n in re.split(r"\s*/\s*", names_text)]
        else:
            parts = ["train", "test"] if len(raw) == 2 else ["train", "val", "test"]
        if total > 0 and len(parts) == len(raw) and len(set(parts)) == len(parts):
            return {p: round(v / total, 6) for p, v in zip(parts, raw)}, match.span()
    hits = list(_PCT_SPLIT_RE.finditer(text))
    parts = {_split_part(h.group("part")): float(h.group("pct")) / 100 for h in hits}
    if len(parts) >= 2 and abs(sum(parts.values()) - 1.0) < 1e-6:
        return {k: round(v, 6) for k, v in parts.items()}, (hits[0].start(), hits[-1].end())
    return None


_BASELINE_LIST_RE = re.compile(
    r"(?:baselines?|against|compared? (?:with|to)|versus|vs\.?)(?:\s*|[^().;:]{0,60}?)(?:\((?P<paren>[^()]{3,300})\)|:\s*(?P<colon>[^.;]{3,300}))",
    re.IGNORECASE,
)
_NAME_RE = re.compile(r"^[A-Z0-9][\w\-+./]*(?:\s[A-Z0-9][\w\-+./]*){0,2}$")


def find_baselines(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """Named baselines in "baselines (A, B, C)" / "Baselines: A, B" / "compared against (A, B)" lists."""
    names: list[str] = []
    spans: list[tuple[int, int]] = []
    for match in _BASELINE_LIST_RE.finditer(text):
        body = match.group("paren") or match.group("colon") or ""
        items = [i.strip().strip(".") for i in re.split(r",|\band\b|;", body)]
        found = [i for i in items if i and _NAME_RE.match(i) and len(i) <= 40]
        if len(found) >= 1 and len(found) >= len([i for i in items if i]) / 2:
            names.extend(found)
            spans.append(match.span())
    seen: list[str] = []
    for n in names:
        if n not in seen:
            seen.append(n)
    return seen, spans


_LABELLED_LIST = re.compile(
    r"(?:^|(?<=[.;:\n|]\s)|(?<=\n))(?P<label>[A-Za-z][\w\- ]{2,50}?):\s*"
    r"(?P<nums>[-+]?\d+(?:\.\d+)?(?!,\d)(?:\s*,\s+[-+]?\d+(?:\.\d+)?(?!,\d)){2,})"
    r"(?:\s+[a-z]+)?(?=\s*(?:[.;\n|]|$))"
)


def _labelled_lists(text: str, b: _Builder) -> list[tuple[str, list[Any], tuple[int, int]]]:
    """"Rank shift targets: 1, 2, 5, 10 positions": one list value, not one value per comma-separated item."""
    out = []
    for match in _LABELLED_LIST.finditer(text):
        label = match.group("label").strip()
        name = _name_for(label, b.aliases) or _head_phrase(label)
        if _COUNT_LABEL.search(label):
            continue  # "Parameter counts: ...": measurements, not a setting
        values = [numbers.parse_value(v) for v in re.split(r"\s*,\s*", match.group("nums"))]
        if name and all(v is not None for v in values):
            out.append((name, values, (match.start("label"), match.end())))
    return out


# ----- one fragment ---------------------------------------------------------------------------------------
_LABEL_RE = re.compile(r"^(?P<label>[^=:≤≥<>]{2,120}?):\s+(?P<body>\S.*)$", re.DOTALL)
_ASSIGN_RE = re.compile(r"^(?P<keys>[^=≤≥<>~]{1,160}?)\s*(?:=|∈|\bin\b(?=\s*[\[{(]))\s*(?P<val>[^=].*)$", re.DOTALL)
_RANGE_KEY_RE = re.compile(
    r"^(?P<keys>[A-Za-z][\w\s\-]{0,40}?)\s+(?:range|search|sweep|grid|values|in|over|of)?\s*(?P<val>[\[{][^\]}]*[\]}])\s*$"
)
_PAREN_TAIL = re.compile(r"\s*\([^()]*\)\s*$")
_EXPLANATORY = re.compile(
    r"^(?:where|which|this|these|so|thus|hence|i\.e|e\.g|used|uses|using|relates|eliminates|leverages|making|"
    r"yields|yielding|isolating|inspired|requires|computed|implemented|see|source|note|because|since|as|all other|"
    r"same|both|only|matches|applies|applied|provides|demonstrat\w*|finding|results?|shows?|reported|(?:\w+ )?ensur\w*)\b",
    re.IGNORECASE,
)
_NON_PARAM_UNITS = {"k", "m", "b", "gb", "mb", "h", "hrs", "hours", "min", "s", "x", "params", "parameters"}


@dataclass
class _Builder:
    aliases: dict[str, list[str]]
    checks: list[Any] = field(default_factory=list)
    keys: dict[str, int] = field(default_factory=dict)
    claim: str = ""
    label: str = ""
    fragment: str = ""
    ambiguous: list[str] = field(default_factory=list)

    def add(self, check: Any) -> int:
        """The check's index; -1 when its name is wrong for this claim's context (left to the judge)."""
        if isinstance(check, ValueCheck) and check.name not in self.aliases:
            name = terms.name_in_context(check.name, f"{self.label} {self.fragment}", self.claim)
            if name is None:
                self.ambiguous.append(check.name)
                return -1
            if name != check.name:
                check = ValueCheck(name=name, names=check.names, expect=check.expect)
        key = repr(sorted(check.model_dump(by_alias=True, exclude_none=True).items(), key=lambda kv: kv[0]))
        if key not in self.keys:
            self.keys[key] = len(self.checks)
            self.checks.append(check)
        return self.keys[key]


def _value_check(name: str, expect: Any) -> Any:
    if name in ("seeds", "num_seeds") and isinstance(expect, int):
        return ProtocolCheck(rule="seeds", expect=expect)
    return ValueCheck(name=name, expect=expect)


_COUNT_RE = re.compile(r"\bnumber of (?P<what>[A-Za-z][A-Za-z\- ]{2,40}?)(?:\s+(?:for|per|in|used|to|of|from|at|across|on|with)\b|$)", re.IGNORECASE)
_COUNT_STOP = {"random", "the", "total", "distinct", "unique"}


def _name_for(key: str, aliases: dict[str, list[str]], unit: str = "", label: str = "") -> str | None:
    key = key.strip().strip("'\"`*").strip()
    key = re.sub(r"^(?:the|a|an)\s+", "", key, flags=re.IGNORECASE)
    unit_canonical = terms.unit_name(unit) if unit else None
    symbol = terms.identifier(key)
    known = terms.canonical_name(key, aliases) if len(symbol) <= 2 else None
    if len(symbol) <= 2 and symbol.lower() not in terms.GREEK_NAMES and (known is None or known.lower() == symbol.lower()):
        # a bare paper symbol ("l", "T", "P'") names nothing in code unless an alias, the unit or the label does
        if any(symbol.lower() == a.lower() or symbol in v for a, v in aliases.items()):
            return known or symbol
        label_phrase = terms.find_phrase(label) if label else None
        return unit_canonical or (label_phrase[0] if label_phrase else None)
    name = known or terms.canonical_name(key, aliases)
    if name:
        return name
    count = _COUNT_RE.search(terms.ascii_symbol(key))
    if count:
        words = [w.lower() for w in count.group("what").split() if w.lower() not in _COUNT_STOP]
        while len(words) > 1 and len(words[-1]) == 1:
            words.pop()  # "number of diffusion steps T": the symbol after the words is not part of the name
        words = words[-1:] if len(words) > 2 else words  # "Dirichlet Monte Carlo samples": the head noun counts
        if words:
            return "num_" + "_".join(words)
    hit = terms.find_phrase(key)
    if hit and hit[2] >= len(terms.normalise_phrase(terms.ascii_symbol(key))) - 2:
        return hit[0]  # the key ends with a known phrase: "base learning rate", "Batch size"
    return unit_canonical


_STOP_HEAD = re.compile(
    r"\b(?:for|of|in|on|at|to|with|from|by|per|across|during|used|when|where|which|that|is|are|was|were|must|"
    r"has|have|be|the|a|an|and|or|such|its|their)\b",
    re.IGNORECASE,
)
_SYMBOL_RE = re.compile(r"^[A-Za-z](?:_?[A-Za-z0-9]{0,2})?'?$|^[α-ωΑ-Ωϵϕ][_\w]{0,3}$")


def _is_symbol(key: str) -> bool:
    """A bare paper symbol (``T``, ``l``, ``P'``, ``S_x``, ``λ``): short, names nothing in code by itself."""
    key = key.strip().strip("$`")
    if terms.identifier(key).lower() in terms.GREEK_NAMES:
        return True
    return bool(_SYMBOL_RE.match(key)) and len(terms.identifier(key)) <= 4


def _head_phrase(words: str) -> str | None:
    """The noun phrase a description starts with, as an identifier: "maximum acceptable rate of trials ..."
    -> maximum_acceptable_rate. None when the text is a sentence (a verb) or a gerund, not a name."""
    words = re.sub(r"\([^()]*\)", " ", terms.ascii_symbol(words)).strip()
    if not words or re.match(r"^\w+ing\b", words) or re.search(r"\b(?:is|are|was|were|must|has|have|can)\b", words):
        return None
    if re.match(r"^(?:we|our|they|it|this|these|which|that|i|here|then|also|set|use|uses)\b", words, re.IGNORECASE):
        return None  # a sentence's subject or verb, not a parameter's name
    head = _STOP_HEAD.split(words, maxsplit=1)[0].strip()
    tokens = [t.lower() for t in re.findall(r"[A-Za-z][A-Za-z0-9]*", head)]
    if not tokens or len(tokens) > 4 or any(len(t) == 1 for t in tokens[:-1]):
        return None
    if tokens[0] in terms.not_names() or " ".join(tokens) in terms.not_names():
        return None  # "Ablation: ...", "Benchmark: ...": an experiment's heading, not a parameter
    if tokens[0] in _NOT_A_NAME_START or (len(tokens) == 1 and tokens[0] in _TOO_GENERIC):
        return None  # "Compare memory usage", "Test eta", a bare "test:": an instruction or a heading
    return "_".join(tokens)


_NOT_A_NAME_START = frozenset(
    "compare test evaluate measure train vary sweep report apply compute run else if then when otherwise while "
    "but each all both given assume assumed derived see note thus hence so which that any there one two three four "
    "five six seven eight nine ten several multiple various".split()
)
_TOO_GENERIC = frozenset("test train val validation total results result config setup parameters settings details other value values".split())


def _symbol_names(key: str, label: str = "", before: str = "") -> list[str]:
    """Candidate names for a bare symbol: the words right before it first ("Reynolds number Re" ->
    reynolds_number), then the symbol and its spellings (``λ`` -> lam, lambda_, lmbda), then what the
    fragment's label suggests (weaker: a label often covers several values)."""
    key = key.strip().strip("$`")
    names: list[str] = []
    if before:
        # only the words right before the symbol name it ("tasks at ranks r" -> ranks), not the whole clause
        before = " ".join(_STOP_HEAD.split(re.sub(r"\([^()]*\)", " ", before))[-1].split()[-3:])
    if before and not re.search(
        r"\b(?:at|for|with|in|into|on|onto|of|from|to|by|and|or|when|if|else|where|the|a|an|as|than|over|under|via|"
        r"between|within|across|per)\s*$",
        before,
        re.IGNORECASE,
    ):
        phrase = terms.find_phrase(before)
        if phrase:
            names.append(phrase[0])
        head = _head_phrase(before)
        if head:
            names.append(head)
    ident = terms.identifier(key)
    if key.endswith("'"):
        names.append(ident + "_prime")  # P' is not P
    names += [ident, ident.lower()]
    if ident.lower() == "lam":
        names += ["lambda_", "lmbda"]
    if key != ident and key.isidentifier():
        names.append(key)
    if label:
        phrase = terms.find_phrase(label)
        if phrase:
            names.append(phrase[0])
        head = _head_phrase(label)
        if head:
            names.append(head)
    out: list[str] = []
    for n in names:
        if n and n not in out:
            out.append(n)
    return out


def _symbol_check(key: str, expect: Any, label: str = "", before: str = "") -> Any:
    names = _symbol_names(key, label, before)
    return ValueCheck(name=names[0], names=names[1:] or None, expect=expect)


def _leading_value(text: str) -> str:
    """The value at the start of ``text``: a whole bracketed set/list, or the text up to trailing prose."""
    text = text.strip()
    if text and text[0] in "{[(":
        close = {"{": "}", "[": "]", "(": ")"}[text[0]]
        depth = 0
        for i, ch in enumerate(text):
            depth += ch == text[0]
            depth -= ch == close
            if depth == 0:
                return text[: i + 1]
        return text
    return _PROSE_TAIL.split(text, maxsplit=1)[0]


_PROSE_TAIL = re.compile(
    r"\s+(?=(?:for|in|on|with|where|when|at|during|via|and|is|are|used|per|from|as|if|otherwise|evaluated|"
    r"applied|trained|tested|added|vs\.?|to)\b)|\s+\((?=[A-Za-z]{2,})"
)


_COUNT_LABEL = re.compile(r"\b(?:counts?|statistics|stats|sizes?|params|parameters|memory|time|cost)\b", re.IGNORECASE)


def _compile_assignment(body: str, b: _Builder, label: str = "", own_label: bool = True) -> tuple[list[int], str]:
    """``lr=1e-4`` / ``S_x=S_y=64`` / ``r ∈ {8, 16}`` / ``alpha in [0.1, 1.0]``: value checks, or why not."""
    match = _ASSIGN_RE.match(body) or _RANGE_KEY_RE.match(body)
    if not match:
        whole = numbers.parse_value(_PAREN_TAIL.sub("", body).strip())
        readable = label and whole is not None and not isinstance(whole, bool)
        name = _name_for(label, b.aliases) if readable else None
        if readable and name is None and own_label and not terms.find_phrase(label) and not _COUNT_LABEL.search(label):
            name = _head_phrase(label)  # "Prompt Number: [5, 10]" -> prompt_number; not "Parameter counts: ..."
        return ([b.add(_value_check(name, whole))], "") if name else ([], "")
    raw_val = match.group("val").strip()
    keys = [k for k in re.split(r"\s*=\s*", match.group("keys")) if k.strip()]
    if any(re.search(r"[*/^+]|\d\s*\)", k) for k in keys[1:]):
        return [], "a value derived by a formula, not a setting"  # "eta = (4 * 16^2)^2 / (...) = 15"
    stripped = raw_val if raw_val.startswith("(") else _PAREN_TAIL.sub("", raw_val)
    val_text = _leading_value(stripped.strip().strip("~≈").strip())
    unit = ""
    expect = numbers.parse_value(val_text)
    if expect is None:
        head = re.match(r"^(?P<v>\S+)\s+(?P<unit>[A-Za-z][\w\-]*)(?:\s.*)?$", val_text)
        if head:
            expect = numbers.parse_value(head.group("v"))
            unit = head.group("unit")
    if expect is None:
        applied = raw_val.strip().startswith(val_text + "(")  # "y = E_omega(x)": a formula, not a setting
        if not applied and re.fullmatch(r"[A-Za-z][\w.\-]{2,30}", val_text) and re.search(r"[\d._A-Z]", val_text) and not terms.find_apis(val_text):
            expect = val_text  # a string setting: wavelet=bior2.4, padding mode=periodization
        else:
            return [], ""
    made: list[int] = []
    for key in keys:
        name = _name_for(key, b.aliases, unit, label)
        if name and name.lower() in terms.GREEK_NAMES and _is_symbol(key) and name not in b.aliases:
            made.append(b.add(_symbol_check(key, expect, label)))  # λ: lam, lambda_, ... and the label's words
            continue
        if name:
            made.append(b.add(_value_check(name, expect)))
            continue
        words = key.strip().split()
        if len(words) >= 2 and words[-1].lower() in terms.generic_keys() and _is_symbol(words[-1]) and not isinstance(expect, str):
            compound = " ".join(words[-2:])  # "initial dim" -> initial_dim, not a symbol "dim"
            made.append(b.add(_value_check(terms.canonical_name(compound, b.aliases) or terms.identifier(compound).lower(), expect)))
            continue
        if words and _is_symbol(words[-1]):  # "Reynolds number Re", "l", "ranks r": the symbol, named by its words
            made.append(b.add(_symbol_check(words[-1], expect, label, " ".join(words[:-1]))))
            continue
        head = _head_phrase(key)
        if head and not isinstance(expect, str):
            made.append(b.add(ValueCheck(name=head, expect=expect)))
            continue
        return [], f"no parameter name for '{key.strip()}' (add an alias)"
    if re.search(r"(?<![\w.])\d", match.group("keys")):  # "trained for 100k steps with KL weight beta=1e-3"
        more, _ = _compile_quantities(match.group("keys"), b)
        made.extend(more)
    return made, ""


_SHAPE_TAIL = re.compile(r"(?:\s*[x×]\s*\d{1,5}(?![\d.]))+")
_NOT_COUNTS = {
    "params", "parameters", "tokens", "steps", "times", "hours", "minutes", "seconds", "days", "gpus", "cpus", "is",
    "was", "has", "this", "thus", "plus", "across", "versus", "as", "corresponds", "means", "yields", "gives", "uses",
}  # fmt: skip


_JOINER = re.compile(r"[\s:=(]*(?:of|is|to|was|=|:|set to|is set to)?[\s:=(~≈]*", re.IGNORECASE)


def _tail_after_phrase(before: str, phrase: tuple[str, int, int]) -> str:
    """The text between a phrase found in ``before`` and the number that follows it."""
    return terms.normalise_phrase(terms.ascii_symbol(before))[phrase[2] :] + " "


def _inside_parentheses(text: str, index: int) -> bool:
    depth = 0
    for ch in text[:index]:
        depth += ch == "("
        depth -= ch == ")" and depth > 0
    return depth > 0


def _compile_quantities(body: str, b: _Builder, label: str = "") -> tuple[list[int], list[str]]:
    """Numbers named by a phrase before them ("batch size 256"), a unit after them ("150K steps"), or the
    label of a fragment that is only a number ("Batch size varies per task: 30 (CoLA)")."""
    made: list[int] = []
    unnamed: list[str] = []
    last_end = 0
    label_phrase = terms.find_phrase(label) if label else None
    shape_end = -1
    for i, q in enumerate(numbers.find_numbers(body)):
        if q.start < shape_end:
            continue  # a later dimension of a shape read below
        before = body[last_end : q.start]
        if re.search(r"\b(?:per|every)\s*$|\$\s*$", before):
            last_end = q.end
            continue  # "per 1M tokens", "every 1,000 steps", "$5.00": a rate, an interval or a price
        if re.match(r"(?:[-–]|\s+to\s+)\d", body[q.end : q.end + 6]) or re.search(r"\d(?:[-–]|\s+to\s+)$", body[max(0, q.start - 6) : q.start]):
            last_end = q.end
            continue  # "AR steps: 6-7", "by 1 to 50 positions": a range, not the value 6 (nor 7)
        shape = _SHAPE_TAIL.match(body, q.end) if isinstance(q.value, int) and not q.percent else None
        if shape:  # "16×256×256": one value, the whole shape
            q = dataclasses.replace(q, value=[q.value, *map(int, re.findall(r"\d+", shape.group(0)))], end=shape.end())
            shape_end = shape.end()
        after = body[q.end : q.end + 40]
        name = None
        phrase = terms.find_phrase(before)
        words = re.match(r"\s*((?:[A-Za-z][\w\-]*\s+){0,2}[A-Za-z][\w\-]*)", after)
        following = words.group(1).split() if words else []
        if phrase and _JOINER.fullmatch(_tail_after_phrase(before, phrase)):
            name = phrase[0]
            own = terms.find_phrase(" ".join(following)) if "(" in _tail_after_phrase(before, phrase) and following else None
            if own and own[1] == 0:
                name = own[0]  # "56 frames (7 AR steps)": the number in parentheses is named by its own words
        if name is None and q.unit not in _NON_PARAM_UNITS and following:
            phrase_after = terms.find_phrase(" ".join(following))  # "100 denoising steps" before "steps" alone
            if phrase_after and phrase_after[1] == 0 and len(phrase_after[0]) and " " in " ".join(following)[: phrase_after[2]]:
                name = phrase_after[0]
        adjective = re.match(r"-(?P<w>[a-z]{3,})\b", after) if isinstance(q.value, int) else None
        if name is None and adjective:  # "a 49-frame video", "a 3-layer MLP": the unit, made plural
            plural = adjective.group("w") + "s"
            known = terms.find_phrase(plural)
            name = terms.unit_name(plural) or (known[0] if known and known[1] == 0 else None)
        if name is None and isinstance(q.value, int):
            for w in following:
                if terms.unit_name(w):
                    name = terms.unit_name(w)
                    break
        if name is None and q.unit not in _NON_PARAM_UNITS and following:
            phrase_after = terms.find_phrase(" ".join(following))
            if phrase_after and phrase_after[1] == 0:
                name = phrase_after[0]
        in_list = bool(re.search(r"\d\s*(?:,|\band\b|\bor\b)\s*$", before))  # "0, 1, 2, 3 levels": the noun counts a list
        if name is None and isinstance(q.value, int) and q.value >= 2 and not q.percent and not in_list:
            plural = re.match(r"\s*(?:[A-Za-z][\w\-]*\s+){0,2}?(?P<noun>[a-z]{3,}s)\b", after)
            if plural and plural.group("noun") not in _NOT_COUNTS:
                name = "num_" + plural.group("noun")
        if name is None and i == 0 and label_phrase and not body[: q.start].strip():
            name = label_phrase[0]
        last_end = q.end
        if name is None:
            if not _inside_parentheses(body, q.start):
                unnamed.append(q.raw)  # a number in a parenthetical remark qualifies, it is not a claim
            continue
        made.append(b.add(_value_check(name, q.value)))
    return made, unnamed


_INLINE_RE = re.compile(
    r"(?<![\w.{^_])(?P<key>[A-Za-z][\w']*)\s*(?:=|∈)\s*(?P<val>[\[{][^\]}]*[\]}]|[-+−]?[\d.]+(?:[eE][-+−]?\d+)?(?:\s*[x×]\s*10\^?-?\d+)?(?:/\d+(?:\.\d+)?)?[kKMB%]?)(?![\w.])(?!\s+if\b)"
)


def _inline_assignments(text: str, b: _Builder) -> tuple[list[int], str]:
    """``key=value`` written inside prose ("an Euler sampler with dt=0.01 per step"); returns the text
    with those spans blanked so their numbers are not read twice."""
    made: list[int] = []
    rest = text
    for match in _INLINE_RE.finditer(text):
        value = numbers.parse_value(match.group("val"))
        key = match.group("key")
        clause = re.split(r"[,;:(=]", text[: match.start()])[-1]
        context = " ".join(clause.split()[-3:])  # "at LoRA ranks r ∈ {8, 16}": the words naming r, same clause
        if value is None:
            continue
        previous = clause.split()[-1:] if clause.strip() else []
        if key.lower() in terms.generic_keys():
            if not previous or not re.fullmatch(r"[A-Za-z][\w\-]*", previous[0]):
                continue  # a bare "dim=96" names nothing
            compound = f"{previous[0]} {key}"
            key = terms.canonical_name(compound, b.aliases) or terms.identifier(compound).lower()
        name = _name_for(key, b.aliases, label=context)
        if name is not None:
            made.append(b.add(_value_check(name, value)))
        elif _is_symbol(key):
            made.append(b.add(_symbol_check(key, value, before=context)))
        else:
            continue
        rest = rest[: match.start()] + " " * (match.end() - match.start()) + rest[match.end() :]
    return made, rest


def _distribution_checks(text: str, b: _Builder) -> tuple[list[int], str]:
    """``X ~ U(0, 4)`` -> call of the sampler; "W initialised from N(0, 0.02)" -> init check on W. Returns
    the text with the distributions blanked, so their parameters are not read as unnamed values."""
    made: list[int] = []
    rest = text
    for dist in distributions.find(text):
        target = distributions.initialised(text, dist.start) if dist.init else None
        if target and dist.init:
            made.append(b.add(InitCheck(name=target, expect=dist.init, args=dist.init_args)))  # type: ignore[arg-type]
        else:
            made.append(b.add(CallCheck(target=dist.call, args=dist.call_args)))
        rest = rest[: dist.start] + "§" * (dist.end - dist.start) + rest[dist.end :]
    return made, rest


_MAX_UNEXPLAINED_WORDS = 5
_FUNCTION_WORDS = frozenset(
    "a an the and or of to in on at by for with from as is are was were be been uses use used using applies apply "
    "applied via through into each every all its their this that which then than also only both per while where "
    "layer layers function loss model module method network block blocks activation optimizer scheduler "
    "schedule training trained train during after before".split()
)


def _unexplained_words(text: str) -> list[str]:
    """Content words of a method sentence besides the API/dataset names it mentions: "sums the signs of
    per-sample gradients before the SVD" names SVD but states more than a call to it."""
    rest = text
    for hit in sorted(terms.find_apis(text) + terms.find_protocol_terms(text), key=lambda h: -h.start):
        rest = rest[: hit.start] + " " + rest[hit.end :]
    lowered = rest.lower()
    stated = [cue for cues in terms.protocol_rule_cues().values() for cue in cues if cue in lowered]
    covered = {w for phrase in stated for w in phrase.lower().split()}
    words = re.findall(r"[A-Za-z][A-Za-z\-]+", rest)
    return [w for w in words if w.lower() not in _FUNCTION_WORDS | covered and len(w) > 2]


def _api_checks(text: str, b: _Builder) -> list[int]:
    return [b.add(CallCheck(target=hit.target)) for hit in terms.find_apis(text)]


def _protocol_checks(text: str, b: _Builder, dimension: Dimension | None = None) -> list[int]:
    out = []
    found = terms.find_protocol_terms(text)
    for hit in found:
        out.append(b.add(ProtocolCheck(rule=hit.category, expect=hit.target)))
    lowered = text.lower()
    for rule, cues in terms.protocol_rule_cues().items():
        if any(cue in lowered for cue in cues):
            out.append(b.add(ProtocolCheck(rule=rule)))
    for name in _frozen_targets(lowered) if dimension != Dimension.methodological else ():
        out.append(b.add(ProtocolCheck(rule="frozen", name=name)))
    known = {h.target.lower() for h in found if h.category == "metric"}
    for metric in _listed_metrics(text):
        if metric.lower() not in known:
            out.append(b.add(ProtocolCheck(rule="metric", expect=metric)))
    return out


def _frozen_targets(lowered: str) -> list[str]:
    """"frozen backbone", "the text encoder is kept frozen" -> the code names of rules' ``frozen_targets``."""
    if "froz" not in lowered and "freez" not in lowered:
        return []
    return [code_name for regex, code_name in _frozen_regexes() if regex.search(lowered)]


@functools.cache
def _frozen_regexes() -> tuple[tuple[re.Pattern, str], ...]:
    out = []
    for target, code_name in terms.protocol_mapping("frozen_targets").items():
        t = re.escape(target.lower())
        out.append((re.compile(
            rf"\b(?:frozen|freeze|freezing|freezes)\s+(?:the\s+)?(?:\w+\s+)?{t}\b|\b{t}\s+(?:is|are|was|were|kept|stays?|remains?)\s+(?:kept\s+)?frozen\b"
            rf"|\b(?:keeps?|keeping|kept)\s+(?:the\s+|all\s+)?(?:\w+\s+)?{t}\s+frozen\b"
        ), code_name))
    return tuple(out)


@functools.cache
def _metric_list_regex() -> re.Pattern | None:
    cues = "|".join(re.escape(c) for c in sorted(terms.protocol_words("metric_cues"), key=len, reverse=True))
    return re.compile(rf"\b(?:{cues})\b\s*(?:is|are|:)\s*(?P<list>[^.;()]{{3,160}})", re.IGNORECASE) if cues else None


_METRIC_ITEM = re.compile(r"^[A-Za-z][\w\-@/]*(?:\s[A-Za-z][\w\-@/]*){0,3}$")


def _listed_metrics(text: str) -> list[str]:
    """Names in "metrics: A, B and C" / "evaluated by A and B" that the vocabulary does not know yet."""
    regex = _metric_list_regex()
    if regex is None:
        return []
    out: list[str] = []
    for match in regex.finditer(text):
        items = [i.strip() for i in re.split(r",|\band\b|\bor\b", match.group("list"))]
        items = [re.sub(r"^(?:the|a|an|four|three|two|both)\s+", "", i, flags=re.IGNORECASE) for i in items if i]
        good = [i for i in items if _METRIC_ITEM.match(i) and not re.search(r"\d", i)]
        if good and len(good) == len(items):
            out.extend(good)
    return out


def _formula_check(text: str, b: _Builder) -> tuple[list[int], str]:
    found = formulas.find_formula(text)
    if found is None:
        return [], ""
    if found.expect is None and found.latex is None:
        return [], f"formula not translated: {found.reason}"
    check = FormulaCheck(expect=found.expect, latex=found.latex)
    return [b.add(check)], ""


_DATA_STAT_RE = re.compile(
    r"\d\s*(?:[kKMB]\s*)?(?:\w+\s+){0,2}(?:videos?|clips?|images?|pairs?|captions?|trajectories|votes?|users?|"
    r"params|parameters|examples|documents|sentences|hours?|families|combinations|train|test|total)\b",
    re.IGNORECASE,
)


def _context_reason(text: str, dimension: Dimension, label: str = "") -> str | None:
    lowered = text.lower()
    if dimension == Dimension.numerical and _DATA_STAT_RE.search(text) and "=" not in text:
        return "dataset statistic or parameter count: not set by code"
    starts_with_params = re.match(r"\s*(?:tunable |trainable |learnable )?(?:param|params|parameters)\b", text, re.IGNORECASE)
    if dimension == Dimension.numerical and (starts_with_params or re.search(r"\b(?:counts?|statistics|stats)\b", label, re.IGNORECASE)):
        return "dataset statistic or parameter count: not set by code"
    words = set(re.findall(r"[a-z0-9$]+", lowered))
    if words & terms.context_words() or "$" in text:
        return "hardware, timing, cost or reference: not a code fact"
    if _EXPLANATORY.match(text.strip("( ")):
        return "explanation or rationale"
    if re.fullmatch(r"\s*(?:reference:?\s*)?(?:(?:eq|eqs|equation|section|sec|table|figure|fig|appendix|algorithm)\.?\s*\(?[\w.]+\)?(?:\s*(?:in|,|and)\s*)?)+\s*", text, re.IGNORECASE):
        return "reference to the paper"
    if text.rstrip().endswith(":") and len(text) < 80:
        return "heading of the parts that follow"
    if text.startswith("(") and text.endswith(")"):
        return "parenthetical remark"
    if dimension == Dimension.numerical and not re.search(r"\d|=", text):
        return "description with no value"
    return None


_MODEL_NAME_RE = re.compile(
    r"\b[A-Za-z][\w.]*-[A-Za-z]{1,2}/\d+\b|\b[A-Za-z][\w.]*(?:-[A-Za-z]*\d[\w.]*)+\b|\b\d+(?:\.\d+)?B\b|\b[A-Z]+\d+[A-Za-z]*(?:/\d+)*\b|\b[123]D\b"
)


_CITATION_RE = re.compile(r"\(\d{1,2}\)|\b(?:Step|Phase|Stage|P)\s?\d+[A-Z]?\b|\([^()]*\b(?:19|20)\d\d[a-z]?\)|\b(?:Eq|Eqs|Sec|Section|Table|Figure|Fig|Appendix)\.?\s*\d+(?:\.\d+)*")


_FORMULA_SPANS = (
    re.compile(r"\bfor\s+(?:each\s+|all\s+)?[A-Za-z]\w*\s*=\s*[^,;:\n]*?\bto\b[^,;:\n]*", re.IGNORECASE),  # for i = 1 to n
    re.compile(r"\b[A-Za-z]\w*\s*=\s*-?\d+\s*,\s*-?\d+\s*,[^;\n]*?(?:\.\.\.|…)"),  # k = 0, 1, 2, ...
    re.compile(r"\b[\w']+\s*=\s*[^\s,;]+\s+if\b[^,;]*", re.IGNORECASE),  # m_i = 1 if i >= P: a piecewise case
    re.compile(r"\b[\w']+\s*=[^=,;\n]*[*/^][^=,;\n]*=\s*[-\d.]+"),  # eta = (4 * 16^2)^2 / (...) = 15: derived
    re.compile(r"\b(?:else|otherwise)\s+[A-Za-z]\w*\s*=\s*[^\s,;]+", re.IGNORECASE),  # ... if k > 1 else z = 0
    re.compile(r"\b(?:if|when|while|unless|where)\s+[A-Za-z]\w*\s*(?:[<>≤≥]=?|==|!=)\s*[^\s,;]+", re.IGNORECASE),  # if k > 1
    re.compile(r"\b(?:step|stage|epoch|layer|chunk|frame|level|phase|block)\s+\d+(?:\s*[-–]\s*\d+)?(?![\w.%])|\b(?:steps|stages|layers|chunks|frames|levels|phases|blocks)\s+\d+\s*[-–]\s*\d+(?![\w.%])"),  # step 1, steps 2-6: indexes
    re.compile(r"(?<![\w\s])\[[^\[\]]*=[^\[\]]*\]|(?<=\w)\[[^\[\]]*=[^\[\]]*\]"),  # u[0:S, t=0]: an index
    re.compile(r"(?<![\w.])[A-Za-z]{1,3}(?:_\w+)?\([^()]*=[^()]*\)"),  # v(x, t=0): a function's argument
    re.compile(r"[∈=]\s*[{(\[][^{}()\[\]]*[})\]]\s*\^\s*\{?\w+\}?"),  # m ∈ {0,1}^N: a set of vectors
    re.compile(
        r"\b[\w']+\s*(?:=|≈|→|->)\s*\S+\s+(?:implies|corresponds to|means|denotes|recovers|reduces to|gives|yields|"
        r"is equivalent)\b[^,;.]*",
        re.IGNORECASE,
    ),  # k=1 corresponds to ...: a case of a formula, not a setting
)


def _mask_formula_spans(text: str) -> str:
    """Loop headers, index ranges, piecewise cases and function arguments of formulas and pseudo-code: their
    numbers are not settings the code must have, so they are blanked before any value is read."""
    for pattern in _FORMULA_SPANS:
        text = pattern.sub(lambda m: " " * len(m.group(0)), text)
    return text


def _mask_model_names(text: str) -> str:
    """``Mistral-7B``, ``Llama-3.2 3B``, ``A100``, citations and cross-references: names with digits, not
    values (blanked so no number is read from them)."""
    text = _CITATION_RE.sub(lambda m: "§" * len(m.group(0)), text)
    return _MODEL_NAME_RE.sub(lambda m: "§" * len(m.group(0)), text)


def _fragment(
    text: str, dimension: Dimension, b: _Builder, formulas_only: bool = False, claim_label: str = ""
) -> Fragment:
    body = text.strip()
    b.fragment, b.ambiguous = body, []
    label_text = claim_label
    label = _LABEL_RE.match(body)
    if label and (not re.search(r"\d", label.group("label")) or len(label.group("label")) > 25):
        body = label.group("body").strip()
        label_text = label.group("label")
    masked = _mask_formula_spans(_mask_model_names(context.mask(body)))
    made, reason = _formula_check(body, b)
    if not made and not formulas_only:
        sampled, masked = _distribution_checks(masked, b)
        made, reason = _compile_assignment(masked, b, label_text, own_label=label_text != claim_label or body != text.strip())
        if not made:
            inline, rest = _inline_assignments(masked, b)
            quantities, unnamed = _compile_quantities(rest, b, label_text)
            if dimension == Dimension.protocol:  # "set size 2.92", "A 45.05%": measurements the claim reports
                unnamed = [u for u in unnamed if not re.fullmatch(r"\d+\.\d+%?|\d+%", u)]
            made = inline + quantities
            if made:
                reason = f"number(s) {', '.join(unnamed[:3])} with no parameter name" if unnamed else ""
            elif unnamed and not reason:
                reason = f"number(s) {', '.join(unnamed[:3])} with no parameter name"
        named = _api_checks(body, b) + _protocol_checks(body, b, dimension)
        if named and not made and not sampled and not reason and dimension == Dimension.methodological:
            rest = _unexplained_words(body)
            if len(rest) > _MAX_UNEXPLAINED_WORDS:
                reason = f"describes more than the named API(s): '{' '.join(rest[:6])} ...'"
        made += sampled + named
    reason = re.sub(r"§+", "…", reason)  # masked model names, shown as an ellipsis
    made = [m for m in made if m >= 0]
    if b.ambiguous and not reason:
        reason = f"'{b.ambiguous[0]}' is ambiguous here (no context word says which parameter it is)"
    if made:
        return Fragment(text, "typed", reason, tuple(sorted(set(made))))
    if formulas_only and not reason:
        return Fragment(text, "typed")
    category = context.classify(
        body, result_allowed=dimension in (Dimension.numerical, Dimension.protocol), measured=dimension == Dimension.protocol
    )
    if category and (not reason or not category.startswith("rationale")):
        return Fragment(text, "context", category)
    legacy = _context_reason(masked if dimension == Dimension.numerical else text, dimension, label_text)
    if legacy and (not reason or legacy.startswith(("hardware", "dataset statistic"))):
        return Fragment(text, "context", legacy)
    if not reason:
        reason = "no value, name, formula or sequence the compiler can type"
    return Fragment(text, "leftover", reason)


# ----- the claim ------------------------------------------------------------------------------------------
def compile_claim(sau: SAU, aliases: dict[str, list[str]] | None = None) -> CompiledClaim:
    """The typed checks a free-text claim contains, what is left for the judge, and the coverage."""
    frozen_aliases = tuple(sorted((k, tuple(v)) for k, v in (aliases or {}).items()))
    cached = _compile_cached(sau.id, sau.dimension, sau.claim or "", frozen_aliases)
    return dataclasses.replace(cached, checks=list(cached.checks), leftover=list(cached.leftover), fragments=list(cached.fragments))


@functools.lru_cache(maxsize=4096)
def _compile_cached(
    sau_id: str, dimension: Dimension, claim: str, aliases_key: tuple[tuple[str, tuple[str, ...]], ...]
) -> CompiledClaim:
    """Compilation is pure: the engine and the judge pass ask for the same claim, compile it once."""
    sau = SAU(id=sau_id, dimension=dimension, claim=claim)
    text = claim.strip()
    aliases = {k: list(v) for k, v in aliases_key}
    out = CompiledClaim(sau_id=sau.id)
    if not text:
        out.leftover.append("(empty claim): nothing to compile")
        return out
    b = _Builder(aliases, claim=text)
    head = _LABEL_RE.match(text)
    claim_label = head.group("label") if head else ""
    b.label = claim_label
    covered: list[tuple[int, int, list[int], str]] = []  # (start, end, check indexes, what)

    order = orders.find_order(text, phases=sau.dimension == Dimension.ordering)
    if order and (sau.dimension in (Dimension.ordering, Dimension.methodological) or len(order.steps) >= 3):
        index = b.add(OrderCheck(steps=list(order.steps), relation=order.relation))  # type: ignore[arg-type]
        covered.append((order.span[0], order.span[1], [index], "order"))
    for ratio, span in find_split_ratios(text):
        index = b.add(ProtocolCheck(rule="split-ratio", expect=ratio))
        covered.append((span[0], span[1], [index], "split"))
    for name, values, span in _labelled_lists(text, b):
        index = b.add(_value_check(name, values))
        if index >= 0:
            covered.append((span[0], span[1], [index], "list"))
    baselines, spans = find_baselines(text)
    if baselines and sau.dimension in (Dimension.protocol, Dimension.ordering):
        made = [b.add(ProtocolCheck(rule="baseline", name=name)) for name in baselines]
        for span in spans:
            covered.append((span[0], span[1], made, "baseline"))

    current_label, previous_end = claim_label, 0
    for start, end in split_fragments(text):
        piece = text[start:end]
        if re.search(r"[.;\n]", text[previous_end:start]):
            current_label = claim_label  # a new sentence: the previous sentence's label no longer applies
        own = _LABEL_RE.match(piece)
        if own and len(own.group("label")) <= 60:
            current_label = own.group("label")  # "Batch size varies per task: 30 (CoLA), 128 (RTE)" names both
        previous_end = end
        inside = [
            c
            for c in covered
            if min(end, c[1]) - max(start, c[0]) >= (end - start) / 2  # mostly inside the structure
            or (start <= c[0] < end <= c[1])  # a label, then the structure runs on: "Dataset split: 70% training"
            or (start <= c[0] and c[1] <= end)
        ]
        if inside and inside[0][3] == "list":  # its items are the list's, read once as a whole
            frag = Fragment(piece, "typed", "", tuple(inside[0][2]))
        elif inside and inside[0][3] == "order":
            frag = _fragment(piece, sau.dimension, b, True, current_label)
            frag = Fragment(piece, "typed", "", tuple(sorted({*inside[0][2], *frag.checks})))
        elif inside:
            frag = _fragment(piece, sau.dimension, b, False, current_label)
            extra = frag.checks if frag.outcome == "typed" else ()
            frag = Fragment(piece, "typed", "", tuple(sorted({*inside[0][2], *extra})))
        else:
            frag = _fragment(piece, sau.dimension, b, False, current_label)
        out.fragments.append(frag)

    out.checks = [_validated(c) for c in b.checks]
    out.leftover = [
        f"{f.text}: {f.reason}" for f in out.fragments if f.outcome == "leftover" or (f.outcome == "typed" and f.reason)
    ]
    if not out.checks:
        out.coverage = "none"
        if not out.leftover:
            out.leftover = [f"{text[:120]}: no typed fact found"]
    else:
        out.coverage = "partial" if out.leftover else "full"
    return out


def _validated(check: Any) -> Any:
    """Round-trip through the spec model so a compiled check is exactly what a user could have written."""
    try:
        return _CHECK_ADAPTER.validate_python(check.model_dump(by_alias=True, exclude_none=True))
    except ValidationError:
        return check
