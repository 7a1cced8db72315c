"""The protocol rule library: rule data in ``rules/protocol/<id>.yaml``, one implementing module per rule.

The YAML carries what a user reads (summary, documentation, parameters, examples) and the lexicons the
implementation consults, so adding an alias or a seeding API never needs a code change.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from verifier import rules as rule_data

KIND = "protocol"

# rule id -> module under verifier.analysis.protocol that implements ``evaluate(params, ctx, scope, rule)``.
IMPLEMENTATIONS = {
    "split-ratio": "split_ratio",
    "no-test-leakage": "leakage",
    "eval-mode": "eval_mode",
    "seeded": "seeding",
    "seeds": "seeding",
    "dataset": "dataset",
    "metric": "metric",
    "baseline": "baseline",
    "select-on-validation": "selection",
    "frozen": "frozen",
    "trainable": "trainable",
    "augmentation": "augmentation",
    "model": "model",
    "target-modules": "target_modules",
    "strings": "strings",
    "shape": "shape",
    "placement": "placement",
    "hardware": "hardware",
}

_TYPES: dict[str, Callable[[Any], bool]] = {
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str) and bool(v.strip()),
    "boolean": lambda v: isinstance(v, bool),
    "string-list": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "string-or-list": lambda v: (isinstance(v, str) and bool(v.strip()))
    or (isinstance(v, list) and bool(v) and all(isinstance(x, str) for x in v)),
    "shapes": lambda v: isinstance(v, dict) and bool(v) and all(  # shape: {W_down: [r, D]}
        isinstance(k, str) and isinstance(x, list) and bool(x) and all(isinstance(d, (str, int)) for d in x) for k, x in v.items()),
    "string-map": lambda v: isinstance(v, dict) and all(isinstance(k, str) and isinstance(x, str) for k, x in v.items()),
    "string-list-map": lambda v: isinstance(v, dict) and all(
        isinstance(k, str) and isinstance(x, list) and all(isinstance(w, str) for w in x) for k, x in v.items()),
    "ratios": lambda v: isinstance(v, dict)
    and bool(v)
    and all(isinstance(k, str) and isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0 for k, x in v.items()),
}


def rule_names() -> list[str]:
    return sorted(IMPLEMENTATIONS)


def load_rule(name: str) -> dict[str, Any] | None:
    if name not in IMPLEMENTATIONS:
        return None
    try:
        return rule_data.load(f"protocol/{name}.yaml")
    except FileNotFoundError:
        return None


def validate_protocol_params(rule: str, params: dict[str, Any]) -> str | None:
    """The spec error for a protocol check (unknown rule, unknown/missing/mistyped parameter), or None.

    Called by the spec loader at load time so a bad rule is exit 2 naming the field, never a run-time crash.
    """
    data = load_rule(rule)
    if data is None:
        return f"rule: unknown protocol rule {rule!r}; known rules: {', '.join(rule_names())}"
    declared: dict[str, dict] = data.get("parameters") or {}
    for key in sorted(params):
        if key not in declared:
            known = ", ".join(sorted(declared)) or "none"
            return f"{key}: rule {rule!r} has no parameter {key!r} (its parameters: {known})"
    for key, spec in sorted(declared.items()):
        if key not in params or params[key] is None:
            if spec.get("required"):
                return f"{key}: rule {rule!r} needs `{key}` ({spec.get('type', 'a value')})"
            continue
        kind = spec.get("type", "string")
        check = _TYPES.get(kind)
        if check is not None and not check(params[key]):
            return f"{key}: rule {rule!r} expects `{key}` to be {kind}, got {params[key]!r}"
        allowed = spec.get("choices")
        if allowed and params[key] not in allowed:
            return f"{key}: must be one of {', '.join(map(str, allowed))}, got {params[key]!r}"
        vocabulary = _choices_from(data, spec.get("choices_from"))
        if vocabulary:
            given = params[key] if isinstance(params[key], list) else [params[key]]
            unknown = [str(v) for v in given if str(v) not in vocabulary]
            if unknown:
                hint = _nearest(unknown[0], vocabulary)
                return (f"{key}: {unknown[0]!r} is not one of {', '.join(sorted(vocabulary))}"
                        + (f"; did you mean {hint!r}?" if hint else ""))
        if kind == "ratios":
            keys = set(params[key])
            bad = sorted(keys - {"train", "val", "test"})
            if bad:
                return f"{key}: split names must be train, val or test, got {', '.join(bad)}"
        if kind == "shapes":
            for tensor, dims in sorted(params[key].items()):
                unreadable = next((d for d in dims if not _readable_dim(d)), None)
                if unreadable is not None:
                    return (f"{key}.{tensor}: dimension {str(unreadable)!r} is not a size (a positive number or an "
                            "expression of paper symbols such as r, 4*D, D/G)")
    return None


def _readable_dim(dim: Any) -> bool:
    import sympy

    from verifier.symbolic.tensor_shapes import paper_dim

    expr = paper_dim(str(dim))
    return expr is not None and not expr.has(sympy.zoo, sympy.nan, sympy.oo) and expr.is_positive is not False


def _choices_from(data: dict[str, Any], paths: Any) -> frozenset[str]:
    """The names a parameter may take, drawn from the rule's own lexicon (``lexicon.families`` and the keys of
    ``lexicon.shorthands``): one vocabulary for the spec loader and the implementation."""
    out: set[str] = set()
    for path in [paths] if isinstance(paths, str) else list(paths or []):
        node: Any = data
        for part in str(path).split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            out.update(map(str, node))
        elif isinstance(node, list):
            out.update(map(str, node))
    return frozenset(out)


def _nearest(word: str, vocabulary: frozenset[str]) -> str | None:
    import difflib

    found = difflib.get_close_matches(word, sorted(vocabulary), n=1, cutoff=0.75)
    return found[0] if found else None


def describe(rule: str) -> dict[str, Any] | None:
    """What a user reads about one rule (``sau-verify rules NAME``): its summary, documentation, parameters and
    the names of its valid / invalid examples, straight from the rule's YAML. None for an unknown rule."""
    data = load_rule(rule)
    if data is None:
        return None
    params = {}
    for key, spec in sorted((data.get("parameters") or {}).items()):
        entry = {k: spec[k] for k in ("type", "required", "default", "choices", "doc") if k in spec}
        vocabulary = _choices_from(data, spec.get("choices_from"))
        if vocabulary:
            entry["choices"] = sorted(vocabulary)
        params[key] = entry
    examples = data.get("examples") or {}
    return {
        "id": rule,
        "summary": str(data.get("summary", "")).strip(),
        "documentation": str(data.get("documentation", "")).strip(),
        "parameters": params,
        "insensitive_to": list(data.get("insensitive_to") or []),
        "examples": {kind: [str(e.get("name", "")) for e in examples.get(kind) or []] for kind in ("valid", "invalid")},
    }


def nearest_rule(name: str) -> str | None:
    return _nearest(name, frozenset(rule_names()))


def with_defaults(rule: str, params: dict[str, Any]) -> dict[str, Any]:
    data = load_rule(rule) or {}
    out = {k: spec.get("default") for k, spec in (data.get("parameters") or {}).items() if "default" in spec}
    out.update({k: v for k, v in params.items() if v is not None})
    return out


def implementation(rule: str):
    module = importlib.import_module(f"{__name__}.{IMPLEMENTATIONS[rule]}")
    return module.evaluate
