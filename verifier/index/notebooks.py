"""Jupyter notebooks: code cells joined into one virtual Python source, facts in its line numbers.

Each cell starts with a header line ``# %% cell N`` (N counts every cell from 1, as Jupyter shows them;
markdown cells become ``# %% [markdown] cell N`` plus ``# ``-prefixed text so "lr = 3e-4" in prose is a
comment binding). ``!cmd`` / ``%run`` / ``%%bash`` lines are commented out in the virtual source (so ``ast``
parses it) and read as shell commands instead: ``!python train.py --lr 3e-4`` becomes a Launch at that line.
:func:`cell_of` maps a virtual line back to its cell for evidence.
"""

from __future__ import annotations

import json
import re

from verifier.index import python_facts, shell
from verifier.index.facts import FileFacts, Note
from verifier.index.pyfold import split_lines

_SHELL_CELL_MAGICS = ("%%bash", "%%sh", "%%script bash", "%%script sh", "%%shell")
_OTHER_CELL_MAGICS = ("%%html", "%%javascript", "%%js", "%%latex", "%%markdown", "%%svg", "%%perl", "%%ruby",
                      "%%sql", "%%writefile", "%%file")
_HEADER = re.compile(r"^# %% (?:\[markdown\] )?cell (\d+)$")
_ASSIGN_MAGIC = re.compile(r"^\s*[\w.,\s]+=\s*[!%]")
_PY_INTERP = re.compile(r"\{([A-Za-z_]\w*)\}")


class NotebookError(ValueError):
    pass


def _cells(raw: str) -> list[dict]:
    try:
        nb = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise NotebookError(f"notebook is not valid JSON: {str(exc)[:80]}") from None
    if not isinstance(nb, dict):
        raise NotebookError("notebook is not a JSON object")
    cells = nb.get("cells")
    if cells is None and isinstance(nb.get("worksheets"), list) and nb["worksheets"]:
        sheet = nb["worksheets"][0]
        cells = sheet.get("cells") if isinstance(sheet, dict) else None
    if not isinstance(cells, list):
        raise NotebookError("notebook has no cells list")
    return [c for c in cells if isinstance(c, dict)]


def _text(cell: dict) -> str:
    src = cell.get("source", cell.get("input", ""))
    if isinstance(src, list):
        return "".join(s for s in src if isinstance(s, str))
    return src if isinstance(src, str) else ""


def virtual_source(raw: str) -> tuple[str, list[tuple[int, str]]]:
    """(virtual Python source, shell commands as (virtual line, command text)). Raises NotebookError."""
    source, commands, _ = _virtual(raw)
    return source, commands


def _virtual(raw: str) -> tuple[str, list[tuple[int, str]], frozenset[int]]:
    out: list[str] = []
    disabled: set[int] = set()  # virtual lines of code turned into comments (magics, shell)
    commands: list[tuple[int, str]] = []
    for number, cell in enumerate(_cells(raw), 1):
        kind = cell.get("cell_type", "code")
        lines = split_lines(_text(cell))
        if lines and lines[-1] == "":
            lines.pop()
        if kind == "markdown":
            out.append(f"# %% [markdown] cell {number}")
            out.extend(("# " + line).rstrip() for line in lines)
            continue
        if kind != "code":
            continue
        out.append(f"# %% cell {number}")
        first = lines[0].strip() if lines else ""
        if first.startswith(_SHELL_CELL_MAGICS):
            commands.append((len(out) + 2, "\n".join(lines[1:])))
            _disable(out, disabled, lines)
            continue
        if first.startswith(_OTHER_CELL_MAGICS):
            _disable(out, disabled, lines)
            continue
        for line in lines:
            stripped = line.lstrip()
            if stripped.startswith("!"):
                commands.append((len(out) + 1, stripped[1:]))
                _disable(out, disabled, [line])
            elif stripped.startswith("%run "):
                commands.append((len(out) + 1, "python " + stripped[5:]))
                _disable(out, disabled, [line])
            elif stripped.startswith("%") or _ASSIGN_MAGIC.match(line):
                _disable(out, disabled, [line])
            else:
                out.append(line)
    return "\n".join(out) + ("\n" if out else ""), commands, frozenset(disabled)


def _disable(out: list[str], disabled: set[int], lines: list[str]) -> None:
    for line in lines:
        out.append("# " + line)
        disabled.add(len(out))


def extract(path: str, raw: str, facts: FileFacts) -> tuple[FileFacts, str]:
    """Facts of a notebook, and the virtual source they refer to."""
    try:
        source, commands, disabled = _virtual(raw)
    except NotebookError as exc:
        facts.parse_error = Note(path, str(exc))
        return facts, ""
    facts.lines = source.count("\n")
    python_facts.extract(path, source, facts, is_package=False, not_comments=disabled)
    state = shell.new_state(path)
    for line, command in commands:
        state.line_offset = line - 1
        command = _PY_INTERP.sub(r"$\1", command)
        shell.scan(command, state)
    if state.bindings or state.launches:
        facts.bindings = sorted(
            [*facts.bindings, *state.bindings], key=lambda b: (b.span.line, b.span.end_line, b.kind.value, b.path)
        )
        facts.launches = sorted(state.launches, key=lambda l: (l.span.line, l.target, l.flags))
    return facts, source


def cell_of(virtual: str, line: int) -> int | None:
    """The notebook cell number (1-based, as in the header comments) that holds virtual line ``line``."""
    lines = split_lines(virtual)
    for i in range(min(line, len(lines)) - 1, -1, -1):
        m = _HEADER.match(lines[i])
        if m:
            return int(m.group(1))
    return None
