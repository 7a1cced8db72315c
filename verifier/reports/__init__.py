"""One module per output format; each exposes ``render(report) -> str``."""

from __future__ import annotations

FORMATS = ("text", "json", "sabench")


def render(report, fmt: str, *, color: bool = False) -> str:
    if fmt == "json":
        from verifier.reports import json_report

        return json_report.render(report)
    if fmt == "sabench":
        from verifier.reports import sabench

        return sabench.render(report)
    if fmt == "text":
        from verifier.reports import text

        return text.render(report, color=color)
    raise ValueError(f"unknown format {fmt!r}")
