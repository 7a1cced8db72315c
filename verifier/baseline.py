"""``--baseline REF``: fail only on SAUs that got worse than a git revision or a saved JSON report.

A git revision is exported with ``git archive`` into a temporary folder (the working tree is never touched)
and scored with the *current* spec, so both sides answer the same claims.
"""

from __future__ import annotations

import json
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from verifier.results import Verdict


class BaselineError(Exception):
    """The baseline cannot be read: exit 2."""


@dataclass(frozen=True)
class Regression:
    id: str
    old_status: str
    old_score: float | None
    new_status: str
    new_score: float | None

    def describe(self) -> str:
        def fmt(s: float | None) -> str:
            return "n/a" if s is None else f"{s:.2f}"

        return f"{self.id}: {self.old_status} {fmt(self.old_score)} -> {self.new_status} {fmt(self.new_score)}"


def _rank(score: float | None) -> float:
    return 0.0 if score is None else score


def regressions(current: list[Verdict], baseline: dict[str, tuple[str, float | None]]) -> list[Regression]:
    """SAUs whose score dropped; a SAU new since the baseline regresses only when it is not faithful."""
    out = []
    for v in current:
        if v.accepted_deviation is not None:
            continue
        old_status, old_score = baseline.get(v.id, ("new", 1.0 if v.score is None else None))
        if old_status == "new":
            if v.score is not None and v.score < 1.0:
                out.append(Regression(v.id, "new", None, v.status.value, v.score))
            continue
        if _rank(v.score) < _rank(old_score) - 1e-9:
            out.append(Regression(v.id, old_status, old_score, v.status.value, v.score))
    return sorted(out, key=lambda r: r.id)


def from_report(path: Path) -> dict[str, tuple[str, float | None]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {s["id"]: (s["status"], s["score"]) for s in data["saus"]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BaselineError(f"{path}: not a sau-verify JSON report ({type(exc).__name__})") from None


def export_revision(repo: Path, ref: str, dest: Path) -> Path:
    """Write the tree of ``ref`` (for the folder ``repo``) under ``dest``; returns the repo folder there."""

    def git(*args: str) -> bytes:
        proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, timeout=120)
        if proc.returncode != 0:
            msg = proc.stderr.decode(errors="replace").strip().splitlines()
            raise BaselineError(f"--baseline {ref}: {msg[-1] if msg else 'git failed'}")
        return proc.stdout

    try:
        git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        prefix = git("rev-parse", "--show-prefix").decode().strip()
        archive = dest / "baseline.tar"
        archive.write_bytes(git("archive", "--format=tar", ref, *( [prefix] if prefix else [])))
    except FileNotFoundError:
        raise BaselineError("--baseline with a git revision needs git on PATH") from None
    except subprocess.TimeoutExpired:
        raise BaselineError(f"--baseline {ref}: git archive timed out") from None
    tree = dest / "tree"
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    return tree / prefix if prefix else tree


def baseline_verdicts(repo: Path, ref: str, score_tree) -> dict[str, tuple[str, float | None]]:
    """A saved report path, or a git revision scored by ``score_tree(path) -> list[Verdict]``."""
    as_path = Path(ref)
    if as_path.suffix == ".json" and as_path.is_file():
        return from_report(as_path)
    with tempfile.TemporaryDirectory(prefix="sau-verify-baseline-") as tmp:
        tree = export_revision(repo, ref, Path(tmp))
        return {v.id: (v.status.value, v.score) for v in score_tree(tree)}
