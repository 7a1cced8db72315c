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


def qualify(dotted: str, imports: dict[str, str]) -> str:
    """``nn.Conv2d`` -> ``torch.nn.Conv2d`` through a local alias map (``{"nn": "torch.nn"}``)."""
    head, _, rest = dotted.partition(".")
    base = imports.get(head)
    if base is None:
        return dotted
    return f"{base}.{rest}" if rest else base
