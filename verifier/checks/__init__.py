"""Check kinds. Each module ``verifier/checks/<kind>.py`` registers its checker on import."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil

from verifier.checks.base import CHECKERS, Context, Options, checker  # noqa: F401

_LOADED = False
# Check modules that failed to import (a broken installation): kind -> reason. Their SAUs get `error`.
UNAVAILABLE: dict[str, str] = {}


def load_all() -> dict:
    """Import every check module once so each registers itself; returns the registry."""
    global _LOADED
    if not _LOADED:
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
            if info.name != "base" and not info.name.startswith("_"):
                try:
                    importlib.import_module(f"{__name__}.{info.name}")
                except ImportError as exc:
                    UNAVAILABLE[info.name] = f"{type(exc).__name__}: {exc}"
        _LOADED = True
    return CHECKERS


def checker_for(kind: str):
    """The checker of one kind, importing only its module (start-up stays cheap: sympy loads only for formulas)."""
    if kind not in CHECKERS and kind not in UNAVAILABLE and not _LOADED:
        if importlib.util.find_spec(f"{__name__}.{kind}") is not None:
            try:
                importlib.import_module(f"{__name__}.{kind}")
            except ImportError as exc:
                UNAVAILABLE[kind] = f"{type(exc).__name__}: {exc}"
    return CHECKERS.get(kind)


def validate_check(check) -> str | None:
    """Load-time validation the spec model cannot do alone: "field: message", or None when fine."""
    if check.kind == "protocol":
        from verifier.analysis.protocol import validate_protocol_params

        return validate_protocol_params(check.rule, check.params)
    if check.kind == "pattern":
        from verifier.analysis.pattern import validate_pattern_fields

        return validate_pattern_fields(check.require, check.forbid, check.inside, check.where)
    return None
