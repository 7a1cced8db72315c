"""On-disk cache of per-file facts, keyed by content hash + path + role + extractor version.

Lives under ``$SAU_VERIFY_CACHE_DIR``, else ``$XDG_CACHE_HOME/sau-verify``, else ``~/.cache/sau-verify`` — never
inside the analysed repo. Entries are our own records, written atomically (temp file + rename);
an unreadable or corrupt entry counts as a miss. Facts travel (to disk and back from worker processes) as
marshalled tuples: pickling ~10^5 slotted dataclasses is ~50x slower than marshal plus positional rebuild. The extractor version is derived from the extractor sources,
so changing any of them invalidates old entries without a manual bump.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import tempfile
from pathlib import Path

from verifier.index.facts import (
    Binding,
    BindingKind,
    CallSite,
    Definition,
    FileFacts,
    FileRole,
    Import,
    Language,
    Launch,
    Note,
    Span,
)

_FORMAT = "2"
_EXTRACTOR_MODULES = ("facts", "pyfold", "python_facts", "stubs", "configs", "shell", "notebooks", "build", "cache")


def _extractor_version() -> str:
    digest = hashlib.sha256(_FORMAT.encode())
    here = Path(__file__).parent
    for name in _EXTRACTOR_MODULES:
        try:
            digest.update((here / f"{name}.py").read_bytes())
        except OSError:
            digest.update(name.encode())
    return digest.hexdigest()[:16]


EXTRACTOR_VERSION = _extractor_version()


def cache_dir() -> Path:
    explicit = os.environ.get("SAU_VERIFY_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "sau-verify"


def entry_key(path: str, role: str, language: str, content_sha: str) -> str:
    return hashlib.sha256(f"{EXTRACTOR_VERSION}\0{path}\0{role}\0{language}\0{content_sha}".encode()).hexdigest()


def _entry(directory: Path, key: str) -> Path:
    return directory / f"facts-{EXTRACTOR_VERSION}" / key[:2] / f"{key}.facts"


def load(directory: Path, key: str) -> tuple[FileFacts, list[Note]] | None:
    try:
        with open(_entry(directory, key), "rb") as fh:
            return decode(fh.read())
    except FileNotFoundError:
        return None
    except Exception:  # noqa: BLE001 - a corrupt or truncated entry is a miss, whatever decoding raised
        return None


def load_raw(directory: Path, key: str) -> bytes | None:
    """The stored bytes of an entry (checked later by :func:`decode`), or None."""
    try:
        with open(_entry(directory, key), "rb") as fh:
            blob = fh.read()
    except OSError:
        return None
    return blob if blob[:1] == b"M" else None


def store(directory: Path, key: str, value: tuple[FileFacts, list[Note]] | bytes) -> bool:
    target = _entry(directory, key)
    blob = value if isinstance(value, bytes) else encode(*value)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(blob)
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        return False
    return True


# ----- compact encoding ----------------------------------------------------------------------------------
_KINDS = {k.value: k for k in BindingKind}
_LANGS = {x.value: x for x in Language}
_ROLES = {x.value: x for x in FileRole}


def encode(facts: FileFacts, notes: list[Note]) -> bytes:
    """Facts and notes as bytes (marshal of plain tuples; pickle only if a value is not marshallable)."""
    rows = (
        facts.path, facts.sha, facts.language.value, facts.role.value, facts.lines,
        tuple((b.name, b.path, b.kind.value, b.expr, b.value, b.constant, b.scope, b.span.line, b.span.end_line,
               b.owner, b.dest) for b in facts.bindings),
        tuple((c.callee, c.qualname, c.args, c.kwargs, c.scope, c.span.line, c.span.end_line) for c in facts.calls),
        tuple((d.kind, d.name, d.qualname, d.module, d.span.line, d.span.end_line, d.params, d.bases, d.decorators,
               d.stub) for d in facts.definitions),
        tuple((i.module, i.name, i.alias, i.span.line, i.span.end_line, i.relative_level) for i in facts.imports),
        tuple((x.runner, x.target, x.flags, x.span.line, x.span.end_line, x.env) for x in facts.launches),
        tuple(sorted(facts.reads)), facts.has_main_block,
        None if facts.parse_error is None else _note_row(facts.parse_error),
        tuple(_note_row(n) for n in notes),
    )
    try:
        return b"M" + marshal.dumps(rows)
    except ValueError:  # a value marshal cannot hold: keep its text instead of losing the file
        safe = list(rows)
        safe[5] = tuple(r[:4] + (r[4] if _marshallable(r[4]) else repr(r[4]),) + r[5:] for r in rows[5])
        return b"M" + marshal.dumps(tuple(safe))


def _marshallable(value: object) -> bool:
    try:
        marshal.dumps(value)
    except ValueError:
        return False
    return True


def _note_row(n: Note) -> tuple:
    return (n.file, n.reason, n.line)


def decode(blob: bytes) -> tuple[FileFacts, list[Note]]:
    if blob[:1] != b"M":
        raise ValueError("not a facts entry")
    rows = marshal.loads(blob[1:])
    (path, sha, language, role, lines, bindings, calls, definitions, imports, launches, reads, has_main,
     parse_error, notes) = rows
    kinds = _KINDS
    B, C, D, I, L, S = Binding, CallSite, Definition, Import, Launch, Span
    facts = FileFacts(
        path, sha, _LANGS[language], _ROLES[role], lines,
        [B(a, p, kinds[k], e, v, c, sc, S(path, ln, en), o, de) for a, p, k, e, v, c, sc, ln, en, o, de in bindings],
        [C(ce, q, ar, kw, sc, S(path, ln, en)) for ce, q, ar, kw, sc, ln, en in calls],
        [D(k, n, q, m, S(path, ln, en), pa, ba, de, st) for k, n, q, m, ln, en, pa, ba, de, st in definitions],
        [I(m, n, a, S(path, ln, en), lv) for m, n, a, ln, en, lv in imports],
        [L(r, t, f, S(path, ln, en), ev) for r, t, f, ln, en, ev in launches],
        frozenset(reads), has_main, None if parse_error is None else Note(*parse_error),
    )
    return facts, [Note(*n) for n in notes]
