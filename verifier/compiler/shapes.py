"""Shape statements of learnable tensors ("W_down ∈ ℝ^{r×D}", "b_1 in R^{4D}") -> a ``shape`` protocol check.

Only tensors a repository creates as parameters are compiled: weights and biases (``W_*``, ``b_*``), scale
factors (``gamma_1``), factor matrices, cores and prompts when the claim calls them so. Activations, inputs,
attention maps, masks and caches (``Q, K, V ∈ ℝ^{L×C}``, ``Z in R^{D x (1+N)}``) are runtime shapes no
parameter declares; they stay with the rest of the fragment. A tensor is compiled only when one of its
dimensions is a symbol the claim ties to a parameter (``r`` a rank, ``D`` the width): the rule needs an anchor.

Runtime tensors the rule's lexicon names ("state shape [81, 120]", "KV-cache shape (1, 25, hw, C)") compile to a
``shape`` check with ``tensors: runtime`` when a dimension is a number: the number is the anchor there.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from verifier import rules
from verifier.compiler import terms
from verifier.spec.model import ProtocolCheck
from verifier.symbolic.tensor_shapes import mappable, paper_dim

_GREEK = {"α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "σ": "sigma", "Σ": "Sigma", "λ": "lambda",
          "θ": "theta", "φ": "phi", "ψ": "psi", "ω": "omega", "τ": "tau", "μ": "mu", "η": "eta"}
_NAME = r"\\?[A-Za-zα-ωΑ-Ω]+(?:_\{[^{}]*\}|_[A-Za-z0-9]+)?(?:\^\{[^{}]*\}|\^[A-Za-z0-9]+)?"
_SPACE = r"(?:ℝ|\\mathbb\{R\}|\\mathbb R|\\R|R)"
_STATEMENT = re.compile(
    rf"(?P<names>\{{\s*{_NAME}(?:\s*,\s*{_NAME})*\s*\}}|{_NAME}(?:\s*,\s*{_NAME})*)"
    rf"\s*(?P<member>(?:∈|\\in\b|\bin\b)\s*{_SPACE}\s*\^\s*(?P<dims>\{{[^{{}}]*\}}|[A-Za-z0-9]+))"
)
# Names that are activations, inputs, maps or caches in the papers' notation, never a declared parameter.
_RUNTIME = frozenset("Q K Z H X I M S Y h x z y q k v o s f Attn MSA MLP LN".split())
# Word subscripts that name a tensor's role in code (W_down ~ self.down); an index subscript (W_{gi}) does not.
_ROLE_SUBSCRIPTS = frozenset("down up pos ln gate prompt scale shift cls emb embed head".split())
# A single capital letter is a parameter only where the claim calls it one.
_PARAMETER_CUES = re.compile(
    r"\b(?:learn(?:able|ed)|trainable|frozen|tun(?:e|ed|able)|factors?|matri(?:x|ces)|core|weights?|parameters?|"
    r"prompts?|low-rank|decomposition|adapter|lora)\b", re.IGNORECASE)
_ATTENTION_CUES = re.compile(r"\b(?:attention|projected|queries|keys|values|input|output|activations?|logits?|cache[sd]?|mask)\b",
                             re.IGNORECASE)
_DESCRIPTIVE = frozenset(
    "the a an of with and where both each is are its their learnable learned parameter parameters matrix matrices "
    "factor factors tensor tensors weight weights bias biases projection down-projection up-projection down up "
    "dimensional dimension dimensions vector vectors low-rank bottleneck module modules composes contains consists "
    "has uses projections adapter scale scales shift shifts scaling per-channel channel-wise prompt prompts core tt-core dimensions "
    "matrix-dimensions lora-sb lora dimensions: respectively".split())


@dataclass(frozen=True)
class Statement:
    start: int
    end: int
    member: tuple[int, int]  # the "∈ ℝ^{...}" part, cut out of the fragment's remaining text
    names: tuple[str, ...]
    dims: tuple[str, ...]


def _clean_name(name: str) -> str:
    name = name.strip().lstrip("\\")
    for k, v in _GREEK.items():
        name = name.replace(k, v)
    return name


def _dims(text: str) -> tuple[str, ...] | None:
    inner = text.strip()
    inner = inner[1:-1] if inner.startswith("{") else inner
    parts = re.split(r"\s*(?:×|\\times|\s[x*]\s)\s*", inner.strip())
    out = []
    for part in parts:
        part = part.strip().replace("{", "(").replace("}", ")")
        part = re.sub(r"^\((.*)\)$", r"\1", part)
        if not part or not re.fullmatch(r"[A-Za-z0-9_+\-*/^() ]+", part) or re.search(r"[A-Za-z]_\(", part):
            return None
        part = re.sub(r"(?<=\d)(?=[A-Za-z(])", "*", part.replace("^", "**").replace(" ", ""))
        out.append(part)
    return tuple(out) if out else None


def _symbols(dim: str) -> list[str]:
    return re.findall(r"[A-Za-z_][A-Za-z0-9_]*", dim)


def _anchor(symbol: str, context: str, sentence: str = "") -> str | None:
    """The dimension parameter a paper symbol stands for, when the notation and the claim's words say so."""
    if symbol == "r":
        return "lora_rank"
    if symbol in ("D", "d", "d_model", "d_m"):
        return "hidden_size"
    if symbol in ("D_h", "Dh", "d_h", "d_k"):
        return "head_dim"
    if symbol in ("l", "p") and re.search(r"\bprompts?\b", context, re.IGNORECASE):
        return "prompt_length"
    if symbol == "G" and re.search(r"\bgroup", context, re.IGNORECASE):
        return "num_groups"
    if symbol in ("C", "K") and re.search(r"\b(?:classes|categories)\b", sentence or context, re.IGNORECASE):
        return "num_classes"
    return None


def _learnable(name: str, fragment: str, context: str) -> bool:
    m = re.match(r"^([A-Za-z]+)(?:_\{?([^{}^]*)\}?)?", name)
    if not m or m.group(1) in _RUNTIME or "(" in name:
        return False
    base, sub = m.group(1), (m.group(2) or "").strip()
    if base in ("W", "w", "b") and sub:
        return sub.isdigit() or sub.lower() in _ROLE_SUBSCRIPTS
    if base.lower() in ("gamma", "beta"):  # "scale factors gamma_1, gamma_2 ∈ ℝ^D"; a bare sigma is an activation
        return bool(_PARAMETER_CUES.search(context) or re.search(r"\b(?:scale|shift)", context)) and not _ATTENTION_CUES.search(fragment)
    if len(base) == 1 and base.isupper() and base in "ABRUVPE":
        cue = _PARAMETER_CUES.search(fragment) or _PARAMETER_CUES.search(context)
        if base == "P" and not re.search(r"\bprompts?\b", context, re.IGNORECASE):
            return False
        if base == "E" and sub.lower() != "pos":
            return False
        return bool(cue) and not _ATTENTION_CUES.search(fragment)
    return False


def find_shapes(fragment: str, claim: str) -> list[tuple[Statement, ProtocolCheck]]:
    """Each shape statement of learnable tensors in the fragment, with its ``shape`` check."""
    start = claim.find(fragment)
    sentence = claim[: start if start >= 0 else 0]
    sentence = re.split(r"(?<=[.;])\s", sentence)[-1] if sentence else ""
    context = f"{sentence} {fragment}"
    rest = claim[start + len(fragment):] if start >= 0 else ""
    after = re.split(r"(?<=[.;])\s", rest)[0] if rest else ""
    whole_sentence = f"{context} {after}"  # "W_head ∈ R^{D x C} on the CLS token, C = 100 classes"
    out = []
    for m in _STATEMENT.finditer(fragment):
        dims = _dims(m.group("dims"))
        listed = m.group("names").strip()
        listed = listed[1:-1] if listed.startswith("{") and listed.endswith("}") else listed  # {W_LN, b_LN}
        names = tuple(_clean_name(n) for n in re.split(r"\s*,\s*", listed.strip()))
        if len(names) > 1 and not all(_learnable(n, fragment, context) for n in names):
            names = names[-1:]  # "(W_down in ..., sigma, W_up in ...)": the list is the prose's, the last name is sized
        if dims is None or not all(_learnable(n, fragment, context) for n in names):
            continue
        if any(paper_dim(d) is None for d in dims):
            continue  # a size the rule could not read (a power tower): the check would only ever be unverified
        symbols = {s: a for d in dims for s in _symbols(d) if (a := _anchor(s, context, whole_sentence))}
        free = {s for d in dims for s in _symbols(d) if s not in symbols}
        if not symbols or any(not re.fullmatch(r"[A-Za-z]", s) or s not in dims for s in free):
            continue  # no anchor, or a free symbol that never stands alone (12M, 1+N): the rule could not bind it
        words = {n: ["prompt"] for n in names if n.startswith("P")}
        if not all(mappable(n, words.get(n)) for n in names):
            continue
        params = {"expect": {n: list(dims) for n in names}, "symbols": dict(sorted(symbols.items()))}
        if words:
            params["names"] = words
        member = (m.start("member"), m.end("member"))
        out.append((Statement(m.start(), m.end(), member, names, dims), ProtocolCheck(rule="shape", **params)))
    return out


def value_names(claim: str) -> dict[str, str]:
    """Paper symbol -> the parameter its shape statement anchors it to, for symbols the lexicon does not resolve.

    "P ∈ ℝ^{l×D} with l = 10": a repo sets ``num_prompt_tokens = 10``, never ``l``, so the value is the prompt
    length. ``r`` and ``D`` are weak lexicon names of the rank and the width already; they keep their names.
    """
    weak = terms.weak_owners()
    index = terms.lexicon_index()
    out: dict[str, str] = {}
    for _, check in find_shapes(claim, claim):
        for symbol, parameter in (check.symbols or {}).items():
            if parameter in index.values() and parameter not in weak.get(symbol.lower(), ()):
                out.setdefault(symbol, parameter)
    return out


def rest_of(fragment: str, found: list[tuple[Statement, ProtocolCheck]]) -> str:
    """The fragment with its ``∈ ℝ^{...}`` parts cut out (the tensor names stay: "B (frozen)")."""
    text = fragment
    for statement, _ in sorted(found, key=lambda f: -f[0].member[0]):
        a, b = statement.member
        clause = re.search(r"\s*(?:\bwith|\bwhere)\s*$", text[: statement.start])
        if clause:  # "... = W_0 + W_down W_up with W_down ∈ ℝ^{r×D}": the condition is the shape, all of it
            a = clause.start()
        if re.search(r"\(\s*$", text[: statement.start]) and re.match(r"\s*\)", text[b:]):
            continue  # "= W_down * h (W_down in R^{r x D})": an aside; the text around it reads as it did without it
        text = text[:a] + text[b:]
    # "B ∈ ℝ^{m×r} (frozen)": the remark is a statement about B the frozen / trainable rules read
    return re.sub(r"(?<=[\w}])\s*\((frozen|trainable|learnable)\)", r" is \1", text)


def only_describes(rest: str, found: list[tuple[Statement, ProtocolCheck]]) -> bool:
    """Is what remains the tensors' names and words about what they are ("(down-projection)")?"""
    text = rest
    for statement, _ in found:
        for name in statement.names:
            text = text.replace(name, " ")
    for k, v in _GREEK.items():
        text = text.replace(k, v)
    if re.search(r"[0-9=+*/<>^_\\]", text):
        return False
    words = re.findall(r"[A-Za-z][A-Za-z-]*:?", text.lower())
    return all(w.rstrip(":") in _DESCRIPTIVE for w in words)


# ----- runtime tensors: "state shape [81, 120]", "KV-cache shape (1, 25, hw, C)" --------------------------------
@functools.lru_cache(maxsize=1)
def _runtime_phrases() -> tuple[tuple[str, str], ...]:
    """(paper phrase, tensor key) from the rule's lexicon, longest first: one vocabulary for compiler and rule."""
    data = rules.load("protocol/shape.yaml") or {}
    tensors = (((data.get("lexicon") or {}).get("runtime") or {}).get("tensors") or {})
    pairs = {(str(p).lower(), str(k)) for k, entry in tensors.items() for p in (entry or {}).get("paper") or []}
    return tuple(sorted(pairs, key=lambda pk: (-len(pk[0]), pk)))


@functools.lru_cache(maxsize=1)
def _runtime_statement() -> re.Pattern:
    nouns = "|".join(re.escape(p).replace(r"\ ", r"\s+").replace(r"\-", r"[-\s]") for p, _ in _runtime_phrases())
    return re.compile(
        rf"(?<![\w-])(?P<noun>{nouns})(?:\s+tensors?)?\s+(?:(?:of|with)\s+(?:a\s+)?)?shapes?"
        r"\s*(?::|=|\bis\b|\bof\b)?\s*"
        r"(?P<dims>\[[^\[\]]{1,80}\]|\([^()]{1,80}\)|\d{1,6}(?:\s*[x×]\s*(?:\d{1,6}|[A-Za-z]))+(?![\w']))",
        re.IGNORECASE)


# The word before the noun may only be one that keeps it the same tensor: "the state", "fixed KV-cache"; "hidden
# state", "initial state", "cell state" are other tensors.
_SAME_TENSOR_BEFORE = frozenset(
    "the a an its their each fixed and or per-sample whose with full 1d 2d 3d video image audio spatial temporal".split())
_RUNTIME_HEADING = frozenset("tensor tensors shape shapes model forward runtime fixed input output and".split())


def _runtime_dims(text: str) -> list[int | str] | None:
    """``[81,120]``, ``(1, 25, hw, C)``, ``[81x120]``: numbers and single symbols; ``hw`` is h*w."""
    inner = text[1:-1].strip() if text[:1] in "[(" else text.strip()  # "[81, 120]", "(1, 25, hw, C)", "81x120"
    parts = re.split(r"\s*,\s*", inner) if "," in inner else re.split(r"\s*[x×]\s*", inner)
    out: list[int | str] = []
    for part in parts:
        if re.fullmatch(r"\d{1,6}", part):
            out.append(int(part))
        elif re.fullmatch(r"[hwt]{2,3}|[HWT]{2,3}", part) and len(set(part)) == len(part):
            out.append("*".join(part))  # hw: the flattened spatial grid
        elif re.fullmatch(r"[A-Za-z]", part):
            out.append(part)
        else:
            return None  # C', h'w', 2..8, a float: not a size the rule reads
    if not 1 <= len(out) <= 6 or not any(isinstance(d, int) and d > 1 for d in out):
        return None  # "(B, T, H, W)": symbols alone say nothing a static check can decide
    return out


def find_runtime_shapes(fragment: str) -> list[tuple[int, int, ProtocolCheck]]:
    """Each "<tensor> shape [dims]" whose tensor the rule's lexicon names, with its runtime ``shape`` check."""
    keys = dict(_runtime_phrases())
    out = []
    for m in _runtime_statement().finditer(fragment):
        before = re.search(r"([A-Za-z0-9][\w-]*)\s+$", fragment[: m.start()])
        if before and before.group(1).lower() not in _SAME_TENSOR_BEFORE:
            continue  # "hidden state shape (B, 256)": another tensor than the state
        dims = _runtime_dims(m.group("dims"))
        key = keys.get(re.sub(r"[-\s]+", " ", m.group("noun").lower())) or keys.get(m.group("noun").lower())
        if dims is None or key is None:
            continue
        out.append((m.start(), m.end(), ProtocolCheck(rule="shape", tensors="runtime", expect={key: dims})))
    return out


def _only_heading(rest: str) -> bool:
    """Is what remains of the fragment a heading of tensor names ("KV-cache and model forward tensor shapes:")?"""
    text = rest.lower()
    for phrase, _ in _runtime_phrases():
        text = re.sub(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", " ", text)
    if re.search(r"[0-9=+*/<>^_\\]", text):
        return False
    words = re.findall(r"[a-z][a-z-]*", text)
    return all(w in _DESCRIPTIVE or w in _RUNTIME_HEADING for w in words)


def _compile_runtime(fragment: str, add, compile_rest, make_fragment):
    found = find_runtime_shapes(fragment)
    if not found:
        return None
    rest = fragment
    for start, end, _ in sorted(found, key=lambda f: -f[0]):
        rest = rest[:start] + " " + rest[end:]
    tail = None if _only_heading(rest) else compile_rest(rest.strip(" ,;"))
    made = [m for m in (add(check) for _, _, check in found) if m >= 0]
    extra = tail.checks if tail is not None and tail.outcome == "typed" else ()
    reason = "" if tail is None or tail.outcome == "context" else tail.reason
    if not made:
        return tail
    return make_fragment(fragment, "typed", reason, tuple(sorted({*made, *extra})))


def compile_fragment(fragment: str, claim: str, add, compile_rest, make_fragment):
    """The fragment's shape checks, then the rest read as any fragment; None when it states no shape."""
    found = find_shapes(fragment, claim)
    if not found:
        return _compile_runtime(fragment, add, compile_rest, make_fragment)
    rest = rest_of(fragment, found)
    tail = None if only_describes(rest, found) else compile_rest(rest)  # the rest's checks first: "R is trainable"
    made = [m for m in (add(check) for _, check in found) if m >= 0]
    extra = tail.checks if tail is not None and tail.outcome == "typed" else ()
    reason = "" if tail is None or tail.outcome == "context" else tail.reason
    if not made:
        return tail
    return make_fragment(fragment, "typed", reason, tuple(sorted({*made, *extra})))
