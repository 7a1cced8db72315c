"""--baseline against a git revision and a saved report, and the hook run by the real pre-commit tool."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from minirepo import TRAIN, write_repo
from verifier.cli import main

PROJECT = Path(__file__).resolve().parent.parent
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=GIT_ENV)


@pytest.fixture()
def git_repo(tmp_path):
    repo = write_repo(tmp_path / "mini")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "faithful")
    return repo


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_baseline_git_ref_fails_only_on_regressions(git_repo):
    # Work in progress that is already imperfect at HEAD: a baseline lets it adopt the gate.
    (git_repo / "train.py").write_text(TRAIN.replace("default=0.99", "default=0.9"), encoding="utf-8")
    git(git_repo, "commit", "-qam", "gamma drift")
    assert invoke(git_repo).exit_code == 1
    assert invoke(git_repo, "--baseline", "HEAD").exit_code == 0
    (git_repo / "train.py").write_text(
        TRAIN.replace("default=0.99", "default=0.9").replace("default=3e-4", "default=3e-3"), encoding="utf-8"
    )
    result = invoke(git_repo, "--baseline", "HEAD")
    assert result.exit_code == 1
    assert "regressed: mini-D1-001: pass 1.00 -> partial 0.25" in result.output
    assert "mini-D1-003" not in result.output.split("regressed")[-1]


def test_baseline_saved_report_and_bad_ref(git_repo, tmp_path):
    saved = tmp_path / "before.json"
    assert invoke(git_repo, "--format", "json", "--output", saved).exit_code == 0
    (git_repo / "train.py").write_text(TRAIN.replace("default=0.2", "default=0.1"), encoding="utf-8")
    result = invoke(git_repo, "--baseline", saved)
    assert result.exit_code == 1 and "mini-D1-002" in result.output
    result = invoke(git_repo, "--baseline", "no-such-ref")
    assert result.exit_code == 2 and "no-such-ref" in result.output


@pytest.mark.skipif(shutil.which("git") is None, reason="git needed")
def test_pre_commit_try_repo_runs_the_hook(git_repo, tmp_path):
    """The real pre-commit installs this project as a hook repo and runs it on a commit that drifts."""
    if not (PROJECT / ".git").exists():
        pytest.skip("the project is not a git checkout")
    env = {**GIT_ENV, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    cmd = [sys.executable, "-m", "pre_commit", "try-repo", str(PROJECT), "sau-verify", "--all-files"]
    ok = subprocess.run(cmd, cwd=git_repo, capture_output=True, text=True, env=env, timeout=900)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "sau-verify" in ok.stdout and "Passed" in ok.stdout
    (git_repo / "train.py").write_text(TRAIN.replace("default=3e-4", "default=3e-2"), encoding="utf-8")
    git(git_repo, "add", "-A")
    bad = subprocess.run(cmd, cwd=git_repo, capture_output=True, text=True, env=env, timeout=900)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "Failed" in bad.stdout and "mini-D1-001" in bad.stdout
