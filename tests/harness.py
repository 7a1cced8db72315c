"""Materialise fixture repos (faithful + drift overlays) and compare reports with expected verdicts."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


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
    """Copy the faithful repo to ``dest`` and overlay the variant's files (and deletions)."""
    src = FIXTURES / fixture / "repo"
    repo = dest / fixture
    shutil.copytree(src, repo, symlinks=True)
    if variant is not None:
        overlay = FIXTURES / fixture / "variants" / variant
        for path in sorted(overlay.rglob("*")):
            rel = path.relative_to(overlay)
            if path.is_dir() or rel.as_posix() in ("expected.yaml", "_deleted.txt"):
                continue
            target = repo / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
        deleted = overlay / "_deleted.txt"
        if deleted.is_file():
            for line in deleted.read_text().splitlines():
                if line.strip():
                    (repo / line.strip()).unlink()
    return repo


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
