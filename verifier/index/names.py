"""Names of ``ast`` nodes, shared by the index and every analysis above it."""

from __future__ import annotations

import ast


def attribute_chain(node: ast.AST) -> str | None:
    """``a.b.c`` for a plain Name/Attribute chain; None for anything else (calls, subscripts, literals)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None
