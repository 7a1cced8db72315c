"""Strict unified diffs for fixture variants: a variant's drift is read as a diff against the faithful repo.

``apply_patch`` is deliberately unforgiving (no fuzz, no offset search, no whitespace leniency): a hunk that
no longer matches the faithful repo means the variant silently tests something else, so it must fail loudly.
``make_patch`` writes the same format (git-style ``a/``/``b/`` headers, 3 lines of context) with difflib.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

NO_NEWLINE = "\\ No newline at end of file"
CONTEXT = 3
_HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchError(ValueError):
    """A patch that is malformed, unsafe, or does not match the file it names (one-line message)."""


@dataclass
class Hunk:
    header_line: int  # 1-based line of the ``@@`` header in the patch, for error messages
    header: str
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: list[tuple[str, str]] = field(default_factory=list)  # (tag, text with its own line ending)

    @property
    def old(self) -> list[str]:
        return [text for tag, text in self.lines if tag in " -"]

    @property
    def new(self) -> list[str]:
        return [text for tag, text in self.lines if tag in " +"]


@dataclass
class FilePatch:
    path: str
    header_line: int
    hunks: list[Hunk] = field(default_factory=list)


def split_lines(text: str) -> list[str]:
    """Lines with their endings; only ``\\n`` ends a line (so ``\\r\\n`` and stray ``\\r`` stay content)."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def checked_path(rel: str, where: str) -> str:
    """A repo-relative POSIX path that cannot leave the repo (no absolute path, no ``..``, no empty part)."""
    if not rel or rel.startswith("/") or "\\" in rel or "\0" in rel:
        raise PatchError(f"{where}: unsafe path {rel!r} (must be relative to the repo, '/'-separated)")
    if any(part in ("", ".", "..") for part in rel.split("/")):
        raise PatchError(f"{where}: unsafe path {rel!r} (no '.', '..' or empty parts)")
    return PurePosixPath(rel).as_posix()


def inside(root: Path, rel: str, where: str) -> Path:
    """``root / rel`` after checking that neither the path nor a symlink on the way leads outside ``root``."""
    target = root / checked_path(rel, where)
    base = root.resolve()
    if not target.resolve().is_relative_to(base):
        raise PatchError(f"{where}: {rel!r} resolves outside the repo")
    return target


def _header_path(line: str, prefix: str, side: str, where: str) -> str:
    name = line[len(prefix):].split("\t", 1)[0]
    if name == "/dev/null":
        raise PatchError(f"{where}: file creation/deletion is not patched (new files are overlay files, "
                         "deletions go in _deleted.txt)")
    if not name.startswith(side + "/"):
        raise PatchError(f"{where}: expected '{prefix}{side}/<path>', got {line!r}")
    return checked_path(name[len(side) + 1:], where)


def parse_patch(text: str, label: str = "patch") -> list[FilePatch]:
    """File sections of a unified diff; any line that is not part of the format is an error."""
    if text and not text.endswith("\n"):
        raise PatchError(f"{label}: the patch does not end with a newline (truncated?)")
    lines = text.split("\n")[:-1] if text else []
    files: list[FilePatch] = []
    i = 0
    while i < len(lines):
        where = f"{label} line {i + 1}"
        if not lines[i].startswith("--- ") or i + 1 >= len(lines) or not lines[i + 1].startswith("+++ "):
            raise PatchError(f"{where}: expected a '--- a/<path>' / '+++ b/<path>' header, got {lines[i]!r}")
        old = _header_path(lines[i], "--- ", "a", where)
        new = _header_path(lines[i + 1], "+++ ", "b", f"{label} line {i + 2}")
        if old != new:
            raise PatchError(f"{where}: renames are not supported ({old!r} -> {new!r})")
        if files and old <= files[-1].path:
            raise PatchError(f"{where}: {old!r} comes after {files[-1].path!r} (files must be sorted and unique)")
        fp = FilePatch(old, i + 1)
        files.append(fp)
        i += 2
        while i < len(lines) and lines[i].startswith("@@"):
            i = _parse_hunk(lines, i, fp, label)
        if not fp.hunks:
            raise PatchError(f"{where}: {old!r} has no hunks")
    return files


def _parse_hunk(lines: list[str], i: int, fp: FilePatch, label: str) -> int:
    where = f"{label} line {i + 1}"
    m = _HUNK_HEADER.match(lines[i])
    if not m:
        raise PatchError(f"{where}: malformed hunk header {lines[i]!r}")
    old_start, new_start = int(m[1]), int(m[3])
    old_count = 1 if m[2] is None else int(m[2])
    new_count = 1 if m[4] is None else int(m[4])
    hunk = Hunk(i + 1, m[0], old_start, old_count, new_start, new_count)
    i += 1
    old_seen = new_seen = 0
    while old_seen < old_count or new_seen < new_count:
        if i >= len(lines):
            raise PatchError(f"{where}: {fp.path}: hunk {hunk.header} ends early (patch truncated)")
        line = lines[i]
        tag, text = line[:1], line[1:] + "\n"
        if tag == " ":
            old_seen, new_seen = old_seen + 1, new_seen + 1
        elif tag == "-":
            old_seen += 1
        elif tag == "+":
            new_seen += 1
        elif tag == "\\" and hunk.lines:
            _drop_newline(hunk, line, f"{label} line {i + 1}")
            i += 1
            continue
        else:
            hint = " (a context line lost its leading space?)" if not line else ""
            raise PatchError(f"{label} line {i + 1}: {fp.path}: unexpected line {line!r} in hunk {hunk.header}{hint}")
        if old_seen > old_count or new_seen > new_count:
            raise PatchError(f"{label} line {i + 1}: {fp.path}: hunk {hunk.header} has more lines than its header says")
        hunk.lines.append((tag, text))
        i += 1
    if i < len(lines) and lines[i].startswith("\\"):
        _drop_newline(hunk, lines[i], f"{label} line {i + 1}")
        i += 1
    fp.hunks.append(hunk)
    return i


def _drop_newline(hunk: Hunk, line: str, where: str) -> None:
    if line != NO_NEWLINE:
        raise PatchError(f"{where}: unexpected line {line!r}")
    tag, text = hunk.lines[-1]
    if not text.endswith("\n"):
        raise PatchError(f"{where}: a second {NO_NEWLINE!r} for the same line")
    hunk.lines[-1] = (tag, text[:-1])


def apply_hunks(original: str, fp: FilePatch, label: str, moved: list[str] | None = None) -> str:
    """The file after every hunk, each at exactly the line its header names, matching to the byte.

    Only ``rebase`` passes ``moved``: then a hunk whose lines match exactly elsewhere (nearest to its header,
    after the hunk before) is applied there and reported in ``moved``; its content is never fuzzed."""
    src = split_lines(original)
    out: list[str] = []
    pos = 0  # lines of ``src`` consumed so far
    offset = 0  # new line number minus old line number, from the hunks before
    for hunk in fp.hunks:
        where = f"{label} line {hunk.header_line}: {fp.path}: hunk {hunk.header}"
        start = hunk.old_start - 1 if hunk.old_count else hunk.old_start  # 0-based first old line
        old = hunk.old
        problem = _mismatch(src, start, pos, old, hunk, offset)
        if problem and moved is not None:
            found = _nearest_match(src, start, pos, old)
            if found is not None:
                moved.append(f"{fp.path}: hunk {hunk.header} moved by {found - start:+d} lines")
                start, problem = found, None
        if problem:
            raise PatchError(f"{where}{problem}")
        out.extend(src[pos:start])
        out.extend(hunk.new)
        pos = start + len(old)
        offset = len(out) - pos
    out.extend(src[pos:])
    for k, line in enumerate(out[:-1]):
        if not line.endswith("\n"):
            raise PatchError(f"{label}: {fp.path}: 'No newline at end of file' on line {k + 1}, which is not the last")
    return "".join(out)


def _mismatch(src: list[str], start: int, pos: int, old: list[str], hunk: Hunk, offset: int) -> str | None:
    """Why the hunk does not apply at ``start`` (text to append to its location), or None."""
    if start < pos:
        return " overlaps or precedes the hunk before it"
    expected_new = start + 1 + offset if hunk.new_count else start + offset
    if hunk.new_start != expected_new:
        return f": new start {hunk.new_start} != {expected_new} implied by the hunks before"
    for k, (want, have) in enumerate(zip(old, src[start:])):
        if have != want:
            return f" does not apply: line {start + k + 1} is {have!r}, patch expects {want!r}"
    if start + len(old) > len(src):
        return f" runs past the end of the file ({len(src)} lines)"
    return None


def _nearest_match(src: list[str], start: int, pos: int, old: list[str]) -> int | None:
    """The exact match of ``old`` at or after ``pos`` closest to ``start``; None if absent or ambiguous."""
    hits = [i for i in range(pos, len(src) - len(old) + 1) if src[i:i + len(old)] == old]
    if not hits:
        return None
    best = min(abs(i - start) for i in hits)
    nearest = [i for i in hits if abs(i - start) == best]
    return nearest[0] if len(nearest) == 1 else None


def apply_patch(text: str, root: Path, label: str = "patch", moved: list[str] | None = None) -> list[str]:
    """Apply a whole patch to files under ``root`` in place; returns the patched paths. Nothing is written
    unless every file section applies. ``moved`` (rebase only) allows exact hunks to move; see apply_hunks."""
    results: list[tuple[Path, bytes]] = []
    for fp in parse_patch(text, label):
        target = inside(root, fp.path, f"{label} line {fp.header_line}")
        if target.is_symlink() or not target.is_file():
            raise PatchError(f"{label} line {fp.header_line}: {fp.path} is not a regular file in the repo")
        try:
            original = target.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise PatchError(f"{label} line {fp.header_line}: {fp.path} is not UTF-8 text") from None
        results.append((target, apply_hunks(original, fp, label, moved).encode("utf-8")))
    for target, data in results:
        target.write_bytes(data)
    return [fp_target.relative_to(root).as_posix() for fp_target, _ in results]


def make_file_patch(rel: str, old: str, new: str, context: int = CONTEXT) -> str:
    """One file's section of a unified diff ('' when the texts are equal), git-style headers."""
    rel = checked_path(rel, "make_patch")
    a, b = split_lines(old), split_lines(new)
    groups = list(difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context))
    if not groups or a == b:
        return ""
    out = [f"--- a/{rel}\n", f"+++ b/{rel}\n"]
    for group in groups:
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@\n")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                out.extend(_emit(" ", a[a1:a2]))
                continue
            out.extend(_emit("-", a[a1:a2]))
            out.extend(_emit("+", b[b1:b2]))
    return "".join(out)


def make_patch(changes: dict[str, tuple[str, str]]) -> str:
    """A whole patch from ``{path: (old text, new text)}``, files sorted by path."""
    return "".join(make_file_patch(rel, old, new) for rel, (old, new) in sorted(changes.items()))


def _range(start: int, stop: int) -> str:
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"


def _emit(tag: str, lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        if line.endswith("\n"):
            out.append(tag + line)
        else:
            out.extend((tag + line + "\n", NO_NEWLINE + "\n"))
    return out
