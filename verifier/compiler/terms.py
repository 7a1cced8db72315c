"""Paper terms -> canonical names: hyperparameter phrases, API names, datasets and metrics.

All vocabulary is data in ``rules/`` (claim_terms.yaml, claim_apis.yaml, claim_protocol.yaml, and the shared
lexicon.yaml of the value checks), so adding a term never needs a code change.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Iterable

from verifier import rules

_GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "eps", "ϵ": "eps", "ζ": "zeta", "η": "eta",
    "θ": "theta", "κ": "kappa", "λ": "lam", "μ": "mu", "ν": "nu", "ξ": "xi", "π": "pi", "ρ": "rho",
    "σ": "sigma", "τ": "tau", "φ": "phi", "ϕ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega", "Γ": "Gamma",
    "Δ": "Delta", "Λ": "Lambda", "Σ": "Sigma", "Φ": "Phi", "Ω": "Omega",
}  # fmt: skip
_SUBSCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")


def _load(name: str) -> dict:
    try:
        data = rules.load(name)
    except (FileNotFoundError, OSError):
        return {}
    return data if isinstance(data, dict) else {}


def _norm_phrase(text: str) -> str:
    return re.sub(r"[\s_\-]+", " ", text.strip().lower())


normalise_phrase = _norm_phrase  # the text find_phrase's offsets refer to


@functools.cache
def lexicon_apis() -> dict[str, frozenset[str]]:
    """canonical name -> the APIs it is an argument of (``lora_alpha`` -> peft.LoraConfig), from rules/lexicon.yaml."""
    return {str(c): frozenset(map(str, e.get("apis") or [])) for c, e in _load("lexicon.yaml").items() if isinstance(e, dict)}


@functools.cache
def canonical_names() -> frozenset[str]:
    """The lexicon's canonical parameter names (the values of ``lexicon_index``)."""
    return frozenset(lexicon_index().values())


@functools.cache
def value_range(canonical: str) -> tuple[float, float] | None:
    """The values ``canonical`` can take (rules/lexicon.yaml ``range``), None when any."""
    entry = _load("lexicon.yaml").get(canonical)
    bounds = entry.get("range") if isinstance(entry, dict) else None
    return (float(bounds[0]), float(bounds[1])) if isinstance(bounds, list) and len(bounds) == 2 else None


@functools.cache
def is_integer(canonical: str) -> bool:
    """Whether ``canonical`` is a count or a size (rules/lexicon.yaml ``integer``), never a fraction."""
    entry = _load("lexicon.yaml").get(canonical)
    return isinstance(entry, dict) and entry.get("integer") is True


@functools.cache
def off_when_zero() -> frozenset[str]:
    """The settings a repo may leave out and so switch off (rules/lexicon.yaml ``off_when_absent: 0``): "no dropout"
    is their value check of 0, which the value check decides on a repo that never applies them."""
    return frozenset(str(c) for c, e in _load("lexicon.yaml").items() if isinstance(e, dict) and e.get("off_when_absent") == 0)


_TUPLE_SETTINGS = frozenset(
    "betas image_size input_size crop_size resize_size kernel_size stride strides padding dilation patch_size "
    "window_size milestones lr_milestones num_layers_per_stage depths dims channel_mult".split()
)
_TUPLE_SUFFIX = re.compile(r"_(?:range|ranges|size|sizes|shape|bounds|domain|interval|milestones|resolution|betas|dims)$")


def tuple_valued(canonical: str) -> bool:
    """Whether a setting's one value may be a pair or a list (Adam's betas, an image size, a kernel, a domain):
    "[0.9, 0.999]" after it is its value, not the ends of an interval its value lies in."""
    return canonical.lower() in _TUPLE_SETTINGS or bool(_TUPLE_SUFFIX.search(canonical.lower()))


@functools.cache
def default_value(canonical: str) -> Any:
    """The value every common library gives ``canonical`` where nothing sets it (rules/lexicon.yaml ``default``:
    a sampling temperature of 1), or None."""
    entry = _load("lexicon.yaml").get(canonical)
    return entry.get("default") if isinstance(entry, dict) else None


@functools.cache
def library_default(target: str, canonical: str) -> Any:
    """The documented default of the argument of API ``target`` that is ``canonical`` (one of its lexicon
    spellings: Adam's ``betas``), from rules/library_defaults.yaml; None when the API or the argument is not there."""
    spellings = {canonical.lower(), *(s.lower() for s in _synonyms(canonical))}
    for key, entry in _load("library_defaults.yaml").items():
        if isinstance(entry, dict) and target in (key, *(entry.get("aliases") or ())):
            hits = [v for arg, v in sorted((entry.get("defaults") or {}).items()) if str(arg).lower() in spellings]
            return hits[0] if len(hits) == 1 else None
    return None


@functools.cache
def weak_owners() -> dict[str, tuple[str, ...]]:
    """A weak spelling (``r``, ``alpha``) -> the canonical names that own it, sorted."""
    out: dict[str, list[str]] = {}
    for canonical, entry in sorted(_load("lexicon.yaml").items()):
        if isinstance(entry, dict):
            for weak in entry.get("weak") or []:
                out.setdefault(str(weak).lower(), []).append(str(canonical))
    return {k: tuple(v) for k, v in out.items()}


@functools.cache
def lexicon_index() -> dict[str, str]:
    """alias (lower, underscores) -> canonical name, from rules/lexicon.yaml whatever its nesting."""
    data = _load("lexicon.yaml")
    section = data.get("parameters", data) if isinstance(data.get("parameters", data), dict) else data
    out: dict[str, str] = {}
    for canonical, entry in section.items():
        if not isinstance(canonical, str):
            continue
        aliases: Iterable[Any]
        if isinstance(entry, dict):
            aliases = entry.get("synonyms") or entry.get("aliases") or entry.get("names") or []
        elif isinstance(entry, list):
            aliases = entry
        else:
            aliases = []
        key = canonical.lower().replace("-", "_")
        out.setdefault(key, canonical)
        for alias in aliases:
            if isinstance(alias, str):
                out.setdefault(alias.lower().replace("-", "_"), canonical)
    return out


@functools.cache
def _terms() -> dict:
    return _load("claim_terms.yaml")


@functools.cache
def phrase_table() -> list[tuple[str, str]]:
    """(normalised phrase, canonical) longest first, so "base learning rate" wins over "rate"."""
    phrases = _terms().get("phrases") or {}
    table = {_norm_phrase(k): str(v) for k, v in phrases.items()}
    for blocked in _terms().get("not_phrases") or []:
        table[_norm_phrase(str(blocked))] = ""  # matched, so the shorter phrase inside it is not, but names nothing
    return sorted(table.items(), key=lambda kv: (-len(kv[0]), kv[0]))


def section(name: str) -> dict:
    """A top-level mapping of rules/claim_terms.yaml (``distributions``, ``units``, ...), empty when absent."""
    value = _terms().get(name)
    return value if isinstance(value, dict) else {}


def unit_name(unit: str) -> str | None:
    name = (_terms().get("units") or {}).get(unit.lower())
    return lexicon_index().get(name.lower(), name) if name else None


def context_words() -> frozenset[str]:
    return frozenset(str(w).lower() for w in _terms().get("context") or [])


def ascii_symbol(text: str) -> str:
    """Greek letters and subscripts spelled out: ``β₁`` -> ``beta1``."""
    out = "".join(_GREEK.get(ch, ch) for ch in text)
    return out.translate(_SUBSCRIPTS)


def identifier(text: str) -> str:
    """A snake_case identifier from a term: ``grad_acc_steps`` stays, ``Max Seq Len`` -> ``max_seq_len``."""
    text = ascii_symbol(text)
    text = _CAMEL_WORD.sub(lambda m: re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", m.group(0)).lower(), text)  # hiddenSize
    text = re.sub(r"[^0-9A-Za-z_]+", "_", text).strip("_")
    return re.sub(r"_+", "_", text)


_CAMEL_WORD = re.compile(r"(?<![A-Za-z0-9_])[a-z]+(?:[A-Z][a-z0-9]+)+(?![A-Za-z0-9_])")  # not "mAP", "nMSE"


def canonical_name(term: str, aliases: dict[str, list[str]] | None = None) -> str | None:
    """The canonical parameter a term names, or None when the term is not a parameter name at all.

    Order: the spec's aliases, the phrase table, the shared lexicon, then the term itself when it already
    looks like a code identifier (``init_dim`` is checked under that name).
    """
    raw = term.strip().strip("'\"`")
    if not raw:
        return None
    phrase = _norm_phrase(ascii_symbol(raw))
    ident = identifier(raw).lower()
    for canonical, names in (aliases or {}).items():
        pool = {canonical.lower(), *(n.lower() for n in names)}
        if ident in pool or phrase.replace(" ", "_") in pool:
            return canonical
    if ident in GREEK_NAMES and raw.strip().lower() not in ("eps", "epsilon") or raw.strip() in _GREEK:
        return ident  # a paper's beta is its own symbol, not the lexicon's KL beta
    for known, canonical in phrase_table():
        if phrase == known:
            return lexicon_index().get(canonical.lower(), canonical) if canonical else None
    lex = lexicon_index()
    if ident in lex:
        return lex[ident]
    written = ascii_symbol(raw)
    if (re.fullmatch(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+", written) or _CAMEL_WORD.fullmatch(written)) and len(written) <= 40:
        return ident  # written as a code identifier (init_dim, P_max, decoderOutputDim): checked under that name
    return None


GREEK_NAMES = frozenset(
    "alpha beta gamma delta epsilon eps zeta eta theta kappa lam lambda mu nu xi pi rho sigma tau phi chi psi omega".split()
)


@functools.cache
def _phrase_regex() -> tuple[re.Pattern, dict[str, str]]:
    """One alternation of every phrase, longest first: a single pass per text instead of one per phrase."""
    table = phrase_table()
    pattern = "|".join(re.escape(known) for known, _ in table)
    return re.compile(rf"(?<![a-z0-9])(?:{pattern})(?![a-z0-9])"), dict(table)


def find_phrase(text: str, context: str = "") -> tuple[str, int, int] | None:
    """The last known hyperparameter phrase in ``text`` (the one nearest a following number). ``context`` is the
    text right before ``text`` (up to an earlier value): a part described there still owns the phrase ("a decoder
    of depth 8 and width 512": the width read after the 8 is the decoder's)."""
    lowered = _norm_phrase(ascii_symbol(text))
    regex, lookup = _phrase_regex()
    best: tuple[int, int, str] | None = None
    for match in regex.finditer(lowered):
        candidate = (match.end(), match.end() - match.start(), lookup[match.group(0)])
        if best is None or candidate[:2] > best[:2]:
            best = candidate
    if best is None or not best[2]:
        return None
    canonical = lexicon_index().get(best[2].lower(), best[2])
    start = best[0] - best[1]
    part = _part_before(lowered[:start], canonical)
    owned = None if part else _owned_embedding(lowered[:start], lowered[start : best[0]], canonical)
    if owned:
        return owned, start, best[0]
    if part is None and context:
        lead = _norm_phrase(ascii_symbol(context)) + " "
        joined = lead + lowered[:start]
        wide = _part_before(joined, canonical)
        if wide and wide.re is _DESCRIBED_PART and wide.start(1) < len(lead):
            phrase = lowered[start : best[0]].replace(" ", "_")
            if name_in_context(canonical, joined[wide.start(1) :] + lowered[start : best[0]], "") in (canonical, None):
                return qualified_name(wide.group(1), canonical, phrase), start, best[0]
    # a context rule that reads the part's word ("teacher momentum" -> ema_decay) knows better
    if part and name_in_context(canonical, lowered[part.start(1) : best[0]], "") in (canonical, None):
        phrase = lowered[start : best[0]].replace(" ", "_")
        return qualified_name(part.group(1), canonical, phrase), part.start(1), best[0]
    return canonical, start, best[0]


def _owned_embedding(before: str, phrase: str, canonical: str) -> str | None:
    """"cosine embedding dim 64", "time embedding dim 128", "speaker embedding dimension 256": the embedding of one
    input, its own width (IQN's quantile embedding, a diffusion model's timestep embedding), not the model's; the
    model's own are "token", "patch", "word" embeddings."""
    if canonical != "hidden_size" or not phrase.startswith("embed"):
        return None
    word = re.search(r"(?<![a-z0-9])([a-z]{3,}) $", before)
    if not word or word.group(1) in _MODEL_EMBEDDINGS | _NOT_PARTS:
        return None
    noun = word.group(1)
    lexicon = lexicon_index()
    for spelling in (f"{noun}_embed_dim", f"{noun}_embedding_dim", f"{noun}_emb_dim", f"{noun}_dim"):
        if spelling in lexicon:
            return lexicon[spelling]
    return f"{noun}_embedding_dim"


_MODEL_EMBEDDINGS = frozenset(
    # the model's own tokens, patches or nodes ("token embedding dim 768", "node embedding dimension 64")
    "token tokens word words patch patches model hidden input inputs latent shared common transformer vit bert "
    "gpt llm encoder decoder feature features network networks net node nodes user item entity relation graph "
    "atom vertex d "
    # and the words that only qualify it ("a larger embedding dimension", "with embedding dim 256")
    "base initial max maximum min final same separate different new original single global with and for per then "
    "but using use uses set sets their our its has have of an small smaller large larger high higher low lower "
    "default overall total".split()
)


def _part_before(before: str, canonical: str) -> re.Match | None:
    """The word right before a parameter phrase that makes it another part's own setting: a role word ("server
    learning rate"), a named network ("mixing network embedding dimension", "value network lr"), or, for a
    learning rate, any part's noun ("position lr", "world-model lr"); None for the run's own ("peak lr", "AdamW lr")."""
    network = re.search(r"(?<![a-z0-9])([a-z]{3,}) (?:network|net) $", before)
    if network and network.group(1) not in _NOT_PARTS:
        return network
    word = re.search(r"(?<![a-z0-9])([a-z]+) $", before)
    described = _DESCRIBED_PART.search(before)
    if described and described.group(1) in role_qualifiers():
        return described  # "a decoder of depth 8 and width 512", "the predictor is a narrow ViT of depth 12"
    if not word:
        return None
    noun = word.group(1)
    if word.group(1) in role_qualifiers():
        return word
    if canonical == "learning_rate" and len(noun) >= 3 and noun not in _LR_MODIFIERS | _NOT_PARTS | _NOT_NOUNS | optimizer_words():
        return word
    return None


# a part, what it is, then its settings: "<part> (is a narrow ViT) of <setting> (N and) <setting>"; not "with",
# which describes the model itself as often ("a 24-layer decoder with hidden size 2048" is the LLM's width)
_DESCRIBED_PART = re.compile(r"(?<![a-z0-9])([a-z]+)(?: (?:is|being) an?(?: [\w\-/]+){0,3})? of (?:[^,;:()]{0,40}? and )?$")


_LR_MODIFIERS = frozenset(
    "base peak initial init max maximum min minimum final constant fixed default overall starting start end top "
    "small smaller large larger high higher low lower same separate different new original single shared global "
    "warmup warm cosine linear step cyclic decayed decaying scheduled effective nominal target typical tuned best "
    "optimal optimizer optimiser training train learning finetuning tuning pretraining lora qlora adapter peft with "
    "and for per then but using use uses set sets its their our the lr layer layerwise wise environment env task "
    "dataset domain benchmark game language run seed experiment setting sqrt inverse exponential polynomial poly "
    "onecycle cycle cyclical plateau triangular".split()
)  # "peak lr", "AdamW lr", "LoRA lr": the run's learning rate, not a part's


@functools.cache
def optimizer_words() -> frozenset[str]:
    """Optimizer names as lowercase words ("adamw", "sgd"): "AdamW lr 1e-3" is the run's learning rate."""
    words = set()
    for name in _load("claim_apis.yaml").get("optimizer") or {}:
        words.update(re.findall(r"[a-z0-9]+", str(name).lower()))
    return frozenset(words | {"adam", "adamw", "sgd", "lion", "lamb", "lars", "rmsprop", "adagrad", "adafactor", "muon", "sophia"})


# words that are no part's name: "a grid search over lr in {...}", "we sweep across lr", "tuned via lr finder"
_NOT_NOUNS = frozenset(
    "over across from into onto via under within than between among all both either any some which whose when "
    "where while are was were been being sweep sweeps swept sweeping search searched searching grid tune tunes "
    "vary varies varied varying try tried range ranges ranging".split()
)


_NOT_PARTS = frozenset(
    "the this that our their its each every whole entire full same main base shared neural deep overall "
    "backbone".split()
)  # "the network's hidden size", "the neural network learning rate": the model itself


@functools.cache
def role_qualifiers() -> frozenset[str]:
    """Words ("server", "discriminator") that make a parameter phrase after them another part's own setting."""
    return frozenset(str(w).lower() for w in _terms().get("role_qualifiers") or [])


def _synonyms(canonical: str) -> list[str]:
    """The lexicon's strong spellings of ``canonical``, as written there."""
    entry = _load("lexicon.yaml").get(canonical)
    return [str(s) for s in (entry.get("synonyms") or []) if isinstance(s, str)] if isinstance(entry, dict) else []


def qualified_name(role: str, canonical: str, phrase: str) -> str:
    """"server" + learning_rate -> server_learning_rate; "inner" + num_steps -> num_inner_steps; a spelling the
    lexicon knows with its role ("inner_lr") -> the lexicon's own name for it."""
    lexicon = lexicon_index()
    short = [s.lower() for s in _synonyms(canonical) if len(s) <= 4]
    for spelling in (f"{role}_{phrase}", f"{phrase}_{role}", f"{role}_{canonical}", *(f"{role}_{s}" for s in short)):
        if spelling in lexicon:
            return lexicon[spelling]  # "value network lr" -> value_lr, the critic's learning rate
    if canonical.startswith("num_"):
        return f"num_{role}_{canonical[4:]}"
    return f"{role}_{canonical}"


def role_aliases(name: str) -> list[str]:
    """The other spellings code uses for a role-qualified name (server_learning_rate: server_lr, lr_server);
    empty for any other name."""
    parts = name.split("_")
    counted = parts[0] == "num" and len(parts) > 2
    role = parts[1] if counted else parts[0]
    base = "num_" + "_".join(parts[2:]) if counted else "_".join(parts[1:])
    if name.lower() in lexicon_index() or len(parts) < 2 or (role not in role_qualifiers() and base not in ("learning_rate", "min_learning_rate")):
        return []  # any part's learning rate is qualified ("opacity lr"); other settings only by a role word
    if base not in canonical_names():
        return []
    spellings = _synonyms(base)
    if base == "min_learning_rate":
        return [n for n in (f"{role}_lr_final", f"{role}_min_lr", f"{role}_lr_min", f"{role}_final_lr") if n != name]
    out = [f"{role}_{base}", f"{role}_{base[4:]}"] if counted else [f"{role}_{base}"]
    if base == "num_layers":
        out.append(f"{role}_depth")  # mapping_depth, head_depth
    for spelling in (s.lower() for s in spellings):
        if len(spelling) <= 4:
            out += [f"{role}_{spelling}", f"{spelling}_{role}"]  # lr_server, temp_teacher
        elif base.endswith(spelling):
            out.append(f"{role}_{spelling}")  # meta_batch_size
    if base == "learning_rate":
        out.append(f"{role}_lr_init")  # 3DGS's position_lr_init
    return [n for n in dict.fromkeys(out) if n != name]


# ----- APIs, datasets, metrics ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ApiHit:
    category: str
    name: str
    target: str
    start: int
    end: int


@functools.cache
def _api_table() -> tuple[tuple[str, str, str, bool], ...]:
    out: list[tuple[str, str, str, bool]] = []
    for category, names in _load("claim_apis.yaml").items():
        if isinstance(names, dict):
            for name, target in names.items():
                out.append((_norm_phrase(str(name)), str(category), str(target), False))
    return tuple(sorted(out, key=lambda t: (-len(t[0]), t[0])))


@functools.lru_cache(maxsize=8)
def _scan_regexes(table: tuple[tuple[str, str, str, bool], ...]) -> list[tuple[re.Pattern, dict[str, tuple[str, str]]]]:
    out = []
    for exact in (True, False):
        entries = [(phrase, category, target) for phrase, category, target, e in table if e == exact]
        if not entries:
            continue
        pattern = "|".join(re.escape(p).replace(r"\ ", r"[\s_\-]?") for p, _, _ in entries)
        flags = 0 if exact else re.IGNORECASE
        key = (lambda t: t) if exact else (lambda t: t.lower())
        lookup = {key(p): (c, t) for p, c, t in entries}
        out.append((re.compile(rf"(?<![A-Za-z0-9])(?:{pattern})(?![A-Za-z0-9])", flags), lookup, exact))
    return out


def _scan(text: str, table: Iterable[tuple[str, str, str, bool]]) -> list[ApiHit]:
    """Non-overlapping word-boundary hits of a phrase table in text (longest alternative first)."""
    normalised = re.sub(r"[_\-]", " ", text)
    taken: list[tuple[int, int]] = []
    hits: list[ApiHit] = []
    regexes = _scan_regexes(tuple(table))
    for regex, lookup, exact in regexes:
        for match in regex.finditer(normalised):
            if any(a < match.end() and match.start() < b for a, b in taken):
                continue
            found = re.sub(r"[\s_\-]+", " ", match.group(0))
            entry = lookup.get(found if exact else found.lower())
            if entry is None or _compound_tail(text, match.start()) or (entry[0] == "dataset" and _model_version(text, match.end())):
                continue
            end = match.end()
            variant = _DATASET_VARIANT.match(text, end) if entry[0] == "dataset" else None
            written = re.sub(r"[\s_\-]+", " ", text[match.start() : variant.end()]) if variant else ""
            listed = next((hit for _, known, _ in regexes if (hit := known.get(written) or known.get(written.lower()))), None)
            if variant:
                # "GPQA-Diamond" (listed), "MMLU-Pro", "HumanEval-X" (as written): another benchmark than the one named
                end = variant.end()
                entry = listed or (entry[0], text[match.start() : end])
            taken.append((match.start(), end))
            hits.append(ApiHit(entry[0], text[match.start() : end], entry[1], match.start(), end))
    hits.sort(key=lambda h: h.start)
    return hits


_DATASET_VARIANT = re.compile(r"\+(?![\w+])|-(?:[A-Z][A-Za-z]{1,10}|[A-Z])(?![\w\-+])")  # not "-400": Kinetics-400 is Kinetics


def _model_version(text: str, end: int) -> bool:
    """A name that starts a model identifier ("dolly-v2-12b", "alpaca-7b"): the model, not the dataset."""
    return bool(re.match(r"-(?:v\d|\d+(?:\.\d+)?[bBmM]\b)", text[end : end + 12]))


def _compound_tail(text: str, start: int) -> bool:
    """A name that ends a hyphenated compound of a capitalised word ("Clopper-Pearson", "Mini-ImageNet"):
    part of another name, not the one the table lists."""
    head = re.search(r"(?<![\w-])(?P<word>[A-Z][A-Za-z]+)-$", text[max(0, start - 30) : start])
    return bool(head) and head.group("word").lower() not in _MODIFIER_PREFIXES


_MODIFIER_PREFIXES = frozenset(
    "pre post multi semi self cross non sub super hyper inter intra bi un re de co anti over under".split()
)  # "Post-LayerNorm" is still a LayerNorm


def find_apis(text: str) -> list[ApiHit]:
    """Optimizer, activation, normalisation, scheduler, layer and loss names in the text; not a piece of an
    identifier ("lambda_VAE", "resnet_block_groups" name a setting, not the layer). A library function written
    out (``torch.cumprod``, ``F.logsigmoid(...)``, ``np.argsort``) is one too, where the table names none there."""
    named = [h for h in _scan(text, _api_table()) if not glued(text, h.start, h.end)]
    written = [h for h in _written_calls(text) if not any(n.start < h.end and h.start < n.end for n in named)]
    return sorted(named + written, key=lambda h: h.start)


# A library call written out in a claim: `torch.logcumsumexp`, `F.logsigmoid(x)`, `jnp.cumprod`, `x.requires_grad_(True)`.
_WRITTEN_CALL = re.compile(
    r"(?<![\w.])(?P<head>torch|F|nn|np|numpy|jnp|jax|scipy|optax|tf|math)\.(?P<rest>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?P<paren>\()?"
    r"|(?<![\w])\.?(?P<inplace>[a-z][a-z0-9]*(?:_[a-z0-9]+)*_)\("
)
_LIBRARY_PREFIX = {"F": "torch.nn.functional", "nn": "torch.nn", "np": "numpy", "jnp": "jax.numpy", "tf": "tensorflow"}
# Attributes that are not functions (dtypes, constants) and namespaces (a module is not a call).
_NOT_CALLS = frozenset(
    "float16 float32 float64 bfloat16 half float double int8 int16 int32 int64 uint8 long bool complex64 complex128 "
    "inf nan pi e newaxis device dtype tensor_type nn optim cuda distributed utils autograd linalg fft random special "
    "distributions functional data amp jit onnx backends hub testing sparse numpy lax tree_util".split()
)


def _written_calls(text: str) -> list[ApiHit]:
    out = []
    for match in _WRITTEN_CALL.finditer(text):
        if match.group("inplace"):  # `requires_grad_(True)`, `normal_(...)`: an in-place tensor method
            leaf = match.group("inplace")
            out.append(ApiHit("tensor_ops", leaf, leaf, match.start("inplace"), match.end("inplace")))
            continue
        rest = match.group("rest").rstrip(".")
        leaf = rest.rsplit(".", 1)[-1]
        if leaf in _NOT_CALLS or (not match.group("paren") and leaf[:1].isupper() and leaf.isupper()):
            continue  # `torch.bfloat16`, `torch.linalg`: no call
        qualified = f"{_LIBRARY_PREFIX.get(match.group('head'), match.group('head'))}.{rest}"
        # a tensor method is called on the tensor as often as through the module (`x.cumprod(0)`)
        target = qualified if leaf[:1].isupper() else f"{qualified} | {leaf}"
        out.append(ApiHit("tensor_ops", text[match.start() : match.end("rest")], target, match.start(), match.end("rest")))
    return out


def glued(text: str, start: int, end: int) -> bool:
    """Joined by ``_`` to a word of two or more characters; a one-letter subscript ("argmax_j") is notation."""
    return bool(re.search(r"[A-Za-z0-9]{2}_$", text[max(0, start - 3) : start]) or re.match(r"_[A-Za-z0-9]{2}", text[end : end + 3]))


@functools.cache
def _protocol_table() -> tuple[tuple[str, str, str, bool], ...]:
    out: list[tuple[str, str, str, bool]] = []
    data = _load("claim_protocol.yaml")
    for category in ("dataset", "metric"):
        for canonical, names in (data.get(category) or {}).items():
            for name in [canonical, *(names or [])]:
                name = str(name)
                # Acronyms that are also words (MATH, IS, EM) only count when written in capitals; a prefixed
                # one (mAP, mIoU, nMSE) as written or in capitals ("map from t=0 to t=3" is not mAP).
                short = sum(c.isalpha() for c in name) <= 5
                mixed = short and bool(re.match(r"[a-z][A-Z]", name))
                # A dataset named by an English word (Weather, Traffic, Dolly) only as a name is written: "ERA5
                # weather simulation" names ERA5 alone.
                word = category == "dataset" and bool(re.fullmatch(r"[A-Z][a-z]{2,}", name))
                exact = (short and (name.upper() == name or mixed)) or word
                for spelling in (name, name.upper()) if mixed or word else (name,):
                    phrase = re.sub(r"[_\-]+", " ", spelling.strip()) if exact else _norm_phrase(spelling)
                    out.append((phrase, category, str(canonical), exact))
    # one spelling under two entries ("ogbg-molhiv", and HIV's alias ogbg-molhiv): the entry it is the name of
    # wins, then the first canonical in sort order, never the set's hash order
    chosen: dict[tuple[str, bool], tuple[tuple[bool, str, str], tuple[str, str, str, bool]]] = {}
    for phrase, category, canonical, exact in out:
        rank = (_norm_phrase(canonical) != _norm_phrase(phrase), category, canonical)
        key = (phrase if exact else phrase.lower(), exact)
        if key not in chosen or rank < chosen[key][0]:
            chosen[key] = (rank, (phrase, category, canonical, exact))
    return tuple(sorted((entry for _, entry in chosen.values()), key=lambda t: (-len(t[0]), t[0], t[1], t[2], t[3])))


def find_protocol_terms(text: str) -> list[ApiHit]:
    """Dataset and metric names (category "dataset" / "metric", target = canonical name)."""
    return _scan(text, _protocol_table())


def protocol_rule_cues() -> dict[str, list[str]]:
    """Protocol rules without required parameters -> the lower-case phrases that state them."""
    cues = _load("claim_protocol.yaml").get("rule_cues") or {}
    return {str(rule): [str(c).lower() for c in phrases or []] for rule, phrases in sorted(cues.items())}


@functools.cache
def _rule_patterns() -> dict[str, tuple[re.Pattern, ...]]:
    data = _load("claim_protocol.yaml").get("rule_patterns") or {}
    return {str(rule): tuple(re.compile(str(p)) for p in patterns or []) for rule, patterns in sorted(data.items())}


def protocol_rules_stated(text: str) -> list[str]:
    """The parameterless protocol rules a text states, by their phrases or patterns (rules/claim_protocol.yaml
    ``rule_cues``, ``rule_patterns``). A statement negated ("no early stopping") or about the test data ("tuned on
    the held-out test set": the opposite of selecting on validation data) states nothing."""
    lowered = text.lower()
    out = []
    for rule in sorted(set(protocol_rule_cues()) | set(_rule_patterns())):
        spans = [m.span() for cue in protocol_rule_cues().get(rule, []) if cue in lowered for m in re.finditer(re.escape(cue), lowered)]
        spans += [m.span() for p in _rule_patterns().get(rule, ()) for m in p.finditer(lowered)]
        if any(not _negated_or_test(lowered, start, end) for start, end in spans):
            out.append(rule)
    return out


def _negated_or_test(text: str, start: int, end: int) -> bool:
    before = text[max(0, start - 12) : start]
    return bool(re.search(r"\b(?:no|not|without|never)\s+$", before) or re.match(r"[\w\s-]{0,12}\btest\b", text[end:]))


def protocol_mapping(kind: str) -> dict[str, str]:
    """A phrase -> name mapping of rules/claim_protocol.yaml (``frozen_targets``), sorted longest first."""
    data = _load("claim_protocol.yaml").get(kind) or {}
    items = data.items() if isinstance(data, dict) else ((str(w), str(w)) for w in data)
    return dict(sorted(((str(k), str(v)) for k, v in items), key=lambda kv: (-len(kv[0]), kv[0])))


def protocol_words(kind: str) -> list[str]:
    return [str(w) for w in (_load("claim_protocol.yaml").get(kind) or [])]


def protocol_mapping_lists(kind: str) -> dict[str, list[str]]:
    """A name -> [spellings] section of rules/claim_protocol.yaml (``baselines``), sorted by name."""
    data = _load("claim_protocol.yaml").get(kind) or {}
    if not isinstance(data, dict):
        return {}
    return {str(k): [str(v) for v in (vs or [])] for k, vs in sorted(data.items(), key=lambda kv: str(kv[0]))}


@functools.cache
def optimizer_names() -> tuple[str, ...]:
    """The optimizers' names as context words, not the words around them ("SGD with momentum", "L-BFGS")."""
    return tuple(sorted(w for w in optimizer_words() if len(w) >= 3 and w not in ("with", "momentum")))


def _flat(words: Iterable[Any]) -> Iterable[Any]:
    """A word list with a YAML alias inside it (``[*rl_words, ratio]``) is a nested list: its words, in order;
    ``"@optimizers"`` stands for every optimizer's name (rules/claim_apis.yaml): "RMSProp ... η = 0.064"."""
    for word in words:
        if isinstance(word, list):
            yield from _flat(word)
        elif word == "@optimizers":
            yield from optimizer_names()
        else:
            yield word


_UNIT_WORDS = frozenset({"px", "hz", "khz", "ms", "gb"})


def _mentions(text: str, words: Iterable[str]) -> bool:
    """A word of ``words`` in ``text``: words of 5+ letters also as a prefix ("train" -> "training"), short
    ones whole ("ar" is not "architecture")."""
    lowered = text.lower()
    for word in _flat(words):
        word = str(word).lower()
        tail = "" if len(word) >= 5 or word.endswith("-") else r"(?![a-z0-9])"
        head = r"(?<![a-z])" if word in _UNIT_WORDS else r"(?<![a-z0-9])"  # "224px": a unit written on its number
        if re.search(head + re.escape(word) + tail, lowered):
            return True
    return False


@functools.cache
def _context_rules() -> dict[str, Any]:
    """context_names keyed by the rule's name and by the lexicon's canonical for it (max_steps -> num_steps)."""
    out: dict[str, Any] = {}
    for key, rule in section("context_names").items():
        out[str(key)] = rule
        out.setdefault(lexicon_index().get(str(key).lower(), str(key)), rule)
    return out


def _up_to(fragment: str, claim: str) -> str:
    """The claim up to the end of ``fragment``: words that introduced it ("LoRA adapters with rank 16, α = 32"),
    not words that come after it ("alpha in [0, 1], then LoRA-style merging")."""
    tail = fragment.strip()[-24:]
    at = claim.find(tail) if tail else -1
    if at >= 0:
        return claim[: at + len(tail)]
    # the fragment is read in plain text ("γ = 2"), the claim may write LaTeX ("$\gamma = 2$"): compare both plain
    loose_claim, loose_fragment = _plain(claim), _plain(fragment)
    for size in range(min(24, len(loose_fragment)), 5, -1):  # the longest tail found: a label may stand before it
        at = loose_claim.find(loose_fragment[-size:])
        if at >= 0:
            return loose_claim[: at + size]
    return fragment


def _plain(text: str) -> str:
    text = re.sub(r"\\([A-Za-z]+)", r"\1", text)
    return re.sub(r"\s+", " ", ascii_symbol(re.sub(r"[${}]", "", text))).strip()


def name_in_context(name: str, fragment: str, claim: str) -> str | None:
    """The name a value should be checked under given the words around it (rules/claim_terms.yaml
    ``context_names``): the name itself, a more specific one, or None to leave the value to the judge."""
    rule = _context_rules().get(name)
    if not isinstance(rule, dict):
        return name
    for alternative in rule.get("instead") or []:
        if not isinstance(alternative, dict):
            continue
        where = _up_to(fragment, claim) if alternative.get("scope") == "before" else fragment
        if _mentions(where, alternative.get("when") or []):
            other = str(alternative.get("name") or "")
            return lexicon_index().get(other.lower(), other) if other else None
    scope = fragment if rule.get("keep_in") == "fragment" else claim
    if _mentions(scope, rule.get("keep_when") or []):
        return name
    fallback = rule.get("otherwise")
    if fallback == "keep":
        return name
    return str(fallback) if fallback else None


@functools.cache
def not_names() -> frozenset[str]:
    """Heading words ("Ablation", "Benchmark") that never name a parameter."""
    return frozenset(str(w).lower() for w in _terms().get("not_names") or [])


@functools.cache
def generic_keys() -> frozenset[str]:
    """Words ("dim", "size") that name a parameter only together with the word before them."""
    return frozenset(str(w).lower() for w in _terms().get("generic_keys") or [])


_PAPER_SUBSCRIPT = re.compile(r"(?:[A-Za-z]|[a-z]+)_[A-Za-z0-9]{1,2}")


def decided_when_unbound(names: Iterable[str], claim: str, aliases: dict | None = None) -> bool:
    """Whether a value check under ``names`` that binds nothing is an omission (missing) rather than undecided:
    a lexicon name, a spec alias, or a name the claim writes as code is the repo's to have; a name made from the
    claim's words ("50 demonstrations" -> num_demonstrations) may be called anything there."""
    names = list(names)
    lexicon = lexicon_index()
    if any(n in (aliases or {}) for n in names):
        return True
    if any(lexicon.get(n.lower().replace("-", "_")) and not _notation(n) for n in names):
        return True
    return written_as_code(names, claim)


def _notation(name: str) -> bool:
    """A bare Greek letter (``beta``, ``γ``, ``eps``, ``lambda_``): how the paper writes a value, not a name the repo
    must use — TRADES' β is `beta` in one repo and `trades_beta` in the next, so an unbound one is undecided."""
    ascii_name = ascii_symbol(name).lower().rstrip("_")
    return ascii_name in GREEK_NAMES or ascii_name in ("lmbda", "eps")


def written_as_code(names: Iterable[str], claim: str) -> bool:
    """The claim writes one of ``names`` as code ("num_rollouts=20", "max_train_steps=800"): the repo's own name.
    A paper symbol with a subscript ("s_0 = 2", "c_m 256", "tau_t") is notation, not a code name."""
    for name in names:
        if "_" not in name or (_PAPER_SUBSCRIPT.fullmatch(name) and (len(name.split("_")[0]) == 1 or name.split("_")[0].lower() in GREEK_NAMES)):
            continue
        if re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", claim):
            return True
    return False
