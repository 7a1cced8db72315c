"""Parsing of Python text the tool did not write: repository files, claim fragments, rule patterns.

`ast.parse` reports odd-but-valid source (``1if x else 2``, ``"\\d"``) as warnings on stderr. That text
belongs to the analyzed repository or the claim, not to the user running the tool, so the warnings
are dropped here rather than printed in the middle of a report.
"""

from __future__ import annotations

import ast
import warnings


def parse(source: str, mode: str = "exec") -> ast.AST:
    """`ast.parse` without the compiler's SyntaxWarning/DeprecationWarning for the parsed text."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(source, mode=mode)
