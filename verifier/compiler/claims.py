"""Free-text claims -> typed checks: what the claim compiler does with a SAU that has no ``check``.

A claim is cut into fragments (top-level ``,``/``;``/sentences, never inside brackets); each fragment becomes
typed checks (value, call, formula, protocol) or is reported: *context* (a label, hardware, timing, a
rationale: nothing a repo implements) or *leftover* (a fact the compiler could not type, with the reason,
for the judge). Claim-level structure (step sequences, split ratios, baseline lists) is read first and the
fragments it covers count as typed. Deterministic: the same text always compiles to the same checks.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from dataclasses import dataclass, field
from typing import Any, Literal, TypeGuard

from pydantic import TypeAdapter, ValidationError

from verifier.compiler import context, distributions, formulas, numbers, orders, prose_losses, pseudocode, terms
from verifier.compiler import mentions, method_claims, protocol_claims, quoted, shapes
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
from verifier import pysource

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
# a sentence ends at ". " after a word; "E_q_i . E_d_j" (a dot written between two operands) is a product
_SENTENCE_END = re.compile(
    r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bet al)(?<!\bEq)(?<!\bSec)(?<!\bNo)(?<!\bFig)(?<![\w)]\s)\.\s+(?=[A-Z(]|\d[A-Za-z]|\d[\d,]*\s+[a-z]|"
    r"[a-z][a-z_0-9]*\s+(?:is|are|denotes?|controls?|represents?)\s|[a-z][a-z_0-9]*\s*=\s)"
)  # "... / sqrt(alpha_bar_k). lambda is the guidance weight": a lower-case symbol may start a sentence


# a claim's title, cut from what follows by " | ": a few capitalised words, no number and no '='
_PIPED_TITLE = re.compile(r"[A-Z][\w'-]*(?:[ \t]+(?:[A-Z][\w'-]*|of|for|and|the|in|with|to|vs\.?|a|an)){0,6}")


_UNPACK_TARGET = r"[A-Za-z][\w'ᵀ]{0,3}"
_UNPACKED_HEAD = re.compile(rf"(?:[^:,;=\n]{{1,60}}:)?\s*(?:{_UNPACK_TARGET}\s*,\s*)*{_UNPACK_TARGET}\s*")  # "Init: U"
_UNPACKED_REST = re.compile(rf"\s*(?:{_UNPACK_TARGET}\s*,\s*)*{_UNPACK_TARGET}\s*=\s*[A-Za-z][\w.]*\s*\(")


def split_fragments(text: str) -> list[tuple[int, int]]:
    """Spans of top-level fragments: cut at , ; newlines and sentence ends outside brackets."""
    spans: list[tuple[int, int]] = []
    depth, start = 0, 0
    index_ranges = {i for m in _INDEX_RANGE.finditer(text) for i in range(m.start(), m.end())}
    sentence_cuts = {m.start() for m in _SENTENCE_END.finditer(text)} - index_ranges
    enumeration = {i for m in _NUMBER_ENUMERATION.finditer(text) for i in range(m.start(), m.end()) if text[i] == ","}
    enumeration |= {i for i in index_ranges if text[i] == ","}
    in_math = {i for m in math_spans(text) for i in range(m.start() + 1, m.end() - 1)}  # "$\alpha \, N$"
    for i, ch in enumerate(text):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(depth - 1, 0)
        piped = ch == "|" and text[i - 1 : i] == " " and text[i + 1 : i + 2] == " "  # "Data: ... | Baselines: ..."
        index = ch == "," and re.match(r",\w{1,2}\s*[~=]", text[i : i + 6]) and text[i - 1 : i].isalnum()  # b1,i~U(0,1)
        # "spatial x,y in [0,1]": coordinates written as one pair, no space after the comma
        paired = ch == "," and re.match(r",[A-Za-z](?!\w)", text[i : i + 3]) and re.search(r"(?<!\w)[A-Za-z]$", text[max(0, i - 2) : i])
        restated = ch == "," and re.search(r"\b(?:i\.e|e\.g)\.?$", text[max(0, i - 5) : i])  # "i.e., X" stays whole
        # "U, S, Vᵀ = SVD(ΔW)": the targets of one unpacking assignment
        unpacked = ch == "," and _UNPACKED_HEAD.fullmatch(text[start:i]) and _UNPACKED_REST.match(text, i + 1)
        enumerated = ch == "," and i in enumeration  # "at epochs 30, 60 and 80": one list of numbers
        enumerated = enumerated or (ch == "," and bool(_NEXT_LOSS_TERM.match(text, i + 1)))  # "MSE of u, plus alpha * MSE of f"
        cut = depth == 0 and i not in in_math and not index and not paired and not restated and not enumerated and not unpacked and (
            ch in ";\n" or piped or (ch == "," and not _thousands(text, i)) or i in sentence_cuts
        )
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


# LaTeX inline math: "$" right before a non-space, closed by "$" right after one ("$5 and $10" is money)
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?=[^\s$])(?:[^$\\]|\\.)*?(?<=[^\s\\])\$")


_PROSE_IN_MATH = re.compile(r"(?<![\\{A-Za-z])[a-z]{3,}\s+[a-z]{2,}\b")  # "$1.80 per 1M output tokens ... ~$": prose


def math_spans(text: str) -> list[re.Match]:
    """The LaTeX inline math of ``text``: a "$...$" pair whose inside is no run of prose (two prices are not one)."""
    return [m for m in _INLINE_MATH.finditer(text) if not _PROSE_IN_MATH.search(m.group(0))]


def has_money(text: str) -> bool:
    """A price ("$5.00 per 1M tokens", "~$440"), not a LaTeX "$...$" math span."""
    for m in reversed(math_spans(text)):
        text = text[: m.start()] + " " + text[m.end() :]
    return bool(re.search(r"\$\s*\d", text))


_NEXT_LOSS_TERM = re.compile(r"\s*(?:plus|minus)\s+(?:[A-Za-z_]\w{0,10}\s*(?:\*|·|times)\s*)?(?:the\s+)?(?:MSE|MAE|L1|L2)\b", re.IGNORECASE)
_NUMBER_ENUMERATION = re.compile(
    r"(?<![\w.,])\d+(?:\.\d+)?[kKM]?(?:,\s+\d+(?:\.\d+)?[kKM]?)+,?\s+(?:and|or)\s+\d+(?:\.\d+)?[kKM]?(?![\w.])"
)  # "30, 60 and 80", "8, 4, 2, and 1": numbers only, closed by "and"/"or"


_INDEX_RANGE = re.compile(r"\b[A-Za-z]\w*\s*=\s*-?\d+\s*(?:\.\.\.?|…|,\s*(?:\.\.\.|…)\s*,?)\s*[A-Za-z0-9]")
# "k = 0 .. L-1", "i = 1, ..., n": one index range, not a sentence end or a list


def _thousands(text: str, i: int) -> bool:
    return 0 < i < len(text) - 3 and text[i - 1].isdigit() and text[i + 1 : i + 4].isdigit() and not text[i + 4 : i + 5].isdigit()


# ----- claim-level structure ------------------------------------------------------------------------------
_SPLIT_RATIO_RE = re.compile(
    r"\(?(?P<nums>\d+(?:\.\d+)?%?(?:\s*[/:]\s*\d+(?:\.\d+)?%?){1,2})\)?\s*(?:\(?\s*(?P<names>(?:train\w*|val\w*|test\w*|dev)(?:\s*/\s*(?:train\w*|val\w*|test\w*|dev)){1,2})\s*\)?)?\s*split",
    re.IGNORECASE,
)
_NAMED_SPLIT_RE = re.compile(r"(?P<names>(?:train\w*|val\w*|test\w*)(?:\s*/\s*(?:train\w*|val\w*|test\w*)){1,2})\s+split\s+(?P<nums>\d+(?:\.\d+)?(?:\s*/\s*\d+(?:\.\d+)?){1,2})", re.IGNORECASE)
_PCT_SPLIT_RE = re.compile(r"(?P<pct>\d+(?:\.\d+)?)\s*%\s*(?:for\s+)?(?P<part>train(?:ing)?|validation|val|test(?:ing)?)\b", re.IGNORECASE)


# "3x3 conv kernels", "3×3 convolutions", "1x1 conv": the kernel size of the convolutions (a square or cube kernel)
# "Adam betas (0.9, 0.999)", "betas of 0.9 and 0.95": Adam's pair, one value (a lone number read after "betas"
# would be half of it)
_BETA_PAIR = re.compile(
    r"(?:\bbetas|\(\s*(?:β|beta)_?1\s*,\s*(?:β|beta)_?2\s*\)|(?<=adam)\s+(?:β|beta)|(?<=adamw)\s+(?:β|beta)|(?:β|\bbeta)(?=\s*=\s*\())"
    r"\s*(?:=|:|of)?\s*(?P<open>[(\[])?\s*(?P<b1>0?\.\d+|0)\s*(?:,|and)\s*(?P<b2>0?\.\d+)\s*(?(open)[)\]])",
    re.IGNORECASE,
)
_OPTIMIZER_WORDS = re.compile(r"\b(?:adam\w*|lamb|lion|optimi[sz]er)\b", re.IGNORECASE)
# "(ε, δ) = (8, 1e-5)": two symbols set at once, each its own setting
_TUPLE_ASSIGNMENT = re.compile(
    r"\(\s*(?P<names>[^\W\d]\w{0,6}(?:\s*,\s*[^\W\d]\w{0,6}){1,3})\s*\)\s*=\s*\(\s*(?P<values>"
    r"[-+]?[\d.]+(?:e-?\d+|\^-?\d+)?(?:\s*,\s*[-+]?[\d.]+(?:e-?\d+|\^-?\d+)?){1,3})\s*\)",
    re.IGNORECASE,
)
_RESIZE_THEN_CROP = re.compile(
    r"\bresized?\s+(?:to\s+)?(?P<resize>\d{2,4})(?:\s*(?:px|pixels))?\s*(?:,\s*|\s+)(?:and\s+|then\s+)?"
    r"(?:(?:center|centre)[- ]?)?crop(?:ped)?\s+(?:to\s+)?(?P<crop>\d{2,4})\b",
    re.IGNORECASE,
)
# "mel filterbank between 0 and 8 kHz": a band's two edges, not two sampling rates
_FREQUENCY_BAND = re.compile(
    r"(?:between|from)\s+(?P<low>\d+(?:\.\d+)?)\s*(?P<lowunit>k?Hz)?\s+(?:and|to)\s+(?P<high>\d+(?:\.\d+)?)\s*(?P<unit>k?Hz)\b",
    re.IGNORECASE,
)
# "linear β schedule from 1e-4 to 0.02": a diffusion noise schedule's two ends (a bare "beta from 0.1 to 20" may be
# an SDE's beta_min/beta_max or anything else)
_BETA_RANGE = re.compile(
    r"(?:\bbeta|β)(?:s|_t)?\s+(?:noise\s+)?schedule\s+(?:(?:linearly|evenly)\s+(?:spaced|increasing)\s+|increasing\s+|ranging\s+)?"
    r"(?:from|between)\s+(?P<start>\d+(?:\.\d+)?(?:e-?\d+)?)\s+(?:to|and)\s+(?P<end>\d+(?:\.\d+)?(?:e-?\d+)?)(?![\w.])",
    re.IGNORECASE,
)
_NUMBER_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "sixteen": 16, "twenty": 20, "thirty": 30, "fifty": 50, "hundred": 100,
}
# "three random seeds", "Eight prompt categories", "two hidden layers", "a three-layer MLP": a count in words, read
# only before the noun it counts ("one" is left: "one of the", "one-hot", "one model per task")
_NUMBER_WORD = re.compile(
    rf"\b(?P<word>{'|'.join(_NUMBER_WORDS)})\b(?P<hyphen>-(?=[a-z]{{3,}}\b))?(?=(?(hyphen)[a-z]{{3,}}\b|\s+(?:[a-z][\w-]*\s+){{0,2}}[a-z]{{3,}}[^s\W]?s\b))",
    re.IGNORECASE,
)


_META_COUNT_NOUN = re.compile(
    r"\s*(?:[a-z][\w-]*\s+)?(?:settings|values|variants|configurations|types|kinds|options|cases|methods|approaches|"
    r"versions|examples|points|levels|objectives|baselines|ablations|experiments|stages|phases|parts|components)\b",
    re.IGNORECASE,
)
_RUN_COUNT_NOUN = re.compile(r"\s*(?:[a-z][\w-]*\s+)?(?:seeds|runs|trials|folds|repetitions|repeats)\b", re.IGNORECASE)


def _digits_for_number_words(body: str, dimension: Dimension) -> str:
    """Counts written in words as digits, padded to the same length (offsets still hold). Only where a count in
    words is a setting: a value claim ("Eight prompt categories", "two hidden layers"), and the runs of a protocol
    ("three random seeds"). A method's prose counts its parts in words ("two variants", "a two-layer head")."""
    if dimension not in (Dimension.numerical, Dimension.protocol):
        return body

    def digits(m: re.Match) -> str:
        if dimension == Dimension.protocol and not _RUN_COUNT_NOUN.match(body, m.end()):
            return m.group(0)
        if _META_COUNT_NOUN.match(body, m.end()):
            return m.group(0)  # "Three lambda settings ... = [0.7, 0.8, 0.9]": the list's length, said in words
        written = str(_NUMBER_WORDS[m.group("word").lower()]) + ("-" if m.group("hyphen") else "")
        return written + " " * (len(m.group(0)) - len(written)) if not m.group("hyphen") else written
    out = _NUMBER_WORD.sub(digits, body)
    return out + " " * (len(body) - len(out))


def _written_settings(body: str, b: "_Builder") -> tuple[list[int], str]:
    """Settings with a shape of their own, read before the general naming and blanked (same length) so their
    numbers are not read twice: "3×3 convolutions", Adam's β pair, "(ε, δ) = (8, 1e-5)", "resized to 256 and
    center-cropped to 224", a mel band, a β schedule's ends, "5-way 1-shot", "512-token chunks with a 64-token
    overlap", "top-10 retrieval", a step decay ("decayed by 0.96 every 100K steps")."""
    made: list[int] = []

    def read(regex: re.Pattern, settings, span=lambda m: m.span(), keep=lambda m: True) -> None:
        """Each match's settings: (name, value), (name, value, its own words) when the rename rules must read
        only those ("300 ep (20 warmup)": the 300 is not the warmup's), a check with its own spellings, or such a
        check and its own words ("--batch_size 10" beside "--language_eval 1"); a match with none is left in the text."""
        nonlocal body
        found = [(m, read_off) for m in regex.finditer(body) if keep(m) and (read_off := settings(m))]
        for _, read_off in found:
            for setting in read_off:
                if isinstance(setting, ValueCheck):
                    made.append(b.add(setting))
                    continue
                head, value, *own = setting
                if isinstance(head, ValueCheck):  # a check and its own words ("--batch_size 10")
                    b.window, check = value, head
                else:  # a name, its value and, maybe, its own words
                    b.window, check = (own[0] if own else None), _value_check(head, value)
                made.append(b.add(check))
        b.window = None
        body = _blank_spans(body, [span(m) for m, _ in found])

    read(_PER_PART_LIST, _per_part_list)
    read(_ENCODER_DECODER_LAYERS, _encoder_decoder_layers, keep=lambda m: bool(_SEQ2SEQ_WORDS.search(b.claim)))
    read(_SQUARE_KERNEL, lambda m: [("kernel_size", int(m.group("n")))], lambda m: m.span("size"))  # "1×1 Conv1d": still named
    read(_SQUARE_POOL, lambda m: [("pool_size", [int(m.group("n"))] * 2)], lambda m: m.span("size"))  # "2×2 average pooling"
    read(_BETA_PAIR, lambda m: [("betas", [numbers.parse_number(m.group("b1")), numbers.parse_number(m.group("b2"))])],
         keep=lambda m: "betas" in m.group(0).lower() or bool(_OPTIMIZER_WORDS.search(b.claim))
         or 0.9 <= float(m.group("b1")) < float(m.group("b2")) < 1)  # "β=(0.9, 0.95)": Adam's pair, by its values
    body = _split_tuple_assignments(body)
    read(_RESIZE_THEN_CROP, lambda m: [("resize_size", int(m.group("resize"))), ("image_size", int(m.group("crop")))])
    read(_FREQUENCY_BAND, lambda m: [("fmin", _hertz(m.group("low"), m.group("lowunit") or m.group("unit"))),
                                     ("fmax", _hertz(m.group("high"), m.group("unit")))],
         keep=lambda m: bool(_SPECTRAL_WORDS.search(b.claim)))
    read(_BETA_RANGE, lambda m: [("beta_start", numbers.parse_number(m.group("start"))), ("beta_end", numbers.parse_number(m.group("end")))],
         lambda m: (m.start("start"), m.end()))
    episodes = [(name, m) for name, regex in (("num_ways", _N_WAY), ("num_shots", _K_SHOT), ("num_shots", _K_SHOT_LISTED))
                for m in regex.finditer(body)]
    episodes.sort(key=lambda e: e[1].start())
    for name in ("num_ways", "num_shots"):
        found = list(dict.fromkeys(int(m.group("n")) for n, m in episodes if n == name))
        if found:  # "5-way 1-shot and 5-shot": the runs' shots
            made.append(b.add(_value_check(name, found[0] if len(found) == 1 else Sweep(found))))
    body = _blank_spans(body, [m.span() for _, m in episodes])
    for regex, name in ((_N_WAY_CLASSIFIER, "num_classes"), (_N_STEP_RETURNS, "n_step"), (_TOKEN_CHUNKS, "chunk_size"),
                        (_TOKEN_OVERLAP, "chunk_overlap")):  # "a 100-way classifier", "3-step returns", "512-token chunks"
        read(regex, lambda m, name=name: [(name, int(m.group("n")))])
    read(_TOP_RETRIEVED, lambda m: [("top_k", int(m.group("n")))], lambda m: m.span("n"))
    read(_EPOCHS_OF_MINIBATCHES, lambda m: [("update_epochs", int(m.group("epochs"))), ("num_minibatches", int(m.group("minibatches")))])
    read(_STACKED_FRAMES, lambda m: [("frame_stack", int(m.group("n") or m.group("n2")))])
    read(_TOKEN_BUDGET, lambda m: [("train_tokens", _token_count(m))], lambda m: m.span("n"),
         keep=lambda m: isinstance(v := _token_count(m), (int, float)) and v >= 1e8)
    read(_TOKEN_BATCH, lambda m: [("batch_tokens", numbers.parse_value(m.group("n") or m.group("n2")))],
         keep=lambda m: isinstance(numbers.parse_value(m.group("n") or m.group("n2")), int))
    read(_BATCHES_OF, lambda m: [("global_batch_size" if m.group("global") else "minibatch_size", int(m.group("n") or m.group("n2")))],
         lambda m: (m.start(), m.end("n")) if m.group("n") else m.span())  # "... of 512 sequences of 1,024 tokens": both read
    read(_QUANTIZED_BITS, lambda m: [("quantization_bits", int(m.group("n")))])
    read(_PAREN_WARMUP, _paren_warmup)
    if terms.name_in_context("image_size", "", b.claim) == "image_size":  # an image claim: "ImageNet 256"
        dataset_ends = {h.end for h in terms.find_protocol_terms(body) if h.category == "dataset"}
        read(_DATASET_RESOLUTION, lambda m: [("image_size", int(m.group("n")))], lambda m: (m.start("n"), m.end()),
             keep=lambda m: m.start("gap") in dataset_ends)
    read(_TUPLE_AFTER_NAME, _tuple_setting, lambda m: m.span("vals"))
    read(_SAMPLE_SPAN, lambda m: [(_SAMPLE_SPAN_NAMES[m.group("what").lower()], int(m.group("n")))])
    read(_LAYER_WIDTH, lambda m: [(_width_name(body, m.start()), int(m.group("n") or m.group("n2")))],
         lambda m: m.span("n") if m.group("n") else m.span("n2"))
    read(_HZ_RATE, lambda m: [("sample_rate" if m.group("what").lower().startswith("sampl") else "frame_rate",
                               _hertz(m.group("n"), m.group("unit")))])
    read(_TWO_ROLE_LR, _two_role_lrs)
    per_device = (bool(_PER_DEVICE.search(body)) and bool(re.search(r"\bbatch", b.claim, re.IGNORECASE))) or bool(_MICRO_BATCH.search(b.claim))
    read(_PER_DEVICE, lambda m: [("minibatch_size", int(m.group("n")))], lambda m: m.span("n"), keep=lambda m: per_device)
    read(_EFFECTIVE_BATCH, lambda m: [("global_batch_size", numbers.parse_value(m.group("n")))], keep=lambda m: per_device)
    read(_LR_PEAK, lambda m: [("learning_rate", numbers.parse_number(m.group("n")))], lambda m: m.span("n"))
    read(_CROP_SIZE, lambda m: [("image_size", [int(m.group("a") or m.group("a2")), int(m.group("b") or m.group("b2"))])],
         lambda m: m.span() if m.group("a") else (m.start("a2"), m.end("b2")))  # "random crops" stays for the augmentation
    read(_SWITCHED_OFF, _switched_off)
    read(_OPTIMIZER_AT, lambda m: [("learning_rate", rate)] if (rate := numbers.parse_number(m.group("n").replace("−", "-"))) is not None
         and 0 < rate < 1 else [], lambda m: m.span("n"))
    read(_WARMUP_SHARE, lambda m: [("warmup_ratio", numbers.to_number(float(m.group("n")) / 100))])
    read(_TOKEN_SEQUENCES, lambda m: [("max_seq_length", numbers.parse_value(m.group("n").replace(",", "")))])
    read(_NO_IMPROVEMENT, lambda m: [("early_stopping_rounds" if "round" in m.group(0).lower() else "patience",
                                      int(m.group("n") or m.group("n2")))])  # boosting counts rounds
    read(_STEPS_PER, lambda m: [("max_episode_steps" if m.group("per").lower().startswith("episode") else "steps_per_epoch",
                                 numbers.parse_value(m.group("n")))])
    read(_EPOCHS_OF_ITERATIONS, lambda m: [("epochs", int(m.group("epochs"))), ("steps_per_epoch", numbers.parse_value(m.group("steps")))])
    read(_LR_ARROW, lambda m: _lr_arrow(m, body))
    read(_CLI_FLAG, _cli_flag, lambda m: (m.start(), m.end("val") if m.group("val") else m.end("flag")))
    def warm_span(m: re.Match) -> tuple[int, int]:
        return (m.start("n"), m.end("unit")) if m.group("n") else m.span("n2")

    def warmed(m: re.Match, other: bool) -> bool:
        """A warm-up length in whole units, of the learning rate or (``other``) of another quantity."""
        counted = isinstance(numbers.parse_value(m.group("n") or m.group("n2")), int)
        return counted and bool(_OTHER_WARMED.search(_warmup_context(m, body))) == other

    read(_WARMUP_OVER, _warmup_over, warm_span, keep=lambda m: warmed(m, other=False))
    read(_WARMUP_OVER, lambda m: _other_warmup(m, body), warm_span, keep=lambda m: warmed(m, other=True))
    read(_KEYWORD_CALL, lambda m: _call_keywords(m, b), lambda m: m.span("args"),
         keep=lambda m: "=" in m.group("args") and m.group("callee").split(".")[-1][:1].isupper())
    read(_FLOW_MAPPING, _flow_mapping)  # a mapping outside any call (a call's own dicts are its keywords')
    read(_DOTTED_CONFIG_KEY, _dotted_config_key)  # "SOLVER.BASE_LR 0.0001", "MODEL.ONE_FORMER.DEC_LAYERS 10"
    read(_SINGLE_RUN, lambda m: [("num_seeds", 1)])  # "a single run", "trained once per setting": one seed
    read(_REPLAY_SIZE, lambda m: [("replay_buffer_size", numbers.parse_value(m.group("n")))], lambda m: m.span("n"),
         keep=lambda m: isinstance(numbers.parse_value(m.group("n")), int))
    read(_SIZE_IN_PIXELS, lambda m: _size_in_pixels(m, body))  # "crops of 224² px", "448 × 448 pixels"
    read(_PIXEL_PATCHES, lambda m: [("patch_size", int(m.group("n")))])  # "16 px patches": no count of patches
    read(_PIXEL_SIZE, lambda m: [("image_size", int(m.group("n")))])
    read(_VOCAB_AFTER, lambda m: [("vocab_size", numbers.parse_value(m.group("n")))], lambda m: m.span("n"),
         keep=lambda m: isinstance(numbers.parse_value(m.group("n")), int))
    read(_CLIPPED_AT_NORM, lambda m: [("max_grad_norm", numbers.parse_number(m.group("n")))], lambda m: (m.start("clip"), m.end()))
    read(_WARMUP_OF_WHICH, lambda m: [(terms.unit_name(m.group("unit").lower().rstrip("s") + "s") or "max_steps", int(m.group("total")),
                                       f"{m.group('total')} {m.group('unit')}"),  # its own words: the run's length, not the warm-up's
                                      (_warmup_name(m.group("unit")), int(m.group("n")))])
    read(_EPSILON_ANNEAL, lambda m: [("epsilon_start", numbers.parse_number(m.group("start"))),
                                     ("exploration_epsilon", numbers.parse_number(m.group("end")))]
         + ([("epsilon_anneal_steps", numbers.parse_value(m.group("steps")))] if m.group("steps") else []))
    read(_STEP_DECAY, lambda m: [("lr_decay_rate", numbers.parse_number(m.group("rate")))] + (
        [("lr_step_size", every)] if isinstance(every := numbers.parse_value(m.group("every") or ""), (int, float))
        and not isinstance(every, bool) else []))
    if _LR_SCHEDULE_WORDS.search(b.claim):  # the factor only: "at epochs 60, 120" stays for the milestones
        read(_DECAY_FACTOR, _decay_factor, _decay_factor_span)
        read(_DIVIDED_SIGN, _divided_sign)
    return made, body


_SPECTRAL_WORDS = re.compile(r"\b(?:mel|filterbank|filter bank|spectrogram|band|frequenc\w*)", re.IGNORECASE)


def _hertz(value: str, unit: str) -> int | float:
    return numbers.to_number(float(value) * (1000 if unit.lower() == "khz" else 1))


# "5-way 1-shot": a few-shot episode's classes and examples per class
_N_WAY = re.compile(r"(?<![\w.])(?P<n>\d{1,4})-way\b(?!\s+(?:classifier|classification|softmax|head|output|linear))", re.IGNORECASE)
_K_SHOT = re.compile(r"(?<![\w.])(?P<n>\d{1,4})-shot\b(?!\s+(?:accuracy|performance|results?|prompt))", re.IGNORECASE)
# "1-shot and 5-shot accuracy": the second shot of a list is a run's too, though "accuracy" follows it
_K_SHOT_LISTED = re.compile(r"(?:(?<=-shot and )|(?<=-shot or )|(?<=-shot, ))(?P<n>\d{1,4})-shot\b", re.IGNORECASE)
_N_WAY_CLASSIFIER = re.compile(r"(?<![\w.])(?P<n>\d{1,5})-way\s+(?:classifier|classification|softmax|head|output|linear)\b", re.IGNORECASE)
_N_STEP_RETURNS = re.compile(r"(?<![\w.])(?P<n>\d{1,3})-step\s+(?:returns?|bootstrap\w*|td\s+targets?|targets?)\b", re.IGNORECASE)
# "512-token chunks with a 64-token overlap": a retrieval corpus' chunking
_TOKEN_CHUNKS = re.compile(r"(?<![\w.])(?P<n>\d{2,5})[- ](?:token|word)\s+(?:chunks?|passages?|segments?)\b", re.IGNORECASE)
_TOKEN_OVERLAP = re.compile(r"(?<![\w.])(?P<n>\d{1,4})[- ](?:token|word)\s+overlap\b", re.IGNORECASE)
# "top-10 retrieval", "the top-5 passages": how many are retrieved (never "top-1 accuracy", a metric)
_TOP_RETRIEVED = re.compile(
    r"\btop-(?P<n>\d{1,4})\s+(?:retriev\w*|passages?|documents?|docs|chunks?|candidates?|neighbou?rs|items?|results?)\b"
    r"(?!\s+(?:accuracy|recall|precision|hit|hits|success|ndcg|mrr)\b)",  # "top-100 retrieval accuracy": a metric
    re.IGNORECASE,
)
_EPOCHS_OF_MINIBATCHES = re.compile(r"(?<![\w.])(?P<epochs>\d{1,3})\s+(?:update\s+)?epochs\s+of\s+(?P<minibatches>\d{1,4})\s+mini-?batches\b", re.IGNORECASE)
# "8 GPUs × 4 per device": the per-device batch (read only in a claim about batches); with it, an "effective batch size
# of 128" is the global batch, not the minibatch the code's batch_size holds
_PER_DEVICE = re.compile(r"(?<![\w.\-–])(?<!\d to )(?P<n>\d{1,5})\s+(?:samples?\s+|sequences?\s+|examples?\s+|images?\s+)?per\s+(?:device|gpu|core|tpu|accelerator)\b", re.IGNORECASE)
_EFFECTIVE_BATCH = re.compile(
    r"(?:\b(?:effective|global|total)\s+batch(?:\s+size)?\s*(?:of|=|:|is)?|\(\s*eff(?:ective)?\.?)\s*(?P<n>\d[\d,]*[kK]?)(?![\w.])",
    re.IGNORECASE,
)  # "effective batch size of 128", "micro-bs 2 × grad-accum 16 (eff. 32)"
_MICRO_BATCH = re.compile(r"\bmicro[- ]?(?:bs|batch)\b|\bper[- ](?:device|gpu)[- _]?(?:train[- _])?batch", re.IGNORECASE)
# "a cosine schedule peaking at 1e-5": the schedule's peak, the learning rate
_LR_PEAK = re.compile(
    r"\b(?:schedule|scheduler|lr|learning\s+rate)\s+(?:that\s+)?(?:peak(?:ing|s)?|peaked)\s+at\s+(?P<n>\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\w.])",
    re.IGNORECASE,
)
# "6+6 layers" of a sequence-to-sequence model: the encoder's and the decoder's
_ENCODER_DECODER_LAYERS = re.compile(r"(?<![\w.+])(?P<enc>\d{1,3})\s*\+\s*(?P<dec>\d{1,3})\s+(?:transformer\s+)?layers\b", re.IGNORECASE)
_SEQ2SEQ_WORDS = re.compile(r"\b(?:encoder|decoder|enc|dec|seq2seq|sequence-to-sequence|translation|wmt\d*|bart|t5|mt|en-de|en-fr)\b",
                            re.IGNORECASE)


def _encoder_decoder_layers(m: re.Match) -> list[ValueCheck]:
    return [ValueCheck(name="num_layers", names=["num_encoder_layers", "encoder_layers"], expect=int(m.group("enc"))),
            ValueCheck(name="num_decoder_layers", names=terms.role_aliases("num_decoder_layers") or None, expect=int(m.group("dec")))]


# "no label smoothing", "without weight decay", "dropout disabled": a regulariser that is off is one whose rate is 0.
# Only those whose absence the value check decides: the optimizers' and CrossEntropyLoss's library defaults, and the
# lexicon's `off_when_absent` settings (a repo with no dropout at all binds no `dropout` and calls no nn.Dropout:
# off, as claimed); any other "no X" would be reported missing on a faithful repo
_SWITCHED_OFF = re.compile(
    r"(?:^|(?<=\s))(?:no|without|w/o)\s+(?P<what>[A-Za-z][A-Za-z\s\-/]{2,60}?)\s*$"
    r"|(?:^\s*|\band\s+|\bwith\s+)(?P<what2>[A-Za-z][A-Za-z\-]*(?:\s+[A-Za-z][A-Za-z\-]*){0,3}?)\s+(?:is\s+|are\s+)?"
    r"(?:disabled|switched\s+off|turned\s+off|not\s+used)\s*$",
    re.IGNORECASE,
)  # "no dropout", "lr 4e-4 without LR warm-up", "... and dropout disabled", "no mixup / cutmix"
_LR_PREFIX = re.compile(r"^(?:lr|learning[\s\-]rate)\s+(?=warm)", re.IGNORECASE)  # "without LR warm-up"


def _switched_off(m: re.Match) -> list[tuple[str, Any] | ValueCheck]:
    what = (m.group("what") or m.group("what2")).strip()
    parts = re.split(r"\s*(?:/|\bor\b|\bnor\b|\band\b)\s*(?:(?:no|without|w/o)\s+)?", what, flags=re.IGNORECASE)
    out = [_off_setting(p) for p in parts if p]
    return [c for found in out for c in found] if all(out) else []  # every part named, or the fragment stays whole


def _off_setting(what: str) -> list[tuple[str, Any] | ValueCheck]:
    what = _LR_PREFIX.sub("", what.strip())
    hit = terms.find_phrase(what)
    if not hit or hit[1] != 0 or hit[2] < len(what.lower()) - 1:
        return []  # "no test-time augmentation": a phrase the lexicon does not name whole
    canonical = terms.lexicon_index().get(hit[0].lower(), hit[0])
    if canonical in _WARMUP_NAMES:  # "no warm-up": in whatever unit the code counts it
        return [ValueCheck(name=canonical, names=[n for n in _WARMUP_NAMES if n != canonical], expect=0)]
    return [(canonical, 0)] if canonical in terms.off_when_zero() else []


_WARMUP_NAMES = ("warmup_ratio", "warmup_epochs", "warmup_steps")


# "crop 512×1024", "crop of 512x512": the training crop's size (a "crop 256 residues" is its unit's count)
_CROP_SIZE = re.compile(
    r"\bcrop(?:\s+size)?\s*(?:of\s+)?(?P<a>\d{2,4})\s*[×x]\s*(?P<b>\d{2,4})(?![\d.×x])"
    r"|(?<![\w.×])(?P<a2>\d{2,4})\s*[×x]\s*(?P<b2>\d{2,4})\s+(?:(?:random|center|centre|training|train|image|square)\s+)?crops?\b",
    re.IGNORECASE,
)  # "crop 512×1024", "on 368×496 crops"
# "Adam at 1e-3", "SGD @ 0.1", "AdamW at $10^{-3}$": the learning rate written after the optimizer it drives
_OPTIMIZER_AT = re.compile(
    r"\b(?:adam\w*|sgd|rmsprop|adagrad|adadelta|lion|lamb|adafactor|adan|nadam|radam)\s+(?:optimi[sz]er\s+)?(?:at|@)\s+"
    r"(?P<n>\d+(?:\.\d+)?(?:[eE][-−+]?\d+)?)(?![\w.%×x])",
    re.IGNORECASE,
)
# "three stages of 160, 320 and 640 channels", "3, 4, 6 and 3 blocks per stage": one value per stage of the
# network, a list setting (code writes `channels=[160, 320, 640]`), not three settings of one width
_PART_NUMBER = r"\d{1,5}"
_PER_PART_LIST = re.compile(
    rf"(?<![\w.,])(?P<list>{_PART_NUMBER}(?:\s*,\s*{_PART_NUMBER})*\s*,?\s*and\s+{_PART_NUMBER})\s+"
    r"(?P<unit>channels|filters|feature\s+maps|features|blocks|layers|hidden\s+units|units|neurons)\b",
    re.IGNORECASE,
)
_PART_WORDS = re.compile(r"\b(?:stages?|levels?|scales?|resolutions?|branches|per\s+stage|respectively|successive|pyramid)\b", re.IGNORECASE)
_PER_PART_NAMES = {
    "channels": ["channels", "stage_channels", "widths"], "filters": ["channels", "stage_channels", "widths"],
    "feature maps": ["channels", "stage_channels", "widths"], "features": ["channels", "stage_channels", "widths"],
    "blocks": ["depths", "stage_depths", "num_blocks"], "layers": ["depths", "stage_depths", "num_blocks"],
    "hidden units": ["hidden_sizes", "hidden_dims"], "units": ["hidden_sizes", "hidden_dims"], "neurons": ["hidden_sizes", "hidden_dims"],
}  # fmt: skip


def _per_part_list(m: re.Match) -> list[ValueCheck]:
    """The list as one list setting, when the words around it say it is one value per stage, level or branch."""
    if not _PART_WORDS.search(m.string[max(0, m.start() - 60) : m.end() + 30]):
        return []
    names = _PER_PART_NAMES[re.sub(r"\s+", " ", m.group("unit").lower())]
    return [ValueCheck(name=names[0], names=names, expect=[int(v) for v in re.findall(r"\d+", m.group("list"))])]


# "warmup over the first 5% of steps": a warmup given as a share of the run
_WARMUP_SHARE = re.compile(
    r"\bwarm-?up\s+(?:over|for|during|of)\s+(?:the\s+first\s+)?(?P<n>\d+(?:\.\d+)?)\s*%\s+of\s+(?:the\s+)?(?:training\s+)?"
    r"(?:steps|training|iterations|updates|the\s+run)\b",
    re.IGNORECASE,
)
# "packed sequences of 4,096 tokens": the sequence length
_TOKEN_SEQUENCES = re.compile(r"\b(?:sequences?|contexts?|inputs?)\s+of\s+(?:up\s+to\s+|at\s+most\s+)?(?P<n>\d{1,3}(?:,\d{3})+|\d{2,6}|\d+[kK])\s+tokens\b", re.IGNORECASE)
# "style weight 1e4", "total-variation weight 1e-6", "mel-loss weight 45": a loss term's weight, named by the term
_LOSS_WEIGHT_BEFORE = re.compile(
    r"(?<![\w\-])(?P<words>(?:[A-Za-z][A-Za-z0-9]*[\s\-]+){0,2}[A-Za-z][A-Za-z0-9]*)[\s\-]+(?P<loss>loss[\s\-]+)?"
    r"(?P<kind>weight|weighting|coefficient|coef|cost)\s*(?:=|:|of|is)?\s*$",
)
_NOT_WEIGHTED = frozenset("initial init final new the each per default equal same its loss total".split())  # "initial weight 0.1"
# "lr 5e-4 for both actor and critic", "actor/critic learning rates 3e-4": one value, each part's own learning rate
_LR_NUMBER = r"(?P<n>\d+(?:\.\d+)?(?:[eE][-+−]?\d+)?)(?![\w.])"
_ROLE_PAIR = r"(?:actor|policy|generator|critic|value|discriminator|encoder|decoder|student|teacher)"
_TWO_ROLE_LR = re.compile(
    rf"\b(?:lr|learning\s+rate)\s*(?:of|=|:)?\s*{_LR_NUMBER}\s+for\s+(?:both\s+)?(?:the\s+)?(?P<a>{_ROLE_PAIR})\s+and\s+(?:the\s+)?(?P<b>{_ROLE_PAIR})\b"
    rf"|\b(?P<c>{_ROLE_PAIR})\s*(?:and|/|&)\s*(?P<d>{_ROLE_PAIR})\s+(?:lrs?|learning\s+rates?)\s*(?:of|=|:|are|both)?\s*{_LR_NUMBER.replace('(?P<n>', '(?P<n2>')}",
    re.IGNORECASE,
)


# "kernel (5, 2) and stride (2, 1)": a setting whose value is a tuple in parentheses, not a remark
_TUPLE_AFTER_NAME = re.compile(r"(?P<words>(?:[A-Za-z][\w\-]*\s+){0,2}[A-Za-z][\w\-]*)\s*(?:=|:)?\s*\(\s*(?P<vals>\d+(?:\.\d+)?(?:\s*,\s*\d+(?:\.\d+)?){1,3})\s*\)")
_TUPLE_SETTINGS = frozenset({"kernel_size", "stride", "padding", "dilation", "patch_size", "pool_size", "image_size",
                             "tubelet_size", "output_padding", "crop_scale"})  # crop_scale: RandomResizedCrop's (0.08, 1)


def _paren_warmup(m: re.Match) -> list[tuple[str, Any, str]]:
    """The run's length and its warmup, each read by its own words (the run's are not the warmup's)."""
    epochs = m.group("unit").lower().startswith("ep")
    return [("epochs" if epochs else "num_steps", numbers.parse_value(m.group("n")), m.group(0).split("(")[0]),
            ("warmup_epochs" if epochs else "warmup_steps", numbers.parse_value(m.group("w")), "warmup")]


def _tuple_setting(m: re.Match) -> list[tuple[str, Any]]:
    words = m.group("words")
    hit = terms.find_phrase(words)
    if not hit or hit[0] not in _TUPLE_SETTINGS or hit[2] < len(terms.normalise_phrase(terms.ascii_symbol(words))) - 1:
        return []
    values = [numbers.parse_number(v) for v in re.findall(r"\d+(?:\.\d+)?", m.group("vals"))]
    if hit[0] != "crop_scale" and not all(isinstance(v, int) for v in values):
        return []  # a size or a stride is whole numbers
    return [(hit[0], values)]


def _width_name(body: str, at: int) -> str:
    """hidden_size, or the part's own ("outcome heads of two 100-unit layers": head_hidden_size)."""
    clause = re.split(r"[,;]|\band\b", body[max(0, at - 40) : at])[-1]
    parts = [w.lower().rstrip("s") for w in re.findall(r"[A-Za-z]+", clause) if w.lower().rstrip("s") in _LAYER_PARTS]
    return f"{parts[-1]}_hidden_size" if parts else "hidden_size"


def _lr_arrow(m: re.Match, body: str) -> list[tuple[str, Any]]:
    """"peak lr 2e-4 -> 2e-5": the learning rate and its floor; "position lr 1.6e-4 → 1.6e-6": that part's own."""
    peak, floor = numbers.parse_number(m.group("peak")), numbers.parse_number(m.group("floor"))
    named = terms.find_phrase(body[max(0, m.start() - 30) : m.start()] + m.group(0)[: m.start("peak") - m.start()])
    part = named[0][: -len("_learning_rate")] if named and named[0].endswith("_learning_rate") and named[0] != "learning_rate" else ""
    if part and part in ("actor", "critic", "inner"):
        part = ""  # the lexicon's own actor/critic lrs have no floor of their own; read as the run's schedule
    if not part:
        return [("learning_rate", peak), ("min_learning_rate", floor)]
    return [(f"{part}_learning_rate", peak), (f"{part}_min_learning_rate", floor)]


def _two_role_lrs(m: re.Match) -> list[tuple[str, Any]]:
    value = numbers.parse_number(m.group("n") or m.group("n2"))
    roles = (m.group("a") or m.group("c"), m.group("b") or m.group("d"))
    return [(terms.qualified_name(role.lower(), "learning_rate", "learning_rate"), value) for role in roles]


# "a 400-sample Hann window, a 100-sample hop and a 512-point FFT": an STFT's window, hop and size
_SAMPLE_SPAN = re.compile(r"(?<![\w.])(?P<n>\d{2,6})-(?:sample|point|bin)\s+(?:[A-Za-z]+\s+)?(?P<what>window|hop|fft|stft)\b", re.IGNORECASE)
_SAMPLE_SPAN_NAMES = {"window": "win_length", "hop": "hop_length", "fft": "n_fft", "stft": "n_fft"}
# "hidden layers of 200 ELU units", "two 100-unit layers": the layers' width, never their number
_LAYER_WIDTH = re.compile(
    r"\blayers?\s+of\s+(?P<n>\d{1,5})\s+(?:[A-Za-z][\w-]*\s+)?(?:hidden\s+)?(?:units|neurons|channels|nodes)\b"
    r"|(?<![\w.])(?P<n2>\d{1,5})-(?:unit|neuron|dim(?:ensional)?|wide)\s+(?:hidden\s+)?(?:[A-Za-z]+\s+)?layers?\b",
    re.IGNORECASE,
)
# "a 50 Hz frame rate (32 kHz audio)": the rate the words after it name, not the audio's sampling rate
_HZ_RATE = re.compile(r"(?<![\w.])(?P<n>\d+(?:\.\d+)?)\s*(?P<unit>k?Hz)\s+(?P<what>frame|token|sampling|sample)\s+rate\b", re.IGNORECASE)
# "ImageNet 256", "ImageNet 64×64": an image benchmark at a resolution (the size a generative model trains at)
_DATASET_RESOLUTION = re.compile(r"(?P<gap>\s+)(?:at\s+)?(?P<n>28|32|64|96|128|224|256|384|512|768|1024)(?:\s*[×x]\s*(?P=n))?(?![\w.×x])")
# "300 ep (20 warmup)", "100k steps (2k warmup)": the warmup in the run's own unit
_PAREN_WARMUP = re.compile(
    r"(?<![\w.])(?P<n>\d+(?:\.\d+)?[kKM]?)\s*(?P<unit>ep|epochs?|steps?|iters?|iterations?)\s*\(\s*(?P<w>\d+(?:\.\d+)?[kK]?)\s+warm-?up\s*\)",
    re.IGNORECASE,
)
# "4-bit weights", "8-bit quantisation": the bit width weights are quantised to (not "8-bit Adam", an optimizer)
_QUANTIZED_BITS = re.compile(r"(?<![\w.])(?P<n>[1-8])-bit\s+(?:weights?|quanti[sz]\w*|gptq|awq|nf4|integer\s+weights)\b", re.IGNORECASE)
# "observations stack the last 32 frames", "stacking 4 frames": the frame stack, not a clip length
_STACKED_FRAMES = re.compile(
    r"\bstack(?:s|ed|ing)?\s+(?:of\s+)?(?:the\s+)?(?:last\s+|previous\s+|most\s+recent\s+)?(?P<n>\d{1,3})\s+(?:\w+\s+)?frames\b"
    r"|(?<![\w.])(?P<n2>\d{1,3})\s+(?:consecutive\s+)?frames\s+(?:are\s+)?stacked\b",
    re.IGNORECASE,
)
# "trained on 1.5T tokens", "8B tokens of Dolma": a token budget (a count of 10^8 tokens or more is no length)
_TOKEN_BUDGET = re.compile(
    r"(?<![\w.])(?P<n>\d+(?:\.\d+)?\s?[MBT]|\d{1,3}(?:,\d{3}){2,})\s+(?:training\s+|pre-?training\s+)?tokens\b"
    r"(?!\s+(?:per|each|a)\b)"
)


def _token_count(m: re.Match) -> Any:
    """The budget's number as the number grammar reads it before "tokens" ("1.5T" is trillions there)."""
    found = numbers.find_numbers(re.sub(r"(?<=\d)\s(?=[MBT]\b)", "", m.group(0)))  # "1.5 T tokens" too
    return found[0].value if found and found[0].start == 0 else None


# "4096 tokens per batch", "batches of 4,096 tokens": the batch counted in tokens
_TOKEN_BATCH = re.compile(
    r"(?<![\w.])(?P<n>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?[kKM]?)\s+tokens\s+(?:per|each|a)\s+(?:mini-?)?batch\b"
    r"|\b(?:mini-?)?batch(?:es)?\s+of\s+(?P<n2>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?[kKM]?)\s+tokens\b",
    re.IGNORECASE,
)
# "batches of 32 episodes": the minibatch counted in what it holds (never a meta-batch of tasks); "a global batch
# of 512 sequences" is the batch summed over devices and accumulation steps
_BATCHES_OF = re.compile(
    r"(?<![\w-])(?<!meta )(?<!meta-)(?P<global>global\s+)?(?:mini-?)?batch(?:es)?\s+of\s+(?P<n>\d{1,6})\s+"
    r"(?:episodes|sequences|seqs|trajectories|samples|images|examples|graphs|molecules|sentences|prompts|transitions|clips)\b"
    r"|(?<![\w-])mini-?batch(?:es)?\s+of\s+(?:size\s+)?(?P<n2>\d{1,6})(?![\w.])(?!\s+(?:[a-z]+\s+)?(?:each|per)\b)",
    re.IGNORECASE,
)
# "stopping after 16 epochs without validation improvement", "no improvement for 10 epochs": early stopping's patience
_NO_IMPROVEMENT = re.compile(
    r"\bafter\s+(?P<n>\d{1,4})\s+(?:epochs?|evaluations?|rounds?|checks?)\s+(?:without|with\s+no)\s+(?:an?\s+)?(?:[\w-]+\s+){0,2}(?:improvement|gain|increase|decrease)\b"
    r"|\b(?:no\s+(?:\w+\s+){0,2}improvement|plateaus?|plateaued|stagnates?|(?:does|did|has|have)\s+not\s+improved?|"
    r"(?:hasn't|haven't|didn't|doesn't)\s+improved?|fails?\s+to\s+improve)\s+(?:for|in|over)\s+"
    r"(?P<n2>\d{1,4})\s+(?:consecutive\s+)?(?:epochs?|evaluations?|rounds?)\b",
    re.IGNORECASE,
)
# "25 steps per episode", "250 iterations per epoch": an episode's length, an epoch's size
_STEPS_PER = re.compile(
    r"(?<![\w.])(?P<n>\d{1,6}[kK]?)\s+(?:(?:environment|env|time|optimi[sz]ation|training|gradient)\s+)?"
    r"(?:steps|timesteps|iterations|iters|batches|mini-?batches|updates)\s+(?:per|each|an?)\s+(?P<per>episodes?|epochs?)\b",
    re.IGNORECASE,
)
# "1000 epochs of 250 iterations each": an epoch defined as a fixed number of steps (nnU-Net), not a pass over the data
_EPOCHS_OF_ITERATIONS = re.compile(
    r"(?<![\w.])(?P<epochs>\d{1,5})\s+epochs\s+of\s+(?P<steps>\d{1,3}(?:,\d{3})+|\d{1,6}[kK]?)\s+(?:iterations|iters|steps|batches|mini-?batches|updates)(?:\s+each)?\b",
    re.IGNORECASE,
)
_NUMBER_TEXT = r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
# "run_qa.py --doc_stride 128 --fp16 --seed 42": launch flags, each a setting under its own name (a bare flag is on)
_CLI_FLAG = re.compile(
    r"(?<![\w-])--(?P<flag>[a-z][a-z0-9_\-]*[a-z0-9])(?:(?:\s+|=)(?P<val>[-+]?\.?\d[\d.eE\-+]*(?![\w/.-])|[A-Za-z][\w.\-]*(?![\w/])"
    r"|(?!--)[^\s,;()]*/[^\s,;()]*))?"  # a path or a hub id ("data/cocotalk.json", "stabilityai/sdxl"): no setting
    r"(?=\s|$|[,;)])"
)
_FLAG_NOT_SETTINGS = re.compile(r"path|dir|file|output|name_or_path|config|project|run_name|hub|token|cache|logging_dir|report_to")


def _cli_flag(m: re.Match) -> list[tuple[ValueCheck, str]]:
    flag = m.group("flag").replace("-", "_")
    if _FLAG_NOT_SETTINGS.search(flag):
        return []  # where files go, which run it is: no setting of the method
    raw = m.group("val")
    if raw is not None and "/" in raw:
        return []  # --input_json data/cocotalk.json, --pretrained_teacher_model stabilityai/...: which file or model
    value: Any = True if raw is None else numbers.parse_value(raw)
    if value is None:
        value = raw  # --lr_scheduler_type cosine: a word
    if raw is not None and raw.startswith("-") and not isinstance(value, (int, float)):
        return []
    # read by its own words: "--batch_size 10" beside "--language_eval 1" is the training batch, not an eval batch
    return [(_code_named(flag, value), m.group(0))]


def _code_named(key: str, value: Any) -> ValueCheck:
    """A value under the name code gives it (a flag, a keyword): the lexicon's canonical name when the key is one of
    its spellings (``num_train_epochs`` is ``epochs``), the key itself kept as a spelling."""
    name = terms.lexicon_index().get(key.lower()) or key
    return ValueCheck(name=name, names=[key] if name != key else None, **_expectation(value))


# "rises linearly to 3.5e-4 over 10 epochs", "a linear warm-up from 0.1× over 4,800 iterations": the warm-up's length
_WARMUP_OVER = re.compile(
    r"\b(?:warm-?up|warmed\s+up|ris(?:es|e|ing)\s+linearly|ramp(?:s|ing)?\s+(?:up\s+)?linearly|increas(?:ed|es|ing)\s+linearly|linearly\s+increas\w*|linearly\s+ris\w*)"
    r"(?:(?!\b(?:then|decay\w*|followed|after|anneal\w*)\b)[^,;:]){0,40}?\bover\s+(?:the\s+first\s+)?(?P<n>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?[kK]?)"
    r"(?:\s+of\s+(?:the\s+)?(?P<total>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?[kKM]?))?\s+(?P<unit>epochs?|steps?|iterations?|updates?)\b"
    r"|(?<![\w.])(?P<n2>\d+)\s+warm-?up\s+(?P<unit2>epoch)\b",
    re.IGNORECASE,
)


# "the teacher temperature is warmed up from 0.04 to 0.07 over 30 epochs", "KL weight annealed ...": another
# quantity's warm-up, not the learning rate's
_OTHER_WARMED = re.compile(r"\b(?:temperature|temp|momentum|weight|coefficient|coeff|beta|kl|penalty|lambda|noise|ratio|mask|τ|β|λ)\b",
                           re.IGNORECASE)


def _warmup_context(m: re.Match, body: str) -> str:
    """A warm-up statement with the words before it, which say what is warmed up."""
    return body[max(0, m.start() - 60) : m.start()] + m.group(0)


def _other_warmup(m: re.Match, body: str) -> list[tuple[ValueCheck, str]]:
    """"teacher temperature warmed up from 0.04 to 0.07 over 30 epochs": the length of that quantity's warm-up
    (teacher_temperature_warmup_epochs), not the run's epochs nor the learning rate's warm-up; named from the
    claim's words, so undecided where the code calls it otherwise."""
    before = _warmup_context(m, body)
    word = [w.group(0).lower() for w in _OTHER_WARMED.finditer(before)][-1]
    word = {"τ": "tau", "β": "beta", "λ": "lambda", "temp": "temperature", "coeff": "coefficient"}.get(word, word)
    role = re.search(rf"\b([a-z]+)\s+{re.escape(word)}\b", before.lower())
    prefix = f"{role.group(1)}_" if role and role.group(1) in terms.role_qualifiers() else ""
    unit = m.group("unit") or m.group("unit2")
    n = m.group("n") or m.group("n2")
    length = _warmup_name(unit).removeprefix("warmup_")  # epochs or steps
    short = {"temperature": "temp", "coefficient": "coef"}.get(word, word)
    # DINO writes warmup_teacher_temp_epochs: the spellings code uses, the claim's words first
    spellings = [f"warmup_{prefix}{word}_{length}", f"warmup_{prefix}{short}_{length}", f"{prefix}{short}_warmup_{length}"]
    check = ValueCheck(name=f"{prefix}{word}_warmup_{length}", names=list(dict.fromkeys(spellings)), expect=numbers.parse_value(n))
    return [(check, f"{n} {unit}")]


def _warmup_over(m: re.Match) -> list[tuple[str, Any]]:
    unit = m.group("unit") or m.group("unit2")
    warmup = [(_warmup_name(unit), numbers.parse_value(m.group("n") or m.group("n2")))]
    if m.group("total"):  # "warmed up over the first 1,000 of 100K steps": the run's length too
        run = "epochs" if unit.lower().startswith("epoch") else "num_steps"  # its own words: not the warm-up's
        warmup.append((run, numbers.parse_value(m.group("total")), f"{m.group('total')} {unit}"))
    return warmup


def _warmup_name(unit: str) -> str:
    """"epochs" -> warmup_epochs; steps, iterations and updates -> warmup_steps."""
    return "warmup_epochs" if unit.lower().startswith("epoch") else "warmup_steps"


# "PySRRegressor(niterations=100, maxsize=25, turbo=True)", "Trainer(max_epochs=10, precision=16)": a call written
# out, its keyword arguments the settings (read by Python's own parser, never run); only a class's or a config's
# (CamelCase): the keywords of an operation (`softmax(S, dim=1)`, `F.interpolate(mode="bilinear")`) are its arguments
# (not math: "Q(x, t=0) = (Q_L, Q_R)" applies a one-letter function on the left of an equation)
_KEYWORD_CALL = re.compile(r"(?<![\w.])(?P<callee>[A-Za-z_][\w.]{2,})\((?P<args>(?:[^()]|\([^()]*\))*)\)(?!\s*=(?!=))")


# a yacs / Detectron2 config override, an upper-case dotted key and its value ("SOLVER.MAX_ITER 100000")
_DOTTED_CONFIG_KEY = re.compile(
    r"(?<![\w.])(?:[A-Z][A-Z0-9_]*\.)+(?P<key>[A-Z][A-Z0-9_]*)\s*[=:]?\s+(?P<val>[-+]?\.?\d[\d.eE\-+]*|True|False|\[[^\[\]]*\]|\([^()]*\))(?![\w.])"
)


def _dotted_config_key(m: re.Match) -> list[ValueCheck]:
    """The override's leaf key is the setting's name as the config spells it (DEC_LAYERS -> dec_layers); the
    lexicon's canonical name when it is one of its spellings (BASE_LR is the learning rate)."""
    value = _setting_value(numbers.parse_value(m.group("val")))  # 10, 1e-4, True, (640, 672)
    return [] if value is None else [_code_named(m.group("key").lower(), value)]


_SINGLE_RUN = re.compile(
    r"\b(?:a\s+)?single\s+(?:[a-z]+\s+)?(?:run|seed)\b(?!-)|\b(?:1|one)\s+(?:training\s+)?(?:run|seed)\s+(?:per|for|each)\b"
    r"|\btrained\s+once\b|\bonce\s+per\s+(?:setting|config\w*|model|task)\b",
    re.IGNORECASE,
)


def _setting_value(value: Any) -> Any:
    """The value a setting holds (a number, a word, a switch, or a flat list of them; a tuple as a list), or None
    for anything else (a nested mapping, a set, None)."""
    value = list(value) if isinstance(value, tuple) else value
    if value is None or isinstance(value, (dict, set, complex, bytes)):
        return None
    return value if not isinstance(value, list) or all(isinstance(v, (int, float, str, bool)) for v in value) else None


# "{numTopics: 50, hiddenSizes: [100, 100], learnPriors: true}", "{'lr': 1e-3, 'batch_size': 64}": a config written
# as a JSON / YAML flow mapping or a Python dict, two or more `key: value` items
_FLOW_KEY = r"\s*['\"]?[A-Za-z_]\w*['\"]?\s*:\s*[^{}:,\[\]]*(?:\[[^\[\]{}]*\])?[^{}:,\[\]]*"
_FLOW_MAPPING = re.compile(rf"\{{(?P<items>{_FLOW_KEY}(?:,{_FLOW_KEY})+),?\s*\}}")


def _flow_mapping(m: re.Match) -> list[ValueCheck]:
    """One value check per literal item of a mapping the claim writes out, under its key (camelCase keys read as
    their snake_case spelling for the lexicon: numTopics is num_topics, batchSize the batch size)."""
    text = re.sub(r"([{,]\s*)([A-Za-z_]\w*)\s*:", r'\1"\2":', "{" + m.group("items") + "}")
    text = re.sub(r"(?<![\w'\"])(true|false|null)(?![\w'\"])", lambda w: {"true": "True", "false": "False", "null": "None"}[w.group(1)], text)
    try:
        mapping = ast.literal_eval(text)  # a literal, never run
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return []
    out: list[ValueCheck] = []
    for key, value in mapping.items() if isinstance(mapping, dict) else ():
        if (value := _setting_value(value)) is None:
            continue
        snake = terms.identifier(str(key)).lower()
        check = _code_named(snake, value)
        if snake != key:
            check = check.model_copy(update={"names": list(dict.fromkeys([*(check.names or []), str(key)]))})
        out.append(check)
    return out


def _call_keywords(m: re.Match, b: "_Builder") -> list[ValueCheck]:
    """One value check per keyword argument with a literal value, under the keyword (the lexicon's canonical name
    when the keyword is one of its spellings: ``max_epochs`` is ``epochs``); positional arguments name nothing."""
    try:
        tree = pysource.parse(f"_({m.group('args')})", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    out: list[ValueCheck] = []
    for keyword in getattr(tree, "keywords", []):
        if keyword.arg is None:
            continue
        try:
            value = ast.literal_eval(keyword.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict):  # "ssm_cfg={'d_state': 16, 'expand': 2}": a nested config's items
            out += [_code_named(k, v) for k, raw in value.items() if isinstance(k, str) and (v := _setting_value(raw)) is not None]
            continue
        if (value := _setting_value(value)) is None:
            continue
        symbol = terms.ascii_symbol(keyword.arg).lower()
        if symbol in terms.GREEK_NAMES:  # "Dirichlet(α = 0.5)": the distribution's α, dirichlet_alpha
            callee = re.sub(r"[^a-z0-9]+", "_", m.group("callee").split(".")[-1].lower()).strip("_")
            spellings = list(dict.fromkeys([symbol, keyword.arg]))
            out.append(ValueCheck(name=f"{callee}_{symbol}", names=spellings, **_expectation(value)))
            continue
        out.append(_code_named(keyword.arg, value))
    return out


# "replay 1e6", "replay of 1M transitions": the buffer's capacity, written as a large count ("replay ratio 20" is not)
_REPLAY_SIZE = re.compile(r"\breplay\s+(?:of\s+)?(?P<n>\d+(?:\.\d+)?(?:[eE]\+?\d+|[kKM])|\d{1,3}(?:,\d{3})+)(?![\w.])")
# "224px", "at 512 px": an image's (square) size; not a patch, a stride or a crop's own ("16 px patches")
_PIXEL_SIZE = re.compile(
    r"(?<![\w.×x*])(?<![×x*]\s)(?P<n>\d{2,4})\s?px\b(?!\s*(?:[×x*]|patch|patches|stride|crops?|windows?|kernels?|margin|border|offset|shift|radius|"
    r"tiles?|grid|cells?|blocks?|boxes|objects?))",
    re.IGNORECASE,
)
# "crops of 224² px", "$224^2$ px", "448 × 448 pixels": a size in pixels, squared or as a pair
_SIZE_IN_PIXELS = re.compile(r"(?<![\w.])(?P<a>\d{2,4})\s*(?:[×x*]\s*(?P<b>\d{2,4})|²|\^\{?2\}?)\s*\$?\s*(?:px|pixels?)\b", re.IGNORECASE)


_PIXEL_PATCHES = re.compile(r"(?<![\w.])(?P<n>\d{1,3})\s?(?:px|-?pixels?)\s+(?:square\s+)?patch(?:es)?\b", re.IGNORECASE)


def _size_in_pixels(m: re.Match, body: str) -> list[tuple[str, Any, str]]:
    """The image (or crop) size; a part's own when a role word names the crops ("8 local crops of 98² px")."""
    side = int(m.group("a"))
    size = [side, int(m.group("b")) if m.group("b") else side]
    role = re.search(r"\b([a-z]+)\s+crops?\b[^,;]{0,24}$", body[max(0, m.start() - 40) : m.start()].lower())
    name = terms.qualified_name(role.group(1), "image_size", "crop size") if role and role.group(1) in terms.role_qualifiers() else "image_size"
    return [(name, size, m.group(0))]


# "a 32k SentencePiece vocab", "a 50,257-token vocabulary": the vocabulary's size, the tokenizer's name between
_VOCAB_AFTER = re.compile(r"(?<![\w.])(?P<n>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?[kK]?)(?:-token)?\s+(?:[A-Za-z][\w\-]*\s+){0,2}vocab(?:ulary)?\b")
# "gradients clipped at a norm of 0.01", "grads clipped to norm 1.0": the clipping threshold
_CLIPPED_AT_NORM = re.compile(
    rf"\bgrad(?:ient)?s?\s+(?:are\s+)?(?P<clip>clipped)\s+(?:at|to)\s+(?:an?\s+)?(?:(?:global|max(?:imum)?|l2|total)\s+)?norm\s+(?:of\s+)?"
    rf"(?P<n>{_NUMBER_TEXT})(?![\w.])",
    re.IGNORECASE,
)
# "30 epochs of which 5 are warm-up": the run's length and its warm-up, in one unit
_WARMUP_OF_WHICH = re.compile(
    r"(?<![\w.])(?P<total>\d{1,7})\s+(?P<unit>epochs?|steps?|iterations?)\s*,?\s+of\s+which\s+(?:the\s+first\s+)?(?P<n>\d{1,7})\s+"
    r"(?:are|is)\s+(?:a\s+)?(?:linear\s+)?(?:lr\s+)?warm-?up\b",
    re.IGNORECASE,
)
# "ε-greedy 1.0 → 0.01 over 250k steps", "epsilon annealed linearly from 1 to 0.1 over the first 1M frames": an
# exploration schedule's ends and length (not the run's length)
_EPSILON_ANNEAL = re.compile(
    rf"(?:ε|\beps\b|\bepsilon\b)(?:[-\s]greedy)?(?:\s+(?:exploration|schedule))?(?:\s+(?:is\s+)?(?:linearly\s+)?(?:annealed|decayed|decays|anneals))?"
    rf"(?:\s+linearly)?\s*(?::\s*)?(?:from\s+)?(?P<start>{_NUMBER_TEXT})\s*(?:->|→|⟶|\bto\b)\s*(?P<end>{_NUMBER_TEXT})(?![\w.])"
    rf"(?:\s+(?:over|in|during|across)\s+(?:the\s+first\s+)?(?P<steps>\d+(?:\.\d+)?[kKM]?)\s*(?:env(?:ironment)?\s+)?(?:steps|frames|timesteps|iterations)\b)?",
    re.IGNORECASE,
)
_LR_ARROW = re.compile(
    rf"\b(?:(?:peak|base|initial|max)\s+)?(?:lr|learning\s+rate)\s*(?:=|:|of)?\s*(?P<peak>{_NUMBER_TEXT})\s*(?:->|→|⟶)\s*(?P<floor>{_NUMBER_TEXT})(?![\w.])",
    re.IGNORECASE,
)
# "lr 1e-4 decayed by 0.96 every 100K steps", "decayed by a factor 0.999875 every epoch": a step decay of the rate
_STEP_DECAY = re.compile(
    r"\b(?:decay(?:ed|s)?|multiplied|scaled)\s+by\s+(?:a\s+factor\s+(?:of\s+)?)?(?P<rate>0?\.\d+)\s+every\s+(?:(?P<every>\d+(?:\.\d+)?[kKM]?)\s+)?"
    r"(?:steps?|iterations?|iters?|epochs?|updates?)\b",
    re.IGNORECASE,
)

# "halved every 200k iters", "divided by 10 at epochs 100 and 150", "multiplied by 0.2 at epochs 60, 120 and 160",
# "halved whenever the validation loss has not improved": the factor of a step or plateau schedule (the steps it
# decays at are the milestones' reader's, the patience _NO_IMPROVEMENT's), with the interval where one is written
_DECAY_FACTOR = re.compile(
    r"\b(?:(?P<halved>halv(?:e|ed|es|ing))|divided\s+by\s+(?P<div>\d{1,4})(?![\d.])|"
    r"(?:decay(?:ed|s)?|multiplied|scaled|reduced|dropped)\s+by\s+(?:a\s+factor\s+(?:of\s+)?)?(?P<rate>0?\.\d+))"
    r"(?:\s+the\s+(?:learning\s+rate|lr))?"
    r"(?=\s+(?:every|at|whenever|when|if|on|after|upon)\b)"
    r"(?:\s+every\s+(?P<every>\d+(?:\.\d+)?[kKM]?)\s+(?:steps?|iterations?|iters?|epochs?|updates?)\b)?",
    re.IGNORECASE,
)
_LR_SCHEDULE_WORDS = re.compile(r"\b(?:lr|learning[\s-]rates?|η|eta|step\s+size|schedul\w*|decay\w*|milestones?|LR)\b", re.IGNORECASE)
_DIVIDED_SIGN = re.compile(  # "(÷10 @ ep 100, 150)": the factor, and the milestones after the @
    r"÷\s*(?P<div>\d{1,4})(?![\d.])(?:\s*@\s*(?:ep|epochs?|steps?|iters?|it)?\.?\s*(?P<at>\d+[kK]?(?:\s*,\s*\d+[kK]?)*))?"
)


def _decay_factor(m: re.Match) -> list[tuple[str, Any]]:
    if m.group("halved"):
        rate: Any = 0.5
    elif m.group("div"):
        rate = _divided_by(m.group("div"))
    else:
        rate = numbers.parse_number(m.group("rate"))
    if rate is None:
        return []
    every = numbers.parse_value(m.group("every") or "")
    return [("lr_decay_rate", rate)] + ([("lr_step_size", every)] if isinstance(every, (int, float)) and not isinstance(every, bool) else [])


def _divided_by(divisor: str) -> float | None:
    """The factor "divided by 10" multiplies by (0.1); none for a divisor below 2."""
    return numbers.to_number(1 / int(divisor)) if int(divisor) > 1 else None


def _divided_sign(m: re.Match) -> list[tuple[str, Any]]:
    rate = _divided_by(m.group("div"))
    if rate is None:
        return []
    points = [numbers.parse_value(v.strip()) for v in m.group("at").split(",")] if m.group("at") else []
    return [("lr_decay_rate", rate)] + ([("lr_milestones", points)] if points else [])


def _decay_factor_span(m: re.Match) -> tuple[int, int]:
    """What a decay factor's reading uses up: all of "halved every 200k iters"; of "divided by 10 at epochs 100
    and 150" only the 10, the points in time being the milestones'."""
    if m.group("every"):
        return m.span()
    number = "rate" if m.group("rate") else "div" if m.group("div") else None
    return m.span(number) if number else (m.start(), m.start())


# a lone Greek letter, then one space and a number: the terse lists' "γ 0.99" for "γ = 0.99"
_GREEK_THEN_NUMBER = re.compile(
    r"(?<![\w\\])([α-ωΑ-Ω]|(?:alpha|beta|gamma|delta|epsilon|lambda|tau|sigma|rho|eta|kappa|omega|zeta)(?=\s))\s"
    r"(?=[-−]?\d[\d.,]*(?:[eE][-−+]?\d+)?\s*(?:$|[,;)]|\(|and\b))",  # not "α 0.1 + cutmix": a sum is not one number
    re.IGNORECASE,
)


def _blank_spans(text: str, spans: list[tuple[int, int]]) -> str:
    for start, end in spans:
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def _split_tuple_assignments(body: str) -> str:
    """"(ε, δ) = (8, 1e-5)" as "ε = 8, δ = 1e-5", padded to the same length (offsets still hold)."""
    def split(m: re.Match) -> str:
        names = [n.strip() for n in m.group("names").split(",")]
        values = [re.sub(r"^10\^(-?\d+)$", r"1e\1", v.strip()) for v in m.group("values").split(",")]
        if len(names) != len(values):
            return m.group(0)
        written = ", ".join(f"{n} = {v}" for n, v in zip(names, values))
        return written.ljust(len(m.group(0))) if len(written) <= len(m.group(0)) else m.group(0)
    return _TUPLE_ASSIGNMENT.sub(split, body)


_SQUARE_POOL = re.compile(
    r"(?<![\w.×x])(?P<size>(?P<n>[1-9])\s*[x×]\s*(?P=n))\s+(?:max|average|avg|mean)[- ]?pool(?:ing)?\b",
    re.IGNORECASE,
)
_SQUARE_KERNEL = re.compile(
    r"(?<![\w.×x])(?P<size>(?P<n>[1-9])\s*[x×]\s*(?P=n)(?:\s*[x×]\s*(?P=n))?)\s+"
    r"(?:conv(?:olution(?:al)?)?s?|conv[123]d)\b(?:\s+(?:kernels?|filters?|layers?))?",
    re.IGNORECASE,
)
_COUNT_NOUNS = r"(?:samples|examples)"  # "50000/10000 images" of a dataset the repo downloads are its statistics
_SPLIT_COUNTS = re.compile(
    r"(?P<names>(?:train\w*|val\w*|test\w*|dev)(?:\s*/\s*(?:train\w*|val\w*|test\w*|dev)){1,2})\s*(?:[:=]|\bsplits?\b)?\s*"
    rf"(?P<nums>\d[\d,]*(?:\s*/\s*\d[\d,]*){{1,2}})\s+(?P<noun>{_COUNT_NOUNS})\b",
    re.IGNORECASE,
)


def _split_counts(body: str, b: "_Builder", label: str = "") -> tuple[list[int], str]:
    """"train/val/test: 8000/1000/1000 samples": how many examples each split has (num_train_samples, ...), read
    before the numbers are taken one by one (where the last would name all the samples); the span is blanked."""
    made: list[int] = []
    if label and re.fullmatch(r"(?:train\w*|val\w*|test\w*|dev)(?:\s*/\s*(?:train\w*|val\w*|test\w*|dev)){1,2}", label.strip(), re.IGNORECASE):
        whole = f"{label.strip()}: {body}"
        match = _SPLIT_COUNTS.match(whole)
        if match and match.end() > len(label.strip()) + 2:
            made, rest = _split_counts(whole, b)
            return made, rest[len(label.strip()) + 2 :]
    for match in _SPLIT_COUNTS.finditer(body):
        parts = [_split_part(w) for w in re.split(r"\s*/\s*", match.group("names"))]
        counts = [int(n.replace(",", "")) for n in re.split(r"\s*/\s*", match.group("nums"))]
        if len(parts) != len(counts) or len(set(parts)) != len(parts) or sum(counts) in (1, 100) or min(counts) < 2:
            continue  # a ratio (80/10/10) is the split-ratio rule's; a mismatched list is left
        made += [b.add(_value_check(f"num_{part}_samples", count)) for part, count in zip(parts, counts)]
        body = body[: match.start()] + " " * (match.end() - match.start()) + body[match.end() :]
    return made, body


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
        restated = re.fullmatch(r"\(?[\d.%\s/:]+split\)?", text[a:b].strip()) and any(
            list(r.values()) == list(ratio.values()) and r.keys() != ratio.keys() for r, _ in find_split_ratios(rest[:a] + " " * (b - a) + rest[b:])
        )
        if not restated:  # "train/val split 800/200 (80/20 split)": the remark restates the named split, not train/test
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


def find_baselines(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """Named baselines of the comparison lists in the text ("Compare against A, B and C", "Baselines: A, B",
    "PEFT baselines (A, B)"), and the spans that only list names (see protocol_claims)."""
    found = protocol_claims.find_baseline_lists(text)
    return found.names, found.spans


def _baseline_check(name: str, spellings: list[str]) -> ProtocolCheck:
    """A baseline check; its ``aliases`` are the code spellings of the name (OS-Ext -> os_ext), when it has any."""
    if re.fullmatch(r"[^.]*[A-Za-z0-9]\.", name):  # "... and Video Swin.": the sentence's full stop
        name, spellings = name[:-1], protocol_claims.code_spellings(name[:-1])
    return ProtocolCheck(rule="baseline", name=name, **({"aliases": spellings} if spellings else {}))


_NOTE = r"(?:\s*\([^(),]{1,40}\))?"  # "0.95 (baseline)": a remark on one item
_LABELLED_LIST = re.compile(
    r"(?:^|(?<=[.;:\n|]\s)|(?<=\n))(?P<label>[A-Za-z][\w\- ]{2,80}?):\s*"
    rf"(?P<nums>[-+]?\d+(?:\.\d+)?(?!,\d){_NOTE}(?:\s*,\s+[-+]?\d+(?:\.\d+)?(?!,\d){_NOTE}){{2,}})"
    r"(?:\s+[a-z]+)?(?=\s*(?:[.;\n|]|$))"
)
# "applies per-state downsample factors of 8, 4, 2, and 1 to ...": a named list in prose
_LIST_NUMBER = r"[-+]?(?:\d{1,3}(?:,\d{3})+(?![\d.])|\d+(?:\.\d+)?)"  # "1,024" is one number, not 1 and 24
_LIST_COMMA = r",(?!\d{3}(?![\d.]))"
_OF_LIST = re.compile(
    r"(?P<label>(?:[A-Za-z][\w\-]*\s+){0,3}[A-Za-z][\w\-]*)\s+of\s+"
    rf"(?P<nums>{_LIST_NUMBER}(?:\s*{_LIST_COMMA}\s*{_LIST_NUMBER})+\s*,?\s*(?:and|or)\s+{_LIST_NUMBER})(?![\d.%\w])"
)


def _labelled_lists(text: str, b: _Builder) -> list[tuple[str, list[Any], tuple[int, int]]]:
    """"Rank shift targets: 1, 2, 5, 10 positions": one list value, not one value per comma-separated item;
    a Sweep when the label or its sentence says the values are swept ("Ablation over depth: 2, 4, 8")."""
    out = []
    for match in _LABELLED_LIST.finditer(text):
        label = match.group("label").strip()
        name = _label_name(label, b.aliases)
        if _COUNT_LABEL.search(label):
            continue  # "Parameter counts: ...": measurements, not a setting
        items = re.sub(r"\([^()]*\)", " ", match.group("nums"))
        values = [numbers.parse_value(v) for v in re.split(r"\s*,\s*", items.strip())]
        if name and all(v is not None for v in values):
            sentence = re.split(r"[.;\n]\s", text[: match.start("label")])[-1]
            if _SWEEP_CUE.search(f"{sentence} {label}") and not _INTERVAL_CUE.search(label):
                values = Sweep(values)
            out.append((name, values, (match.start("label"), match.end())))
    for match in _OF_LIST.finditer(text):
        words = match.group("label").split()[-3:]
        while words and re.match(r"(?i)per\b|per-", words[0]):
            words = words[1:] if not words[0].lower() == "per" else words[2:]  # "per-state downsample factors"
        label = " ".join(words)
        name = _label_name(label, b.aliases)
        values = [numbers.parse_value(v) for v in re.split(rf"\s*(?:,\s*(?:and|or)\s+|{_LIST_COMMA}|\s(?:and|or)\s+)\s*", match.group("nums"))]
        if name and len(values) >= 3 and all(isinstance(v, (int, float)) for v in values) and not _COUNT_LABEL.search(label):
            out.append((name, values, (match.start("label"), match.end())))
    return out


# ----- one fragment ---------------------------------------------------------------------------------------
# a label's braces are closed ("$H \in \{96, 192\}$: ..."); "{numTopics: 50, ...}" opens a mapping, no label
_LABEL_RE = re.compile(r"^(?P<label>(?:[^=:≤≥<>{}]|\{[^{}]*\}){2,120}?):\s+(?P<body>\S.*)$", re.DOTALL)
_ASSIGN_RE = re.compile(r"^(?P<keys>[^=≤≥<>~]{1,160}?)\s*(?:=|∈|\bin\b(?=\s*[\[{(]))\s*(?P<val>[^=].*)$", re.DOTALL)
_RANGE_KEY_RE = re.compile(
    r"^(?P<keys>[A-Za-z][\w\s\-]{0,40}?)\s+(?:range|search|sweep|grid|values|in|over|of)?\s*(?P<val>[\[{][^\]}]*[\]}])\s*$"
)
# "noise scales [0.01, 0.001] times data_std on ...", "guidance weight grid [9, 10] x1e4 for 2D": a bracketed
# list right after a noun phrase, prose after it
_LIST_KEY_RE = re.compile(
    r"^(?P<keys>[A-Za-z][\w\-]*(?:\s+[A-Za-z][\w\-]*){0,3}?)\s+(?:range|search|sweep|grid|values|of|"
    # "learning rate searched over {...}", "dropout chosen from [...]": how the values are tried, not the name
    r"(?:searched|swept|tuned|varied|chosen|selected|ranging)(?:\s+(?:over|in|from|across|among|within))?|over|from|among|across)?\s*"
    r"(?P<val>[\[{][^\[\]{}]*[\]}](?:\s*[x×*·]\s*(?:\d+(?:\.\d+)?[eE][-+]?\d+|10\^?[-+]?\d+))?)(?=\s|$)(?P<rest>.*)$",
    re.DOTALL,
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
    out_of_range: list[str] = field(default_factory=list)  # values refused by the range of the name they were given
    milestone_total: int | None = None  # "... and 22 of 24": the epochs a milestone list ends with
    unchecked: list[str] = field(default_factory=list)  # qualifiers a check made from the fragment leaves out
    lead_name: str | None = None  # "Target risk threshold; ... = 0.4": the claim's first words name its value
    lead_value: Any = None  # ... and that value, stated last
    previous_name: str | None = None  # the name the previous fragment of the sentence gave its value
    window: str | None = None  # the words of the value being added, between its neighbours (see _named_numbers)
    baselines: frozenset[str] = frozenset()  # lower-cased names the claim compares against (not API calls)
    api_notes: list[str] = field(default_factory=list)  # why an API the fragment names is not a call check
    shape_symbols: dict[str, str] = field(default_factory=dict)  # "P ∈ ℝ^{l×D}": l is the prompt length

    def _written_as_code(self, name: str) -> bool:
        """"AdamW, batch_size=64" under an "... Evaluation" heading: an identifier the fragment assigns is the
        parameter it names; the heading's words do not rename it (an eval batch), the fragment's own still may."""
        lexicon = terms.lexicon_index()
        return any("_" in ident and lexicon.get(ident.lower()) == name
                   for ident in re.findall(r"(?<![\w.])([A-Za-z]\w*)\s*[=:]", self.fragment))

    def add(self, check: Any) -> int:
        """The check's index; -1 when its name is wrong for this claim's context (left to the judge)."""
        if isinstance(check, ValueCheck) and check.sweep is not None and check.name:
            lexicon = terms.lexicon_index()
            if check.name in ("num_seeds", "seeds"):  # "seeds ∈ {0, 1, 2}": three runs, one per seed
                check = ProtocolCheck(rule="seeds", expect=len(set(map(repr, check.sweep))))
            elif check.name not in lexicon and check.name.endswith("s") and check.name[:-1] in lexicon:
                # "LoRA ranks r ∈ {8, 16}": each run's lora_rank
                check = _renamed(check, lexicon[check.name[:-1]])
        if isinstance(check, ValueCheck) and check.name and re.search(r"(?:^|_)(?:equations?|pde|ode)$", check.name, re.IGNORECASE):
            return -1  # "Heat equation on [0, 1]": the equation's domain, no setting named after the equation
        if isinstance(check, ValueCheck) and check.within is not None and check.name:
            if _is_symbol(check.name):  # "x: 0-1": a symbol's range is its domain, kept as x_range (below)
                check = ValueCheck(name=check.name, names=check.names, expect=list(check.within))
            elif set(check.name.lower().split("_")) & _SPAN_WORDS:
                return -1  # "Layers: 6-11" says which layers (an index span), not how many
        if isinstance(check, ValueCheck) and _is_interval(check.expect) and check.name and _is_symbol(check.name):
            # "alpha in [1, 3]", "x in [0, 1]": code keeps a symbol's interval as alpha_range, x_domain, ...
            spans = [f"{check.name}{suffix}" for suffix in _INTERVAL_SUFFIXES]
            names = [n for n in [*(check.names or []), *spans] if n != check.name]
            check = ValueCheck(name=check.name, names=list(dict.fromkeys(names)), expect=check.expect)
        if isinstance(check, ValueCheck) and check.name in self.shape_symbols and check.name not in self.aliases:
            check = check.model_copy(update={"name": self.shape_symbols[check.name], "names": None})
        if isinstance(check, ValueCheck) and check.name not in self.aliases:
            own = self.fragment if self.window is None else self.window
            around = own if self._written_as_code(check.name) else f"{self.label} {own}"
            name = terms.name_in_context(check.name, around, self.claim)
            if name is None:
                self.ambiguous.append(check.name)
                return -1
            if name != check.name:
                check = _renamed(check, name)
                lexicon = terms.lexicon_index()
                # the words around named it: another parameter a heading suggested is no second name for it
                kept = [n for n in check.names or [] if lexicon.get(n.lower().replace("-", "_"), name) == name]
                if kept != (check.names or []):
                    check = check.model_copy(update={"names": kept or None})
        if isinstance(check, ValueCheck) and check.name and not check.names and (spellings := terms.role_aliases(check.name)):
            check = check.model_copy(update={"names": spellings})  # server_learning_rate: server_lr, lr_server
        if isinstance(check, ValueCheck) and check.name and not _is_symbol(check.name) and (outside := _outside_range(check, self.fragment)):
            self.out_of_range.append(outside)
            return -1
        if isinstance(check, CallCheck) and (same := self._same_api(check)) is not None:
            return same
        key = repr(sorted(check.model_dump(by_alias=True, exclude_none=True).items(), key=lambda kv: kv[0]))
        if key not in self.keys:
            self.keys[key] = len(self.checks)
            self.checks.append(check)
        return self.keys[key]

    def _same_api(self, check: CallCheck) -> int | None:
        """"Dirichlet(α = 0.5)" named twice, as the written call `dirichlet` and the table's `dirichlet |
        torch.distributions.Dirichlet`: one call check, the one that accepts every spelling (kept in place)."""
        targets = {t.strip() for t in check.target.split("|")}
        for index, other in enumerate(self.checks):
            if not isinstance(other, CallCheck) or other.args != check.args or other.count != check.count or other.scope != check.scope:
                continue
            known = {t.strip() for t in other.target.split("|")}
            # a qualified API the claim writes out (`torch.svd_lowrank`) stays its own check: it says which one
            if targets <= known and not any("." in t for t in targets):
                return index
            if known < targets and not any("." in t for t in known):
                self.checks[index] = check
                return index
        return None


def _outside_range(check: ValueCheck, written: str = "") -> str:
    """"'50' is outside dropout's [0, 1]" when a value cannot be the parameter it was named after (rules/lexicon.yaml
    ``range``): "dropout p = 0.1, T = 50 passes" must not check 50 as a dropout; "" when it can."""
    canonical = terms.lexicon_index().get(check.name.lower().replace("-", "_"), check.name)
    bounds = terms.value_range(canonical)
    values = check.expect if isinstance(check.expect, list) else [check.expect] if check.expect is not None else list(check.sweep or [])
    numeric = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if terms.is_integer(canonical) and (fraction := next((v for v in numeric if v != int(v)), None)) is not None:
        return f"{fraction:g} is not a whole number: not {canonical}, a count or a size"
    if canonical.startswith("num_") and isinstance(check.expect, list) and len(check.expect) in (2, 3):
        shown = "×".join(f"{v:g}" if isinstance(v, (int, float)) else str(v) for v in check.expect)
        if re.search(r"\s*[×x]\s*".join(map(re.escape, shown.split("×"))), written):  # "frames 128×128", not "[25, 10]"
            return f"{shown} is a size, not a count: not {canonical}"
    if bounds is None or not numeric:
        return ""
    low, high = bounds
    bad = next((v for v in numeric if not low <= v <= high), None)
    return "" if bad is None else f"{bad:g} is outside the range of {canonical} [{low:g}, {high:g}]: not that parameter"


_INTERVAL_SUFFIXES = ("_range", "_domain", "_bounds")


def _is_interval(value: Any) -> bool:
    """Two increasing numbers: the ends of an interval (a domain or a sampling range), not a tuple setting."""
    return (
        isinstance(value, list) and not isinstance(value, Sweep) and len(value) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value) and value[0] < value[1]
    )


class Sweep(list):
    """Values a claim sweeps a parameter over, one per run (``r ∈ {8, 16}``, "a grid [1, 2, 4]"), as opposed to
    one tuple-valued setting (``betas (0.9, 0.999)``, ``256×256``): compiled to ``sweep``, not a list ``expect``."""


class Interval(list):
    """A setting written as a range for one run ("AR steps: 6-7", "lr = 1e-4 to 3e-4"): the value lies between the
    ends (``within``), as opposed to a bracketed interval setting (``alpha_range: [0, 1]``) or a sweep."""


def written_range(text: str, value: Any) -> Any:
    """``value`` as an Interval when ``text`` writes two increasing numbers as ``a-b`` / ``a to b`` (not a bracketed
    list, a set or a shape)."""
    if _is_interval(value) and not text.lstrip()[:1] in ("[", "{", "(") and numbers.RANGE_RE.match(text):
        return Interval(value)
    return value


def _expectation(value: Any, sweep: Any = None) -> dict[str, Any]:
    """The ValueCheck field a compiled value goes in: ``sweep`` for a Sweep, ``within`` for an Interval, else
    ``expect``."""
    if sweep is not None or isinstance(value, Sweep):
        return {"sweep": list(value)}
    if isinstance(value, Interval):
        return {"within": list(value)}
    return {"expect": value}


def _renamed(check: ValueCheck, name: str) -> ValueCheck:
    """The same expectation (expect, sweep, within or same_as) under another name."""
    return check.model_copy(update={"name": name})


def _value_check(name: str, expect: Any) -> Any:
    if name in ("seeds", "num_seeds") and isinstance(expect, int) and not isinstance(expect, bool):
        return ProtocolCheck(rule="seeds", expect=expect)
    return ValueCheck(name=name, **_expectation(expect))


# "ablation over", "a grid", "sweep", "the values tried": a list of runs. A range or domain is an interval.
_SWEEP_CUE = re.compile(
    r"\b(?:grids?|sweeps?|swept|sweeping|searche?d?|ablations?|ablated|ablating|varied|varying|vary|tried|"
    r"explored|values|settings)\b",
    re.IGNORECASE,
)
_INTERVAL_CUE = re.compile(r"\b(?:range|ranges|interval|between|bounds?|domain|from)\b", re.IGNORECASE)
_MEMBERSHIP = re.compile(r"∈|\\in\b|\bin\b|\bover\b", re.IGNORECASE)


def _searched_interval(value: Any, name: str, key: str, connector: str) -> bool:
    """"learning_rate range [0.001, 0.01]", "weight decay ∈ [0.01, 0.1]": two increasing ends after a range or
    membership word, said of a one-number lexicon setting, bound where its value lies (a search space, a tuned
    range); a pair setting (betas, an image size, x_range) keeps the pair as its value."""
    return (type(value) is list and _is_interval(value) and name in terms.canonical_names() and not terms.tuple_valued(name)
            and len(key.strip()) > 1 and terms.ascii_symbol(key.strip()).lower() not in terms.GREEK_NAMES  # "epsilon in [0, 0.2]": a symbol's domain
            and bool(_INTERVAL_CUE.search(connector) or _MEMBERSHIP.search(connector)))


def _as_sweep(values: Any, written: str, cue: str, connector: str = "") -> Any:
    """``values`` as a Sweep when the claim sweeps over them: set braces (``r ∈ {8, 16}``), membership in a list of
    three or more (``n in [1, 5, 25]``), a "range" of three or more, or a sweep word (grid, sweep, ablation,
    values tried); a list with no cue, a tuple ``(0.9, 0.999)``, a shape ``256×256`` or an interval ``[0, 1]``
    stays one list value."""
    written = written.lstrip()
    if not isinstance(values, list) or isinstance(values, Sweep) or len(values) < 2 or not written[:1] in ("{", "["):
        return values
    if written.startswith("{") or (all(isinstance(v, bool) for v in values) and len(set(values)) == 2):
        return Sweep(values)  # a set; or "[true, false]": a switch holds one of the two per run, never both
    if _INTERVAL_CUE.search(f"{cue} {connector}"):  # an interval has two ends; "range [5, 10, 50]" lists values
        return Sweep(values) if len(values) >= 3 else values
    if (_MEMBERSHIP.search(connector) and len(values) >= 3) or _SWEEP_CUE.search(f"{cue} {connector}"):
        return Sweep(values)
    return values


_COUNT_RE = re.compile(r"\bnumber of (?P<what>[A-Za-z][A-Za-z\- ]{2,40}?)(?:/[A-Za-z]+)?(?:\s+(?:for|per|in|used|to|of|from|at|across|on|with)\b|$)", re.IGNORECASE)
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
    normalised = terms.normalise_phrase(terms.ascii_symbol(key))
    if hit and hit[2] >= len(normalised) - 2 and not _MODIFIER_OF.search(_CLAUSE_START.split(normalised[: hit[1]])[-1]):
        # the key ends with a known phrase that is its head: "base learning rate", "Batch size"; not "rate of
        # trials exceeding the risk threshold" (a rate, not the threshold)
        return hit[0]
    return unit_canonical


_CLAUSE_START = re.compile(r"\b(?:with|using|via|where|and|at|set|sets)\b|[,:;]")
_MODIFIER_OF = re.compile(r"\b(?:of|exceeding|above|below|than|per)\b")  # "rate of trials exceeding the threshold"
_STOP_HEAD = re.compile(
    r"\b(?:for|of|in|on|at|to|with|from|by|per|across|during|used|when|where|which|that|is|are|was|were|must|"
    r"has|have|be|the|a|an|and|or|such|its|their)\b",
    re.IGNORECASE,
)
_SYMBOL_RE = re.compile(r"^[A-Za-z](?:_?[A-Za-z0-9]{0,2})?'?$|^[α-ωΑ-Ωϵϕ][_\w]{0,3}$")


_FUNCTION_SHORT = frozenset(
    "to of in at by on is as an or and for the from with per via into over each all both up are was be it its".split()
)


def _is_symbol(key: str) -> bool:
    """A bare paper symbol (``T``, ``l``, ``P'``, ``S_x``, ``λ``): short, names nothing in code by itself."""
    key = key.strip().strip("$`")
    if key.lower() in _FUNCTION_SHORT:
        return False  # "rewards clipped to [-1, 1]": a preposition, not the paper's symbol
    if terms.identifier(key).lower() in terms.GREEK_NAMES or _greek_subscript(terms.identifier(key)):
        return True
    return bool(_SYMBOL_RE.match(key)) and len(terms.identifier(key)) <= 4


def _greek_subscript(token: str) -> bool:
    """"τ_s", "tau_t": a Greek letter (or its name) with a short subscript, a paper's symbol."""
    greek = re.fullmatch(r"(?P<letter>[^\W\d_]+)_[a-z0-9]{1,2}", token)
    return bool(greek) and (terms.identifier(greek.group("letter")).lower() in terms.GREEK_NAMES or not greek.group("letter").isascii())


def _head_phrase(words: str) -> str | None:
    """The noun phrase a description starts with, as an identifier: "maximum acceptable rate of trials ..."
    -> maximum_acceptable_rate. None when the text is a sentence (a verb) or a gerund, not a name."""
    words = re.sub(r"\([^()]*\)", " ", terms.ascii_symbol(words)).strip()
    gerund = re.match(r"^(\w+ing)\b", words)
    if not words or (gerund and gerund.group(1).lower() not in _NOUN_GERUNDS) or re.search(r"\b(?:is|are|was|were|must|has|have|can)\b", words):
        return None
    if re.match(r"^(?:we|our|they|it|this|these|which|that|i|here|then|also|set|use|uses)\b", words, re.IGNORECASE):
        return None  # a sentence's subject or verb, not a parameter's name
    head = _STOP_HEAD.split(words, maxsplit=1)[0].strip()
    tokens = [t.lower() for t in re.findall(r"[A-Za-z][A-Za-z0-9]*", head)]
    while len(tokens) > 1 and tokens[-1] in _NAME_TAIL:
        tokens.pop()  # "detection accuracy levels swept" -> detection_accuracy
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
    "five six seven eight nine ten several multiple various vs versus equivalent equal corresponding similar same "
    "identical".split()
)
_NAME_TAIL = frozenset(
    "levels values settings setting options choices candidates swept used tested evaluated considered "
    "explored tried searched studied assumed varied".split()
)  # words after a parameter's name that say how it was used, not what it is
_NOUN_GERUNDS = frozenset(
    "training testing sampling learning embedding padding smoothing pooling scaling clipping masking weighting "
    "warming rounding".split()
)  # "training sample fractions": a name, not a verb phrase
_COUNT_WORDS = frozenset("two three four five six seven eight nine ten several multiple various different".split())
_TOO_GENERIC = frozenset(
    "test train val validation total results result config setup parameters settings details other value values number "
    "base target targets input inputs output outputs".split()
)  # "target [32,128,128]": `target` in code is the labels; a bare role word names no setting


# Words before a symbol that say how it is set, not what it is: never a parameter's name
_HEADING_WORDS = frozenset(
    "configuration configurations config configs setup settings setting hyperparameters hyperparameter details "
    "parameters recipe protocol experiments experiment training stage phase objective like".split()
)  # a heading's last word: the label names a section, not the symbol's parameter
_NOT_NAME_WORDS = frozenset(
    "fixed default defaults typically typical usually often commonly standard constant chosen set given selected "
    "always also then here thus e g i e eg ie".split()
)


_PRONOUNS = frozenset("we our us i you they their it its".split())


_ED_NOUNS = frozenset({"speed", "embed", "feed"})  # nouns ending like a past participle ("updated" is none)


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
        if head and set(head.split("_")) & _PRONOUNS:
            head = None  # "for every prompt we sample G": prose around the symbol, not its name
        if head and set(head.split("_")) <= terms.optimizer_words():
            head = None  # "AdamW η = 2e-4": the optimizer whose η it is (the context rules read it), not a name
        role = before.split()[-1].lower() if before.split() else ""
        if terms.identifier(key).lower() == "eta" and not phrase and role in terms.role_qualifiers():
            names.append(terms.qualified_name(role, "learning_rate", "lr"))  # "actor η = 1e-6": the actor's learning rate
        elif head and not set(head.split("_")) <= _NOT_NAME_WORDS and not (re.fullmatch(r"[a-z]{3,}ed", head) and head not in _ED_NOUNS):
            # "fixed P=16", "default typically s = 400"; "the potentials are updated L = 100 times": a verb, no name
            names.append(head)
    ident = terms.identifier(key)
    if key.endswith("'"):
        names.append(ident + "_prime")  # P' is not P
    names += [ident, ident.lower()]
    if ident.lower() == "lam":
        names += ["lambda_", "lmbda"]
    elif ident.lower().startswith("lam_"):
        names += ["lambda" + ident[3:]]  # λ_gp: code writes lambda_gp (only a bare λ must dodge the keyword)
    if key != ident and key.isidentifier():
        names.append(key)
    if label:
        head = _head_phrase(label)
        titled = re.fullmatch(r"\s*[A-Z0-9][\w\-+.]*(?:\s+[A-Z0-9][\w\-+.]*)*\s*", label) or re.search(
            r"\b(?:[A-Z][a-z]+[A-Z]\w*|[A-Z]{2,}\w*)", label)  # "RetinaNet anchors", "PPO training": a method's name
        phrase = terms.find_phrase(label) if not titled else None  # "MC dropout: l = 1e-2" is no dropout
        if phrase:
            names.append(phrase[0])
        if head and not titled and head.split("_")[-1] not in _HEADING_WORDS:
            names.append(head)  # "Kernel width: k = 3"; not "SimPO", "TD3", "PPO training configuration"
    out: list[str] = []
    for n in names:
        if n and n not in out:
            out.append(n)
    return out


def _symbol_check(key: str, expect: Any, label: str = "", before: str = "") -> Any:
    names = _symbol_names(key, label, before)
    if names[0] == "T" and isinstance(expect, float) and 0 < expect <= 2 and not expect.is_integer():
        names.insert(0, "temperature")  # "responses at T = 0.7": a fractional T is a temperature; steps and horizons are whole
    return ValueCheck(name=names[0], names=names[1:] or None, **_expectation(expect))


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
                scale = _SET_SCALE.match(text, i + 1)  # "[9, 10, 11.5] x1e4": the multiplier belongs to the set
                return text[: scale.end() if scale else i + 1]
        return text
    return _PROSE_TAIL.split(text, maxsplit=1)[0]


_CONSTANT_PRODUCT = re.compile(
    r"^(?P<a>\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*(?P<op>[*·/])\s*(?P<b>\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\w.]|\s*[*·/^+-]\s*\w)"
)
# "P_max = 1 + nl", "hidden = 4 * d": a number combined with a symbol by an operator
_SYMBOLIC_REASON = "the value is an expression of symbols"
_SYMBOLIC_VALUE = re.compile(r"^[-+]?\d+(?:\.\d+)?\s*[-+*/×·^]\s*\(?(?![eE][-+]?\d)[A-Za-z_\\]")
def _blank_symbolic(text: str) -> str:
    """``text`` with its leading ``key = <expression of symbols>`` blanked up to the next clause."""
    match = _ASSIGN_RE.match(text)
    if not match:
        return text
    end = re.search(r"\s+(?:and|with|while|where)\s+|[,;:]|$", text[match.start("val") :])
    stop = match.start("val") + (end.start() if end else len(text))
    return " " * stop + text[stop:]


_SET_SCALE = re.compile(rf"\s*[x×*·]\s*(?:{numbers.SCALE_FACTOR})(?![\w.])")


_PROSE_TAIL = re.compile(
    r"\s+(?=(?:for|in|on|with|where|when|at|during|via|and|is|are|used|per|from|as|if|otherwise|evaluated|"
    r"applied|trained|tested|added|vs\.?|to)\b)|\s+\((?=[A-Za-z]{2,})"
)


_PARAMETER_LABEL = re.compile(r"\bparam(?:eter)?s?(?:\s+(?:variants?|counts?|sizes?|budget))?\s*$", re.IGNORECASE)
_STATISTICS_LABEL = re.compile(r"\b(?:statistics|stats|characteristics|trajectory counts|sample counts)\b", re.IGNORECASE)
_COUNT_LABEL = re.compile(r"\b(?:counts?|statistics|stats|sizes?|params|parameters?|memory|time|cost)\b", re.IGNORECASE)


_ONE_MINUS_KEY = re.compile(r"^(?P<pre>.*?)(?:^|\s)1\s*[-−]\s*(?P<sym>[A-Za-zα-ωΑ-Ω][\w']*)\s*$")
_CHAIN_VALUE = re.compile(r"^(?P<first>[-+]?\d[\d.eE\-+%]*)\s*=\s*(?P<last>[^=]+?)\s*$")


def _video_shape(value: Any, claim: str) -> bool:
    """T×H×W of a video claim (``16×256×256``): fewer frames than pixels a side, square frames."""
    return (
        isinstance(value, list) and len(value) == 3 and value[1] == value[2] and 1 < value[0] < value[1]
        and bool(re.search(r"\b(?:videos?|frames?|text-to-video|t2v|clips?)\b", claim, re.IGNORECASE))
    )


def _ends_a_number_list(b: _Builder) -> bool:
    """The fragment is the last item of a bare number list the claim's commas cut ("at 0, 1, 2, 3 levels of
    super-resolution"): two or more numbers, only commas between them, run up to it."""
    at = b.claim.find(b.fragment) if b.fragment else -1
    return at > 0 and bool(re.search(r"(?<![\w.])\d+\s*,\s*\d+\s*,\s*(?:and\s+|or\s+)?$", b.claim[:at]))


_IMPLICIT_PRODUCT = re.compile(r"(?<![\w.])\d+[A-Za-z]\w*\s*$")  # "2N", "4D": a count times a symbol the claim sets
_DERIVED_KEY = re.compile(r"(?<![\w.])(?=[\w]*\d)\w+\s*[+*/]\s*\w+\s*$")  # "yielding 2S+2=82", "2N+1 = 129"


DERIVED_COUNT = "derived count"
DERIVED_VALUE = "derived value"
_CONCLUSION = re.compile(r"^\s*(?:thus|hence|therefore|so|which|i\.e\.,?)\s", re.IGNORECASE)


def _restated(number: str, b: "_Builder") -> str:
    """"alpha = 0.4: any trial with lambda < 0.6 has loss > 0.4": a number that is a value the claim already
    checks, or its complement 1 - x for a fraction: the setting it restates ("alpha = 0.4"), else ""."""
    x = numbers.parse_number(number)  # "60%" is 0.6
    if x is None:
        return ""
    for check in b.checks:
        v = check.expect if isinstance(check, ValueCheck) else None
        if isinstance(v, (int, float)) and not isinstance(v, bool) and check.name:
            if _same_number(x, v) or (0 < v < 1 and _same_number(x, 1 - v)):
                return f"{check.name} = {v:g}"
    return ""


def _derived_holds(expression: str, stated: str, claim: str) -> str:
    """"S=40 segments ... yielding 2S+2=82": the count is the claim's own arithmetic on a setting it states (and
    the value check of S decides the repo); when the arithmetic holds, what it holds by, else ""."""
    value = re.match(r"\s*(\d+(?:\.\d+)?)(?![\w.])", stated)
    symbols = sorted(set(re.findall(r"[A-Za-z]\w*", expression)))
    if value is None or not symbols or len(expression) > 40:
        return ""
    given = {}
    for symbol in symbols:
        found = {m.group(1) for m in re.finditer(rf"(?<![\w.]){re.escape(symbol)}\s*=\s*(\d+(?:\.\d+)?)(?![\w.])", claim)}
        if len(found) != 1:
            return ""
        given[symbol] = float(found.pop())
    product = re.sub(r"(?<=\d)\s*(?=[A-Za-z])", "*", expression)
    try:
        total = _arithmetic(pysource.parse(product.strip(), mode="eval").body, given)
    except (SyntaxError, ArithmeticError, KeyError, ValueError, RecursionError, MemoryError):
        return ""
    if abs(total - float(value.group(1))) > 1e-9 * max(1.0, abs(total)):
        return ""
    settings = ", ".join(f"{k} = {v:g}" for k, v in given.items())
    return f"{expression.strip()} = {value.group(1)} follows from {settings}, which its value check decides"


_OPERATORS = {ast.Add: float.__add__, ast.Sub: float.__sub__, ast.Mult: float.__mul__, ast.Div: float.__truediv__}


def _arithmetic(node: ast.AST, given: dict[str, float]) -> float:
    """The value of a claim's ``2*S + 2``: numbers, the claim's symbols, + - * / (nothing is evaluated as code)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.Name):
        return given[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_arithmetic(node.left, given), _arithmetic(node.right, given))
    raise ValueError("not arithmetic")


def _compile_assignment(body: str, b: _Builder, label: str = "", own_label: bool = True) -> tuple[list[int], str]:
    """``lr=1e-4`` / ``S_x=S_y=64`` / ``r ∈ {8, 16}`` / ``alpha in [0.1, 1.0]``: value checks, or why not."""
    match = _ASSIGN_RE.match(body) or _RANGE_KEY_RE.match(body) or _list_key(body)
    if match and (derived := _DERIVED_KEY.search(match.group("keys"))):
        held = _derived_holds(derived.group(0), match.group("val"), b.claim)
        if held:
            return [], f"{DERIVED_COUNT}: {held}"
        return [], "a derived count (an expression = its value): it follows from the settings, no code sets it"
    if match and (product := _IMPLICIT_PRODUCT.search(match.group("keys"))) and (
            held := _derived_holds(product.group(0), match.group("val"), b.claim)):
        return [], f"{DERIVED_COUNT}: {held}"  # "N = 16 modes, giving 2N = 32 coefficients"
    if not match:
        written = _PAREN_TAIL.sub("", body).strip()
        whole = written_range(written, numbers.parse_value(written))
        if whole is None and label and own_label:
            whole = _leading_number(body)  # "Subsample fraction: 0.1% (1/1000) of each dataset's size"
        readable = label and whole is not None and not isinstance(whole, bool)
        name = _name_for(label, b.aliases) if readable else None
        if readable and name is None and own_label and not terms.find_phrase(label) and not _COUNT_LABEL.search(label) and not isinstance(whole, Interval):
            name = _head_phrase(label)  # "Prompt Number: [5, 10]" -> prompt_number; not "Parameter counts: ..."
        return ([b.add(_value_check(name, whole))], "") if name else ([], "")
    raw_val = match.group("val").strip()
    keys = [k for k in re.split(r"\s*=\s*", match.group("keys")) if k.strip()]
    keys = [part for k in keys for part in _coordinate_keys(k)]
    keys = [_LEADING_JOINER.sub("", k) or k for k in keys]  # "with β = 6": the key is β, not the phrase "with beta"
    if any(re.search(r"[*/^+]|\d\s*\)", k) for k in keys[1:]):
        return [], "a value derived by a formula, not a setting"  # "eta = (4 * 16^2)^2 / (...) = 15"
    made: list[int] = []
    chain = _CHAIN_VALUE.match(raw_val)
    if chain and numbers.parse_value(chain.group("last")) is not None:
        # "1 - beta = 0.05 = 0.95": the key's value, then the claim's own value, named by the label
        last = numbers.parse_value(chain.group("last"))
        raw_val = chain.group("first")
        name = _label_name(label, b.aliases)
        name = name or b.lead_name
        if name and not isinstance(last, bool):
            made.append(b.add(_value_check(name, last)))
    stripped = raw_val if raw_val.startswith("(") else _PAREN_TAIL.sub("", raw_val)
    val_text = _leading_value(stripped.strip().strip("~≈").strip())
    if _SYMBOLIC_VALUE.match(raw_val.strip()):
        return made, f"{_SYMBOLIC_REASON} ('1 + nl', '4 * d'), not a number to check"
    unit = ""
    expect = written_range(val_text, numbers.parse_value(val_text))
    product = _CONSTANT_PRODUCT.match(raw_val.strip())
    if product:  # "hidden dim = 4 * 768", "lr = 3e-4 * 2": the setting is the folded value
        a, b_ = numbers.parse_value(product.group("a")), numbers.parse_value(product.group("b"))
        if isinstance(a, (int, float)) and isinstance(b_, (int, float)) and not (product.group("op") == "/" and b_ == 0):
            folded = a * b_ if product.group("op") != "/" else a / b_
            expect, val_text = numbers.to_number(folded), product.group(0)
    if expect is None:
        head = re.match(r"^(?P<v>\S+)\s+(?P<unit>[A-Za-z][\w\-]*)(?:\s.*)?$", val_text)
        if head:
            expect = numbers.parse_value(head.group("v"))
            unit = head.group("unit")
    if isinstance(expect, list):
        connector = body[match.end("keys") : match.start("val")]  # "=", "∈", "in", "grid", "range", ...
        expect = _as_sweep(expect, val_text, f"{label} {match.group('keys')}", connector)
    if expect is None:
        applied = raw_val.strip().startswith(val_text + "(")  # "y = E_omega(x)": a formula, not a setting
        code_like = re.fullmatch(r"[A-Za-z_]\w*=[a-z][\w.\-]*|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\s*=\s*[a-z][\w.\-]*", body.strip())
        # "variable=temperature", "max_features = sqrt": a config key, as code writes it, set to a word
        notation = re.fullmatch(r"[A-Za-z]_\{?[A-Za-z0-9]{1,3}\}?", val_text)  # "y_a = x_a": a symbol of the formula, no word
        if not applied and not notation and re.fullmatch(r"[A-Za-z][\w.\-]{2,30}", val_text) and (re.search(r"[\d._A-Z]", val_text) or code_like) and not terms.find_apis(val_text):
            expect = val_text  # a string setting: wavelet=bior2.4, padding mode=periodization
        else:
            return made, ""
    rest = raw_val[raw_val.find(val_text) + len(val_text) :] if val_text and val_text in raw_val else ""
    rest = (match.groupdict().get("rest") or "") if match.re is _LIST_KEY_RE else rest
    for key in keys:
        key_expect = expect
        one_minus = _ONE_MINUS_KEY.match(key)
        if one_minus and isinstance(expect, (int, float)) and not isinstance(expect, bool) and 0 <= expect <= 1:
            key, key_expect = one_minus.group("sym"), numbers.to_number(round(1 - expect, 12))  # 1 - beta = 0.05
        words = key.strip().split()
        generic = bool(words) and words[-1].lower() in terms.generic_keys()  # "hidden dim": a compound, read below
        if words and _is_symbol(words[-1]) and not generic and key.strip() not in b.aliases and not isinstance(key_expect, str):
            value_end = re.match(r"\s*[\[{(]?[^\s\]})]*[\]})]?", raw_val)
            spelled = _spelled_symbol(words[-1], words[-2:-1], raw_val[value_end.end() :] if value_end else "")
            if spelled:  # "T = 1000 diffusion steps", "GAE λ = 0.95": the symbol is how the paper writes a known name
                names = [n for n in _symbol_names(words[-1], label) if n != spelled]
                made.append(b.add(ValueCheck(name=spelled, names=names or None, **_expectation(key_expect))))
                continue
            named_by = _phrase_right_before(" ".join(words[:-1])) if len(words) > 1 else None
            if named_by:  # "outer Adam lr β = 1e-3": the phrase names it, the symbol is only how the paper writes it
                made.append(b.add(_value_check(named_by, key_expect)))
                continue
        name = _name_for(key, b.aliases, unit, label)
        if name and name.lower() in terms.GREEK_NAMES and _is_symbol(key) and name not in b.aliases:
            made.append(b.add(_symbol_check(key, key_expect, label)))  # λ: lam, lambda_, ... and the label's words
            continue
        if name and _searched_interval(key_expect, name, key, body[match.end("keys") : match.start("val")]):
            key_expect = Interval(key_expect)  # "learning_rate range [0.001, 0.01]": the value lies in it
        if name:
            made.append(b.add(_value_check(name, key_expect)))
            continue
        if generic and (len(words) < 2 or words[-2].lower() in _PREPOSITIONS) and not isinstance(key_expect, str):
            continue  # "noise with std in {...}": a bare std/dim/size names nothing
        if len(words) >= 2 and words[-1].lower() in terms.generic_keys() and _is_symbol(words[-1]) and not isinstance(key_expect, str):
            compound = " ".join(words[-2:])  # "initial dim" -> initial_dim, not a symbol "dim"
            made.append(b.add(_value_check(terms.canonical_name(compound, b.aliases) or terms.identifier(compound).lower(), key_expect)))
            continue
        if words and _is_symbol(words[-1]):  # "Reynolds number Re", "l", "ranks r": the symbol, named by its words
            made.append(b.add(_symbol_check(words[-1], key_expect, label, " ".join(words[:-1]))))
            continue
        identifier = words[-1] if words and re.fullmatch(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+", terms.ascii_symbol(words[-1])) else ""
        if identifier and len(words) > 1:  # "finetuned on 200 trajectories with lambda_VAE=1": lambda_VAE
            made.append(b.add(_value_check(terms.canonical_name(identifier, b.aliases) or terms.identifier(identifier).lower(), key_expect)))
            continue
        counted = _counted_symbol(key)
        if counted:  # "Three lambda settings used for ... = [0.7, 0.8, 0.9]": lambda's values
            made.append(b.add(_symbol_check(counted, key_expect, label)))
            continue
        head = _head_phrase(key)
        if head and (not isinstance(key_expect, str) or re.fullmatch(r"[a-z_]\w*", key.strip())):
            made.append(b.add(ValueCheck(name=head, **_expectation(key_expect))))
            continue
        fallback = _fallback_name(label, b) if len(keys) == 1 and _is_description(key) else None
        if fallback:  # "Task type for MS-COCO: controlling ... = multilabel_classification": the label names it
            made.append(b.add(_value_check(fallback, key_expect)))
            continue
        if _CONCLUSION.match(key) and isinstance(key_expect, (int, float)) and (setting := _restated(str(key_expect), b)):
            return [], f"{DERIVED_VALUE}: {key_expect:g} follows from {setting}, which its value check decides"
        return [], f"no parameter name for '{key.strip()}' (add an alias)"
    if re.search(r"(?<![\w.])\d", match.group("keys")):  # "trained for 100k steps with KL weight beta=1e-3"
        more, _ = _compile_quantities(match.group("keys"), b)
        made.extend(more)
    rest = re.sub(r"\([^()]*\)", lambda m: " " * len(m.group(0)), rest)  # "(stage 1, 32-frame)": a remark
    clause = re.sub(r"^\s*(?:with|and|using|plus)\s+", "", rest).strip()
    if clause != rest.strip() and "=" in clause and not re.search(r"(?<![\w.§])\d", rest):
        # "rank r = 16 and alpha = r for every task": the second setting is one parameter equal to another
        same = _same_as_setting(clause, b)
        if same is None:
            return made, f"a further setting ('{clause[:40]}') is not typed"
        made.append(same)
    # "t in [0, 1] with N=30 steps": the prose after the value states more values; "is achieved by ..." not;
    # "G = 8 completions at temperature T = 1.0 with ...": the value's own noun, then more values
    lead = re.match(r"\s*(?:with|and|using|plus|of)\b", rest) or _NOUN_THEN_CLAUSE.match(rest)
    if lead and re.search(r"(?<![\w.§])\d", rest):
        if "noun" in lead.re.groupindex and lead.group("noun"):
            rest = " " * lead.end("noun") + rest[lead.end("noun") :]  # the noun counted by the assigned value
        inline, remaining = _inline_assignments(rest, b)
        more, unnamed = _compile_quantities(remaining, b, "")
        made.extend(inline + more)
        if unnamed:
            return made, f"number(s) {', '.join(unnamed[:3])} with no parameter name"
    return made, ""


_LEADING_JOINER = re.compile(r"^\s*(?:(?:with|and|using|plus|where|whereas|while|via|by|at)\s+)+", re.IGNORECASE)
_NOUN_THEN_CLAUSE = re.compile(r"\s*(?P<noun>(?:[a-z][\w\-]*\s+){0,2}?[a-z][\w\-]*\s+)?(?=(?:at|with|and|using|plus)\s)")
_ACHIEVED = re.compile(
    r"(?:=|\bof)\s*[-+]?[\d.]+(?:[eE][-+]?\d+)?\s*[%x×]?\s+(?:is|are|was|were)\s+(?:achieved|attained|obtained|reached|observed|measured)\b",
    re.IGNORECASE,
)


def _coordinate_keys(key: str) -> list[str]:
    """"spatial x,y in [0,1]": one key per coordinate of the pair; the words before name the pair, not each."""
    pair = re.fullmatch(r"(?P<words>.*?)(?P<symbols>(?<![\w,])[A-Za-z](?:,[A-Za-z])+)\s*", key)
    if not pair:
        return [key]
    return pair.group("symbols").split(",")


def _list_key(body: str) -> re.Match | None:
    """A noun phrase then a bracketed list with prose after it; None when the phrase is a sentence."""
    match = _LIST_KEY_RE.match(body)
    if not match or not match.group("rest").strip() or re.search(r"\b(?:is|are|was|were|uses?|has|have)\b", match.group("keys")):
        return None
    return match


_TRAILING_VALUE = re.compile(r"=\s*(?P<value>[^=;:]+?)\s*\.?\s*$")


def _claim_lead(text: str, spans: list[tuple[int, int]], b: _Builder) -> tuple[str | None, Any]:
    """SA-Bench's "<what it is>; <how it is used> = <value>" claims: the first fragment (or the claim's label)
    is a noun phrase with no number, the claim ends with "= value". Returns (name, value) or (None, None)."""
    trailing = _TRAILING_VALUE.search(text)
    value = numbers.parse_value(trailing.group("value")) if trailing else None
    if value is None or isinstance(value, bool):
        return None, None
    first = text[spans[0][0] : spans[0][1]] if spans else ""
    labelled = _LABEL_RE.match(first)
    lead = labelled.group("label") if labelled else first
    if len(spans) < 2 and not labelled or re.search(r"[\d=<>≤≥]", lead) or len(lead.split()) > 10 or ":" in lead:
        return None, None
    value_of = re.match(r"^\s*(?:the\s+)?values?\s+of\s+(?P<symbol>\S+)", lead, re.IGNORECASE)
    if value_of and _is_symbol(value_of.group("symbol")):
        return terms.identifier(value_of.group("symbol")).lower(), value  # "Value of lambda achieving zero loss"
    return _label_name(lead, b.aliases), value


def _lead_value_fragment(body: str, masked: str, b: _Builder, made: list[int], reason: str) -> tuple[list[int], str]:
    """A fragment of a lead-named claim: "... R(theta, lambda) <= 0.4 = 0.4" (the claim's value, stated with
    its derivation) or "normalized to 1" (the value restated). Numbers equal to the value are the value."""
    trailing = _TRAILING_VALUE.search(body)
    ends_with_value = bool(trailing) and _same_number(numbers.parse_value(trailing.group("value")), b.lead_value)
    rest = masked[: trailing.start()] if trailing and ends_with_value else masked
    others = [
        q for q in numbers.find_numbers(_mask_formula_spans(rest))
        if not _same_number(q.value, b.lead_value) and not _inside_parentheses(rest, q.start) and not _complement(q, b.lead_value)
    ]
    if made and not ends_with_value:
        return made, reason
    if not ends_with_value and (others or not numbers.find_numbers(rest)):
        return made, reason
    if others and not _is_derivation(rest):
        return made, reason
    index = b.add(_value_check(b.lead_name, b.lead_value)) if b.lead_name else -1
    return ([*made, index] if index >= 0 else made), ""


def _complement(q: numbers.Quantity, value: Any) -> bool:
    """"90% coverage" restating a miscoverage of 0.1: a percentage that is one minus the value."""
    return q.percent and isinstance(value, (int, float)) and 0 < value < 1 and _same_number(q.value, 1 - value)


def _same_number(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return False
    if isinstance(a, list) or isinstance(b, list):
        return a == b
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1.0)


def _is_derivation(text: str) -> bool:
    """Text that derives a value ("l(z, lambda) = (1/K) * sum_{k=1}^K ..."): its numbers are the formula's."""
    return bool(re.search(r"[*/^]|\bsum\b|\\sum|[A-Za-z]\w*\([^()]*\)\s*(?:=|<=|>=|<|>)", text))


# "..., bf16, wd 0.1": a list item that is only a number format is the run's dtype
_BARE_DTYPE = re.compile(r"^\s*(?P<dtype>bf16|fp16|bfloat16|float16|fp32|tf32)(?:\s+(?:mixed[- ]precision|mixed|amp|autocast|training))?\s*\.?\s*$", re.IGNORECASE)
_DTYPE_RE = re.compile(
    r"\b(?:torch\.)?(?P<dtype>bfloat16|float16|float32|float64|fp16|bf16|fp32|tf32|int8)\b(?:\s+[a-z]+){0,3}?\s+precision\b",
    re.IGNORECASE,
)


@functools.cache
def _string_setting_regex() -> re.Pattern | None:
    names = terms.section("string_settings")
    if not names:
        return None
    alternatives = "|".join(re.escape(n).replace(r"\ ", r"\s+") for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?:^|(?<=[,:;(]\s)|(?<=\d\s)|(?<=\busing\s)|(?<=\bwith\s)|(?<=\ba\s))(?P<value>[A-Za-z][A-Za-z]*(?:-[A-Za-z]+)?\d*(?:\.\d+)?)\s+(?P<name>{alternatives})\b", re.IGNORECASE)


@functools.cache
def _string_setting_words() -> tuple[dict[str, str], frozenset[str]]:
    """(normalised setting phrase -> its name, the value words a setting may take) of rules/claim_terms.yaml."""
    lookup = {terms.normalise_phrase(k): str(v) for k, v in terms.section("string_settings").items()}
    return lookup, frozenset(str(v).lower() for v in terms.section("string_settings_values").get("words") or [])


def _string_settings(body: str, b: _Builder) -> list[int]:
    """"bior2.4 wavelet", "zero padding mode", "bfloat16 precision": a named setting whose value is a word."""
    made = []
    for match in [*_DTYPE_RE.finditer(body), *_BARE_DTYPE.finditer(body)]:
        made.append(b.add(ValueCheck(name="dtype", expect=match.group("dtype").lower())))
    regex = _string_setting_regex()
    lookup, known = _string_setting_words()
    for match in regex.finditer(body) if regex else ():
        value = match.group("value")
        name = lookup[terms.normalise_phrase(match.group("name"))]
        named_api = terms.find_apis(value) and not mentions.BOUNDARY_AFTER.match(body, match.end("value"))
        if not (re.search(r"\d", value) or value.lower() in known) or named_api:
            continue  # "sym4", "bior2.4" (a family and an order) or a known value word ("periodic", "zero")
        made.append(b.add(ValueCheck(name=name, expect=value)))  # "Dirichlet BC" names no distribution
    return made


# "default betas", "default decoding hyperparameters (temperature, top-p)", "temperature left at its default";
# not "by default" (a choice the paper makes), nor a default given with its number ("default lr of 1e-3")
_DEFAULT_LIST = re.compile(r"(?<!\bby )\bdefaults?\s+(?:[a-z]+\s+){0,2}?(?:hyper-?)?param(?:eter)?s?(?:\s+values?)?\s*\((?P<items>[^()]{1,120})\)", re.IGNORECASE)
_DEFAULT_ONE = re.compile(r"(?<!\bby )\bdefaults?\s+(?:values?\s+(?:of|for)\s+)?(?:the\s+)?(?P<phrase>[A-Za-z][\w\-]*(?:\s+[A-Za-z][\w\-]*){0,2})", re.IGNORECASE)
_AT_DEFAULT = re.compile(r"(?P<phrase>[A-Za-z][\w\-]*(?:\s+[A-Za-z][\w\-]*){0,2}?)\s+(?:(?:is|are)\s+)?(?:left|kept|set)?\s*(?:at|to)\s+(?:its|their|the)\s+defaults?\b", re.IGNORECASE)


def _default_settings(body: str, b: _Builder) -> list[int]:
    """"Adam with default betas", "default decoding hyperparameters (temperature, etc.)": the claim says a setting
    is left as the library leaves it, which is a value: the named API's documented default, else the one every
    common library uses (rules/lexicon.yaml `default`). A phrase that names no lexicon parameter, or one with no
    known default, stays what it was."""
    if "default" not in body.lower():
        return []
    phrases = [item for m in _DEFAULT_LIST.finditer(body) for item in re.split(r",|\band\b|\bor\b|/", m.group("items"))]
    phrases += [p for m in _DEFAULT_ONE.finditer(body) if not re.match(r"\s*(?:of|=|:|is|was)?\s*[-+]?\d", body[m.end():])
                for p in re.split(r"\s+(?:and|or)\s+", m.group("phrase"))]  # "default betas and eps": both
    phrases += [m.group("phrase") for m in _AT_DEFAULT.finditer(body)]
    apis = [t.strip() for c in b.checks if isinstance(c, CallCheck) for t in c.target.split("|")]
    made: list[int] = []
    for phrase in phrases:
        words = re.sub(r"\betc\.?|\.\.\.|…", " ", phrase).split()
        canonical = next((c for n in range(len(words), 0, -1)
                          if (c := terms.lexicon_index().get("_".join(words[:n]).lower().replace("-", "_")))), None)
        if canonical is None or any(isinstance(c, ValueCheck) and c.name == canonical for c in b.checks):
            continue  # no lexicon parameter, or the claim states its value itself
        value = next((v for api in apis if (v := terms.library_default(api, canonical)) is not None), None)
        value = terms.default_value(canonical) if value is None else value
        if value is not None:
            made.append(b.add(ValueCheck(name=canonical, expect=value)))
    return [m for m in made if m >= 0]


_MODEL_ID = re.compile(r"^(?P<id>[A-Za-z][\w.]*(?:-[\w.]+)*-\d+(?:\.\d+)?[bBmMkK]?(?:-[\w.]+)*)(?=\s*(?:\(|$|,|;))")


def _labelled_model(label: str, body: str, b: _Builder) -> list[int]:
    """"Target model: llama-13b (rank #129)": a model chosen by name, under a label that says which role it has."""
    head = _head_phrase(label)
    match = _MODEL_ID.match(body.strip())
    if not head or not match or not re.fullmatch(r"(?:[a-z]+_)?(?:model|backbone|checkpoint|teacher|student)", head):
        return []
    return [b.add(ValueCheck(name=head, expect=match.group("id")))]


def _leading_number(body: str) -> Any:
    """The number a labelled body starts with when prose follows it ("0.1% (1/1000) of each dataset"); None
    when the body starts otherwise or states a second, different number outside parentheses."""
    first = numbers.find_numbers(body)
    if not first or first[0].start != 0 or _SHAPE_TAIL.match(body, first[0].end) or body[first[0].end : first[0].end + 1] == "-":
        return None  # "120x16 spatial", "0.5-degree resolution": the number has its own name
    follower = re.match(r"\s*(?:\([^()]*\)\s*)?(?P<word>[A-Za-z]+)?", body[first[0].end :])
    if follower and follower.group("word") and follower.group("word").lower() not in ("of", "for", "per", "in", "across", "on", "at"):
        return None  # "22 evaluated models": the noun names it; "1 if ..., 0 otherwise": a case
    outside = [q for q in first[1:] if not _inside_parentheses(body, q.start)]
    return first[0].value if not outside else None


def _counted_symbol(key: str) -> str | None:
    """"Three lambda settings used for ..." -> lambda: a count word, one paper symbol, a word saying they vary."""
    head = _STOP_HEAD.split(terms.ascii_symbol(key), maxsplit=1)[0].split()
    while len(head) > 2 and head[-1].lower() in _NAME_TAIL:
        head.pop()
    if len(head) == 2 and head[0].lower() in _COUNT_WORDS and _is_symbol(head[1]):
        return head[1]
    return None


def _fallback_name(label: str, b: _Builder) -> str | None:
    """The name of a value whose key is a description, not a name: the fragment's label, unless it labels
    counts ("Task type for MS-COCO: controlling ... = multilabel_classification")."""
    return _label_name(label, b.aliases) if not _COUNT_LABEL.search(label) else None


def _label_name(label: str, aliases: dict[str, list[str]]) -> str | None:
    """The parameter a label or a leading noun phrase names: a known name, else its head noun phrase."""
    return (_name_for(label, aliases) or _head_phrase(label)) if label else None


def _is_description(key: str) -> bool:
    """Plain words with no symbol, identifier or number: a description of a value, not its name."""
    return all(re.fullmatch(r"[a-z][a-z\-]*", w) for w in key.split()) and len(key.split()) >= 3


_SHAPE_TAIL = re.compile(r"(?:\s*[x×]\s*\d{1,5}(?![\d.]))+")


def _square_image_size(value: Any, before: str, claim: str) -> bool:
    """"generating 80 frames at 256×256": a bare square size after "at" is the size of the images or frames
    the claim makes, when the claim speaks of images (the image_size context words); a PDE grid "at 160x240"
    or a non-square shape names no single setting and stays unnamed."""
    square = isinstance(value, list) and len(value) == 2 and value[0] == value[1] and value[0] >= 16
    return square and bool(re.search(r"\bat\s*$", before)) and terms.name_in_context("image_size", "", claim) == "image_size"


_PRODUCT_AFTER = re.compile(r"\s+[A-Za-z][a-z]+\s*[x×]\s*\d")
_PRODUCT_BEFORE = re.compile(r"\d\s+[A-Za-z][a-z]+\s*[x×]\s*$")
_NOT_COUNTS = {
    "params", "parameters", "tokens", "steps", "times", "hours", "minutes", "seconds", "days", "gpus", "cpus", "is",
    "was", "has", "this", "thus", "plus", "across", "versus", "as", "corresponds", "means", "yields", "gives", "uses",
    "units", "neurons", "pixels", "matrices",  # "256 units", "800 pixels": a width or a length, not a count of things
}  # fmt: skip


_JOINER = re.compile(
    r"[\s:=(]*(?:(?:assumed|assumption|level|value|setting)\s+)?"
    r"(?:of|is|to|was|=|:|set to|is set to|starting at|starts at|initiali[sz]ed (?:at|to))?[\s:=(~≈]*",
    re.IGNORECASE,
)  # "detection accuracy assumption of 95%", "EMA decay starting at 0.996"
_CAP_JOINER = re.compile(r"\s*(?:(?:is\s+)?(?:clipped|capped)\s+)?(?:at|to)\s*", re.IGNORECASE)
_CAPS = frozenset({"max_grad_norm", "clip_range", "value_clip_range"})  # "gradient clipping at 1.0", "gradient norm clipped to 5"
# (elsewhere "at" starts another quantity: "80 frames at 256x256")


def _phrase_right_before(clause: str) -> str | None:
    """The lexicon parameter a phrase ending ``clause`` names ("... outer Adam lr" -> learning_rate), None when the
    clause does not end with one."""
    head = " ".join(clause.split()[-4:])
    hit = terms.find_phrase(head) if head else None
    if not hit or not re.fullmatch(r"\s*(?:(?:is|are|was|of|set\s+to|equal\s+to)\s*)?", _tail_after_phrase(head, hit)):
        return None  # "outer Adam lr β", "the student temperature is τ_s"
    known = hit[0] in terms.canonical_names() or terms.role_aliases(hit[0]) or hit[0].split("_")[0] in terms.role_qualifiers()
    return terms.lexicon_index().get(hit[0].lower()) or (hit[0] if known else None)  # a part's own (student_temperature)


def _tail_after_phrase(before: str, phrase: tuple[str, int, int]) -> str:
    """The text between a phrase found in ``before`` and the number that follows it; a remark in parentheses
    with no number is left out ("learning rate (eta) 0.05")."""
    tail = terms.normalise_phrase(terms.ascii_symbol(before))[phrase[2] :] + " "
    return re.sub(r"\([^()\d]*\)", " ", tail)


def _inside_parentheses(text: str, index: int) -> bool:
    depth = 0
    for ch in text[:index]:
        depth += ch == "("
        depth -= ch == ")" and depth > 0
    return depth > 0


_SYMBOL_BEFORE = re.compile(r"\s(?P<sym>[^\W\d][\w']{0,7})\s*(?:=|:)?\s*$")  # "... epsilon 0.2", "... γ: 0.99"


def _paper_symbol(token: str) -> bool:
    """A Greek letter or its name, or one Latin letter with a subscript or prime (``B``, ``N_s``); not a word."""
    if terms.identifier(token).lower() in terms.GREEK_NAMES or (len(token) == 1 and not token.isascii()):
        return True
    if _greek_subscript(token):
        return True
    return bool(re.fullmatch(r"[A-Za-z](?:_\w+|\d|')?", token)) and token.lower() not in ("a", "i")


_SYMBOL_GLOSS = re.compile(
    r"^(?P<sym>[^\W\d][\w']{0,7})\s+(?:is|denotes)\s+(?:the\s+|an?\s+)?(?P<phrase>[a-z][a-z\-]*(?:\s+[a-z][a-z\-]*){0,3})"
    r"(?P<rest>\s*\(\s*[-+]?\d[^()]*\)\s*)$",
    re.IGNORECASE,
)


def _gloss_first(masked: str) -> str:
    """"Alpha is energy weight (0.00002 for Burgers)": a symbol glossed, its value in parentheses. Read as "energy
    weight Alpha (0.00002 ...)", the order in which a phrase and its symbol name a value; same length, so the
    offsets of the fragment still hold."""
    match = _SYMBOL_GLOSS.match(masked.strip())
    if not match or not _paper_symbol(match.group("sym")) or terms.find_phrase(match.group("phrase")):
        return masked  # "eta is the learning rate (0.001)": the lexicon's phrase names it as written
    lead = len(masked) - len(masked.lstrip())
    head = f"{match.group('phrase')} {match.group('sym')}"
    width = match.start("rest") - match.start()
    return masked[:lead] + head.ljust(width) + masked[lead + match.start("rest") :]


_OTHER_CASE = re.compile(r"\s+(?:for|on|in|with|when|at)\s+(?:the\s+)?[A-Za-z]")  # "(0.1 for the high-resource pairs)"
_COUNTED_NOUN = re.compile(r"\s+(?!samples\b)[a-z]{3,}(?<!s)s\b")  # "512 prompts", not "512 samples" nor "3 class"
_DURATION_UNIT = re.compile(r"(?:\s*|-)(?:s|secs?|seconds?|ms|milliseconds?|mins?|minutes?|hours?|hrs?|h)\b", re.IGNORECASE)
_DURATION_NAME = re.compile(r"sec|second|duration|time|_ms$|_s$|interval|window|hop|win_|length_ms|period|delay|timeout", re.IGNORECASE)


# Content words right before a number: it has a name of its own, even one the lexicon does not know
_NAMED_BEFORE = re.compile(
    r"(?<![\w-])(?!(?:with|of|for|using|use|uses|the|a|an|to|on|at|by|from|in|into|between|is|are|be|set|and|or|than|about|"
    r"around|approximately|roughly|over|under|up|both|each|every|only|just|all|has|have|had|contains?|containing|takes?|"
    r"gives?|giving|yields?|yielding|trains?|trained|samples?|sampled|generates?|generated|collects?|collected|selects?|"
    r"selected|keeps?|kept|draws?|drawn|runs?|uses?|used)\b)[a-z][a-z-]{2,}\s*[:=]?\s*$", re.IGNORECASE)


def _compile_quantities(body: str, b: _Builder, label: str = "") -> tuple[list[int], list[str]]:
    """Numbers named by a phrase before them ("batch size 256"), a unit after them ("150K steps"), or the
    label of a fragment that is only a number ("Batch size varies per task: 30 (CoLA)")."""
    made, body = _layers_of_units(body, b)
    unnamed: list[str] = []
    pending: list[numbers.Quantity] = []
    pending_qualifier: dict[int, str] = {}
    last_end = 0
    label_phrase = _label_phrase(label) if label else None
    shape_end = -1
    at_point = False  # inside "at epochs 30, 60 and 80": points in time, not values
    points: list[tuple[numbers.Quantity, str]] = []  # ... and the text before each
    found = numbers.find_numbers(body)
    for i, q in enumerate(found):
        if q.start < shape_end:
            continue  # a later dimension of a shape read below
        before = body[last_end : q.start]
        at_point = (at_point and bool(re.fullmatch(r"\s*(?:,|and|or|,\s*and|,\s*or)\s*", before))) or bool(_AT_POINT.search(before))
        if not at_point:
            made.extend(_milestones(points, body, b))
            points = []
        if at_point:
            points.append((q, body[: q.start]))
            last_end = q.end
            continue  # "divided by 10 at epochs 30, 60 and 80": when, not how much
        interval = re.search(r"\b(?P<verb>[a-z]+)\s+every\s*$", before, re.IGNORECASE)
        if interval and isinstance(q.value, int) and _INTERVAL_VERBS.get(interval.group("verb").lower()):
            verb = interval.group("verb").lower()
            target = verb in _TARGET_SYNC_VERBS and re.search(r"\btarget\b", before[: interval.start()], re.IGNORECASE)
            made.append(b.add(_value_check("target_update_interval" if target else _INTERVAL_VERBS[verb], q.value)))  # "evaluated every 500 steps"
            last_end = q.end
            continue
        generated = _GENERATE_VERB.search(before)
        if generated and isinstance(q.value, int) and q.unit == "tokens" and not q.percent:
            made.append(b.add(_value_check("max_new_tokens", q.value)))  # "output 512 tokens", "generate up to 256 tokens"
            last_end = q.end
            continue
        upto = body[: q.start].rstrip()
        if upto.endswith("=") and _DERIVED_KEY.search(upto[:-1]):
            unnamed.append(q.raw)
            last_end = q.end
            continue  # "yielding 2K+1=33 terms": a count that follows from the settings, which no code sets
        if b.milestone_total is not None and q.value == b.milestone_total and re.search(r"\bof\s*$", before):
            last_end = q.end
            continue  # "at epochs 10, 16 and 22 of 24": the run's length, read with the milestones
        if re.search(r"\b(?:per|every)\s*$|\$\s*$", before):
            last_end = q.end
            continue  # "per 1M tokens", "every 1,000 steps", "$5.00": a rate, an interval or a price
        last_span = re.search(r"\b(?:last|final)\s*$", before, re.IGNORECASE) and re.match(r"\s*(?:training\s+)?(?:epochs?|steps?|iterations?)\b", body[q.end :], re.IGNORECASE)
        if isinstance(q.value, int) and (last_span or re.search(r"\b(?:first|top|bottom|initial|remaining|other|next|previous|earliest)\s*$", before, re.IGNORECASE)):
            unnamed.append(q.raw)
            last_end = q.end
            continue  # "the first 3 layers are frozen": which ones, not how many the model has
        if isinstance(q.value, int) and 1990 <= q.value <= 2035 and q.raw.isdigit() and re.search(r"(?<![\w-])[A-Z][A-Za-z0-9\-]{2,}\s*$", before):
            last_end = q.end
            continue  # "BraTS 2021", "ImageNet 2012", "COCO 2017": the release's year, part of the name
        length_of = re.search(r"\b(?P<noun>[a-z]{3,})\s+of\s+length\s*$", before)
        if length_of and isinstance(q.value, int):  # "trajectories of length 4", "sequences of length 512"
            noun = length_of.group("noun")
            noun = noun[:-3] + "y" if noun.endswith("ies") else noun[:-1] if noun.endswith("s") else noun
            made.append(b.add(_value_check(f"{noun}_length", q.value)))
            last_end = q.end
            continue
        if _PRODUCT_AFTER.match(body, q.end) or _PRODUCT_BEFORE.search(body[max(0, q.start - 40) : q.start]):
            if not _inside_parentheses(body, q.start):
                unnamed.append(q.raw)
            last_end = q.end
            continue  # "12 layers x 6 matrices": the factors of a product (a structure's size), not two settings
        if re.match(r"(?:[-–]|\s+to\s+)\d", body[q.end : q.end + 6]) or re.search(r"\d(?:[-–]|\s+to\s+)$", body[max(0, q.start - 6) : q.start]):
            last_end = q.end
            continue  # "AR steps: 6-7", "by 1 to 50 positions": a range, not the value 6 (nor 7)
        shape = _SHAPE_TAIL.match(body, q.end) if isinstance(q.value, int) and not q.percent else None
        if shape:  # "16×256×256": one value, the whole shape
            q = dataclasses.replace(q, value=[q.value, *map(int, re.findall(r"\d+", shape.group(0)))], end=shape.end(), unit="")
            shape_end = shape.end()
        after = body[q.end : q.end + 40]
        name = None
        phrase = terms.find_phrase(before, body[max(0, last_end - 160) : last_end])  # a part described just before
        symbol = _SYMBOL_BEFORE.search(before)
        if symbol and _paper_symbol(symbol.group("sym")):
            # "clip range epsilon 0.2", "discount gamma 0.99": the phrase names the value, the symbol is how
            # the paper writes it (read alone, "epsilon" would be Adam's and "gamma" anyone's)
            head = before[: symbol.start("sym")]
            named_by = terms.find_phrase(head)
            if named_by and _JOINER.fullmatch(_tail_after_phrase(head, named_by)):
                phrase = (named_by[0], named_by[1], named_by[2])
                before = head
        words = re.match(r"\s*((?:[A-Za-z][\w\-]*\s+){0,2}[A-Za-z][\w\-]*)", after)
        following = words.group(1).split() if words else []
        modified = bool(phrase) and _modified_phrase(before, phrase)
        if phrase and phrase[0] == "num_samples" and re.search(r"\bsamples?\s*$", before, re.IGNORECASE) and _COUNTED_NOUN.match(after):
            phrase = None  # "each iteration samples 512 prompts": a verb; the noun after the number names the count
        if phrase and not modified and _JOINER.fullmatch(_tail_after_phrase(before, phrase)):
            name = phrase[0]
            own = terms.find_phrase(" ".join(following)) if "(" in _tail_after_phrase(before, phrase) and following else None
            if own and own[1] == 0:
                name = own[0]  # "56 frames (7 AR steps)": the number in parentheses is named by its own words
        elif phrase and not modified and phrase[0] in _CAPS and _CAP_JOINER.fullmatch(_tail_after_phrase(before, phrase)):
            name = phrase[0]
        if name is None and _AT_TIME.search(before) and _STEP_UNIT_OR_LIST.match(body, q.end):
            at_point, last_end = True, q.end
            points.append((q, body[: q.start]))
            continue  # "decayed at 60K and 80K iterations": when, not how long
        if name is None and shape and _square_image_size(q.value, before, b.claim):
            name = "image_size"  # "80 frames at 256×256": the frames' (square) size
        shaped_noun = re.match(r"\s*(?:px\s+|pixels?\s+)?(?:random\s+|center\s+|centre\s+)?(?P<noun>crops?|patch(?:es)?|images?|inputs?)\b", after)
        if name is None and shaped_noun and isinstance(q.value, list) and len(q.value) == 2 and q.value[0] == q.value[1]:
            name = "patch_size" if shaped_noun.group("noun").startswith("patch") else "image_size"  # "224×224 crops", "16×16 patches"
        banded = re.search(r"\b(?:between|from)\s+[\d.]+\s*(?:k?hz)?\s+(?:and|to)\s*$", body[: q.start], re.IGNORECASE)
        if name is None and q.unit in ("khz", "hz") and not q.percent and not banded:  # "16 kHz audio": the sampling rate, in Hz
            q = dataclasses.replace(q, value=numbers.to_number(q.value * (1000 if q.unit == "khz" else 1)))
            name = "sample_rate"
        if name is None and _PART_OF.search(before):
            unnamed.append(q.raw)
            last_end = q.end
            continue  # "a projection head of 2 layers": the head's depth, not the model's num_layers
        following = following[: next((j for j, w in enumerate(following) if w.lower() in _MOD_STOP), len(following))]
        if name is None and q.unit not in _NON_PARAM_UNITS and following:
            phrase_after = terms.find_phrase(" ".join(following))  # "100 denoising steps" before "steps" alone
            if phrase_after and phrase_after[1] == 0 and len(phrase_after[0]) and " " in " ".join(following)[: phrase_after[2]]:
                name = phrase_after[0]
        if name is None and isinstance(q.value, int) and q.value >= 16 and re.match(r"d\b", after):
            name = "hidden_size"  # "L-138M/768d": a model width
        dimensional = re.match(r"-(?:dim(?:ensional)?|d)\s+(?P<np>(?:[A-Za-z][\w\-]*\s+){0,2}[A-Za-z][\w\-]*)", after)
        if name is None and dimensional:  # "80-dimensional node embeddings": the embedding dimension
            head = _leading_words(dimensional.group("np")).split()[-1:]
            hit = terms.find_phrase(f"{_singular(head[0])} dimension") if head else None
            name = hit[0] if hit and hit[1] == 0 else None
        unit_adjective = re.match(r"-[a-z]+\s+(?P<np>(?:[A-Za-z][\w\-]*\s+){0,2}[A-Za-z][\w\-]*)", after)
        if name is None and unit_adjective and not dimensional:  # "0.25-degree latitude-longitude resolution"
            np_text = _leading_words(unit_adjective.group("np"))  # "-layer MLP of width 256": not the width
            hit = terms.find_phrase(np_text) if np_text else None
            if hit and hit[2] >= len(terms.normalise_phrase(terms.ascii_symbol(np_text))) - 1:
                name = hit[0]
        adjective = re.match(r"-(?P<w>[a-z]{3,})\b", after) if isinstance(q.value, int) else None
        if name is None and adjective:  # "a 49-frame video", "a 3-layer MLP": the unit, made plural
            plural = adjective.group("w") + "s"
            known = terms.find_phrase(plural)
            name = terms.unit_name(plural) or (known[0] if known and known[1] == 0 else None)
            following_words = re.match(r"-[a-z]{3,}((?:\s+[a-z][\w\-]*){1,3})", after)
            roles = [w for w in (following_words.group(1).split() if following_words else []) if w in terms.role_qualifiers()
                     and w != "encoder" and (w != "decoder" or re.search(r"\bencoder\b", b.claim, re.IGNORECASE))]
            # an encoder's layers are the model's num_layers (as _ENCODER_DECODER_LAYERS reads them); a decoder-only
            # model's (GPT) too: only a decoder beside an encoder, or another part, owns its own
            if name == "num_layers" and roles:
                name = terms.qualified_name(roles[0], "num_layers", "layers")  # "a 9-layer attention decoder"
        if name is None and isinstance(q.value, int):
            for j, w in enumerate(following):
                if terms.unit_name(w):
                    name = terms.unit_name(w)
                    modifier = following[j - 1] if j else ""
                    qualifier = _COUNT_QUALIFIERS.get(modifier.lower())
                    if qualifier and name.startswith("num_"):
                        name = f"num_{qualifier}_{name[4:]}"  # "50 positive samples"
                    elif modifier.lower() in terms.role_qualifiers():
                        name = terms.qualified_name(modifier.lower(), terms.canonical_name(name) or name, w.lower())  # "5 local epochs"
                    elif ((re.fullmatch(r"[a-z]{4,}|[A-Z][a-z]{3,}", modifier) or re.fullmatch(r"[a-z]{3,}(?:-[a-z]{2,})+", modifier))
                          and (modifier := modifier.lower()) not in _NEUTRAL_COUNT_MODIFIERS  # "100 Sinkhorn iterations"
                          and modifier not in terms.optimizer_words()
                          and not modifier.endswith("ed") and name not in ("seeds", "num_seeds", "num_trials")):
                        modifier = modifier.replace("-", "_")  # "20 random-walk steps"
                        known = terms.find_phrase(f"{modifier} {w}")
                        context = terms.name_in_context(name, f"{modifier} {w}", "")
                        if known and known[1] == 0:
                            name = known[0]  # "4 accumulation steps", "100 diffusion steps": a phrase of its own
                        elif context in (name, None):
                            name = f"num_{modifier}_{w.lower()}"  # "10 pruning steps", "5 adaptation steps": not the run's steps
                        # else a context rule reads the modifier ("18 sampling steps" -> sampling_steps)
                    break
        if name is None and q.unit not in _NON_PARAM_UNITS and following:
            phrase_after = terms.find_phrase(" ".join(following))
            if phrase_after and phrase_after[1] == 0:
                name = phrase_after[0]
        rate = re.match(r"\s*(?:x\s+)?(?P<np>(?:[a-z][a-z\-]*\s+){0,2}(?:rate|ratio|accuracy|probability|fraction|proportion|factor))\b", after if q.percent or q.unit == "x" else "")
        if name is None and rate and (q.percent or q.unit == "x"):
            words = [w for w in rate.group("np").split() if w not in ("symmetric", "the", "a", "an")]
            known = terms.canonical_name(" ".join(words))
            name = known or (terms.identifier(" ".join(words)).lower() if len(words) >= 2 else None)  # "5% false positive rate"
        weighted = _LOSS_WEIGHT_BEFORE.search(before)
        if weighted and weighted.group("kind") == "cost" and not _LOSS_COST.search(before.lower()):
            weighted = None  # "the API cost 440": money, not a loss term's weight
        if name is None and weighted and not q.percent:
            words = [w for w in re.split(r"[\s\-]+", weighted.group("words").lower()) if w and w not in ("the", "a", "an", "and", "with")]
            loss = bool(weighted.group("loss")) or words[-1:] == ["loss"]
            words = words[:-1] if words[-1:] == ["loss"] else words
            if words and all(re.fullmatch(r"[a-z][a-z0-9]*", w) for w in words) and words[-1] not in _NOT_WEIGHTED:
                suffix = {"coefficient": "coef", "coef": "coef", "cost": "cost"}.get(weighted.group("kind"), "weight")
                name = "_".join(words + (["loss"] if loss else []) + [suffix])  # "content weight 1", "mel-loss weight 45"
        lossy = False  # named by a plural whose modifiers were dropped: "2 time masks" is not every mask count
        in_list = bool(re.search(r"\d\s*(?:,|\band\b|\bor\b)\s*$", before))  # "0, 1, 2, 3 levels": the noun counts a list
        if name is None and isinstance(q.value, int) and q.value >= 2 and not q.percent and not in_list:
            plural = re.match(r"\s*(?P<mods>(?:[A-Za-z][\w\-]*\s+){0,3}?)(?P<noun>[A-Za-z][a-z]{2,}s)\b", after)
            noun = plural.group("noun").lower() if plural else ""
            if plural and noun.endswith("ss"):  # "80 class text prompts": "class" is not a plural
                plural = re.match(r"\s*(?P<mods>(?:[A-Za-z][\w\-]*\s+){0,3}?)(?P<noun>[A-Za-z][a-z]{2,}[^s]s)\b", after)
                noun = plural.group("noun").lower() if plural else ""
            through = plural and any(w.lower() in _MOD_STOP for w in plural.group("mods").split())  # "4 for view directions"
            if plural and not through and noun not in _NOT_COUNTS and (plural.group("noun")[0].islower() or not plural.group("mods").strip()):
                mods = plural.group("mods").split()
                qualifier = _COUNT_QUALIFIERS.get(mods[-1].lower()) if mods else None
                name = f"num_{qualifier}_{noun}" if qualifier else "num_" + noun  # "50 negative samples"
                lossy = bool(mods)  # dropped or read as a qualifier, the modifier is the later number's own
        if name is None and i == 0 and label_phrase and not body[: q.start].strip():
            name = label_phrase[0]
        row = re.fullmatch(r"\s*(?:[A-Z][\w\-.]*\s+){1,3}", body[: q.start]) and not body[q.end :].strip()
        if name is None and i == 0 and label_phrase and row and not modified:
            name = label_phrase[0]  # "Per-dataset batch sizes: Adult 256, Higgs 1024": one row of a per-task table
        identifier = re.search(r"(?<![\w.])(?P<id>[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)\s*[:=]?\s*$", before)
        if name is None and identifier:  # "colsample_bytree 0.8", "d_model 128": a code identifier names its value
            name = terms.canonical_name(identifier.group("id"), b.aliases)
        if name == "num_layers" and (part := _layer_part(f"{label or ''}: {before}" if not before.strip() else before, after)):
            name = f"num_{part}_layers"  # "an 8-layer mapping network", "the discriminator has 4 layers"
        if name in _SHARE_NAMES and q.percent:
            name = _SHARE_NAMES[name]  # "10% warmup": a share of the run, not a step count
        split = _SPLIT_LABELS.get(label.strip().lower()) if label else None
        if name is None and i == 0 and split and isinstance(q.value, int) and not body[: q.start].strip():
            name = f"num_{split}_samples"  # "test: 50 (control), 2000 (super-res)": the split's sizes, per case
        if name is None and i == 0 and b.previous_name and re.fullmatch(r"\s*(?:for|in|on)\b[^\d]*", body[q.end :]) and not body[: q.start].strip():
            name = b.previous_name  # "2x10^3 samples for ODE1, 1x10^3 for PDE3": the same quantity, another case
        last_end = q.end
        if name is not None and _DURATION_UNIT.match(after if not q.unit else f" {q.unit}") and not _DURATION_NAME.search(name):
            name = None  # "a 3-second reference clip", "1 s clips": a length of time, not the clip range nor a class count
        if name is None and re.match(r"\s*(?:and|or)\s+[-+]?\d", after) and not _NAMED_BEFORE.search(before):
            pending.append(q)  # "500 and 100 samples": named with the number after it ("input size 784 and 2
            continue  # hidden layers": a 784 after words of its own is not one of the layers)
        qualified = re.match(r"\s*(?P<q>[a-z]+)\s*(?:\+|and|or)\s*\d+\s+(?P<q2>[a-z]+)\s+[a-z]+s\b", after)
        if name is None and qualified and qualified.group("q") in _COUNT_QUALIFIERS and qualified.group("q2") in _COUNT_QUALIFIERS:
            pending_qualifier[id(q)] = _COUNT_QUALIFIERS[qualified.group("q")]
            pending.append(q)  # "6 static + 4 dynamic layers": num_static_layers and num_dynamic_layers
            continue
        if name is None:
            for earlier in pending:
                unnamed.append(earlier.raw)
            pending = []
            if not _inside_parentheses(body, q.start) or _OTHER_CASE.match(body, q.end):
                unnamed.append(q.raw)  # a number in a parenthetical remark qualifies, it is not a claim; a value
            continue  # for another case ("dropout 0.3 (0.1 for the high-resource pairs)") is one, untyped
        if lossy:  # "width up to 27 and 2 time masks": the 27 is not a count of time masks
            unnamed.extend(e.raw for e in pending if id(e) not in pending_qualifier)
            pending = [e for e in pending if id(e) in pending_qualifier]
        for earlier in pending:
            own = pending_qualifier.get(id(earlier))
            kind = re.match(r"num_[a-z]+_(?P<noun>[a-z]+)$", name) if own else None
            made.append(b.add(_value_check(f"num_{own}_{kind.group('noun')}" if kind else name, earlier.value)))
        pending = []
        if name in _BENCHMARK_PARTS and _BENCHMARK_LABEL.search(f"{label} {b.label}"):
            pending = []
            continue  # "VTAB-1K benchmark: 19 tasks in 3 groups": how the benchmark is made up, not a setting
        if terms.lexicon_index().get(name.lower()) == "num_seeds":  # a protocol check: b.add renames only values
            name = terms.name_in_context(name, f"{b.label} {b.fragment}", b.claim)
            if name is None:
                continue
        if name == "image_size" and _video_shape(q.value, b.claim):
            # "at resolution 16×256×256" of a video: 16 frames of 256×256, which code sets as two settings
            made.append(b.add(_value_check("num_frames", q.value[0])))
            q = dataclasses.replace(q, value=q.value[1:])
        if i == 0 and not body[: q.start].strip() and _ends_a_number_list(b):
            unnamed.append(q.raw)  # "at 0, 1, 2, 3 levels": the noun counts the list, not its last item
            continue
        # the words between this value's neighbours are its own: "10^6 environment steps with 25K random steps
        # before learning" says "before learning" of the 25K, not of the 10^6
        # (and the fragment's label and lead, which say what all its values are of: "DDIM inference: 50 steps ...")
        own = body[found[i - 1].end if i else 0 : found[i + 1].start if i + 1 < len(found) else len(body)]
        b.window = f"{label or ''} {body[: found[0].start]} {own}" if len(found) > 1 else None
        made.append(b.add(_value_check(name, q.value)))
        b.window = None
        paired = re.match(r"\s*[A-Za-z][\w\-]*/(?P<other>[A-Za-z][\w\-]*)\b", after)
        other = terms.find_phrase(paired.group("other")) if paired else None
        if other and other[1] == 0 and other[0] != name:  # "5% FPR/FNR": the value of both
            made.append(b.add(_value_check(other[0], q.value)))
    unnamed.extend(q.raw for q in pending)
    made.extend(_milestones(points, body, b))
    return made, unnamed


_DECAY_AT = re.compile(
    r"\b(?:decay\w*|divided|multiplied|dropped|reduced|decreased|lowered|halved)\b[^,;:]*\bat\s+(?:(?:epochs?|steps?|iterations?|iters?)\s+)?$",
    re.IGNORECASE,
)


def _milestones(points: list[tuple[numbers.Quantity, str]], body: str, b: _Builder) -> list[int]:
    """"learning rate decayed at 60K and 80K iterations": the steps a step schedule decays at (MultiStepLR's
    milestones); points in time after anything else name nothing. A list that runs to the end of the fragment
    may go on in the next one ("at epochs 30, 60 and 80" is cut at its commas), so it is not read."""
    if not points or not _DECAY_AT.search(points[0][1]) or not all(isinstance(q.value, int) for q, _ in points):
        return []
    if re.search(r"\bhalved\b", points[0][1], re.IGNORECASE) and not _LR_SCHEDULE_WORDS.search(b.claim):
        return []  # "the loss weight is halved at 10 epochs": another schedule
    total = re.match(r"\s*of\s+(?P<n>\d{1,5})\b(?!\s*[%.]\d)", body[points[-1][0].end :])  # "at epochs 10, 16 and 22 of 24"
    if total and re.search(r"\bepochs?\b", points[0][1], re.IGNORECASE) and int(total.group("n")) > points[-1][0].value:
        extra = [b.add(_value_check("epochs", int(total.group("n"))))]
        b.milestone_total = int(total.group("n"))  # read: the number is not left unnamed
    else:
        extra = []
    closed = re.search(r"\b(?:and|or)\s+$", points[-1][1]) and len(points) >= 2  # "at epochs 30, 60 and 80"
    if not closed and not re.match(r"\s*[A-Za-z]", body[points[-1][0].end :]):
        return []
    return [b.add(_value_check("lr_milestones", [q.value for q, _ in points]))] + extra


_BENCHMARK_LABEL = re.compile(r"\b(?:benchmarks?|suites?)\b", re.IGNORECASE)
_BENCHMARK_PARTS = frozenset({"num_tasks", "num_groups", "num_subsets", "num_domains", "num_datasets", "num_splits"})
_SPLIT_LABELS = {"train": "train", "training": "train", "test": "test", "testing": "test", "val": "val", "validation": "val"}
# "output 512 tokens", "generate up to 256 new tokens", "responses of at most 1024 tokens": a generation length
_GENERATE_VERB = re.compile(
    r"\b(?:outputs?|output(?:ting)?|generat(?:e|es|ed|ing)|produc(?:e|es|ed|ing)|decod(?:e|es|ed|ing)|"
    r"responses?\s+(?:of|with))\s+(?:(?:up\s+to|at\s+most|a\s+maximum\s+of|max(?:imum)?)\s+)?$",
    re.IGNORECASE,
)
_INTERVAL_VERBS = {
    "evaluated": "eval_interval", "validated": "eval_interval", "saved": "save_interval", "checkpointed": "save_interval",
    "logged": "log_interval", "recomputed": "update_interval", "updated": "update_interval", "refreshed": "update_interval",
    "synchronized": "sync_interval", "synced": "sync_interval", "resampled": "resample_interval",
    "eval": "eval_interval", "evaluate": "eval_interval", "evaluation": "eval_interval", "validate": "eval_interval",
    "validation": "eval_interval", "save": "save_interval", "checkpoint": "save_interval", "log": "log_interval",
    "logging": "log_interval", "sync": "sync_interval", "train": "train_freq",
}  # fmt: skip  # "rankings recomputed every 1,000 interactions" -> update_interval; "eval every 50K steps" -> eval_interval
_NEUTRAL_COUNT_MODIFIERS = frozenset(
    "training total gradient optimization optimisation optimizer optimiser update environment agent more additional "
    "further extra full whole consecutive sequential successive random independent separate different distinct "
    "transformer convolutional conv linear dense fully recurrent residual attention parallel vectorized vectorised "
    "simulated evaluation stored saved recorded depth fine-tuning pre-training finetuning pretraining "
    "self-attention cross-attention multi-head".split()
)  # "100K training steps", "12 transformer layers": the run's or the model's own count
_COUNT_QUALIFIERS = {
    "positive": "positive", "negative": "negative", "training": "train", "train": "train", "test": "test",
    "testing": "test", "validation": "val", "val": "val", "calibration": "calibration", "labeled": "labeled",
    "unlabeled": "unlabeled", "labelled": "labeled", "unlabelled": "unlabeled", "static": "static",
    "dynamic": "dynamic", "encoder": "encoder", "decoder": "decoder", "hidden": "hidden",
    "coarse": "coarse", "fine": "fine", "frequency": "freq", "time": "time",
}  # fmt: skip  # "50 negative samples" -> num_negative_samples, "6 encoder layers" -> num_encoder_layers
_TARGET_SYNC_VERBS = frozenset({"updated", "synchronized", "synced", "sync", "copied", "refreshed"})  # "target network updated every 10K steps"
_MOD_STOP = frozenset(
    "for of in on at to with from by per the a an and or over across into each every than as via after before".split()
)  # words that end a noun phrase: "4 for view directions" does not count directions
_AT_POINT = re.compile(r"\bat\s+(?:epochs?|steps?|iterations?|iters?|updates?)\s+$", re.IGNORECASE)
def _layer_part(before: str, after: str) -> str | None:
    """The part a layer count is of when the words name one ("2-layer MLP projection head", "mapping network
    with 8 layers"): its layers are not the model's ``num_layers``."""
    tail = re.match(r"\s*-?\s*layers?\b(?P<np>(?:\s+[A-Za-z][\w\-]*){0,4})", after, re.IGNORECASE)
    words = tail.group("np").split() if tail else []
    lead = re.search(r"(?P<np>(?:[A-Za-z][\w\-]*\s+){1,3})(?:has|with|of|uses|contains|:)?\s*$", before)
    words += lead.group("np").split() if lead else []
    return next((w.lower() for w in words if w.lower() in _LAYER_PARTS), None)


_LAYER_PARTS = frozenset(
    "head projector predictor mapping discriminator generator critic actor classifier neck tower".split()
)  # a backbone's, an encoder's or a decoder's layers are the model's own (num_layers, num_encoder_layers)
_PART_OF = re.compile(r"\b(?:head|projector|predictor|neck|branch|tower|stem)\s+(?:of|with)\s+$", re.IGNORECASE)
_AT_TIME = re.compile(r"\bat\s+$", re.IGNORECASE)
_STEP_UNIT_OR_LIST = re.compile(r"\s*(?:(?:iterations?|steps?|epochs?|updates?|iters?)\b|(?:,|and\b|or\b|$))", re.IGNORECASE)
_SHARE_NAMES = {"warmup_steps": "warmup_ratio", "warmup_epochs": "warmup_ratio"}  # a percentage of a step count is a ratio
_QUANTITY_MODIFIERS = frozenset(
    "final minimum min coarsest finest lowest highest smallest largest last end terminal".split()
)  # "finest resolution 2048", "final learning rate": another quantity than the phrase alone names
_WORD_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "twelve": 12}
_LAYERS_OF_UNITS = re.compile(
    r"(?<![\w.])(?P<n>\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve)\s+(?:[A-Za-z][\w\-]*\s+)?(?:hidden\s+)?layers?\s+"
    r"(?:of|with)\s+(?P<m>\d+)\s+(?:hidden\s+)?(?:units|neurons)(?:\s+each)?\b",
    re.IGNORECASE,
)  # "two hidden layers with 256 units each", "2 LSTM layers with 40 hidden units"


def _layers_of_units(body: str, b: _Builder) -> tuple[list[int], str]:
    """"N layers of M units": the depth and the width of an MLP, read together (alone, "256 units" names nothing);
    the text comes back with the span blanked."""
    made: list[int] = []
    for match in _LAYERS_OF_UNITS.finditer(body):
        depth = match.group("n").lower()
        made.append(b.add(_value_check("num_layers", _WORD_NUMBERS.get(depth) or int(depth))))
        made.append(b.add(_value_check("hidden_size", int(match.group("m")))))
        body = body[: match.start()] + " " * (match.end() - match.start()) + body[match.end() :]
    return made, body


def _modified_phrase(before: str, phrase: tuple[str, int, int]) -> bool:
    """A phrase right after a word that makes it another quantity ("finest resolution", "final learning rate"),
    unless that longer phrase is itself known."""
    normalised = terms.normalise_phrase(terms.ascii_symbol(before))
    previous = normalised[: phrase[1]].split()[-1:]
    return bool(previous) and previous[0] in _QUANTITY_MODIFIERS


def _leading_words(text: str) -> str:
    """The words of a noun phrase before the first word that ends it ("MLP of width" -> "MLP")."""
    words = text.split()
    return " ".join(words[: next((j for j, w in enumerate(words) if w.lower() in _MOD_STOP), len(words))])


def _singular(word: str) -> str:
    word = word.lower()
    return word[:-3] + "y" if word.endswith("ies") else word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _label_phrase(label: str) -> tuple[str, int, int] | None:
    """The parameter a fragment's label names, its last word read in the singular ("Per-dataset batch sizes");
    a one-word phrase only when it ends the label ("Latent diffusion sampling" names no latent size)."""
    words = label.split()
    if not words:
        return None
    singular = " ".join(_singular(w) if w[1:].islower() else w for w in words)
    hits = [h for h in (terms.find_phrase(singular), terms.find_phrase(label)) if h]
    if not hits:
        return None
    hit = max(hits, key=lambda h: h[2] - h[1])
    if hit is not hits[0]:
        singular = label
    text = terms.normalise_phrase(terms.ascii_symbol(singular))
    if " " not in text[hit[1] : hit[2]] and hit[2] < len(text.rstrip()) - 1:
        return None
    if re.search(r"\d[\d.,]*\s*$", text[: hit[1]]):
        return None  # "Speech Commands v2 (35 classes)": the label gives the phrase its own number, not the next one
    return hit


_INLINE_RE = re.compile(
    r"(?<![\w.{^_\-+*/])(?P<key>[A-Za-zα-ωΑ-Ω][\w']*)\s*(?:=|∈)\s*(?P<val>[\[{][^\]}]*[\]}]|[-+−]?(?:\d{1,3}(?:,\d{3})+(?!\d)|[\d.]+)(?:[eE][-+−]?\d+)?(?:\s*[x×]\s*10\^?-?\d+)?(?:/\d+(?:\.\d+)?)?[kKMB%]?)(?![\w.])(?!\s+if\b)"
    r"(?!\s*[*/^·]\s*[A-Za-z(\\])"  # "KL = -0.5 * sum(...)": the coefficient of an expression, not a value
    r"(?!\s*(?:\.\.|…|,\s*(?:\.\.\.|…)|to\s+[-\d]))"  # "k = 0 .. L-1", "lr = 1e-4 to 1e-3": a range's start
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
        value = _as_sweep(value, match.group("val"), context, match.group(0))  # "n ∈ {1, 5, 25}": one run each
        previous = clause.split()[-1:] if clause.strip() else []
        if key.lower() in terms.generic_keys():
            if not previous or not re.fullmatch(r"[A-Za-z][\w\-]*", previous[0]):
                continue  # a bare "dim=96" names nothing
            compound = f"{previous[0]} {key}"
            key = terms.canonical_name(compound, b.aliases) or terms.identifier(compound).lower()
        spelled = _spelled_symbol(key, previous, text[match.end() :]) if _is_symbol(key) else None
        if spelled is None and _is_symbol(key) and (named_by := _phrase_right_before(clause)):
            spelled = named_by  # "outer Adam lr β = 0.001", "inner-loop lr α = 0.01": the phrase names the symbol's value
        name = _name_for(key, b.aliases, label=context)
        canonical = terms.canonical_names()
        if not key.isascii() and name is not None and terms.lexicon_index().get(name.lower()) not in canonical and (
            terms.name_in_context(name, b.fragment, b.claim) not in canonical
        ):
            name = None  # "λ = 5e-4": the letter itself names nothing; "δ = 1e-5" of DP names target_delta
        if spelled:  # "Mixup α = 0.8", "T = 1000 diffusion steps": the words around the symbol name it
            names = [n for n in _symbol_names(key) if n != spelled]
            made.append(b.add(ValueCheck(name=spelled, names=names or None, **_expectation(value))))
        elif name is not None:
            made.append(b.add(_value_check(name, value)))
        elif _is_symbol(key) and (key.isascii() or "_" in key):  # a bare Greek key only when the words name it ("δ" of DP);
            # a subscripted one (λ_b) is a symbol of its own, as the first assignment of a fragment is
            made.append(b.add(_symbol_check(key, value, before=context)))
        else:
            continue
        rest = rest[: match.start()] + " " * (match.end() - match.start()) + rest[match.end() :]
        chained = re.search(r"(?<![\w.{^_\-+*/])(?P<key>[A-Za-z][\w']*)\s*=\s*$", text[: match.start()])
        if chained and _is_symbol(chained.group("key")) and _is_symbol(key):  # "S_x=S_y=64": both are 64
            made.append(b.add(_symbol_check(chained.group("key"), value, before=context)))
            rest = rest[: chained.start()] + " " * (chained.end() - chained.start()) + rest[chained.end() :]
    return made, rest


def _spelled_symbol(key: str, previous: list[str], after: str) -> str | None:
    """The known parameter a paper symbol stands for when the word before it and the symbol make a known phrase
    ("Mixup α" -> mixup_alpha, "GAE λ") or a known phrase follows its value ("T = 1000 diffusion steps")."""
    symbol = terms.ascii_symbol(key.strip("$`"))
    if previous and re.fullmatch(r"[A-Za-z][\w\-]*", previous[0]):
        hit = terms.find_phrase(f"{previous[0]} {symbol}")
        if hit and hit[1] == 0 and hit[2] == len(terms.normalise_phrase(f"{previous[0]} {symbol}")):
            return hit[0]
        greek = {"lam": "lambda", "lmbda": "lambda"}.get(terms.identifier(symbol).lower(), terms.identifier(symbol).lower())
        known = terms.find_phrase(f"{previous[0]} {greek}")
        if known and known[1] == 0 and known[2] == len(terms.normalise_phrase(f"{previous[0]} {greek}")):
            return None  # "GAE λ": a known phrase, which the symbol's own reading names (gae_lambda)
        if (re.fullmatch(r"[A-Z][A-Z0-9+\-]{1,7}", previous[0]) and greek in terms.GREEK_NAMES
                and previous[0].lower() not in terms.optimizer_words() and not terms.find_protocol_terms(previous[0])):
            return f"{re.sub(r'[^a-z0-9]+', '_', previous[0].lower()).strip('_')}_{greek}"  # "CQL α = 5", "EWC λ": the method's own
    words = re.match(r"\s+((?:[a-z][\w\-]*\s+){0,2}[a-z][\w\-]*)", after, re.IGNORECASE)  # "N = 16 Fourier modes"
    if words:
        hit = terms.find_phrase(words.group(1))
        if hit and hit[1] == 0 and " " in terms.normalise_phrase(words.group(1))[: hit[2]]:
            return hit[0]  # a phrase of two or more words: "diffusion steps", not "steps" alone
    return None


def _distribution_checks(text: str, b: _Builder) -> tuple[list[int], str]:
    """``X ~ U(0, 4)`` -> call of the sampler; "W initialised from N(0, 0.02)" -> init check on W. Returns
    the text with the distributions blanked, so their parameters are not read as unnamed values."""
    made: list[int] = []
    rest = text
    for dist in distributions.find(text):
        if mentions.BOUNDARY_AFTER.match(text, dist.end):
            continue  # "Dirichlet BC", "Neumann boundary": a boundary condition, not a distribution
        target = distributions.initialised(text, dist.start) if dist.init else None
        if target and dist.init:
            made.append(b.add(InitCheck(name=target, expect=dist.init, args=dist.init_args)))  # type: ignore[arg-type]
        else:
            made.append(b.add(CallCheck(target=dist.call, args=dist.call_args)))
        rest = rest[: dist.start] + "§" * (dist.end - dist.start) + rest[dist.end :]
    return made, rest


_PREPOSITIONS = frozenset("a an the and or of to in on at by for with from as per its their each all".split())
_MAX_UNEXPLAINED_WORDS = 5
_FUNCTION_WORDS = _PREPOSITIONS | frozenset(
    "is are was were be been uses use used using applies apply applied via through into every this that which then "
    "than also only both while where layer layers function loss model module method network block blocks "
    "activation optimizer scheduler schedule training trained train during after before".split()
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
    """Named APIs, except a name the claim compares against: "FNO" in a baseline list is that baseline's
    check, which accepts the repo's own implementation; a call check would demand the library's."""
    hits = terms.find_apis(text)
    named = [h for h in hits if not any(text[h.start : h.end].lower() in name for name in b.baselines)]
    kept = []
    made = []
    for h in named:
        why = mentions.not_a_call(text, h, b.claim)
        kind = re.match(r"[a-z]+", text[h.start : h.end].lower())
        if why is None:
            kept.append(h)
        elif (other := mentions.scheduled_quantity(text, h)) and kind and kind.group(0) in _SCHEDULE_KINDS:
            # "cosine scheduler for guidance intensity": the guidance's schedule, a setting, not an LR scheduler call
            quantity = re.sub(r"\W+", "_", other)
            made.append(b.add(ValueCheck(name=f"{quantity}_schedule", names=[f"{quantity}_scheduler"], expect=kind.group(0))))
        elif why:
            b.api_notes.append(why)
    return made + [b.add(CallCheck(target=h.target)) for h in kept]


_SCHEDULE_KINDS = frozenset("cosine linear exponential step constant polynomial sigmoid quadratic".split())


def _protocol_checks(text: str, b: _Builder, dimension: Dimension | None = None) -> list[int]:
    out = []
    found = [h for h in terms.find_protocol_terms(text) if not (h.category == "metric" and (
        _not_a_metric_here(text, h) or text[h.start : h.end].lower() in b.baselines))]  # "Baselines: DANN, MCC": a method
    for hit in found:
        out.append(b.add(ProtocolCheck(rule=hit.category, expect=hit.target)))
    lowered = text.lower()
    for rule in terms.protocol_rules_stated(text):
        out.append(b.add(ProtocolCheck(rule=rule)))
    # A method sentence names frozen parts among much else ("adapters after each block of the frozen backbone"):
    # in D2 a frozen part is typed only from a statement that is the whole fragment (method_claims). A
    # baseline's or an ablation's frozen parts are not the main method's, in any dimension.
    if dimension != Dimension.methodological and not method_claims.describes_variant(b.claim):
        for name in _frozen_targets(lowered, b.claim.lower()):
            out.append(b.add(ProtocolCheck(rule="frozen", name=name)))
        for expect, dataset in _augmentations(text, b.claim, {h.target for h in found if h.category == "dataset"}):
            extra = {"dataset": dataset} if dataset else {}
            out.append(b.add(ProtocolCheck(rule="augmentation", expect=expect, **extra)))
    if dimension in (Dimension.numerical, Dimension.protocol):  # "Llama-3.2 3B fine-tuned on", "gpt-4o-... (OpenAI)"
        for name in protocol_claims.model_names(text):
            out.append(b.add(ProtocolCheck(rule="model", expect=name)))
    known = {n.lower() for h in found if h.category == "metric" for n in (h.target, h.name)}  # "average return" = episode return
    for name in _labelled_datasets(text):
        if not any(h.category == "dataset" for h in terms.find_protocol_terms(name)):
            out.append(b.add(ProtocolCheck(rule="dataset", expect=name)))  # "Dataset: 1D Navier-Stokes": unlisted
    for base, qualifier in _listed_metrics(text):
        if not base:
            b.unchecked.append(qualifier)
            continue
        base = protocol_claims.metric_symbol(base, b.claim) or base  # "control objective J": the symbol J
        if any(h.category == "dataset" and h.start == 0 and h.end == len(base) for h in terms.find_protocol_terms(base)):
            continue  # "accuracy on GSM8K and MATH": MATH is the qualifier's second dataset, not a metric
        if qualifier and protocol_claims.skips_initial(qualifier) and protocol_claims.checkable_metric(base):
            out.append(b.add(ProtocolCheck(rule="metric", expect=base, skip_initial=True)))  # "MSE excluding initial conditions"
            continue
        if qualifier:
            b.unchecked.append(qualifier)  # "MSE at finest resolution": MSE is computed; where is not checked
        if base.lower() not in known and base.lower() not in _NOT_METRICS and (protocol_claims.checkable_metric(base) or protocol_claims.metric_symbol(base, b.claim)):
            out.append(b.add(ProtocolCheck(rule="metric", expect=base)))
    if dimension in (Dimension.protocol, Dimension.ordering):  # "evaluated with and without X (ABBR)"
        for name, spellings in protocol_claims.ablated_components(text):
            out.append(b.add(_baseline_check(name, spellings)))
    return out


_LOSS_AFTER = re.compile(r"\s*(?:\)\s*)?(?:loss|objective|criterion|regression loss|reconstruction loss)\b", re.IGNORECASE)
_SPLIT_BEFORE = re.compile(r"\b(?:training|train|test|testing|validation|val|calibration|data)\s*$", re.IGNORECASE)


def _not_a_metric_here(text: str, hit: terms.ApiHit) -> bool:
    """"trained with the MSE loss": a training loss, which the loss's call or formula checks, not an evaluation
    metric; "training set size": the size of a split, not the conformal metric "set size"."""
    return bool(_LOSS_AFTER.match(text, hit.end)) or (
        hit.target.lower() == "set size" and bool(_SPLIT_BEFORE.search(text[: hit.start]))
    ) or (hit.target == "MAE" and bool(_MASKED_AUTOENCODER.search(text))) or mentions.not_a_metric(text, hit)


# "MAE ViT-L pretrain: mask ratio 75%": the masked autoencoder, not the mean absolute error
_MASKED_AUTOENCODER = re.compile(r"\b(?:mask(?:ed|ing)?\s+(?:ratio|autoencoder|image\s+model)|autoencoder|pre-?train\w*|ViT|"
                                 r"MAE\s+(?:ViT|decoder|encoder|model|style|objective|recipe))\b", re.IGNORECASE)


_AUGMENT_COMPARED = re.compile(r"\b(?:vs\.?|versus|compar\w*|ablat\w*|with and without|instead of|rather than)\b", re.I)
_AUGMENT_NEGATED = re.compile(r"\b(?:no|without|w/o|not|disabled?|nor)\s+(?:\w+\s+)?$", re.I)
_AUGMENT_OFF = re.compile(r"\s*(?:α|alpha|prob(?:ability)?|p|ratio)?\s*(?:=|:|of)\s*0(?:\.0*)?(?![\d.])", re.I)
_AUGMENT_VALUE = re.compile(r"\s*(?:α|alpha|β|beta|prob(?:ability)?|p|ratio|rate)?\s*(?:=|:|∈|~|in\s*[\[{(])", re.I)


def _augmentations(text: str, claim: str, datasets: set[str]) -> list[tuple[str | list[str], str | None]]:
    """"no data augmentation" -> ``none``; "horizontal flips and RandAugment" -> [horizontal_flip, randaugment], for
    the one dataset the fragment (else the claim) names. A comparison of augmentations (an ablation), a negated or
    zero-probability one ("without Mixup", "CutMix α = 0"), or both kinds at once stay with the judge."""
    lowered = text.lower()
    if not any(w in lowered for w in ("augment", "flip", "crop", "mix", "jitter", "erasing")) or _AUGMENT_COMPARED.search(text):
        return []
    kinds: list[str] = []
    rest = text
    for regex, names in _augmentation_regexes():
        for m in regex.finditer(rest):
            if names != ["none"] and (_AUGMENT_NEGATED.search(rest[: m.start()]) or _AUGMENT_OFF.match(rest, m.end())):
                return []
            if not _AUGMENT_VALUE.match(rest, m.end()):  # "Mixup α = 0.8" is its parameter's value check
                kinds += names
        rest = regex.sub(lambda m: " " * len(m.group(0)), rest)
    kinds = list(dict.fromkeys(kinds))
    if not kinds or ("none" in kinds and len(kinds) > 1):
        return []
    datasets = datasets or {h.target for h in terms.find_protocol_terms(claim) if h.category == "dataset"}
    if len(datasets) > 1:
        return []  # "flips for CIFAR-100 and none for Clevr": which dataset each is for is not read here
    return [("none" if kinds == ["none"] else kinds, next(iter(datasets), None))]


@functools.cache
def _augmentation_regexes() -> tuple[tuple[re.Pattern, list[str]], ...]:
    out = []
    for phrase, names in sorted(terms.protocol_mapping_lists("augmentation").items(), key=lambda kv: (-len(kv[0]), kv[0])):
        words = [re.escape(w) for w in re.split(r"[\s_\-]+", phrase.strip()) if w]
        out.append((re.compile(r"(?<![\w\-])" + r"[\s_\-]*".join(words) + r"(?![\w\-])", re.I), names))
    return tuple(out)


def _frozen_targets(lowered: str, sentence: str = "") -> list[str]:
    """"frozen backbone", "the text encoder is kept frozen" -> the code names of rules' ``frozen_targets``; and the
    parts a list says stay frozen ("the U-Net, VAE and text encoder of SD 1.5 stay frozen"), read in the whole
    ``sentence`` when this fragment holds the list's end (its commas cut the list into fragments)."""
    if "froz" not in lowered and "freez" not in lowered:
        return []
    matched = [(target, code_name) for target, regex, code_name in _frozen_regexes() if regex.search(lowered)]
    # "text encoder frozen" is the text encoder's, not also an "encoder frozen"
    found = list(dict.fromkeys(code for target, code in matched
                               if not any(target != other and re.search(rf"\b{re.escape(target)}$", other) for other, _ in matched)))
    targets = terms.protocol_mapping("frozen_targets")
    for clause in _FROZEN_LIST.finditer(sentence or lowered):
        if sentence and lowered.strip() not in clause.group(0):
            continue  # another fragment's list
        for item in re.split(r",\s*(?:and\s+)?|\s+and\s+", clause.group("items")):
            words = re.sub(r"\s+of\s+.*$", "", item.strip()).split()
            hit = next((" ".join(words[i:]) for i in range(len(words)) if " ".join(words[i:]) in targets), None)
            if hit and targets[hit] not in found:
                found.append(targets[hit])
    return found


# "A, B and C (of X) stay frozen": the parts, each to be looked up whole (the last words of an item: "the U-Net")
_FROZEN_LIST = re.compile(
    r"(?P<items>(?:[\w\-]+\s+){0,3}[\w\-]+(?:,\s*(?:and\s+)?(?:[\w\-.]+\s+){0,5}[\w\-.]+)*?"
    r"\s+and\s+(?:[\w\-.]+\s+){0,6}[\w\-.]+)\s+(?:is|are|stay|stays|remain|remains|was|were|kept)\s+(?:kept\s+)?frozen\b"
)


@functools.cache
def _frozen_regexes() -> tuple[tuple[str, re.Pattern, str], ...]:
    out = []
    for target, code_name in terms.protocol_mapping("frozen_targets").items():
        t = re.escape(target.lower())
        out.append((target.lower(), re.compile(
            rf"\b(?:frozen|freeze|freezing|freezes)\s+(?:the\s+)?(?:[\w.]+\s+)?{t}\b|\b{t}\s+(?:is|are|was|were|kept|stays?|remains?)\s+(?:kept\s+)?frozen\b(?!\s+(?:for|until|during)\b)"
            rf"|\b(?:keeps?|keeping|kept)\s+(?:the\s+|all\s+)?(?:\w+\s+)?{t}\s+frozen\b"
            rf"|\b{t}(?:\s+[\w.\-]+)?\s*\(frozen\)|\b{t}\s+frozen\b(?!\s+(?:for|until|during))"  # "teacher Qwen-7B (frozen)", "VAE frozen"
        ), code_name))
    return tuple(out)


@functools.cache
def _metric_list_regex() -> re.Pattern | None:
    cues = "|".join(re.escape(c) for c in sorted(terms.protocol_words("metric_cues"), key=len, reverse=True))
    return re.compile(
        rf"\b(?:{cues})\b\s*(?:is|are|:)\s*(?P<list>[^.;()]{{3,160}}|(?-i:[A-Z](?:_\w+)?)(?=\s*(?:[.;(]|$)))", re.IGNORECASE
    ) if cues else None  # "Metric: J.": a lone symbol, which ``metric_symbol`` keeps only when the claim defines it


_METRIC_ITEM = re.compile(r"^[A-Za-z][\w\-@/'’+.]*(?:\s[A-Za-z][\w\-@/'’+.]*){0,3}$")  # Cohen's kappa, chrF++, PCKh@0.5


_METRIC_QUALIFIER = re.compile(
    r"\s+(?P<q>(?:at|per|vs\.?|versus|excluding|including|over|across|on|for|in|under|after|before|with|without)\s.*)$",
    re.IGNORECASE,
)
_NOT_METRICS = frozenset({"params", "parameters", "time", "cost"})  # a parameter count; too generic to look for


def _metric_qualifier(item: str) -> tuple[str, str]:
    """``MSE at finest resolution`` -> (``MSE``, ``at finest resolution``): the metric, and where it is taken."""
    versus = re.search(r"\s+(?:vs|versus)\.?$", item, re.IGNORECASE)  # "Top-1 Accuracy vs. parameter count", cut at its ".":
    if versus and item[: versus.start()].strip():  # what it is plotted against is how it is reported, not what it is
        return item[: versus.start()].strip(), ""
    match = _METRIC_QUALIFIER.search(item)
    if not match or not item[: match.start()].strip():
        return item, ""
    if re.fullmatch(r"in\s+(?:usd|dollars?|%|percent|percentage|seconds?|s|ms|minutes?|hours?|gb|mb|gib|mib)", match.group("q"), re.IGNORECASE):
        return item[: match.start()].strip(), ""  # "cost in USD": a unit, not a condition
    return item[: match.start()].strip(), match.group("q")


_DATASET_LABEL = re.compile(r"^\s*(?:data\s*sets?|datasets?|benchmarks?)\s*:\s*(?P<list>[^.;:()]{2,120})$", re.IGNORECASE)
_DATASET_ITEM = re.compile(r"^(?=.*(?:[A-Z]|\d))[A-Za-z0-9][\w\-+./']*(?:\s[A-Za-z0-9][\w\-+./']*){0,3}$")


def _labelled_datasets(text: str) -> list[str]:
    """Names after a "Dataset(s):" label ("Dataset: 1D Navier-Stokes"): proper names, not a description."""
    match = _DATASET_LABEL.match(text)
    if not match:
        return []
    items = [i.strip() for i in re.split(r",|\band\b", match.group("list")) if i.strip()]
    names = [i for i in items if _DATASET_ITEM.match(i) and all(w[:1].isupper() or w[:1].isdigit() for w in i.split())]
    return names if names and len(names) == len(items) else []


_STATED_OF_METRICS = re.compile(
    r"(?:[a-z]+ed|[a-z]+en|identical|same|different|shared|consistent|available|unchanged|comparable)\b(?![\w-])"
)


def _listed_metrics(text: str) -> list[tuple[str, str]]:
    """(name, qualifier) of each item of "metrics: A, B and C" / "evaluated by A and B" lists."""
    regex = _metric_list_regex()
    if regex is None:
        return []
    out: list[tuple[str, str]] = []
    for match in regex.finditer(text):
        if _STATED_OF_METRICS.match(match.group("list")):
            # "metrics are computed for the solution path", "metrics are identical": said of them, not names;
            # where they are taken is still a claim no check covers
            _, where = _metric_qualifier(match.group("list").strip())
            out.extend([("", where)] if where else [])
            continue
        out.extend(_metric_items(match.group("list")) or [])
    return out


def _metric_items(listed: str) -> list[tuple[str, str]] | None:
    """(name, qualifier) of every item of a metric list, or None when one of them is no metric's name."""
    items = [i.strip() for i in re.split(r",|\band\b|\bor\b", listed)]
    items = [re.sub(r"^(?:the|a|an|four|three|two|both)\s+", "", i, flags=re.IGNORECASE) for i in items if i]
    split = [_metric_qualifier(i) for i in items]
    good = [(m.rstrip("."), q) for m, q in split if _METRIC_ITEM.match(m) and not re.search(r"(?<![\w\-@.])\d", m)]
    return good if good and len(good) == len(items) else None


def _metric_lists_across_fragments(text: str) -> list[tuple[list[str], tuple[int, int]]]:
    """A "Metrics: A, B and C" list the fragment splitter cuts at its commas, read whole: its metrics (as the
    vocabulary names them) and its span; only a list of plain names, each one a metric the rule can look for."""
    regex = _metric_list_regex()
    out: list[tuple[list[str], tuple[int, int]]] = []
    for match in regex.finditer(text) if regex else []:
        listed = match.group("list")
        if "," not in listed or _STATED_OF_METRICS.match(listed):
            continue  # one fragment reads it already
        items = _metric_items(listed)
        if not items or any(qualifier for _, qualifier in items):
            continue
        names = []
        for item, _ in items:
            hits = [h for h in terms.find_protocol_terms(item) if h.category == "metric"]
            name = hits[0].target if hits else item  # "OOD AUROC": the vocabulary's AUROC, as each fragment reads it
            if item.lower() in _NOT_METRICS or not protocol_claims.checkable_metric(name) or any(
                h.category == "dataset" for h in terms.find_protocol_terms(item)
            ):
                break
            names.append(name)
        else:
            out.append((names, match.span("list")))
    return out


_DEFINITION = re.compile(r"^\s*[A-Za-z]\w{0,12}\s*=\s*(?:[a-z][a-z\-/]*\s+){1,8}[a-z][a-z\-/]*\s*(?:\([a-z\s\-+/]*\))?\s*$")
# "m = max actions per user account (rate limit)": the meaning of a symbol of a formula
_GREEK = ("alpha|beta|gamma|delta|epsilon|eta|theta|kappa|lambda|mu|nu|rho|sigma|tau|phi|psi|omega")
_SYMBOL = rf"(?:[A-Z]|(?:{_GREEK}|[a-zA-Z])_\{{?\w{{1,3}}\}}?|[α-ω])(?![\w(])"
# "group-wise transformation with G groups", "each with independent advection alpha_i and forcing amplitude
# delta_i": quantities named by their symbols only; the value (if any) is stated elsewhere
_SYMBOLIC_QUANTITY = re.compile(
    rf"^(?:each\s+)?(?:[A-Za-z][\w\-]*\s+){{0,4}}?with\s+(?:an?\s+)?(?:[a-z][\w\-]*\s+){{0,3}}{_SYMBOL}(?:\s+[a-z]+s\b)?"
    rf"(?:\s*(?:,|and|,\s*and)\s+(?:[a-z][\w\-]*\s+){{0,3}}{_SYMBOL}(?:\s+[a-z]+s\b)?)*\s*$"
)
# "evaluated at multiple points for the trade-off analysis": how many is left unsaid, so there is no value
_UNSTATED_COUNT = re.compile(
    r"^(?:[A-Za-z][\w\-]*\s+){0,3}?(?:at|over|on|with|across|for)\s+(?:multiple|several|various|many|a\s+few|a\s+range\s+of)\s+"
    r"(?:[a-z][\w\-]*\s+)?(?:points|values|settings|levels|choices|configurations)\b[^\d=<>]*$",
    re.IGNORECASE,
)


# "LoRA rank r = 8 and scale s = alpha / r": a setting, then a formula; the formula's sides must not swallow it
_LEAD_SETTING = re.compile(
    r"^(?P<setting>[^=;:]{1,60}?=\s*[-+]?\d[\d.]*(?:[eE][-+]?\d+)?%?)\s*(?:,\s*and|and|;|,)\s+(?P<formula>[^=;]{1,60}=[^=;]+)$"
)


# "L_GP = λ (‖∇D(x̂)‖ − 1)² with λ = 10": the formula, then the value of one of its constants
_SETTING_TEXT = r"[^\s=;,]{1,12}\s*=\s*[-+]?\d[\d.]*(?:[eE][-+]?\d+)?(?:\s*/\s*\d+)?%?"
_TRAIL_SETTING = re.compile(
    r"^(?P<formula>[^=;]{1,60}=[^;]+?)(?:\s*,\s*|\s+)(?:with|where)\s+"
    rf"(?P<setting>{_SETTING_TEXT}(?:\s*(?:,\s*(?:and\s+)?|and\s+){_SETTING_TEXT})*)(?P<named>\s*\([^()]*\))?\s*$"
)  # "... with eps = 8/255 and alpha = 2/255": each constant of the formula; "(F.l1_loss)": the APIs it uses


_SUBSCRIPTED = re.compile(r"\s*[A-Za-zα-ωΑ-Ω]\w*_\{?\w+\}?\s*=")  # "lambda_fm =", "s_0 =": a symbol with a name of its own


def _formula_constant(setting: str, b: _Builder) -> int | None:
    """"... with λ = 10" after a gradient penalty, "... with ε = 8/255" after an attack: the constant's value
    check, when the words of the claim name the parameter the symbol is there (rules/claim_terms.yaml
    ``context_names``: λ of a gradient penalty is lambda_gp, ε of an attack its budget). A symbol they do not
    name stays the judge's: read alone, ``eps`` would be Adam's and ``λ`` anyone's."""
    symbol, _, raw = setting.partition("=")
    keys = [terms.identifier(symbol.strip()), *_symbol_names(symbol.strip())[:1]]
    lexicon = terms.lexicon_index()
    for key in dict.fromkeys(k for k in keys if k):
        named = terms.name_in_context(key, b.fragment, b.claim)
        if named and named != key and named in terms.canonical_names() and lexicon.get(key.lower()) != named:
            value = numbers.parse_value(raw.strip())
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                index = b.add(ValueCheck(name=named, expect=value))
                return index if index >= 0 else None
    return None


# "σ = ReLU", "$\sigma$ is the GELU": the claim says what its σ(·) is (read as the sigmoid otherwise)
_SIGMA_IS = re.compile(
    r"(?:\\sigma|σ|(?<![\w\\])sigma)\$?\s*(?:=|\bis\b|\bdenotes\b|:)\s*(?:the\s+|a\s+)?(?P<act>ReLU|GELU|tanh|softplus|SiLU|swish|ELU|sigmoid)\b",
    re.IGNORECASE,
)
_SIGMA_ACTIVATIONS = {"relu": "ReLU", "gelu": "gelu", "tanh": "tanh", "softplus": "softplus", "silu": "silu", "swish": "silu",
                      "elu": "elu", "sigmoid": "sigmoid"}


@functools.cache
def _defined_sigma(claim: str) -> str | None:
    """The activation the claim says its σ(·) is, or None."""
    defined = _SIGMA_IS.search(claim)
    return _SIGMA_ACTIVATIONS[defined.group("act").lower()] if defined else None


def _sigma_as_defined(text: str, claim: str) -> str:
    """σ(·) applied in ``text`` as the activation the claim defines it to be (GCNII's "σ = ReLU")."""
    act = _defined_sigma(claim)
    if act is None:
        return text
    text = re.sub(r"\\sigma(?=\s*(?:\\big|\\Big|\\bigg|\\left)?\s*[(\[])", lambda m: f"\\operatorname{{{act}}}", text)
    return re.sub(r"(?<![\w\\])(?:σ|sigma)(?=\s*\()", act, text)


# "the eikonal term is mean((||grad f(p)||_2 - 1)^2)", "the temperature minimises -log_alpha * (logp + H)": a
# formula stated with a verb instead of "=" (its left side named in words)
_WORDED_FORMULA = re.compile(
    r"^(?:(?:and|while|then|so)\s+)?(?:the\s+|its\s+|a\s+|an\s+)?(?P<name>(?:[A-Za-z][\w-]*\s+){0,3}?"
    r"(?:loss|term|objective|penalty|regulari[sz]er|regularization|target|reward|score|estimate|bonus|cost|"
    r"critic|actor|temperature|policy|generator|discriminator|encoder|decoder|model|network))\s+"
    r"(?:is|reads|becomes|equals|minimi[sz]es|maximi[sz]es|optimi[sz]es|is\s+trained\s+to\s+minimi[sz]e)\s+(?P<expr>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
_MATH_WORDS = frozenset(
    "mean sum log exp sqrt norm grad min max abs softmax sigmoid tanh relu prod argmax argmin clip clamp var std "
    "det trace diag dot matmul sign floor ceil round detach stopgrad sg".split()
)


def _worded_formula(text: str) -> str | None:
    """``name = expr`` for a formula stated with a verb, when what follows the verb is an expression (operators or
    math calls, no two prose words in a row); else None."""
    m = _WORDED_FORMULA.match(text.strip())
    if not m:
        return None
    expr = re.split(r"\s+(?:with|where|using|via|from|on|for)\s+(?=[a-z])", m.group("expr"), maxsplit=1)[0].strip().rstrip(".")
    if not re.search(r"[-+*/^()|‖]", expr) or re.search(r"(?<![\w.])[A-Za-z]{3,}\s+[A-Za-z]{3,}(?![\w(])", _without(expr, _MATH_WORDS)):
        return None
    name = re.sub(r"\W+", "_", m.group("name").strip()).strip("_").lower()
    return f"{name} = {m.group('expr').strip()}"  # its condition ("with H = -dim(A)") read as any formula's


def _without(text: str, words: frozenset[str]) -> str:
    return re.sub(r"[A-Za-z]+", lambda w: "" if w.group(0).lower() in words else w.group(0), text)


def _formula_check(text: str, b: _Builder) -> tuple[list[int], str]:
    text = _sigma_as_defined(text, b.claim)
    if formulas.find_formula(text) is None and (worded := _worded_formula(text)) is not None:
        made, reason = _formula_check(worded, b)
        if made:
            return made, reason
    trail = _TRAIL_SETTING.match(text.strip())
    if trail and formulas.find_formula(trail.group("formula")) is not None:
        # the constant's symbol (λ, ε) names no parameter a repo sets under it (`eps` would be Adam's): the formula
        # is checked, the value is the judge's, and the fragment says so instead of counting as typed
        made, reason = _formula_check(trail.group("formula"), b)
        if made:
            settings = re.findall(_SETTING_TEXT, trail.group("setting"))
            constants = []
            for setting in settings:
                constant = _formula_constant(setting, b)
                if constant is None and _SUBSCRIPTED.match(setting):
                    # "with lambda_fm = 2 and lambda_mel = 45", "s_0 = 2": a named constant, read as any setting is
                    constant = next(iter(_compile_assignment(setting, b)[0]), None)
                if constant is not None:
                    constants.append(constant)
            named = _api_checks(trail.group("named"), b) if trail.group("named") else []
            if len(constants) == len(settings):
                return [*made, *constants, *named], reason
            return [*made, *constants, *named], reason or f"the formula is typed, not the value after it ('{trail.group('setting').strip()}')"
    lead = _LEAD_SETTING.match(text.strip())
    if lead and formulas.find_formula(lead.group("formula")) is not None:
        made, reason = _formula_check(lead.group("formula"), b)
        if made:
            setting, why = _compile_assignment(lead.group("setting"), b)
            if not setting:
                why = why or f"the setting before the formula ('{lead.group('setting').strip()}') is not typed"
            return setting + made, reason or why
    parts = _FORMULA_JOIN.split(text.strip())
    if len(parts) > 1 and formulas.find_formula(parts[0]) is None and (lhs := _FORMULA_LHS.search(parts[0])):
        parts[0] = parts[0][lhs.start() :]  # "the opacity between samples is alpha_i = ...": from the formula on
    if len(parts) > 1 and all(_computed_formula(formulas.find_formula(p)) for p in parts):
        # "H = -Σ p log p with p = softmax(z)", "α = ... with Φ(x) = sigmoid(s x) and a sharpness s = exp(10 v)":
        # each definition is a formula of its own, not the qualifier of the first
        made, reasons = [], []
        for part in parts:
            indices, why = _formula_check(part, b)
            made += indices
            reasons += [why] if why else []
        if made:
            return made, "; ".join(reasons)
    found = formulas.find_formula(text)
    if found is None:
        return [], ""
    if found.expect is None and found.latex is None:
        if found.call:  # "ᾱ_k = ∏_{i=1}^{k} α_i": a cumprod, checked as the call
            return [b.add(CallCheck(target=found.call))], ""
        return [], f"formula not translated: {found.reason}"
    if _SIGMA_APPLIED.search(found.latex or found.expect or "") and _SIGMA_NOT_SIGMOID.search(b.claim):
        # "AdaIN = σ(y) (x − μ(x)) / σ(x) + μ(y), where μ and σ are the mean and standard deviation": σ applied to an
        # argument is read as the sigmoid, which this claim says it is not
        return [], "formula not translated: σ(·) is a standard deviation here, not the sigmoid the reader takes it for"
    # "θ ← θ − η g": the check says which variable gets the new value, as a user writes it (`expect: "θ <- ..."`)
    expect = f"{found.update} <- {found.expect}" if found.expect and found.update and found.update_arrow else found.expect
    check = FormulaCheck(expect=expect, latex=found.latex, integral=list(found.integral), assume=dict(found.assume))
    return [b.add(check)], f"the formula is typed, not its condition '{found.unchecked}'" if found.unchecked else ""


# a formula's left side ("alpha_i =", "Phi_s(x) =", "\\bar{v} ="), and the seam between two formulas of one
# fragment: "with", "where" or "and" (and a few words naming the second symbol) before the second's left side
_LHS_TEXT = r"[A-Za-zα-ωΑ-Ω\\][\w\\{}^]*(?:\([^()]*\))?\s*=(?!=)"
_FORMULA_LHS = re.compile(rf"(?<![\w\\]){_LHS_TEXT}")
_FORMULA_JOIN = re.compile(rf"(?:\s*,\s*|\s+)(?:with|where|and)\s+(?:(?:a|an|the)\s+)?(?:[a-z][a-z\-]*\s+){{0,3}}(?={_LHS_TEXT})")


def _computed_formula(found: Any) -> bool:
    """A formula that computes something: translated, and not a list that only says what a symbol stands for
    ("where h = [Q, K, V]": notation, which no code computes as written)."""
    return found is not None and bool(found.expect or found.latex) and not (found.expect or "").startswith("concat(")


_SIGMA_APPLIED = re.compile(r"(?:\\sigma|σ|\bsigma)\s*\(")
_SIGMA_NOT_SIGMOID = re.compile(
    r"(?:\\sigma|σ|\bsigma)\b[^.;]{0,60}?\b(?:standard deviations?|std|spread)\b|"
    r"\b(?:mean|μ|\\mu)\s+and\s+(?:standard deviation|std)\b",
    re.IGNORECASE,
)


_BASELINES_WITHOUT_COLON = re.compile(r"\b(?P<cue>[Bb]aselines|[Cc]ompared\s+(?:with|to|against))\s+(?=[A-Z][\w.\-+]*\d[\w.\-+]*\s*,)")
_LOSS_COST = re.compile(r"\b(?:entropy|baseline|value|kl|policy|reconstruction|auxiliary|regulari[sz]ation|commitment|"
                        r"critic|actor|loss)\s+costs?\b")
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
    if dimension == Dimension.numerical and (starts_with_params or re.search(r"\b(?:counts|statistics|stats)\b", label, re.IGNORECASE)):
        return "dataset statistic or parameter count: not set by code"
    # "an entropy cost of 0.01" (IMPALA's loss weights): a loss term's cost is a setting, not money
    words = set(re.findall(r"[a-z0-9]+", _LOSS_COST.sub(" ", lowered)))  # a price is has_money's
    if words & terms.context_words() or has_money(text):
        return "hardware, timing, cost or reference: not a code fact"
    if _EXPLANATORY.match(text.strip("( ")):
        return "explanation or rationale"
    if re.fullmatch(r"\s*(?:reference:?\s*)?(?:(?:eq|eqs|equation|section|sec|table|figure|fig|appendix|algorithm)\.?\s*\(?[\w.]+\)?(?:\s*(?:in|,|and)\s*)?)+\s*", text, re.IGNORECASE):
        return "reference to the paper"
    if text.rstrip().endswith(":") and len(text) < 80:
        return "heading of the parts that follow"
    if text.startswith("(") and text.endswith(")"):
        return "parenthetical remark"
    if dimension == Dimension.numerical and not re.search(r"\d|=", text) and not re.search(r"[A-Za-z]{2}", text):
        return "names only: the models or data a neighbouring value applies to"  # "Gemma-2 9B" (masked)
    return None  # "no data augmentation", "Xavier init": a setting in words is the judge's, never context


# "16 images per batch": the batch size counted in samples (not a dataset's image count)
_PER_BATCH = re.compile(
    r"(?<![\w.])(?P<n>\d+)\s+(?:images|samples|examples|sequences|clips|videos|pairs|graphs|episodes)\s+per\s+(?:mini-?)?batch\b",
    re.IGNORECASE,
)
_SETTING_QUALIFIER = re.compile(r"(?<![\w.])[123]D\b")  # "1D experiments", "2D on 2 GPUs": which setting, not a value


_MODEL_NAME_RE = re.compile(
    r"\b[A-Za-z][\w.]*-[A-Za-z]{1,2}/\d+\b|\b[A-Za-z][\w.]*(?:-[A-Za-z]*\d[\w.]*)+\b|\b\d+(?:\.\d+)?B\b|\b(?!L[12]\b)[A-Z]+\d+[A-Za-z]*(?:/\d+)*\b|\b[123]D\b"
)


_CITATION_RE = re.compile(r"\(\d{1,2}\)|\b(?:Step|Phase|Stage|P)\s?\d+[A-Z]?\b|\([^()]*\b(?:19|20)\d\d[a-z]?\)|\b(?:Eq|Eqs|Sec|Section|Table|Figure|Fig|Appendix)\.?\s*\d+(?:\.\d+)*")


_FORMULA_SPANS = (
    re.compile(r"\bfor\s+(?:each\s+|all\s+)?[A-Za-z]\w*\s*=\s*[^,;:\n]*?\bto\b[^,;:\n]*", re.IGNORECASE),  # for i = 1 to n
    re.compile(r"\b[A-Za-z]\w*\s*=\s*-?\d+\s*,\s*-?\d+\s*,[^;\n]*?(?:\.\.\.|…)"),  # k = 0, 1, 2, ...
    re.compile(_INDEX_RANGE.pattern + r"\w*(?:\s*[-+]\s*\d+)?"),  # k = 0 .. L-1: an index range, to its end
    re.compile(r"\b[\w']+\s*=\s*[^\s,;]+\s+if\b[^,;]*", re.IGNORECASE),  # m_i = 1 if i >= P: a piecewise case
    re.compile(r"\b[\w']+\s*=[^=,;\n]*(?:[*/]|(?<!10)\^)[^=,;\n]*=\s*[-\d.]+"),  # eta = (4 * 16^2)^2 / (...) = 15: derived (3×10^-4 is a number)
    re.compile(r"\b(?:else|otherwise)\s+[A-Za-z]\w*\s*=\s*[^\s,;]+", re.IGNORECASE),  # ... if k > 1 else z = 0
    re.compile(r"\b(?:if|when|while|unless|where|for)\s+[A-Za-z]\w*\s*(?:[<>≤≥]=?|==|!=)\s*[^\s,;]+", re.IGNORECASE),  # if k > 1
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
    return formulas.mask_indexes(text)


_AT_K_METRIC = re.compile(r"(?<![\w.@])[A-Za-z][A-Za-z\-]*@\d+(?:\.\d+)?(?![\w.])")


def _mask_model_names(text: str) -> str:
    """``Mistral-7B``, ``Llama-3.2 3B``, ``A100``, citations and cross-references: names with digits, not
    values (blanked so no number is read from them)."""
    text = _CITATION_RE.sub(lambda m: "§" * len(m.group(0)), text)
    text = _AT_K_METRIC.sub(lambda m: "§" * len(m.group(0)), text)  # "pass@1", "Recall@10", "mAP@0.5": a metric's name
    return _MODEL_NAME_RE.sub(
        lambda m: m.group(0) if re.fullmatch(r"[x×]\d+(?:\.\d+)?[eE][-+]?\d+", m.group(0)) else "§" * len(m.group(0)), text
    )  # "x1e-2" after a list is its multiplier, not a name


_ABLATION_CUE = re.compile(r"\bablat\w*|\bwith and without\b|\bwith\b[^;.]*\bvs\.?\s+without\b", re.IGNORECASE)


def _ablated_values(text: str, key: str) -> list[Any] | None:
    """The values ``key`` is set to on each side of an ablation's "vs" (``drop_path=0 vs. drop_path=0.1``)."""
    found = re.findall(rf"(?<![\w.]){re.escape(key)}\s*=\s*([-+]?\d[\d,.]*(?:[eE][-+]?\d+)?)", text)
    values = [numbers.parse_value(v.rstrip(",.")) for v in found]
    if len(values) < 2 or any(v is None or isinstance(v, (bool, list)) for v in values):
        return None
    unique: list[Any] = []
    for v in values:
        if v not in unique:
            unique.append(v)
    return unique if len(unique) >= 2 else None


_COMPARED = re.compile(r"(?<![\w.])(?P<key>[A-Za-z][\w^{}]*)\s*=\s*[^,;=]*?\s(?:vs\.?|versus)\s+(?:\(\s*)?(?:[A-Za-z][\w\-.]*\s+)?\(?(?P=key)\s*=", re.IGNORECASE)


def _is_label(match: re.Match | None) -> TypeGuard[re.Match]:
    """A fragment's "label: body" whose label is words (a digit only in a long one): the body is read alone."""
    if match is None or match.group("label").count("(") > match.group("label").count(")"):
        return False  # "8 prompt categories (Table 1: English, ...)": the colon is inside a remark
    return not re.search(r"\d", match.group("label")) or len(match.group("label")) > 25


# "with t from 0 to 1": a formula variable's domain, written as t ∈ [0, 1] is
_VARIABLE_RUNS = re.compile(
    r"^(?:with|for|where)\s+(?P<sym>[A-Za-zα-ωΑ-Ω](?:_\{?\w{1,4}\}?)?)\s+(?:going\s+|running\s+|ranging\s+|runs\s+|goes\s+)?"
    r"from\s+(?P<low>[-+]?\d+(?:\.\d+)?)\s+to\s+(?P<high>[-+]?\d+(?:\.\d+)?)$")


def _fragment(
    text: str, dimension: Dimension, b: _Builder, formulas_only: bool = False, claim_label: str = ""
) -> Fragment:
    body = text.strip()
    b.fragment, b.ambiguous, b.unchecked, b.api_notes, b.out_of_range = body, [], [], [], []
    b.milestone_total = None
    label_text = claim_label
    names_text = ""
    label = _LABEL_RE.match(body)
    if _is_label(label):
        body = label.group("body").strip()
        label_text = label.group("label")
        inner = _LABEL_RE.match(body)
        bare_range = inner and re.fullmatch(r"\s*\d+(?:\.\d+)?\s*[-–]\s*\d+(?:\.\d+)?\s*", inner.group("body"))
        if inner and not bare_range and len(inner.group("label").split()) <= 4 and not re.search(r"\d", inner.group("label")):
            names_text = body  # "MSR-VTT test: 2990 videos": the inner label still names the dataset
            body, label_text = inner.group("body").strip(), inner.group("label")  # "config: AR steps: 6-7"
    if dimension == Dimension.protocol and re.fullmatch(r"\s*(?:results?|findings)\s*", label_text or "", re.IGNORECASE):
        # "Results: Table 2 for 7 representative models": where the paper reports its numbers, not a setting
        return Fragment(text, "context", "reported result: where the paper reports the outcome, not a code fact")
    body = _digits_for_number_words(body, dimension)
    body = _VARIABLE_RUNS.sub(lambda m: f"{m.group('sym')} ∈ [{m.group('low')}, {m.group('high')}]", body)
    split_counts, body = _split_counts(body, b, label_text or "")
    written, body = _written_settings(body, b)
    split_counts += written
    per_batch = split_counts + [b.add(_value_check("minibatch_size", int(m.group("n")))) for m in _PER_BATCH.finditer(body)]
    body = _PER_BATCH.sub(lambda m: " " * len(m.group(0)), body) if per_batch else body
    masked = _mask_formula_spans(_mask_model_names(context.mask(body)))
    masked = _GREEK_THEN_NUMBER.sub(r"\1=", masked)  # "GAE λ 0.95, γ 0.99": a symbol set to the number after it
    if per_batch and not masked.strip():  # all read by its shape; its own label may still name a dataset or model
        own = _protocol_checks(label.group("label"), b, dimension) if label and label_text == label.group("label") else []
        return Fragment(text, "typed", "", tuple(sorted({m for m in per_batch + own if m >= 0})))
    if dimension == Dimension.numerical and _PARAMETER_LABEL.search(label_text) and not per_batch:
        # "two parameter variants: 16M (base dims 64) and 87M (base dims 128)": the sizes are parameter counts,
        # the settings that give them are in the parentheses
        masked = re.sub(r"(?<![\w.])~?\d+(?:\.\d+)?\s*[KMB]\b", lambda m: "§" * len(m.group(0)), masked)
        masked = masked.replace("(", " ").replace(")", " ")
        if not re.search(r"(?<![\w.§])\d", masked):
            return Fragment(text, "context", "parameter count: follows from the architecture, not set by code")
    if dimension == Dimension.numerical and _ACHIEVED.search(masked) and not per_batch:
        # "the efficiency gain eta=15 is achieved by ...": an outcome the paper reports, not a setting
        return Fragment(text, "context", "reported result: an outcome of running the code, not a code fact")
    compared = _COMPARED.search(masked)
    if compared and _ABLATION_CUE.search(f"{label_text} {body}"):
        # "Drop path ablation with drop_path=0 vs. drop_path=0.1": the study runs both, a sweep of the two
        swept = _ablated_values(masked, compared.group("key"))
        if swept:
            name = terms.canonical_name(compared.group("key"), b.aliases) or compared.group("key")
            index = b.add(ValueCheck(name=name, sweep=swept))
            if index >= 0:
                named = _api_checks(body, b) + _protocol_checks(body, b, dimension)
                return Fragment(text, "typed", "", tuple(sorted({index, *(m for m in named if m >= 0)})))
    if compared:
        # "LoRA r=8 vs LoRA-SB r=16", "drop_path=0 vs. drop_path=0.1": one parameter set two ways side by side;
        # which one the repo must have is not said, and reading the first would check half the claim
        return Fragment(text, "leftover", "one parameter compared at two values (vs): which one the repo must use is not stated")
    if dimension == Dimension.methodological and context.explains_output_range(body):
        # "This logistic function maps the difference to a probability in (0, 1)": what the formula's output is
        return Fragment(text, "context", "rationale: explanation or motivation (the range of a typed formula's output)")
    if dimension == Dimension.methodological and (start := method_claims.init_assignment(body, b.claim, b.aliases)):
        made = [m for m in (b.add(check) for check in start.checks) if m >= 0]  # "R_init = I": an init check
        return Fragment(text, "typed", start.reason, tuple(made)) if made else Fragment(text, "leftover", start.reason)
    if dimension == Dimension.numerical and (same := _same_as_setting(masked, b)) is not None:
        return Fragment(text, "typed", "", (same,))
    defined = _SIGMA_IS.fullmatch(re.sub(r"[$\s]+", " ", body).strip())
    if defined:  # "$\sigma$ = ReLU": what σ(·) is (its formula reads it so); the code calls that activation
        hits = terms.find_apis(defined.group("act"))
        made = [m for m in (b.add(CallCheck(target=h.target)) for h in hits[:1]) if m >= 0]
        return Fragment(text, "typed", "", tuple(made)) if made else Fragment(text, "context", "definition: what σ(·) stands for")
    made, reason = _formula_check(body, b)
    if not made and not reason and dimension == Dimension.numerical and re.search(r"=.*: [A-Za-z]\w*\s*=", body):
        # "Parameters of the cost model c = a * N + b: N = total actions": the formula, then a symbol's meaning
        equation = re.search(r"[A-Za-z_][\w{}^]*\s*=.*$", body.split(": ")[0])  # drop the prose before the symbol
        made, reason = _formula_check(equation.group(0), b) if equation else ([], "")
        if made and _DEFINITION.match(body.split(": ", 1)[1]):
            return Fragment(text, "typed", reason, tuple(made))
        made, reason = ([], "") if not made else (made, reason)
    formula_reason = "" if made else reason  # "formula not translated: ...": kept if nothing else types it
    if not made and not formulas_only and (ranged := _range_setting(body, b, label_text if body != text.strip() else "")) is not None:
        return Fragment(text, "typed", "", (ranged,))
    if not made and not formulas_only:
        masked = _gloss_first(masked)
        sampled, masked = _distribution_checks(masked, b)
        made, reason = _compile_assignment(masked, b, label_text, own_label=label_text != claim_label or body != text.strip())
        if reason.startswith((f"{DERIVED_COUNT}:", f"{DERIVED_VALUE}:")) and not made:
            return Fragment(text, "context", reason)
        statistics = dimension == Dimension.numerical and _STATISTICS_LABEL.search(label_text or "")
        if not made and statistics and not re.search(r"=", masked):
            return Fragment(text, "context", "dataset statistic: a property of the data, not set by code")
        if not made and reason.startswith(_SYMBOLIC_REASON):  # "hidden = 4 * d": no number of its own, but
            masked = _blank_symbolic(masked)  # "E[l] = 1 - lambda and alpha = 0.4" still sets alpha
        if not made:
            inline, rest = _inline_assignments(masked, b)
            quantities, unnamed = _compile_quantities(rest, b, label_text)
            if dimension == Dimension.protocol:  # "set size 2.92", "A 45.05%": measurements the claim reports
                unnamed = [u for u in unnamed if not re.fullmatch(r"\d+\.\d+%?|\d+%", u)]
            made = inline + quantities
            # "alpha = 0.4: any trial with lambda < 0.6 has loss > 0.4": a bound the set value (or 1 - it) restates
            unnamed = [u for u in unnamed if not (re.search(rf"[<>≤≥]\s*{re.escape(u)}(?![\d.])", masked) and _restated(u, b))]
            if made:
                reason = f"number(s) {', '.join(unnamed[:3])} with no parameter name" if unnamed else ""
            elif unnamed and not reason:
                reason = f"number(s) {', '.join(unnamed[:3])} with no parameter name"
        made += _string_settings(body, b) if dimension in (Dimension.numerical, Dimension.methodological) else []
        if not made and dimension == Dimension.numerical and label_text and body != text.strip():
            made += _labelled_model(label_text, body, b)
        # the fragment's own label stays in for protocol terms: "Metrics: detection rate" is a list of metrics
        own_label = f"{label.group('label')}: " if label and label_text == label.group("label") else ""
        # "Uses sign() to approximate AdamW's first step": what it is used for is the paper's reasoning, not a call
        stated = mentions.without_purpose(body) if dimension == Dimension.methodological else body
        if dimension == Dimension.methodological:  # "MSE loss between predicted and true noise"
            for loss in prose_losses.find(stated):
                made.append(b.add(FormulaCheck(expect=loss.expect)))
                stated = stated[: loss.start] + " " * (loss.end - loss.start) + stated[loss.end :]
        named = _api_checks(names_text or stated, b) + _protocol_checks(names_text or own_label + stated, b, dimension)
        if named and not made and not sampled and not reason and dimension == Dimension.methodological:
            rest = _unexplained_words(stated)
            untyped = formulas.find_formula(body)  # "softmax(QK^T / √d) V with a causal mask": the formula too
            if untyped is not None and untyped.expect is None and untyped.latex is None:
                reason = f"describes more than the named API(s): a formula not translated ({untyped.reason})"
            elif len(rest) > _MAX_UNEXPLAINED_WORDS:
                reason = f"describes more than the named API(s): '{' '.join(rest[:6])} ...'"
        made += sampled + named
        made += _default_settings(body, b)  # after the APIs: "Adam with default betas" is Adam's default
        made, reason = method_claims.merge(body, b, made, reason)  # "R is initialized to zero", "B and A frozen"
        if any(getattr(b.checks[i], "rule", None) == "trainable" for i in made if 0 <= i < len(b.checks)):
            b.api_notes = [n for n in b.api_notes if not n.startswith(mentions.TRAINABILITY_NOTE)]  # the check reads it
    if reason.startswith("number(s)") and (why := _unnamed_why(body, b.claim)):
        reason = why
    reason = re.sub(r"§+", "…", reason)  # masked model names, shown as an ellipsis
    made = [m for m in per_batch + made if m >= 0]
    if b.lead_name and dimension == Dimension.numerical and (not made or reason):
        made, reason = _lead_value_fragment(body, masked, b, made, reason)
    if b.ambiguous and not reason:
        reason = f"'{b.ambiguous[0]}' is ambiguous here (no context word says which parameter it is)"
    if b.out_of_range and (not reason or reason.startswith("number(s)")):
        reason = b.out_of_range[0]
    if b.unchecked and not reason:
        reason = f"the metric is typed, not its qualifier '{b.unchecked[0]}'"
    if b.api_notes and not reason:
        reason = b.api_notes[0]
    if made:
        return Fragment(text, "typed", reason, tuple(sorted(set(made))))
    if formulas_only and not reason:
        return Fragment(text, "typed")
    reason = reason or formula_reason
    how = {"result_allowed": dimension in (Dimension.numerical, Dimension.protocol), "measured": dimension == Dimension.protocol}
    category = context.classify(body, **how)
    if category is None and body != text.strip() and (whole := context.classify(text, **how)) and whole.startswith("parameter count"):
        category = whole  # "Total learnable params: r(m+n)": the label says what the expression counts
    if category is None and _SETTING_QUALIFIER.search(body):
        # "1D experiments on 1 A100 GPU (2.4-2.5h)": the "1D" says which experiments, it is not a free number
        category = context.classify(_SETTING_QUALIFIER.sub(lambda m: "§" * len(m.group(0)), body), **how)
        category = category if category and category.startswith(("hardware", "compute")) else None
    if category and dimension == Dimension.methodological and (fact := context.method_fact(body, category)):
        category, reason = None, reason or fact  # "where B and A both trainable": a method fact, not a rationale
    if category and (not reason or not category.startswith("rationale")):
        return Fragment(text, "context", category)
    legacy = _context_reason(masked if dimension == Dimension.numerical else text, dimension, label_text)
    if legacy and dimension == Dimension.methodological and (fact := context.method_fact(body, legacy)):
        legacy, reason = None, reason or fact
    if legacy and (not reason or legacy.startswith(("hardware", "dataset statistic"))):
        return Fragment(text, "context", legacy)
    if not reason and dimension == Dimension.numerical and _DEFINITION.match(body):
        return Fragment(text, "context", "definition: what a symbol stands for, no value")
    if not reason and dimension == Dimension.numerical and _SYMBOLIC_QUANTITY.match(body):
        return Fragment(text, "context", "definition: a quantity named by its symbol, no value")
    if not reason and dimension == Dimension.numerical and _UNSTATED_COUNT.match(body):
        return Fragment(text, "context", "unstated: how many values is not said, so there is none to check")
    if not reason and _SYMBOL_FOR_SYMBOL.match(body):
        return Fragment(text, "context", "definition: one symbol of the formulas stands for another, no value")
    if not reason:
        reason = _untyped_reason(body, masked)
    return Fragment(text, "leftover", reason)


# "With l_0 = L (maximum level)": the formulas' symbol l_0 is L; a substitution, nothing the code sets
_SYMBOL_FOR_SYMBOL = re.compile(
    rf"^(?:(?:with|where|and|let|set)\s+)?{_SYMBOL}\s*=\s*{_SYMBOL}\s*(?:\([A-Za-z][^()]*\))?\s*$", re.IGNORECASE)


# "w=[1,1,<1]": an element given as a bound; "a~U(-2,2) or 0 with 30% probability": a branch of the sampling
# code; "grid 64x8" beside "downsample factor 8": a size written as the stored size times a factor
_BOUNDED_LIST = re.compile(r"[\[(](?=[^\[\]()]*,)[^\[\]()]*[<>≤≥][^\[\]()]*[\])]")  # a list: "1(u < 0)" is an indicator
_MIXED_DRAW = re.compile(r"\bor\s+[-+]?\d+(?:\.\d+)?\s+with\s+(?:a\s+)?(?:probability\s+(?:of\s+)?\d+(?:\.\d+)?%?|\d+(?:\.\d+)?%?\s+probability)", re.IGNORECASE)
_SIZE_TIMES_FACTOR = re.compile(r"(?<![\w.])(?P<size>\d+)\s*[x×]\s*(?P<factor>\d+)(?![\w.])")


def _unnamed_why(body: str, claim: str) -> str:
    """Why the numbers of a fragment have no parameter name, when the shape of the text says it: "" otherwise."""
    if bounded := _BOUNDED_LIST.search(body):
        bound = re.search(r"[<>≤≥]\s*[^,\])]*", bounded.group(0)).group(0).strip()
        return f"a list with an element given as a bound ({bound}): no one value a value check can compare"
    if _MIXED_DRAW.search(body):
        return ("a value drawn or else a constant with a probability (a mixing probability): a branch of the sampling "
                "code, no parameter it names")
    product = _SIZE_TIMES_FACTOR.search(body)
    if product and re.search(rf"\b(?:down|up)?sampl\w*\s+(?:factor|rate|ratio)\s*(?:of\s*|=\s*|:\s*)?{product.group('factor')}(?!\w|\.\d)", claim, re.IGNORECASE):
        return (f"a size written as another size times the stated sampling factor ({product.group(0)}): the factor is "
                "typed; which of the sizes the code names is not said")
    return ""


_NUM = r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_RANGE_SETTING = re.compile(
    rf"^(?P<key>[A-Za-z][\w\- ]{{1,40}}?)\s*(?:[:=]\s*|\s)(?P<low>{_NUM})\s*(?:[-–]|\bto\b)\s*(?P<high>{_NUM})\s*(?P<unit>(?!(?:per|for|each|depending|on|across|by)\b)[A-Za-z]+)?"
    r"(?:\s+(?:per|for|each|depending|on|across|by)\b[^=:;]*)?\s*$"  # "... 4-6 per clip", "... depending on the dataset"
)
# A compiled name with one of these words holds a span of them ("Layers: 6-11"), never one setting's value
_SPAN_WORDS = frozenset("layer layers block blocks position positions index indices indexes".split())
# "Layers: 6-11", "ranks 1-5", "Steps 1-4", "Eq. 4-5": which ones (an index span), not one setting's value
_INDEX_NOUNS = _SPAN_WORDS | frozenset(
    "rank ranks shift shifts section sections table tables figure figures eq eqs equation equations line lines "
    "step steps stage stages phase phases epoch epochs row rows column columns".split()
)


def _range_setting(text: str, b: "_Builder", label: str = "") -> int | None:
    """"AR steps: 6-7": one setting the paper gives as a range (it differs by run length or dataset), checked with
    ``within``; only when the key is a parameter name and the span is not an index span ("Layers: 6-11")."""
    written = text.strip()
    match = _RANGE_SETTING.match(written)
    if not match and label and re.match(rf"^\s*{_NUM}\s*(?:[-–]|\bto\b)", text):
        written = f"{label.strip()}: {written}"
        match = _RANGE_SETTING.match(written)  # "autoregressive steps: 4-6 per clip"
    if not match or "§" in context.mask(written)[match.start("key") : match.end("key")]:
        return None  # "number of GPUs 4-8": hardware, not a setting of the code
    low, high = numbers.parse_number(match.group("low")), numbers.parse_number(match.group("high"))
    key = match.group("key").strip()
    words = key.lower().split()
    if low is None or high is None or not low < high or (len(words) == 1 and words[0] in _INDEX_NOUNS):
        return None
    if words[-1] in _INDEX_NOUNS - {"step", "steps", "epoch", "epochs"}:
        return None
    unit = (match.group("unit") or "").lower()
    if unit and unit not in {"steps", "epochs", "iterations", "frames", "tokens", "samples"}:
        return None  # "2-4 min", "3-5 hrs": durations the paper measured
    name = _name_for(key, b.aliases)
    if name is None:
        return None
    index = b.add(_value_check(name, Interval([low, high])))
    return index if index >= 0 else None


_SAME_AS = re.compile(
    r"^(?:[^:=]{1,80}:\s*)?(?P<left>[A-Za-zα-ωΑ-Ω][\w']{0,15})\s*=\s*(?P<right>[A-Za-zα-ωΑ-Ω][\w']{0,15})"
    r"(?P<tail>\s+(?:for|in|on|with|when)\b[^=]*|\s*\([^()=]*\))?\s*$"
)


def _canonical(symbol: str, b: "_Builder") -> str | None:
    names = _symbol_names(symbol)
    name = terms.name_in_context(names[0], f"{b.label} {b.fragment}", b.claim) if names else None
    if name is None:
        return None
    return terms.lexicon_index().get(name.lower()) or terms.canonical_name(name, b.aliases)


def _same_as_setting(masked: str, b: "_Builder") -> int | None:
    """"α = r" (LoRA's alpha set to the rank): one parameter equal to another, a ``same_as`` check. Only when both
    sides are parameters of the lexicon: the left one in this claim's context, the right one either so or a weak
    spelling owned by a parameter of the same API (``r`` of peft.LoraConfig beside ``lora_alpha``). An equation
    between two symbols of a derivation ("k = K") names no settings and is left."""
    match = _SAME_AS.match(masked.strip())
    if not match or match.group("left") == match.group("right"):
        return None
    left = _canonical(match.group("left"), b)
    if left is None:
        return None
    api_of = terms.lexicon_apis()
    apis = api_of.get(left, frozenset())
    right = _canonical(match.group("right"), b)
    if right is None or right not in api_of:
        owners = [c for c in terms.weak_owners().get(match.group("right").lower(), ()) if apis & api_of.get(c, frozenset()) and c != left]
        right = owners[0] if len(owners) == 1 else None
    if right is None or right == left or not apis & api_of.get(right, frozenset()):
        return None  # two settings of one API (LoraConfig's alpha and r); "alpha = beta" across methods is not one
    index = b.add(ValueCheck(name=left, same_as=right))
    return index if index >= 0 else None


def _untyped_reason(body: str, masked: str) -> str:
    """Why a fragment with no check stays for the judge, in the terms of the check kind it would need."""
    spread = re.search(r"(?<![\w.§])(\d+(?:\.\d+)?)\s*[-–]\s*(\d+(?:\.\d+)?)(?![\w.])", masked)
    if spread and float(spread.group(1)) < float(spread.group(2)):
        return (f"a range ({spread.group(0)}) with no parameter name the compiler reads, or a span of layers or "
                "indices (which ones, not one setting's value)")
    if _MODEL_ID.match(re.sub(r"^(?:[^:]*:\s*)", "", body).strip()):
        return "a model identifier with no role the compiler reads (fine-tuned, backbone, a list of API models): not compiled to a `model` check"
    if numbers.times_a_symbol(masked):
        return f"{_SYMBOLIC_REASON} ('1/sqrt(d)', '4*d'), not a number to check"
    return "no value, name, formula or sequence the compiler can type"


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
    text = numbers.plain_latex_numbers(claim.strip())  # "$5\times10^{-3}$" is 5e-3, as papers also write it
    text = _BASELINES_WITHOUT_COLON.sub(r"\g<cue>: ", text)  # "baselines DeepSeek-Coder-6.7B, CodeLlama-13B": a list
    aliases = {k: list(v) for k, v in aliases_key}
    out = CompiledClaim(sau_id=sau.id)
    if not text:
        out.leftover.append("(empty claim): nothing to compile")
        return out
    b = _Builder(aliases, claim=text, shape_symbols=shapes.value_names(text))
    head = _LABEL_RE.match(text)
    claim_label = head.group("label") if head else ""
    b.label = (protocol_claims.heading_label(text) if sau.dimension == Dimension.protocol else None) or claim_label
    covered: list[tuple[int, int, list[int], str]] = []  # (start, end, check indexes, what)

    order = orders.find_order(text, phases=sau.dimension == Dimension.ordering)
    if order and (sau.dimension in (Dimension.ordering, Dimension.methodological) or len(order.steps) >= 3):
        index = b.add(OrderCheck(steps=list(order.steps), relation=order.relation))  # type: ignore[arg-type]
        covered.append((order.span[0], order.span[1], [index], "order"))
    for ratio, span in find_split_ratios(text):
        index = b.add(ProtocolCheck(rule="split-ratio", expect=ratio))
        covered.append((span[0], span[1], [index], "split"))
    for quoted_list in quoted.find_quoted_strings(text):  # "prompts ('Who are you?', ...)": verifier/compiler/quoted.py
        index = b.add(ProtocolCheck(rule="strings", expect=list(quoted_list.strings)))
        covered.append((quoted_list.span[0], quoted_list.span[1], [index], "strings"))
    kind_reasons: dict[tuple[int, int], str] = {}
    for kind in method_claims.find_kind_training(text):  # "LayerNorm tuning", "tunes bias terms in A, B, C"
        index = b.add(kind.check)
        same = next((c for c in covered if c[:2] == kind.span), None)
        if same is not None:
            same[2].append(index)
        else:
            covered.append((kind.span[0], kind.span[1], [index], "trainable"))
        kind_reasons[kind.span] = kind.reason
    swept_sizes = protocol_claims.training_size_sweeps(text) if sau.dimension == Dimension.protocol else []
    for name, values, span in _labelled_lists(text, b) + [(n, Sweep(v), s) for n, v, s in swept_sizes]:
        index = b.add(_value_check(name, values))
        if index >= 0:
            covered.append((span[0], span[1], [index], "list"))
    baselines, spans = find_baselines(text)
    if baselines and sau.dimension in (Dimension.protocol, Dimension.ordering):
        made = [b.add(_baseline_check(name, protocol_claims.code_spellings(name))) for name in baselines]
        for span in spans:
            covered.append((span[0], span[1], made, "baseline"))
        b.baselines = frozenset(name.lower() for name in baselines)
    if sau.dimension == Dimension.protocol:  # "Metrics: BLEU, chrF++ and COMET-22": a list the fragments would cut
        for names, span in _metric_lists_across_fragments(text):
            made = [b.add(ProtocolCheck(rule="metric", expect=name)) for name in names]
            covered.append((span[0], span[1], made, "metrics"))
    if sau.dimension == Dimension.protocol:  # "SR benchmarks: Set5, Set14 and BSD100": datasets the vocabulary lacks
        datasets = protocol_claims.find_dataset_lists(text)
        made = [b.add(ProtocolCheck(rule="dataset", expect=name)) for name in datasets.names
                if name.lower() not in b.baselines]
        for span in datasets.spans:
            covered.append((span[0], span[1], made, "datasets"))
    # pseudo-code listings (verifier/compiler/pseudocode.py) and "where:" glossaries of the claim's formulas
    listing = pseudocode.read_listing(text)
    if listing is not None:
        listed = [b.add(c) for c in listing.checks]
        for (start, end), made in listing.covered:
            covered.append((start, end, [listed[i] for i in made] or listed, "pseudocode"))
    pieces = split_fragments(text)
    for start, end, made in formulas.glossary_spans(
        text,
        pieces,
        lambda piece: m.group("body").strip() if _is_label(m := _LABEL_RE.match(piece.strip())) else piece.strip(),
        lambda body: _formula_check(body, b)[0],
    ):
        covered.append((start, end, made, "glossary"))

    b.lead_name, b.lead_value = _claim_lead(text, pieces, b)
    current_label, previous_end = claim_label, 0
    scope_items = _scope_lists(text, pieces) if sau.dimension == Dimension.numerical else set()  # D3: may be datasets
    for start, end in pieces:
        piece = text[start:end]
        if re.search(r"[.;\n]", text[previous_end:start]):
            current_label = claim_label  # a new sentence: the previous sentence's label no longer applies
            b.previous_name = None
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
        runs_past = [c for c in covered if c[3] == "list" and c[0] <= start < c[1] < end and c not in inside]
        if runs_past:  # "... 2, and 1 to the four input states": the list's last item, then more text
            tail = _fragment(text[runs_past[0][1] : end], sau.dimension, b, False, current_label)
            extra = tail.checks if tail.outcome == "typed" else ()
            numbered = re.search(r"(?<![\w.])\d", text[runs_past[0][1] : end])
            reason = tail.reason if tail.outcome != "context" and numbered else ""  # "... to the four input states"
            frag = Fragment(piece, "typed", reason, tuple(sorted({*runs_past[0][2], *extra})))
        elif inside and inside[0][3] == "list":  # its items are the list's, read once as a whole
            frag = Fragment(piece, "typed", "", tuple(inside[0][2]))
        elif inside and inside[0][3] == "order":
            frag = _fragment(piece, sau.dimension, b, True, current_label)
            frag = Fragment(piece, "typed", "", tuple(sorted({*inside[0][2], *frag.checks})))
        elif inside:
            frag = _fragment(piece, sau.dimension, b, False, current_label)
            extra = frag.checks if frag.outcome == "typed" else ()
            left = kind_reasons.get(inside[0][:2], "") if inside[0][3] == "trainable" else ""
            frag = Fragment(piece, "typed", left, tuple(sorted({*inside[0][2], *extra})))
        else:  # "W_down ∈ ℝ^{r×D} (down-projection)": a shape check, then the rest as any fragment
            frag = shapes.compile_fragment(piece, text, b.add, lambda rest: _fragment(
                rest, sau.dimension, b, False, current_label), Fragment) or _fragment(piece, sau.dimension, b, False, current_label)
        if (start, end) in scope_items and _continues_scope(out.fragments, frag):
            frag = Fragment(piece, "context", "names only: the tasks or data a neighbouring value applies to (a list cut at its commas)")
        if frag.outcome == "leftover" and not out.fragments and _PIPED_TITLE.fullmatch(piece) and re.match(r"\s+\|\s", text[end:]):
            frag = Fragment(piece, "context", "heading of the parts that follow: a title before '|'")  # "Bradley-Terry Win Probability | ..."
        named = [b.checks[i] for i in frag.checks if i < len(b.checks) and isinstance(b.checks[i], ValueCheck)]
        b.previous_name = named[-1].name if len(named) == 1 else None
        out.fragments.append(frag)
    _credit_lead(out.fragments, b)
    out.fragments = _restated_orders(out.fragments, b)
    out.fragments = _shared_qualifiers(out.fragments, text)
    if out.fragments and out.fragments[-1].outcome == "leftover" and _cut_off(out.fragments[-1].text, text):
        out.fragments[-1] = Fragment(out.fragments[-1].text, "context", "truncated: the claim's text stops mid-expression")
    if sau.dimension == Dimension.protocol:
        out.fragments = protocol_claims.credit_study_heading(out.fragments)
        b.checks, out.fragments = protocol_claims.merge_varied_values(b.checks, out.fragments, text)
    b.checks, out.fragments = protocol_claims.type_hardware(b.checks, out.fragments, sau.dimension)  # "8x A100 GPUs"

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


# "... factors of 8, 4, 2 and 1 to the four states, with earlier states more aggressively compressed": how the
# listed values change along the list, in words
_ORDER_RESTATEMENT = re.compile(
    r"^(?:with|so that|i\.e\.,?)\s+(?:the\s+)?(?:earlier|later|first|last|early|late|lower|higher|deeper|shallower|older|newer|"
    r"recent|initial|final|outer|inner|coarser|finer|larger|smaller)\s+[a-z]+(?:\s+[a-z]+)?\s+(?:being\s+|are\s+|get\s+)?"
    r"(?:more|less|most|least)\s+(?:[a-z]+ly\s+)?[a-z]+$",
    re.IGNORECASE,
)


# "grid search over method-specific ranges", "random search over these values": how the swept values or
# ranges the claim lists are tried, which their own checks decide
_SEARCH_RESTATEMENT = re.compile(
    r"^(?:(?:a|by|via|with|using)\s+)?(?:grid|random|exhaustive|hyper-?parameter)\s+search(?:es)?\s+(?:over|across|on|of|in)\s+"
    r"(?:the\s+|these\s+|those\s+|all\s+)?(?:[\w-]+\s+){0,2}(?:ranges?|values|grids?|settings|search\s+spaces?|spaces?)$",
    re.IGNORECASE,
)


def _restated_orders(fragments: list[Fragment], b: "_Builder") -> list[Fragment]:
    """A fragment that only says, in words, how the list of values just before it runs is context: the list's value
    check decides it; so is one saying the listed ranges are searched (their sweep and interval checks decide it)."""
    out = list(fragments)
    searched = tuple(i for i, c in enumerate(b.checks) if isinstance(c, ValueCheck) and (c.sweep is not None or c.within is not None))
    for i, here in enumerate(out):
        if here.outcome == "leftover" and searched and _SEARCH_RESTATEMENT.match(here.text.strip()):
            out[i] = Fragment(here.text, "typed", "", searched)
    for i in range(1, len(out)):
        previous, here = out[i - 1], out[i]
        listed = any(isinstance(b.checks[c], ValueCheck) and isinstance(b.checks[c].expect, list) and len(b.checks[c].expect) >= 3
                     for c in previous.checks if 0 <= c < len(b.checks))
        if here.outcome == "leftover" and previous.outcome == "typed" and listed and _ORDER_RESTATEMENT.match(here.text.strip()):
            out[i] = Fragment(here.text, "context", "rationale: restates in words how the values listed before it run")
    return out


# "Normal chats in high-resource languages: English, Chinese, Spanish (source: LMSYS-Chat-1M)": a list after a
# colon whose last item carries the qualifier (a source, a dataset) that holds for every item; "Eight prompt
# categories used to build the detector, their sources, and categories. ...": an opening sentence that names
# what the claim goes on to list
_QUALIFIED_ITEM = re.compile(r"^(?:(?:and|or)\s+)?[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*){0,2}\s*\([^()]+\)$")
_LISTED_NAME = re.compile(r"^(?:(?P<label>[^:,;()\d]{1,60}):\s*)?(?:(?:and|or)\s+)?[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*){0,2}$")
_HEADING_ITEM = re.compile(r"^(?:and\s+)?(?:(?:their|its|the)\s+)?[a-z]+(?:\s+[a-z]+)?$")


def _shared_qualifiers(fragments: list[Fragment], text: str) -> list[Fragment]:
    """Names of a list whose last item is typed by its parenthetical ("A, B, C (source: X)") are context: the
    last item's check holds for them; so are the bare nouns of an opening sentence that lists the claim's topics
    ("..., their sources, and categories."), when more sentences follow with the facts."""
    out = list(fragments)
    spans, at = [], 0
    for frag in out:  # where each fragment sits in the claim, to see what separates neighbours
        start = text.find(frag.text, at)
        spans.append((start, start + len(frag.text)) if start >= 0 else None)
        at = start + len(frag.text) if start >= 0 else at
    if None in spans:
        return out
    for i, here in enumerate(out):
        if here.outcome != "typed" or not _QUALIFIED_ITEM.match(here.text.strip()):
            continue
        run, j = [], i - 1
        while j >= 0 and out[j].outcome == "leftover" and re.fullmatch(r"\s*,\s*", text[spans[j][1] : spans[j + 1][0]]):
            named = _LISTED_NAME.match(out[j].text.strip())
            if named is None:
                break
            run.append(j)
            if named.group("label"):
                for k in run:
                    out[k] = Fragment(out[k].text, "context", "names only: items of a list whose last item's qualifier "
                                                               "(a source, a dataset) holds for them all")
                break
            j -= 1
    first_end = re.search(r"\.\s+(?=[A-Z])", text)
    if first_end and out and out[0].outcome == "typed" and spans[0][1] <= first_end.start():
        topics = [i for i in range(1, len(out)) if spans[i][1] <= first_end.start() + 1]
        if topics and all(out[i].outcome == "leftover" and _HEADING_ITEM.match(out[i].text.strip().rstrip(".")) for i in topics) \
                and any(re.match(r"(?:and\s+)?(?:their|its)\s", out[i].text.strip()) for i in topics):
            for i in topics:  # "..., their sources, and categories.": every topic a bare noun, one of them "their ..."
                out[i] = Fragment(out[i].text, "context", "heading: the opening sentence names what the claim goes on to list")
    return out


_SCOPE_START = re.compile(r"\b(?:for|on|in|across)\s+(?:the\s+)?[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*){0,2}\s*,?\s*$")
_SCOPE_ITEM = re.compile(r"^(?:(?:and|or)\s+)?[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*){0,2}(?:\s+[a-z]+){0,2}$")


def _scope_lists(text: str, pieces: list[tuple[int, int]]) -> set[tuple[int, int]]:
    """Spans of the items that continue a "for A, B, and C ..." list cut at its commas: after a piece ending
    "for <Name>", names only, up to one starting with "and"/"or" in the same sentence (a list that never
    reaches its "and" is not one: "lr=0.1 for Stage A, Xavier Init")."""
    out: set[tuple[int, int]] = set()
    for i, (start, end) in enumerate(pieces):
        if not _SCOPE_START.search(text[start:end]):
            continue
        items: list[tuple[int, int]] = []
        for a, b in pieces[i + 1 :]:
            previous_end = items[-1][1] if items else end
            if re.search(r"[.;:\n]", text[previous_end:a]) or not _SCOPE_ITEM.match(text[a:b].strip()):
                break
            items.append((a, b))
            if re.match(r"(?:and|or)\s", text[a:b].strip()):
                out.update(items)
                break
    return out


def _continues_scope(previous: list[Fragment], frag: Fragment) -> bool:
    """"DDIM_eta=1 for Burgers, Advection, and Navier-Stokes inference": the names after the first one are the
    rest of the scope the previous fragment's value applies to, not untyped settings."""
    if frag.outcome != "leftover" or not previous:
        return False
    last = previous[-1]
    if last.outcome == "context" and last.reason.startswith("names only: the tasks or data"):
        return True  # the list goes on: "..., Advection, and Navier-Stokes"
    return last.outcome == "typed" and bool(_SCOPE_START.search(last.text))


def _cut_off(fragment: str, claim: str) -> bool:
    """"... initial_rank = model_rankings[t": the claim's last fragment opens a bracket it never closes, so the
    text was cut (a length limit upstream); what it would have said is unknown."""
    tail = fragment.rstrip()
    if not claim.rstrip().endswith(tail) or tail.endswith((".", ")", "]", "}", ";")):
        return False
    return any(tail.count(o) > tail.count(c) for o, c in ("()", "[]", "{}"))


def _credit_lead(fragments: list[Fragment], b: _Builder) -> None:
    """"Target risk threshold; ... = 0.4": the lead fragment names the value a later fragment checks, so it is
    typed by that check (not left for the judge, nor dismissed as context)."""
    if not fragments or not b.lead_name or fragments[0].outcome == "typed":
        return
    index = next((i for i, c in enumerate(b.checks) if isinstance(c, ValueCheck) and c.name == b.lead_name), None)
    if index is not None and not re.search(r"\d", fragments[0].text):
        fragments[0] = Fragment(fragments[0].text, "typed", "", (index,))


def _validated(check: Any) -> Any:
    """Round-trip through the spec model so a compiled check is exactly what a user could have written."""
    try:
        return _CHECK_ADAPTER.validate_python(check.model_dump(by_alias=True, exclude_none=True))
    except ValidationError:
        return check
