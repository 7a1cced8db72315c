"""Turn a repository directory into a :class:`RepoIndex`: discover, extract per file (cached), link launches.

Per-file extraction is independent, so big repos fan out to a process pool; workers return FileFacts (plain
records), never trees. The cyclic GC is paused while many small objects are made, which is most of the
cost of building Python-object trees and facts.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import os
import posixpath
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from verifier.index import cache, configs, notebooks, python_facts, shell
from verifier.index.discover import Candidate, discover, test_by_name_only
from verifier.index.facts import BindingKind, FileFacts, FileRole, Language, Note
from verifier.index.python_facts import module_name
from verifier.index.repo import RepoIndex

POOL_THRESHOLD = 200  # below this many files a pool costs more than it saves
_BINARY_PROBE = 8192


def build_index(
    root: Path,
    include: list[str] = [],  # noqa: B006 - the contract's signature; never mutated
    exclude: list[str] = [],  # noqa: B006
    use_cache: bool = True,
    max_bytes: int = 1_000_000,
    jobs: int | None = None,
) -> RepoIndex:
    """Index ``root`` (never importing or running anything in it). Raises FileNotFoundError /
    NotADirectoryError for a bad root; everything wrong *inside* the repo becomes a Note."""
    root = Path(root)
    if not root.exists():
        raise FileNotFoundError(f"repository path does not exist: {root}")
    if not root.is_dir():
        raise NotADirectoryError(f"repository path is not a directory: {root}")
    root = root.resolve()
    gc_was_enabled = gc.isenabled()
    gc.disable()  # building ~10^6 small acyclic records: the cyclic GC would rescan them over and over
    try:
        index = _build(root, list(include or []), list(exclude or []), use_cache, max_bytes, jobs)
    finally:
        if gc_was_enabled:
            gc.enable()
    if len(index.files) >= POOL_THRESHOLD:
        gc.freeze()  # the index lives for the whole run: keep later collections from rescanning it
    return index


def _build(root: Path, include: list[str], exclude: list[str], use_cache: bool, max_bytes: int,
           jobs: int | None) -> RepoIndex:
    candidates, notes = discover(root, include, exclude, max_bytes)
    cache_root = cache.cache_dir() if use_cache else None
    if jobs is None:
        jobs = min(2, os.cpu_count() or 1)
    results = _extract_all(str(root), candidates, max_bytes, cache_root, jobs)

    files: dict[str, FileFacts] = {}
    stats = {"files": 0, "cache_hits": 0, "cache_misses": 0, "skipped": 0}
    for facts, file_notes, hit in results:
        notes.extend(file_notes)
        if facts is None:
            stats["skipped"] += 1
            continue
        files[facts.path] = facts
        stats["files"] += 1
        if cache_root is not None:
            stats["cache_hits" if hit else "cache_misses"] += 1
        if facts.parse_error is not None:
            notes.append(facts.parse_error)
    files = {path: files[path] for path in sorted(files)}
    _promote_imported_helpers(files)
    _link_launches(files)
    notes = sorted(set(notes), key=lambda n: (n.file, n.line or 0, n.reason))
    index = RepoIndex(root, files, notes, source_loader=_SourceLoader(root, files))
    index.stats = stats
    return index


# ----- per-file extraction (runs in workers) ------------------------------------------------------------------
_Result = tuple[FileFacts | None, list[Note], bool]


def _extract_all(root: str, candidates: list[Candidate], max_bytes: int, cache_root: Path | None,
                 jobs: int) -> list[_Result]:
    if jobs > 1 and len(candidates) > POOL_THRESHOLD:
        try:
            return _extract_pool(root, candidates, max_bytes, cache_root, jobs)
        except (OSError, RuntimeError, ImportError):
            pass  # no usable process pool here (sandbox, frozen app): fall back to one process
    return [extract_file(root, c, max_bytes, cache_root) for c in candidates]


def _extract_pool(root: str, candidates: list[Candidate], max_bytes: int, cache_root: Path | None,
                  jobs: int) -> list[_Result]:
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    # Largest files first, dealt round-robin, so the workers finish together.
    ordered = sorted(candidates, key=lambda c: -c.size)
    n_chunks = max(jobs * 8, 1)
    chunks = [ordered[i::n_chunks] for i in range(n_chunks)]
    chunks = [c for c in chunks if c]
    out: list[_Result] = []
    gc.freeze()
    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=gc.disable) as pool:
            by_path = {c.path: c for c in candidates}
            for part in pool.map(_extract_chunk, [(root, chunk, max_bytes, cache_root) for chunk in chunks]):
                for path, blob, notes, hit in part:
                    if blob is None:
                        out.append((None, notes, hit))
                        continue
                    try:
                        facts, stored_notes = cache.decode(blob)
                    except Exception:  # a corrupt cache entry: extract that file here  # noqa: BLE001
                        out.append(extract_file(root, by_path[path], max_bytes, None))
                        continue
                    out.append((facts, stored_notes + notes, hit))
        return out
    finally:
        gc.unfreeze()


def _extract_chunk(task: tuple[str, list[Candidate], int, Path | None]) -> list[tuple[str, bytes | None, list[Note], bool]]:
    """Worker side: facts go back as compact bytes (see cache.encode), never as trees or dataclasses."""
    root, chunk, max_bytes, cache_root = task
    out = []
    for cand in chunk:
        _, blob, notes, hit = _extract_one(root, cand, max_bytes, cache_root, as_blob=True)
        out.append((cand.path, blob, notes, hit))
    return out


def extract_file(root: str, cand: Candidate, max_bytes: int, cache_root: Path | None) -> _Result:
    """Facts of one file (from the cache when its content was seen before), its notes, and whether it hit."""
    facts, _, notes, hit = _extract_one(root, cand, max_bytes, cache_root, as_blob=False)
    return facts, notes, hit


def _extract_one(root: str, cand: Candidate, max_bytes: int, cache_root: Path | None, as_blob: bool
                 ) -> tuple[FileFacts | None, bytes | None, list[Note], bool]:
    path = cand.path
    try:
        data = _read_no_follow(os.path.join(root, path), max_bytes)
    except OSError as exc:
        return None, None, [Note(path, f"unreadable: {exc.strerror or exc}")], False
    if data is None:
        return None, None, [Note(path, f"skipped: larger than {max_bytes} bytes")], False
    if b"\0" in data[:_BINARY_PROBE]:
        return None, None, [Note(path, "skipped: binary file")], False
    sha = hashlib.sha256(data).hexdigest()
    key = None
    if cache_root is not None:
        key = cache.entry_key(path, cand.role.value, cand.language.value, sha)
        raw = cache.load_raw(cache_root, key)
        if raw is not None:
            if as_blob:
                return None, raw, [], True
            try:
                facts, notes = cache.decode(raw)
                return facts, None, notes, True
            except Exception:  # noqa: BLE001, S110 - a corrupt entry is a miss: extract below
                pass
    text, decode_note = decode(data, path)
    notes = [decode_note] if decode_note else []
    facts = FileFacts(path, sha, cand.language, cand.role, text.count("\n") + (not text.endswith("\n") and bool(text)))
    try:
        _dispatch(cand, text, facts)
    except (RecursionError, MemoryError, ValueError) as exc:
        facts.parse_error = Note(path, f"could not be indexed fully: {type(exc).__name__}")
    blob = cache.encode(facts, notes) if (key is not None or as_blob) else None
    if key is not None and blob is not None:
        cache.store(cache_root, key, blob)  # type: ignore[arg-type]
    if as_blob:
        return None, blob, [], False
    return facts, None, notes, False


def _dispatch(cand: Candidate, text: str, facts: FileFacts) -> None:
    lang = cand.language
    if lang is Language.python:
        python_facts.extract(cand.path, text, facts)
    elif lang is Language.notebook:
        notebooks.extract(cand.path, text, facts)
    elif lang in (Language.yaml, Language.json, Language.toml):
        configs.extract(cand.path, text, facts, lang.value)
        if lang is not Language.json:
            facts.bindings = _with_comments(facts.bindings, cand.path, text)
    elif lang is Language.shell:
        shell.extract(cand.path, text, facts)
        facts.bindings = _with_comments(facts.bindings, cand.path, text)
    elif lang is Language.text:
        pass  # a prompt file: rules read its lines; "lr = 1" in a prompt is no setting
    else:
        facts.bindings = python_facts.prose_bindings(cand.path, text)


def _with_comments(bindings: list, path: str, text: str) -> list:
    """Add the comment bindings of a shell/YAML/TOML file (a shebang is no comment), in line order."""
    comments = [b for b in python_facts.prose_bindings(path, text, hash_comments_only=True)
                if b.span.line > 1 or not text.startswith("#!")]
    return sorted([*bindings, *comments], key=lambda b: b.span.line) if comments else bindings


def _read_no_follow(abs_path: str, max_bytes: int) -> bytes | None:
    """The file's bytes, refusing symlinks (a link swapped in after discovery) and files over the limit."""
    fd = os.open(abs_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:
                return None
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def decode(data: bytes, path: str) -> tuple[str, Note | None]:
    """UTF-8 text (BOM dropped); invalid bytes become U+FFFD with a Note rather than losing the file."""
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        text = data.decode("utf-8", "replace")
        text = text.removeprefix("\ufeff")
        return text, Note(path, "not valid UTF-8: decoded with replacement characters", line)


# ----- cross-file linking -------------------------------------------------------------------------------------
def _promote_imported_helpers(files: dict[str, FileFacts]) -> None:
    """``test_util.py`` beside ``train.py`` that ``train.py`` imports is the project's code, not a test: a file is a
    test by its name alone only while no code imports it (a file in a tests/ folder stays a test)."""
    named_tests: dict[str, FileFacts] = {}
    for facts in files.values():
        if facts.role is FileRole.test and facts.language is Language.python and test_by_name_only(facts.path):
            named_tests[module_name(facts.path)] = facts
    if not named_tests:
        return
    for facts in files.values():
        if facts.role is not FileRole.code or facts.language is not Language.python:
            continue
        for imp in facts.imports:  # relative imports are already absolute here (`.test_helpers` -> pkg.test_helpers)
            for wanted in (imp.module, imp.qualified):
                helper = named_tests.get(wanted)
                if helper is not None:
                    helper.role = FileRole.code


def _link_launches(files: dict[str, FileFacts]) -> None:
    """Point launch targets (``python train.py``, ``-m pkg.train``) at repo files when they resolve."""
    paths = set(files)
    by_suffix: dict[str, list[str]] = {}
    for p in paths:
        if p.endswith(".py"):
            by_suffix.setdefault(p.rsplit("/", 1)[-1], []).append(p)
    for facts in files.values():
        if not facts.launches:
            continue
        resolved = {
            launch.target: resolve_target(launch.runner, launch.target, facts.path, paths, by_suffix)
            for launch in facts.launches
        }
        if all(k == v for k, v in resolved.items()):
            continue
        facts.launches = [dataclasses.replace(la, target=resolved[la.target]) for la in facts.launches]
        facts.bindings = [
            dataclasses.replace(b, owner=resolved.get(b.owner, b.owner)) if b.kind is BindingKind.launch else b
            for b in facts.bindings
        ]


def resolve_target(runner: str, target: str, script: str, paths: set[str], by_suffix: dict[str, list[str]]) -> str:
    if not target or target.startswith("$"):
        return target
    if runner == "python -m" or not target.endswith(".py"):
        base = target.replace(".", "/")
        for candidate in (f"{base}.py", f"{base}/__main__.py", f"src/{base}.py", f"src/{base}/__main__.py"):
            if candidate in paths:
                return candidate
        return target
    script_dir = posixpath.dirname(script)
    options = [posixpath.normpath(target.lstrip("/"))]
    if script_dir:
        options.append(posixpath.normpath(posixpath.join(script_dir, target)))
    for option in options:
        if option in paths and not option.startswith(".."):
            return option
    leaf = target.rsplit("/", 1)[-1]
    matches = [p for p in by_suffix.get(leaf, []) if p.endswith("/" + target.lstrip("./")) or p == leaf]
    if len(matches) == 1:
        return matches[0]
    matches = by_suffix.get(leaf, [])
    return matches[0] if len(matches) == 1 else target


class _SourceLoader:
    """RepoIndex.source for this index: notebooks give their virtual source; nothing outside the repo is read."""

    def __init__(self, root: Path, files: dict[str, FileFacts]):
        self.root = root
        self.files = files

    def __call__(self, path: str) -> str:
        full = os.path.normpath(os.path.join(str(self.root), path))
        if os.path.commonpath([full, str(self.root)]) != str(self.root):
            return ""
        try:
            data = _read_no_follow(full, 50_000_000)
        except OSError:
            return ""
        if data is None:
            return ""
        text, _ = decode(data, path)
        facts = self.files.get(path)
        if facts is not None and facts.language is Language.notebook:
            try:
                return notebooks.virtual_source(text)[0]
            except notebooks.NotebookError:
                return ""
        return text
