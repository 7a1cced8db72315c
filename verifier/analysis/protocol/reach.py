"""Which repo functions run when the experiment runs: a name-based call graph walked from the entry points.

Over-approximates on purpose (a method call reaches every repo method of that name, a function passed as a
value counts as called): "unwired" must only be said of code that nothing could reach.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict, deque
from dataclasses import dataclass

from verifier.analysis.protocol.common import (
    MODULE_SCOPE,
    FileView,
    file_view,
    python_paths,
    text_of,
)
from verifier.index.facts import Language

MAX_REACH_NODES = 20000
_SHELL_PY = re.compile(r"(?:python\d?(?:\.\d+)?|torchrun|accelerate\s+launch|deepspeed)\s+(?:[^\n;|&]*?\s)?(-m\s+)?([\w./-]+)")


@dataclass(frozen=True)
class Reach:
    reached: frozenset[tuple[str, str]]  # (file, qualname); module scope is (file, "<module>")
    roots: tuple[str, ...]  # entry files, sorted
    complete: bool  # False when the bound stopped the walk (then "unreached" is not a finding)

    def reaches(self, file: str, qualname: str) -> bool:
        if not self.complete:
            return True
        return (file, qualname) in self.reached or (file, qualname.split(".")[0]) in self.reached


class FactsReach:
    """Is a scope reachable? A bounded reverse walk over the index's call sites (callers of the function's
    name, their callers, ...) up to an entry file's module level. Costs a few dictionary look-ups per
    question instead of a whole-repo call graph; like the graph it errs towards "reachable"."""

    MAX_NODES = 2000

    def __init__(self, ctx):
        self.ctx = ctx
        self.roots = tuple(entry_files(ctx))
        self._entry = set(self.roots)
        self.complete = True
        self._cache: dict[tuple[str, str], bool] = {}
        self._caller_cache: dict[str, list[tuple[str, str]]] = {}

    def _callers(self, name: str) -> list[tuple[str, str]]:
        """Where a function of that name is called: the index's calls by leaf name (no second map per run)."""
        found = self._caller_cache.get(name)
        if found is None:
            found = self._caller_cache[name] = [(c.span.file, c.scope) for c in self.ctx.index.calls_with_leaf(name)]
        return found

    def _read_elsewhere(self, names: set[str], path: str, anywhere: bool) -> bool:
        """Is one of ``names`` read as a value in some file (other than ``path`` unless ``anywhere``)?"""
        files_reading = self.ctx.index.files_reading  # per name asked: no map of every name of the repo
        return any(readers and (anywhere or readers - {path}) for readers in (files_reading(n) for n in names))

    def reaches(self, file: str, qualname: str) -> bool:
        key = (file, qualname)
        if key not in self._cache:
            self._cache[key] = self._search(file, qualname)
        return self._cache[key]

    def _search(self, file: str, qualname: str) -> bool:
        if not self._entry:
            return True  # a library without entry points: nothing can be called unwired
        seen: set[tuple[str, str]] = set()
        queue: deque[tuple[str, str]] = deque([(file, qualname)])
        while queue:
            node = queue.popleft()
            if node in seen:
                continue
            seen.add(node)
            if len(seen) > self.MAX_NODES:
                return True
            path, scope = node
            if scope == MODULE_SCOPE:
                if path in self._entry:
                    return True
                continue
            parts = scope.split(".")
            names = {parts[-1]}
            if parts[-1] in ("__init__", "__call__", "forward") and len(parts) > 1:
                names.add(parts[-2])  # instantiating / calling the class runs it
            callers = [c for name in sorted(names) for c in self._callers(name)]
            for caller in callers:
                if caller != node:
                    queue.append(caller)
            if not callers and self._read_elsewhere(names, path, len(parts) > 1):
                return True  # passed as a value (callback, registry): counted as reachable
        return False


def _launched_files(ctx, paths: list[str]) -> set[str]:
    known = set(paths)
    modules = {p[:-3].replace("/", "."): p for p in paths if p.endswith(".py")}
    out: set[str] = set()
    for launch in ctx.index.all_launches():
        target = launch.target
        if target in known:
            out.add(target)
        elif target in modules:
            out.add(modules[target])
    for path, facts in ctx.index.files.items():
        if facts.language != Language.shell:
            continue
        for match in _SHELL_PY.finditer(text_of(ctx, path)):
            target = match.group(2)
            if match.group(1):
                if target in modules:
                    out.add(modules[target])
                continue
            target = target.lstrip("./")
            for cand in (target, f"{path.rpartition('/')[0]}/{target}".lstrip("/")):
                if cand in known:
                    out.add(cand)
    return out


def entry_files(ctx) -> list[str]:
    def make() -> list[str]:
        paths = python_paths(ctx)
        roots = set(_launched_files(ctx, paths))
        for path in paths:
            facts = ctx.index.files.get(path)
            if facts is not None and (facts.has_main_block or facts.language == Language.notebook):
                roots.add(path)
                continue
            text = text_of(ctx, path)
            if "__main__" in text:
                view = file_view(ctx, path)
                if view is not None and view.has_main:
                    roots.add(path)
        return sorted(roots)

    return ctx.memo("protocol.entry_files", make)


def _refs(fn_node: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(fn_node):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            out.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            out.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            out.add(node.value)  # getattr(module, "name"), registries keyed by the function's name
    return out


def _module_refs(view: FileView) -> set[str]:
    out: set[str] = set()
    for stmt in view.tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for deco in stmt.decorator_list:
                out |= _refs(deco)
            continue
        out |= _refs(stmt)
    return out


def reach(ctx) -> Reach | FactsReach:
    """Reverse search over the index's call sites when the index carries facts, else a name-based walk over
    parsed files (hand-built indexes in tests and rule examples)."""
    if any(f.definitions or f.calls for f in ctx.index.files.values()):
        return ctx.memo("protocol.facts_reach", lambda: FactsReach(ctx))
    return _ast_reach(ctx)


def _ast_reach(ctx) -> Reach:
    def make() -> Reach:
        paths = python_paths(ctx)
        views = {p: v for p in paths if (v := file_view(ctx, p)) is not None}
        by_name: dict[str, list[tuple[str, str]]] = defaultdict(list)
        class_members: dict[tuple[str, str], list[str]] = defaultdict(list)
        for path, view in views.items():
            for qual, fn in view.functions.items():
                by_name[fn.name].append((path, qual))
                if "." in qual:
                    cls = qual.rsplit(".", 1)[0]
                    class_members[(path, cls)].append(qual)
            for node in ast.walk(view.tree):
                if isinstance(node, ast.ClassDef):
                    by_name[node.name].append((path, node.name))
        roots = entry_files(ctx) or sorted(views)
        seen: set[tuple[str, str]] = set()
        queue: deque[tuple[str, str]] = deque((p, MODULE_SCOPE) for p in roots if p in views)
        if not entry_files(ctx):
            for path, view in views.items():
                for qual, fn in view.functions.items():
                    if fn.name == "main":
                        queue.append((path, qual))
        complete = True
        while queue:
            item = queue.popleft()
            if item in seen:
                continue
            if len(seen) >= MAX_REACH_NODES:
                complete = False
                break
            seen.add(item)
            path, qual = item
            view = views.get(path)
            if view is None:
                continue
            if qual == MODULE_SCOPE:
                names = _module_refs(view)
            elif qual in view.functions:
                names = _refs(view.functions[qual].node)
            else:  # a class: its methods run when it is instantiated or used
                for member in class_members.get((path, qual), ()):
                    queue.append((path, member))
                continue
            for name in sorted(names):
                for target in by_name.get(name, ()):
                    if target not in seen:
                        queue.append(target)
        return Reach(frozenset(seen), tuple(roots), complete)

    return ctx.memo("protocol.reach", make)
