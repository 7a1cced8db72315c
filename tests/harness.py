"""Materialise fixture repos (faithful + drifted variants) and compare reports with expected verdicts.

A variant folder ``fixtures/<fixture>/variants/<variant>/`` holds ``expected.yaml`` (verdict overrides),
``drift.patch`` (strict unified diff of the repo's text files it changes), overlay files (only files that are
new in the variant, or not text) and ``_deleted.txt`` (repo paths it removes, one a line). To write one:
``python tests/fixture_variants.py materialize <fixture> <dir>``, edit ``<dir>/<fixture>``, then
``python tests/fixture_variants.py capture <fixture> <variant> <dir>/<fixture>``. After editing a ``repo/``,
``python tests/fixture_variants.py rebase <fixture>`` re-anchors hunks whose lines only moved.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from fixture_patch import PatchError, apply_patch, inside

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
VARIANT_META = ("expected.yaml", "_deleted.txt", "drift.patch")  # files of a variant folder that are not overlays


def fixture_cases() -> list[tuple[str, str | None]]:
    """(fixture, variant) pairs on disk; variant None is the faithful repo."""
    cases: list[tuple[str, str | None]] = []
    for fx in sorted(p for p in FIXTURES.iterdir() if (p / "repo").is_dir() and (p / "expected.yaml").is_file()):
        cases.append((fx.name, None))
        variants = fx / "variants"
        if variants.is_dir():
            cases.extend((fx.name, v.name) for v in sorted(variants.iterdir()) if v.is_dir())
    return cases


def materialize(fixture: str, variant: str | None, dest: Path) -> Path:
    """Copy the faithful repo to ``dest / fixture`` and apply the variant (see ``apply_variant``)."""
    src = FIXTURES / fixture / "repo"
    repo = dest / fixture
    shutil.copytree(src, repo, symlinks=True)
    if variant is not None:
        apply_variant(repo, FIXTURES / fixture / "variants" / variant, f"{fixture}/{variant}")
    return repo


def apply_variant(repo: Path, variant_dir: Path, label: str, moved: list[str] | None = None) -> None:
    """drift.patch (strictly: a hunk that no longer matches raises ``PatchError`` naming variant, file and
    hunk line; ``moved`` is for the rebase tool only), then overlay files, then deletions; nothing is written
    outside ``repo``."""
    patch = variant_dir / "drift.patch"
    if patch.is_file():
        apply_patch(patch.read_bytes().decode("utf-8"), repo, f"{label}/drift.patch", moved)
    for path in sorted(variant_dir.rglob("*")):
        rel = path.relative_to(variant_dir)
        if path.is_dir() or rel.as_posix() in VARIANT_META:
            continue
        target = inside(repo, rel.as_posix(), f"{label}/{rel.as_posix()}")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    deleted = variant_dir / "_deleted.txt"
    if deleted.is_file():
        for line in deleted.read_text().splitlines():
            if line.strip():
                target = inside(repo, line.strip(), f"{label}/_deleted.txt")
                if not target.is_file():
                    raise PatchError(f"{label}/_deleted.txt: {line.strip()!r} is not a file of the repo")
                target.unlink()


def expected_for(fixture: str, variant: str | None) -> dict[str, dict]:
    base = yaml.safe_load((FIXTURES / fixture / "expected.yaml").read_text())["saus"]
    if variant is not None:
        over = yaml.safe_load((FIXTURES / fixture / "variants" / variant / "expected.yaml").read_text()) or {}
        for sau_id, exp in (over.get("saus") or {}).items():
            base[sau_id] = exp
    return base


def mismatches(report, expected: dict[str, dict]) -> list[str]:
    """Every way the report differs from the expectation, as readable lines (empty = all good)."""
    problems: list[str] = []
    got = {v.id: v for v in report.verdicts}
    for sau_id in sorted(set(got) - set(expected)):
        problems.append(f"{sau_id}: not in expected.yaml")
    for sau_id, exp in sorted(expected.items()):
        v = got.get(sau_id)
        if v is None:
            problems.append(f"{sau_id}: no verdict")
            continue
        if v.status.value != exp["status"]:
            problems.append(f"{sau_id}: status {v.status.value} != expected {exp['status']} ({v.message})")
        if "score" in exp and v.score != exp["score"]:
            problems.append(f"{sau_id}: score {v.score} != expected {exp['score']} ({v.message})")
        if "score" not in exp and exp["status"] in ("unverified", "error") and v.score is not None:
            problems.append(f"{sau_id}: score {v.score} != expected None")
        if exp.get("evidence"):
            file, _, line = exp["evidence"].rpartition(":")
            line_no = int(line)
            if not any(e.file == file and e.line <= line_no <= e.end_line for e in v.evidence):
                have = ", ".join(f"{e.file}:{e.line}-{e.end_line}" for e in v.evidence) or "none"
                problems.append(f"{sau_id}: no evidence at {exp['evidence']} (have {have})")
    return problems
