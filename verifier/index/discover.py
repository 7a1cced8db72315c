"""Which files of a repository to index, with a Note for everything left out.

Walks without following symlinks (so loops and links out of the repo are harmless), honours every
``.gitignore`` (gitwildmatch, nested files apply below their directory) and ``.git/info/exclude``, the spec's
include/exclude globs, and skips version control, virtualenvs, dependency/vendored trees and build output.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

import pathspec

from verifier.index.configs import SPEC_FILES, is_config_name
from verifier.index.facts import FileRole, Language, Note

LANGUAGE_BY_SUFFIX = {
    ".py": Language.python,
    ".ipynb": Language.notebook,
    ".yaml": Language.yaml,
    ".yml": Language.yaml,
    ".json": Language.json,
    ".toml": Language.toml,
    ".sh": Language.shell,
    ".bash": Language.shell,
    ".zsh": Language.shell,
    ".slurm": Language.shell,
    ".sbatch": Language.shell,
    ".txt": Language.text,
    ".jsonl": Language.text,
    ".csv": Language.text,
    ".tsv": Language.text,
    ".md": Language.other,
    ".rst": Language.other,
}
_SKIP_DIRS = {
    ".git": "version control",
    ".hg": "version control",
    ".svn": "version control",
    "node_modules": "dependency directory",
    "site-packages": "installed packages",
    "dist-packages": "installed packages",
    "__pycache__": "bytecode cache",
    "build": "build output",
    "dist": "build output",
    ".eggs": "build output",
    "vendor": "vendored code",
    "vendored": "vendored code",
    "third_party": "vendored code",
    "third-party": "vendored code",
    "thirdparty": "vendored code",
    "external": "vendored code",
    "externals": "vendored code",
    ".venv": "virtual environment",
    "venv": "virtual environment",
}
_TEST_DIRS = frozenset({"tests", "test", "testing", "unittests", "unit_tests", "integration_tests"})
_DOC_DIRS = frozenset({"docs", "doc", "documentation"})
_EXAMPLE_DIRS = frozenset({"examples", "example", "demo", "demos", "tutorials", "tutorial", "samples"})
# A text data file is indexed only as a prompt file: its name or a folder says it holds prompts, templates,
# instructions, questions, captions or label words (a dataset dump or requirements.txt says nothing we check).
_PROMPT_FILE = re.compile(r"prompt|template|instruct|question|caption|label|categor|quer(?:y|ies)|verbali[sz]|system_?message",
                          re.IGNORECASE)
MAX_PROMPT_FILE_BYTES = 256_000
_SHEBANG = re.compile(rb"^#!\s*(?:/usr/bin/env\s+)?\S*\b(?:ba|z|k|da)?sh\b")


@dataclass(frozen=True, slots=True)
class Candidate:
    path: str  # repo-relative POSIX
    language: Language
    role: FileRole
    size: int


def _in_test_place(path: str) -> bool:
    """In a tests/ folder, or pytest's conftest.py: a test whatever it is called."""
    parts = path.split("/")
    return bool({d.lower() for d in parts[:-1]} & _TEST_DIRS) or parts[-1] == "conftest.py"


def test_by_name_only(path: str) -> bool:
    """``test_util.py`` outside any tests/ folder: a test by its name alone (code may still import it)."""
    name = path.rsplit("/", 1)[-1]
    return not _in_test_place(path) and name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def role_of(path: str) -> FileRole:
    parts = path.split("/")
    dirs, name = parts[:-1], parts[-1]
    lowered = {d.lower() for d in dirs}
    if _in_test_place(path) or test_by_name_only(path):
        return FileRole.test
    if lowered & _DOC_DIRS or name.lower().endswith((".md", ".rst", ".txt")):
        return FileRole.doc
    if lowered & _EXAMPLE_DIRS:
        return FileRole.example
    return FileRole.code


def escapes_repo(glob: str) -> bool:
    g = glob.strip().replace("\\", "/")
    if not g:
        return True
    if g.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", g):
        return True
    return ".." in g.split("/")


def _spec(globs: list[str]) -> pathspec.PathSpec | None:
    return pathspec.GitIgnoreSpec.from_lines(globs) if globs else None


def _literal_prefix(glob: str) -> str:
    m = re.search(r"[*?\[]", glob)
    return (glob[: m.start()] if m else glob).lstrip("/")


def _read_ignore(path: Path) -> list[str]:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > 1_000_000:
            return []
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


class _Walker:
    def __init__(self, root: Path, include: list[str], exclude: list[str], max_bytes: int, notes: list[Note]):
        self.root = root
        self.max_bytes = max_bytes
        self.notes = notes
        include = self._check_globs(include, "include")
        exclude = self._check_globs(exclude, "exclude")
        self.include = _spec(include)
        self.exclude = _spec(exclude)
        self.include_prefixes = [_literal_prefix(g) for g in include]
        self.out: list[Candidate] = []

    def _check_globs(self, globs: list[str], which: str) -> list[str]:
        kept = []
        for g in globs:
            if not isinstance(g, str) or escapes_repo(g):
                self.notes.append(Note("<spec>", f"{which} glob {g!r} points outside the repository: ignored"))
            else:
                kept.append(g.strip().replace("\\", "/"))
        return kept

    def note(self, rel: str, reason: str) -> None:
        self.notes.append(Note(rel, reason))

    def explicitly_included(self, rel_dir: str) -> bool:
        return any(p.startswith(rel_dir + "/") for p in self.include_prefixes)

    def run(self) -> list[Candidate]:
        root_ignores = _read_ignore(self.root / ".gitignore") + _read_ignore(self.root / ".git" / "info" / "exclude")
        specs: list[tuple[str, pathspec.PathSpec]] = []
        if root_ignores:
            specs.append(("", pathspec.GitIgnoreSpec.from_lines(root_ignores)))
        # Explicit stack of (relative dir, gitignore specs in force); directories in sorted order.
        stack: list[tuple[str, list[tuple[str, pathspec.PathSpec]]]] = [("", specs)]
        while stack:
            rel_dir, specs = stack.pop()
            abs_dir = self.root / rel_dir if rel_dir else self.root
            if rel_dir:
                lines = _read_ignore(abs_dir / ".gitignore")
                if lines:
                    specs = [*specs, (rel_dir + "/", pathspec.GitIgnoreSpec.from_lines(lines))]
            try:
                with os.scandir(abs_dir) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as exc:
                self.note(rel_dir or ".", f"unreadable directory: {exc.strerror or exc}")
                continue
            subdirs = []
            for entry in entries:
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISLNK(st.st_mode):
                    self._symlink(rel, entry.path)
                    continue
                is_dir = stat.S_ISDIR(st.st_mode)
                if _ignored(specs, rel, is_dir):
                    if is_dir or _language(entry.name) is not None:
                        self.note(rel, "ignored by .gitignore")
                    continue
                if is_dir:
                    reason = self._skip_dir(entry.name, entry.path)
                    if reason and not self.explicitly_included(rel):
                        self.note(rel, f"skipped: {reason}")
                        continue
                    if self.exclude is not None and self.exclude.match_file(rel + "/"):
                        self.note(rel, "excluded by the spec")
                        continue
                    subdirs.append(rel)
                elif stat.S_ISREG(st.st_mode):
                    self._file(rel, entry.name, entry.path, st.st_size)
            for sub in reversed(subdirs):
                stack.append((sub, specs))
        self.out.sort(key=lambda c: c.path)
        return self.out

    def _symlink(self, rel: str, abs_path: str) -> None:
        try:
            target = os.path.realpath(abs_path)
            inside = os.path.commonpath([target, str(self.root)]) == str(self.root)
        except (OSError, ValueError):
            inside = False
        where = "inside" if inside else "outside"
        self.note(rel, f"symlink not followed (target {where} the repository)")

    @staticmethod
    def _skip_dir(name: str, abs_path: str) -> str | None:
        if name in _SKIP_DIRS:
            return _SKIP_DIRS[name]
        if name.endswith(".egg-info"):
            return "build output"
        if os.path.exists(os.path.join(abs_path, "pyvenv.cfg")):
            return "virtual environment"
        if name.startswith("."):
            return "hidden directory"
        return None

    def _file(self, rel: str, name: str, abs_path: str, size: int) -> None:
        language = _language(name)
        if language is None and "." not in name and size < 200_000 and _has_shell_shebang(abs_path):
            language = Language.shell
        if language is None:
            return
        if name in SPEC_FILES:
            return  # the sau spec describes the repo; it is not repo configuration
        if language in (Language.yaml, Language.json, Language.toml) and not is_config_name(name):
            return
        if language is Language.other and not _is_prose(name):
            return
        if language is Language.text and not is_prompt_file(rel):
            return
        if self.exclude is not None and self.exclude.match_file(rel):
            self.note(rel, "excluded by the spec")
            return
        if self.include is not None and not self.include.match_file(rel):
            self.note(rel, "not matched by the spec's include globs")
            return
        limit = min(self.max_bytes, MAX_PROMPT_FILE_BYTES) if language is Language.text else self.max_bytes
        if size > limit:
            self.note(rel, f"skipped: larger than {limit} bytes ({size})")
            return
        self.out.append(Candidate(rel, language, _data_role(rel) if language is Language.text else role_of(rel), size))


def _language(name: str) -> Language | None:
    dot = name.rfind(".")
    if dot <= 0 and not name.startswith("."):
        return None
    return LANGUAGE_BY_SUFFIX.get(name[dot:].lower())


def is_prompt_file(rel: str) -> bool:
    """A ``.txt``/``.jsonl``/``.csv``/``.tsv`` file whose name or folder names prompts (``prompts/identity.txt``)."""
    return bool(_PROMPT_FILE.search(rel))


def _data_role(rel: str) -> FileRole:
    """A prompt file is code unless it sits in tests, docs or examples (``.txt`` alone does not make it a doc)."""
    role = role_of(rel)
    if role is FileRole.doc and not {d.lower() for d in rel.split("/")[:-1]} & _DOC_DIRS:
        return FileRole.code
    return role


def _is_prose(name: str) -> bool:
    return name.lower().endswith((".md", ".rst"))


def _has_shell_shebang(abs_path: str) -> bool:
    try:
        fd = os.open(abs_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        try:
            head = os.read(fd, 128)
        finally:
            os.close(fd)
    except OSError:
        return False
    return bool(_SHEBANG.match(head))


def _ignored(specs: list[tuple[str, pathspec.PathSpec]], rel: str, is_dir: bool) -> bool:
    decision = None
    for prefix, spec in specs:
        if prefix and not rel.startswith(prefix):
            continue
        sub = rel[len(prefix):]
        result = spec.check_file(sub + "/" if is_dir else sub)
        if result.include is not None:
            decision = result.include
    return bool(decision)


def discover(
    root: Path, include: list[str] | None = None, exclude: list[str] | None = None, max_bytes: int = 1_000_000
) -> tuple[list[Candidate], list[Note]]:
    """Candidates to index (sorted by path) and notes for what was left out."""
    notes: list[Note] = []
    walker = _Walker(root, list(include or []), list(exclude or []), max_bytes, notes)
    return walker.run(), notes
