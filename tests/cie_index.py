"""Build a RepoIndex straight from in-memory sources (python via the index's own extractor), so the
call/init/exists tests do not depend on file discovery or the cache."""

from __future__ import annotations

import hashlib
from pathlib import Path

from verifier.checks import Context, load_all
from verifier.index import shell
from verifier.index.facts import FileFacts, FileRole, Language, Launch, Span
from verifier.index.python_facts import extract
from verifier.index.repo import RepoIndex
from verifier.spec.model import SAU, Spec


def make_index(files: dict[str, str], launches: dict[str, list[tuple[str, int]]] | None = None) -> RepoIndex:
    """``files``: path -> source. ``launches``: shell path -> [(target script, line)]."""
    facts: dict[str, FileFacts] = {}
    for path in sorted(files):
        text = files[path]
        role = FileRole.test if path.startswith("tests/") or path.rsplit("/", 1)[-1].startswith("test_") else FileRole.code
        if path.endswith(".py"):
            language = Language.python
        elif path.endswith(".sh"):
            language = Language.shell
        elif path.endswith(".toml"):
            language = Language.toml
        else:
            language = Language.other
        ff = FileFacts(path, hashlib.sha1(text.encode()).hexdigest(), language, role, text.count("\n") + 1)
        if language is Language.python:
            extract(path, text, ff)
        elif language is Language.shell:
            shell.extract(path, text, ff)
        for target, line in (launches or {}).get(path, ()):
            ff.launches.append(Launch("python", target, (), Span(path, line, line)))
        facts[path] = ff
    return RepoIndex(Path("/nonexistent-cie-repo"), facts, source_loader=lambda p: files.get(p, ""))


def context(index: RepoIndex) -> Context:
    load_all()
    return Context(index=index, spec=Spec())


def run(check_kind: str, check, index: RepoIndex):
    registry = load_all()
    ctx = context(index)
    ctx.sau = SAU(id="t-D2-001", dimension="D2", check=check)
    return registry[check_kind](check, ctx)


def index_dir(root: Path) -> RepoIndex:
    """Index a fixture directory with the in-memory builder (no discovery rules, no cache)."""
    files = {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix in (".py", ".sh", ".toml")
    }
    return make_index(files)
