"""Find and load a spec file of any accepted shape into a validated ``LoadedSpec``.

Every problem becomes a ``SpecError`` naming file, line and field; nothing here raises anything else.
"""

from __future__ import annotations

import difflib
import os
import stat
from pathlib import Path
from typing import Any, Callable

from pydantic import ValidationError

from verifier.spec import paperbench, sabench
from verifier.spec.converted import Converted
from verifier.spec.errors import SpecError, SpecIssue
from verifier.spec.model import LoadedSpec, Spec
from verifier.spec.parse import Document, PathKey, format_path, parse_text
from verifier.spec.translate import Locator, translate

SPEC_NAMES = ("sau.yaml", "sau.yml", "sau.json", "sau.toml")
MAX_SPEC_BYTES = 16 * 1024 * 1024
_FORMATS = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".toml": "toml"}
_SHAPE_KEYS = ("version", "saus", "paper_id", *sabench.DIMENSION_KEYS, "claims", "requirements", "sub_tasks")


def find_spec(repo: Path) -> Path | None:
    """The repo's own spec, if any. A spec that is a symlink leading out of the repo is refused."""
    root = Path(repo).resolve()
    for name in SPEC_NAMES:
        candidate = Path(repo) / name
        if not candidate.is_file():
            continue
        if candidate.is_symlink() and not candidate.resolve().is_relative_to(root):
            raise SpecError(str(candidate), None, None, "the spec is a symlink leading outside the repository")
        return candidate
    return None


CheckValidator = Callable[[Any], "str | None"]


def load_spec(path: Path, check_validator: CheckValidator | None = None) -> LoadedSpec:
    """``check_validator(check)`` returns "field: message" for a check the model cannot judge alone (a
    protocol rule's parameters, a pattern's syntax); it is supplied by a higher layer so this one stays pure."""
    file = str(path)
    text = _read_text(Path(path), file)
    doc = parse_text(text, _format_of(Path(path), text), file)
    data = doc.data
    if data is None:
        raise SpecError(file, None, None, "empty spec: the file holds no content")
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else f"a {type(data).__name__}"
        raise SpecError(file, doc.line_of(()), None, f"a spec must be a mapping at the top level, got {kind}")
    shape, converted = _convert(data, Path(path), file, doc)
    spec = _validate(converted, doc, file, check_validator)
    return LoadedSpec(spec=spec, path=file, shape=shape)


def _read_text(path: Path, file: str) -> str:
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise SpecError(file, None, None, "is a directory, not a spec file")
        if not stat.S_ISREG(info.st_mode):
            raise SpecError(file, None, None, "not a regular file")
        if info.st_size > MAX_SPEC_BYTES:
            raise SpecError(file, None, None, f"spec too large: {info.st_size} bytes (limit {MAX_SPEC_BYTES})")
        with open(path, "rb") as handle:
            raw = handle.read(MAX_SPEC_BYTES + 1)
    except FileNotFoundError:
        raise SpecError(file, None, None, "spec file not found") from None
    except PermissionError:
        raise SpecError(file, None, None, "cannot read spec file: permission denied") from None
    except OSError as exc:
        raise SpecError(file, None, None, f"cannot read spec file: {exc.strerror or exc}") from None
    if len(raw) > MAX_SPEC_BYTES:
        raise SpecError(file, None, None, f"spec too large: more than {MAX_SPEC_BYTES} bytes")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise SpecError(file, line, None, f"not UTF-8: invalid byte 0x{raw[exc.start]:02x} at offset {exc.start}") from None
    if not text.strip():
        raise SpecError(file, None, None, "empty spec: the file holds no content")
    return text


def _format_of(path: Path, text: str) -> str:
    fmt = _FORMATS.get(path.suffix.lower())
    if fmt is not None:
        return fmt
    return "json" if text.lstrip().startswith("{") else "yaml"


def _convert(data: dict[str, Any], path: Path, file: str, doc: Document) -> tuple[str, Converted]:
    if "saus" in data or "version" in data:
        return "native", Converted(data=data, origin={(): ()})
    if paperbench.looks_like(data):
        return "paperbench", paperbench.convert(data, paper_id=path.parent.name or "unknown")
    if sabench.looks_like(data):
        return "sabench", sabench.convert(data)
    found = ", ".join(sorted(str(key)[:40] for key in data)[:10]) or "none"
    hint, line = "", doc.line_of(())
    for key in data:
        close = difflib.get_close_matches(str(key), _SHAPE_KEYS, n=1, cutoff=0.7)
        if close:
            hint, line = f"; is {str(key)!r} a typo for {close[0]!r}?", doc.line_of((key,))
            break
    raise SpecError(
        file,
        line,
        None,
        "unrecognised spec: expected `version: 1` and `saus` (native v1), `paper_id` with D1..D4 claim lists "
        f"(SA-Bench) or a rubric tree with `sub_tasks` (PaperBench); found keys: {found}{hint}",
    )


def _validate(converted: Converted, doc: Document, file: str, check_validator: CheckValidator | None = None) -> Spec:
    def locate(native_path: PathKey) -> tuple[PathKey, int | None]:
        source = converted.source_of(native_path)
        return source, doc.line_of(source)

    issues = [SpecIssue(file, doc.line_of(p), format_path(p) or None, m) for p, m in converted.problems]
    spec: Spec | None = None
    try:
        spec = Spec.model_validate(converted.data)
    except ValidationError as exc:
        issues.extend(translate(exc, converted.data, file, locate, format_path))
    except RecursionError:
        issues.append(SpecIssue(file, None, None, "spec nesting too deep"))
    issues.extend(_duplicate_ids(converted.data, file, locate))
    if spec is not None and check_validator is not None:
        issues.extend(_check_issues(spec, check_validator, file, locate))
    if spec is None or issues:  # no spec means validation failed, so there is an issue to report
        raise SpecError.from_issues(issues)
    return spec


def _check_issues(spec: Spec, validator: CheckValidator, file: str, locate) -> list[SpecIssue]:
    issues: list[SpecIssue] = []
    for i, sau in enumerate(spec.saus):
        located = [(("saus", i, "check"), sau.check)] if sau.check is not None else [
            (("saus", i, "checks", j), c) for j, c in enumerate(sau.checks or [])
        ]
        for base, check in located:
            problem = validator(check)
            if problem:
                field, _, message = problem.partition(": ")
                path, line = locate((*base, field)) if message else locate(base)
                if line is None:
                    path, line = locate(base)
                issues.append(SpecIssue(file, line, format_path((*base, field)) if message else format_path(path),
                                        message or problem))
    return issues


def _duplicate_ids(data: dict[str, Any], file: str, locate: Locator) -> list[SpecIssue]:
    """Checked on the raw data, so a duplicate is reported together with any other problem."""
    saus = data.get("saus")
    issues: list[SpecIssue] = []
    first_seen: dict[str, int] = {}
    for index, sau in enumerate(saus if isinstance(saus, list) else []):
        sau_id = sau.get("id") if isinstance(sau, dict) else None
        if not isinstance(sau_id, str):
            continue
        if sau_id not in first_seen:
            first_seen[sau_id] = index
            continue
        first_path, first_line = locate(("saus", first_seen[sau_id], "id"))
        path, line = locate(("saus", index, "id"))
        where = f"line {first_line}" if first_line is not None else format_path(first_path)
        issues.append(SpecIssue(file, line, format_path(path), f"duplicate SAU id {sau_id!r} (first at {where})"))
    return issues
