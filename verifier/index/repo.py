"""The queryable repository index: all files' facts, looked up by name in O(1).

Built once per run by :func:`verifier.index.build.build_index`; every check reads from it. Deep structure
(an ``ast`` tree of a file) is produced lazily and memoised, so only the files a check points at pay for it.
"""

from __future__ import annotations

import ast
import fnmatch
import gc
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from verifier.index.facts import (
    Binding,
    CallSite,
    Definition,
    FileFacts,
    FileRole,
    Import,
    Language,
    Launch,
    Note,
)
from verifier import pysource

PYTHONISH = (Language.python, Language.notebook)


@dataclass
class RepoIndex:
    root: Path
    files: dict[str, FileFacts]  # repo-relative path -> facts, insertion-sorted by path
    notes: list[Note] = field(default_factory=list)
    # Returns the text a file's facts were computed from (for notebooks: the joined code cells).
    source_loader: Callable[[str], str] | None = None
    # How the build went: files, cache_hits, cache_misses, skipped (filled by build_index).
    stats: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._bindings: dict[str, list[Binding]] = defaultdict(list)
        self._calls_by_leaf: dict[str, list[CallSite]] = defaultdict(list)
        self._defs_by_name: dict[str, list[Definition]] = defaultdict(list)
        self._sources: dict[str, str] = {}
        self._trees: dict[str, ast.Module | None] = {}
        self._sorted_bindings: dict[str, list[Binding]] = {}
        self._readers: dict[str, frozenset[str]] = {}
        bindings, calls_by_leaf = self._bindings, self._calls_by_leaf
        for facts in self.files.values():
            for b in facts.bindings:
                bindings[b.name.lower()].append(b)
            for c in facts.calls:
                qual_leaf = _leaf(c.qualname)
                calls_by_leaf[qual_leaf].append(c)
                callee_leaf = _leaf(c.callee)
                if callee_leaf != qual_leaf:
                    calls_by_leaf[callee_leaf].append(c)
            for d in facts.definitions:
                self._defs_by_name[d.name].append(d)
                if d.qualname != d.name:
                    self._defs_by_name[d.qualname].append(d)

    # ----- lookups -------------------------------------------------------------------------------------
    def bindings_named(self, names: Iterable[str]) -> list[Binding]:
        """Every binding whose leaf name is one of ``names`` (case-insensitive), in file/line order."""
        keys = list(dict.fromkeys(name.lower().replace("-", "_") for name in names))
        if len(keys) == 1:  # the common query: one name, its list sorted once per run
            ordered = self._sorted_bindings.get(keys[0])
            if ordered is None:
                ordered = self._sorted_bindings[keys[0]] = sorted(
                    self._bindings.get(keys[0], ()), key=lambda b: (b.span.file, b.span.line, b.path)
                )
            return list(ordered)
        seen: set[int] = set()
        out: list[Binding] = []
        for key in keys:
            for b in self._bindings.get(key, ()):
                if id(b) not in seen:
                    seen.add(id(b))
                    out.append(b)
        out.sort(key=lambda b: (b.span.file, b.span.line, b.path))
        return out

    def names_containing(self, fragments: Iterable[str], roles: Iterable[FileRole] = ()) -> list[tuple[str, str]]:
        """(file, identifier) of every name bound, defined or read whose lowercase form contains one of
        ``fragments`` (``warmup`` finds ``lr_warmup_iters``), in files whose role is not in ``roles``; sorted."""
        wanted = [f.lower() for f in fragments if f]
        skip = set(roles)
        out: set[tuple[str, str]] = set()
        for path, facts in self.files.items():
            if facts.role in skip:
                continue
            names = {b.name for b in facts.bindings} | {d.name for d in facts.definitions} | set(facts.reads)
            out.update((path, n) for n in names if any(w in n.lower() for w in wanted))
        return sorted(out)

    def calls_with_leaf(self, leaf: str) -> list[CallSite]:
        """Call sites whose callee as written or whose resolved name ends in ``leaf`` (``fit`` for
        ``self.fit(...)`` and ``trainer.fit(...)``), in file order; shared, not copied: do not mutate."""
        return self._calls_by_leaf.get(leaf, [])

    def calls_to(self, target: str) -> list[CallSite]:
        """Call sites whose resolved qualified name equals ``target`` or ends with ``.target``."""
        leaf = _leaf(target)
        out = []
        seen: set[int] = set()
        for c in self._calls_by_leaf.get(leaf, ()):
            if id(c) in seen:
                continue
            if _suffix_match(c.qualname, target) or _suffix_match(c.callee, target):
                seen.add(id(c))
                out.append(c)
        out.sort(key=lambda c: (c.span.file, c.span.line, c.callee))
        return out

    def files_reading(self, name: str) -> frozenset[str]:
        """Files that read ``name`` as a value (an identifier or attribute name in ``FileFacts.reads``): one pass
        over the files' read sets per name asked, remembered, instead of a map of every name of the repo."""
        found = self._readers.get(name)
        if found is None:
            found = self._readers[name] = frozenset(p for p, f in self.files.items() if name in f.reads)
        return found

    def definitions_named(self, name: str) -> list[Definition]:
        """Definitions by bare name or qualified name (``Trainer.train``) or dotted module path suffix."""
        out = list(self._defs_by_name.get(name, ()))
        if not out and "." in name:
            head, _, leaf = name.rpartition(".")
            for d in self._defs_by_name.get(leaf, ()):
                full = f"{d.module}.{d.qualname}"
                if _suffix_match(full, name):
                    out.append(d)
        out.sort(key=lambda d: (d.span.file, d.span.line))
        return out

    def all_definitions(self) -> Iterator[Definition]:
        for facts in self.files.values():
            yield from facts.definitions

    def all_calls(self) -> Iterator[CallSite]:
        for facts in self.files.values():
            yield from facts.calls

    def all_launches(self) -> Iterator[Launch]:
        for facts in self.files.values():
            yield from facts.launches

    def imports_of(self, path: str) -> list[Import]:
        facts = self.files.get(path)
        return list(facts.imports) if facts else []

    def python_files(self, role: FileRole | None = FileRole.code) -> list[str]:
        return [
            p
            for p, f in self.files.items()
            if f.language in PYTHONISH and (role is None or f.role == role)
        ]

    def in_scope(self, path: str, scope: str | None) -> bool:
        """Does a check's ``in:`` (file glob) admit this path? Qualified scopes are handled by the checks."""
        if not scope or not looks_like_glob(scope):
            return True
        return fnmatch.fnmatch(path, scope) or fnmatch.fnmatch(path, f"**/{scope}")

    # ----- deep structure, lazily ----------------------------------------------------------------------
    def source(self, path: str) -> str:
        if path not in self._sources:
            if self.source_loader is not None:
                self._sources[path] = self.source_loader(path)
            else:
                self._sources[path] = (self.root / path).read_text(encoding="utf-8", errors="replace")
        return self._sources[path]

    def lines(self, path: str, start: int, end: int | None = None) -> str:
        # Split like the Python tokenizer (form feeds and U+2028 are not line breaks), so ast lines match.
        text = re.split(r"\r\n|\r|\n", self.source(path))
        end = start if end is None else end
        return "\n".join(text[max(start - 1, 0) : end])

    def cell_of(self, path: str, line: int) -> int | None:
        """For a notebook, the cell (1-based, as Jupyter numbers them) holding virtual ``line``; else None."""
        facts = self.files.get(path)
        if facts is None or facts.language is not Language.notebook:
            return None
        from verifier.index.notebooks import cell_of

        return cell_of(self.source(path), line)

    def tree(self, path: str) -> ast.Module | None:
        """The file's ``ast`` (never executed); None when the file does not parse at all."""
        if path not in self._trees:
            facts = self.files.get(path)
            if facts is None or facts.language not in PYTHONISH:
                self._trees[path] = None
            else:
                self._trees[path] = _parse_kept(self.source(path), freeze=len(self.files) >= FREEZE_TREES_FROM)
        return self._trees[path]


# From this many files on, a memoised tree is frozen out of the cyclic GC (build_index freezes the index itself
# from the same size on).
FREEZE_TREES_FROM = 200


def _parse_kept(text: str, freeze: bool) -> ast.Module | None:
    """A memoised tree lives as long as the index and holds no reference cycles, so the cyclic GC can never free
    any of it: parse it with the collector paused and, on a large repo, freeze what is alive (the tree with it,
    as build_index freezes the index), so later collections do not rescan its ~10^5 nodes again and again (on
    sympy those collections were a third of the protocol pass). Frozen objects are still freed by refcount."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        tree = parse_tolerant(text)
    finally:
        if was_enabled:
            gc.enable()
    if freeze:
        gc.freeze()
    return tree


def parse_tolerant(text: str, max_repairs: int = 20) -> ast.Module | None:
    """Parse with ``ast``; on a syntax error blank the offending line and retry, so the rest still counts."""
    lines = text.splitlines()
    for _ in range(max_repairs + 1):
        try:
            return pysource.parse("\n".join(lines))
        except (ValueError, RecursionError, MemoryError):
            return None
        except SyntaxError as exc:
            lineno = exc.lineno or 0
            if not (1 <= lineno <= len(lines)) or not lines[lineno - 1].strip():
                # Error at EOF (unclosed bracket, truncated file): cut back to the last complete line.
                if not lines:
                    return None
                lines = lines[:-1]
                continue
            indent = len(lines[lineno - 1]) - len(lines[lineno - 1].lstrip())
            lines[lineno - 1] = " " * indent + "pass"
        except (ValueError, RecursionError, MemoryError):
            return None
    return None


def looks_like_glob(scope: str) -> bool:
    return "/" in scope or "*" in scope or scope.endswith((".py", ".yaml", ".yml", ".json", ".toml", ".sh"))


def _leaf(dotted: str) -> str:
    return dotted.rsplit(".", 1)[-1]


def _suffix_match(full: str, target: str) -> bool:
    return full == target or full.endswith("." + target)
