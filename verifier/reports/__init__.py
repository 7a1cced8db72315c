"""One module per output format; each exposes ``render(report) -> str``."""

from __future__ import annotations

import importlib

_MODULES = {
    "text": "text",
    "json": "json_report",
    "sabench": "sabench",
    "sarif": "sarif",
    "junit": "junit",
    "markdown": "markdown",
}
FORMATS = tuple(_MODULES)


def render(report, fmt: str, *, color: bool = False) -> str:
    if fmt not in _MODULES:
        raise ValueError(f"unknown format {fmt!r}")
    module = importlib.import_module(f"verifier.reports.{_MODULES[fmt]}")
    if fmt == "text":
        return module.render(report, color=color)
    return module.render(report)
