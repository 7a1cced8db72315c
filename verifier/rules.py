"""Locate and load the data in ``rules/`` (lexicon, library defaults, protocol rules, SymPy maps).

In a source checkout the data sits in ``<repo>/rules``; in an installed wheel it is packaged as
``verifier/_rules``. Files are parsed with ``yaml.safe_load`` once per process.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml

_PACKAGE_DIR = Path(__file__).resolve().parent


@functools.cache
def rules_dir() -> Path:
    for candidate in (_PACKAGE_DIR / "_rules", _PACKAGE_DIR.parent / "rules"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("sau-verify's rules/ data directory is missing from this installation")


@functools.cache
def schema_dir() -> Path:
    for candidate in (_PACKAGE_DIR / "_schema", _PACKAGE_DIR.parent / "schema"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("sau-verify's schema/ directory is missing from this installation")


@functools.cache
def load(relative: str) -> Any:
    """Load one YAML data file under rules/, e.g. ``load("lexicon.yaml")``."""
    path = rules_dir() / relative
    with path.open(encoding="utf-8") as handle:
        # libyaml's safe loader when present: same safe semantics, ~10x faster on the larger tables
        return yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def list_dir(relative: str) -> list[Path]:
    """The YAML files of a rules/ sub-folder, sorted (e.g. ``protocol``)."""
    folder = rules_dir() / relative
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml"))
