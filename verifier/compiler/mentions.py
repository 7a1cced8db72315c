"""Why a name a claim mentions is not the check it looks like.

A method, layer or metric name in a sentence is usually a call or a metric check ("AdamW", "LayerNorm", "FVD"),
but not when the sentence rules the API out ("eliminates matrix inversion"), names the layer as the part that is
trained ("only the LayerNorm parameters are trained": every ViT calls LayerNorm, the drifted repo that trains
everything too), schedules something other than the learning rate, uses the acronym for a model ("based on SVD",
Stable Video Diffusion), or reports the metric as an outcome ("accuracy gains") or a purpose ("to ensure
balanced coverage"). Each test is a textual shape, never a claim id.
"""

from __future__ import annotations

import re

from verifier.compiler import placement, terms

# "Dirichlet BC", "Neumann boundary": a boundary condition (a setting the lexicon reads), not the distribution
BOUNDARY_AFTER = re.compile(r"[\s-]*(?:BCs?\b|boundar(?:y|ies)\b|(?:boundary\s+)?conditions?\b)", re.IGNORECASE)
TRAINABILITY_NOTE = "which parameters are trained or frozen"  # dropped where a trainable check reads the kind
_LAYER_KINDS = frozenset({"normalisation", "normalisation_more", "layers", "architecture", "activation", "activation_more"})


def not_a_call(text: str, hit: terms.ApiHit, claim: str = "") -> str | None:
    """None when the API named at ``hit`` is a call check; else why not ("" when it names no API at all, or when
    what it says of the API is another check's: a placement)."""
    name = text[hit.start : hit.end]
    if BOUNDARY_AFTER.match(text, hit.end):
        return ""
    if _API_NEGATED.search(text[max(0, hit.start - 40) : hit.start]):
        return f"says the method does without {name}: a call check would reward the code the claim rules out"
    if hit.category in _LAYER_KINDS and _trainability_of(text, hit.start, hit.end):
        return (f"{TRAINABILITY_NOTE} ({name}'s): the trainable and frozen rules read a named part or a parameter "
                "kind (bias, norm), not this layer type")
    position = _POSITION_BEFORE.search(text[max(0, hit.start - 40) : hit.start])
    if hit.category in _LAYER_KINDS | {"attention"} and position:
        if placement.covering(text, claim or text) is not None:
            return ""  # the placement check the sentence compiles to is what it says about the layer
        return (f"'{name}' says where another module runs ('{position.group(0).strip()} {name}'), which no check "
                "reads here; a call check on it is no part of the claim")
    if hit.category.startswith("scheduler") and (other := _other_schedule(text)):
        return f"a {name} of the {other}, not of the learning rate: no LR scheduler call is claimed"
    if hit.target == "svd | svd_lowrank | svds" and _MODEL_BASE.search(text[max(0, hit.start - 25) : hit.start]):
        return f"'{name}' here is the model a method is based on (Stable Video Diffusion), not a decomposition"
    return None


def not_a_metric(text: str, hit: terms.ApiHit) -> bool:
    """The metric named at ``hit`` is a number format ("float16 precision"), an argument's name
    ("detection_accuracy"), a purpose ("to ensure balanced coverage") or a reported outcome ("accuracy gains",
    "improvements in ... inversion accuracy")."""
    before = text[max(0, hit.start - 60) : hit.start]
    return (
        (hit.target.lower() == "precision" and bool(_NUMERIC_PRECISION.search(before[-30:])))
        or terms.glued(text, hit.start, hit.end)
        or bool(_PURPOSE_BEFORE.search(before[-40:]))
        or bool(_RESULT_AFTER.match(text, hit.end))
        or bool(_RESULT_BEFORE.search(before))
        or (hit.target == "max error" and bool(_THREAT_MODEL.match(text, hit.end)))
    )


# "L∞ ε = 8/255", "an L-inf ball of radius 0.03", "Linf PGD": an attack's norm, not the max-error metric
_THREAT_MODEL = re.compile(r"[\s\-]*(?:[εϵ]|eps(?:ilon)?\b|norm\b|ball\b|bound\b|threat|attack|perturbation|pgd\b|fgsm\b|adversar|robust)",
                           re.IGNORECASE)


def without_purpose(text: str) -> str:
    """"Uses sign() to approximate AdamW's first step": the text without what the method is used for, which is
    the paper's reasoning, not a second API the code calls."""
    return _PURPOSE_TAIL.sub("", text)


_MODEL_BASE = re.compile(r"\b(?:based on|built on|fine-?tuned from|initiali[sz]ed from|on top of)\s+(?:the\s+)?$", re.IGNORECASE)
_LR_WORDS = re.compile(r"\b(?:lr|learning[\s-]rates?|optimi[sz]ers?|warm-?up)\b", re.IGNORECASE)
_SCHEDULED = re.compile(r"\b(?:guidance|noise|beta|temperature|kl|tau|sigma|teacher[\s-]forcing|mask(?:ing)? ratio)\b", re.IGNORECASE)


def scheduled_quantity(text: str, hit: terms.ApiHit) -> str:
    """What the scheduler named at ``hit`` schedules when that is not the learning rate ("guidance"); ""."""
    return _other_schedule(text) if hit.category.startswith("scheduler") else ""


def _other_schedule(text: str) -> str:
    """What a schedule named in the text schedules when that is not the learning rate ("cosine scheduler for
    guidance intensity"); "" when the text speaks of the learning rate or names nothing else."""
    if _LR_WORDS.search(text):
        return ""
    found = _SCHEDULED.search(text)
    return found.group(0).lower() if found else ""


_API_NEGATED = re.compile(
    r"\b(?:no|without|w/o|not|never|eliminat\w*|avoid\w*|instead of|rather than|removes?|removing|drops?|dropping|"
    r"free of|nor)\s+(?:the\s+|any\s+|an?\s+)?(?:[\w-]+\s+){0,2}$",
    re.IGNORECASE,
)
# A statement of which parameters are trained or frozen, about a layer type ("LayerNorm", "patch embedding"):
# the layer is the part concerned, and a call check on it would pass on the drifted repo that trains everything.
_TRAINED_WORDS = r"(?:trained|tuned|updated|learned|trainable|learnable|fine-?tuned|optimi[sz]ed|frozen)"
_TRAINED_AFTER = re.compile(
    r"[\s-]{0,2}(?:only[\s-]+)?(?:tun(?:ing|ed|e)|fine-?tun\w+)\b|"  # "LayerNorm tuning", "LN-Tune"
    rf"[\w\s-]{{0,25}}?\b(?:weights?|bias(?:es)?|parameters?|params|layers?|blocks?)\s+(?:(?:is|are|remain|stay|kept)\s+)*{_TRAINED_WORDS}\b|"
    rf"\s+(?:(?:is|are|remain|stay|kept)\s+)+{_TRAINED_WORDS}\b",
    re.IGNORECASE,
)
_TRAINED_BEFORE = re.compile(
    r"\b(?:only|solely|freez\w*)\s+(?:the\s+|all\s+)?(?:[\w-]+\s+){0,3}$|"  # "only the LN", "freezes the ViT"
    r"\b(?:tunes?|updates?|trains?)\s+(?:the\s+|all\s+)?(?:weights?|bias(?:es)?|parameters?|params)(?:\s+terms)?\s+(?:in|of)\s+(?:the\s+)?(?:[\w-]+\s+){0,2}$",
    re.IGNORECASE,
)


# "inserted after the multi-head attention sub-layer", "in parallel to the MLP": the layer is where a module runs
_POSITION_BEFORE = re.compile(
    r"\b(?:after|before|following|preceding|alongside|beside|(?:in\s+)?parallel\s+(?:to|with))\s+"
    r"(?:the\s+|each\s+|every\s+)?(?:[\w-]+\s+)?$",
    re.IGNORECASE,
)


def _trainability_of(text: str, start: int, end: int) -> bool:
    """The layer named at text[start:end] is what the sentence says is trained or frozen."""
    clause_start = max(text.rfind(c, 0, start) for c in ",;.(")
    return bool(_TRAINED_AFTER.match(text, end) or _TRAINED_BEFORE.search(text[clause_start + 1 : start]))



_PURPOSE_TAIL = re.compile(
    r"\s+(?:to|in order to|so as to)\s+(?:approximate|mimic|emulate|imitate|mirror|match|ensure|enable|avoid|prevent|"
    r"reduce|improve|stabili[sz]e|speed up|accelerate)\b.*$",
    re.IGNORECASE | re.DOTALL,
)
_RESULT_AFTER = re.compile(r"\s+(?:gains?|improvements?|boosts?|drops?|degradation|increases?|decreases?)\b(?!\s*[(:])", re.IGNORECASE)
_RESULT_BEFORE = re.compile(
    r"\b(?:improv\w*|gains?|boosts?|increases?|decreases?|drops?|degrad\w*)\s+(?:in|of|on)\s+(?:[\w-]+\s+){0,4}$", re.IGNORECASE
)


_PURPOSE_BEFORE = re.compile(
    r"\b(?:to|so as to|in order to)\s+(?:ensure|guarantee|improve|maximi[sz]e|achieve|increase|reduce|boost|balance)\s+"
    r"(?:the\s+|a\s+|an\s+)?(?:[\w-]+\s+){0,2}$",
    re.IGNORECASE,
)


# "in float16 precision", "bf16 mixed precision", "full precision": the number format, not the metric
_NUMERIC_PRECISION = re.compile(
    r"(?:\b(?:b?float\d{2}|fp\d{1,2}|bf16|int\d{1,2}|tf32|half|single|double|full|mixed|reduced|low|\d{1,2}[- ]bit)|"
    r"\bdtype)[\s-]*(?:\w+[\s-]+){0,2}$",
    re.IGNORECASE,
)
