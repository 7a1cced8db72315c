"""Every fixture repo, faithful and drifted, gives exactly its expected verdicts, scores and evidence."""

from __future__ import annotations

import json

import pytest

from harness import expected_for, fixture_cases, materialize, mismatches
from verifier.engine import run_repo
from verifier.reports import render

CASES = fixture_cases()


@pytest.mark.parametrize(("fixture", "variant"), CASES, ids=[f"{f}/{v or 'faithful'}" for f, v in CASES])
def test_fixture_verdicts(fixture, variant, tmp_path):
    repo = materialize(fixture, variant, tmp_path)
    report = run_repo(repo, use_cache=False)
    problems = mismatches(report, expected_for(fixture, variant))
    assert not problems, "\n".join(problems)


def test_there_are_fixtures():
    faithful = [f for f, v in CASES if v is None]
    assert len(faithful) >= 6, faithful


@pytest.mark.parametrize("fixture", sorted({f for f, _ in CASES})[:3])
def test_json_report_is_byte_identical(fixture, tmp_path):
    repo = materialize(fixture, None, tmp_path)
    first = render(run_repo(repo, use_cache=False), "json")
    second = render(run_repo(repo, use_cache=True), "json")
    assert first == second
    data = json.loads(first)
    assert [s["id"] for s in data["saus"]] == sorted(s["id"] for s in data["saus"])


@pytest.mark.parametrize("fixture", ["formula-rlhf", "order-torch-loop", "protocol-cifar-resnet"])
def test_json_is_identical_across_processes_and_hash_seeds(fixture, tmp_path):
    """Set and dict order of strings changes with PYTHONHASHSEED: output must not."""
    import os
    import subprocess
    import sys

    repo = materialize(fixture, None, tmp_path)
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, "-m", "verifier.cli", str(repo), "--format", "json"],
                              capture_output=True, env=env, timeout=300)
        assert proc.returncode in (0, 1), proc.stderr
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1]
