"""Build RepoIndex objects from hand-written facts, so resolver tests do not depend on the index builder."""

from __future__ import annotations

from pathlib import Path

from verifier.analysis.fold import fold
from verifier.index.facts import (
    Binding,
    BindingKind,
    CallSite,
    Definition,
    FileFacts,
    FileRole,
    Language,
    Launch,
    Span,
)
from verifier.index.repo import RepoIndex


def bind(kind: str, name: str, expr: str, at: str, path: str | None = None, scope: str = "<module>",
         owner: str = "", dest: str = "", value: object = "<fold>") -> Binding:
    """``at`` is "file:line"; the value is folded from ``expr`` unless given."""
    file, _, line = at.rpartition(":")
    if value == "<fold>":
        result = fold(expr)
        value, constant = (result.value, True) if result.ok else (None, False)
    else:
        constant = value is not None
    return Binding(name, path or name, BindingKind(kind), expr, value, constant, scope, Span(file, int(line), int(line)),
                   owner, dest)


def call(callee: str, at: str, args: tuple[str, ...] = (), kwargs: dict[str, str] | None = None,
         qualname: str | None = None, scope: str = "<module>") -> CallSite:
    file, _, line = at.rpartition(":")
    return CallSite(callee, qualname or callee, tuple(args), tuple((kwargs or {}).items()), scope,
                    Span(file, int(line), int(line)))


def make_index(bindings=(), calls=(), definitions=(), launches=(), reads=None, roles=None) -> RepoIndex:
    """One FileFacts per file mentioned; ``reads`` maps file -> names read (default: every bound name)."""
    files: dict[str, FileFacts] = {}
    roles = roles or {}

    def facts(path: str) -> FileFacts:
        if path not in files:
            language = Language.python
            if path.endswith((".yaml", ".yml")):
                language = Language.yaml
            elif path.endswith(".sh"):
                language = Language.shell
            role = roles.get(path, FileRole.test if path.startswith("tests/") else FileRole.code)
            files[path] = FileFacts(path, "0", language, role, 100)
        return files[path]

    for b in bindings:
        facts(b.span.file).bindings.append(b)
    for c in calls:
        facts(c.span.file).calls.append(c)
    for d in definitions:
        facts(d.span.file).definitions.append(d)
    for launch in launches:
        facts(launch.span.file).launches.append(launch)
    for path, f in files.items():
        if f.language is Language.python:
            if reads is not None:
                f.reads = frozenset(reads.get(path, ()))
            else:
                f.reads = frozenset(b.name for b in f.bindings)
    ordered = {p: files[p] for p in sorted(files)}
    return RepoIndex(Path("/nonexistent"), ordered, source_loader=lambda p: "")


def definition(name: str, at: str, stub: str | None = None, kind: str = "function") -> Definition:
    file, _, line = at.rpartition(":")
    return Definition(kind, name.rsplit(".", 1)[-1], name, file.removesuffix(".py").replace("/", "."),
                      Span(file, int(line), int(line) + 3), stub=stub)


def launch(target: str, at: str, flags: dict[str, str], env: dict[str, str] | None = None) -> Launch:
    file, _, line = at.rpartition(":")
    return Launch("python", target, tuple(flags.items()), Span(file, int(line), int(line)),
                  tuple((env or {}).items()))


def indexed_repo(root: Path, files: dict[str, str]) -> RepoIndex:
    """Write ``files`` under ``root`` and index them for real (no cache)."""
    from verifier.index.build import build_index

    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return build_index(root, use_cache=False)


def run_value(index: RepoIndex, **check: object):
    """One `value` check over ``index`` with an empty spec."""
    from verifier.checks.base import Context
    from verifier.checks.value import check_value
    from verifier.spec.model import Spec, ValueCheck

    return check_value(ValueCheck(**check), Context(index=index, spec=Spec()))

