"""Is a named component a placeholder? Functions carry the index's verdict (``Definition.stub``, from
:func:`verifier.index.stubs.classify`); a class is one when its body is empty, when a method that carries
its behaviour (``forward``, ``__call__``, ...) is a placeholder, or when every method but ``__init__`` is."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from verifier.index.facts import Definition
from verifier.index.repo import RepoIndex

BEHAVIOUR_METHODS = ("forward", "__call__", "call", "step", "loss", "compute_loss", "sample", "predict")


@dataclass(frozen=True, slots=True)
class StubFinding:
    reason: str
    line: int  # where the placeholder is: the def, or a class's placeholder method
    end_line: int


def stub_finding(index: RepoIndex, definition: Definition) -> StubFinding | None:
    """Why ``definition`` is a placeholder, or None when it has a real body."""
    span = definition.span
    if definition.stub:
        return StubFinding(definition.stub, span.line, max(span.end_line, span.line))
    if definition.kind != "class":
        return None
    facts = index.files.get(span.file)
    methods = [
        d
        for d in (facts.definitions if facts else ())
        if d.kind in ("method", "function") and d.qualname.rpartition(".")[0] == definition.qualname
    ]
    for method in methods:
        if method.stub and method.name in BEHAVIOUR_METHODS:
            return _at(f"{method.name} is a placeholder ({method.stub})", method)
    real = [m for m in methods if m.name != "__init__"]
    if real and all(m.stub for m in real):
        return _at(f"every method is a placeholder ({real[0].stub})", real[0])
    if not methods and _empty_class_body(index, definition):
        return StubFinding("empty class body", span.line, max(span.end_line, span.line))
    return None


def _at(reason: str, method: Definition) -> StubFinding:
    return StubFinding(reason, method.span.line, max(method.span.end_line, method.span.line))


def _empty_class_body(index: RepoIndex, definition: Definition) -> bool:
    tree = index.tree(definition.span.file)
    if tree is None:
        return False
    lo, hi = definition.span.line, max(definition.span.end_line, definition.span.line)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == definition.name and lo <= node.lineno <= hi:
            return all(
                isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
                for s in node.body
            )
    return False
