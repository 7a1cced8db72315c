"""Batch scoring: layout discovery, parallel workers, resumability, a broken pair never stops the batch."""

from __future__ import annotations

import csv
import json
import os

from click.testing import CliRunner

from minirepo import SPEC, TRAIN, write_repo
from verifier.batch import discover_layout, run_batch, write_tables
from verifier.cli import main


def make_layout(tmp_path):
    runs, specs = tmp_path / "runs", tmp_path / "specs"
    write_repo(runs / "agent-a" / "mini" / "repo")
    write_repo(runs / "agent-b" / "mini" / "repo", train=TRAIN.replace("default=0.2", "default=0.3"))
    (runs / "agent-c" / "mini" / "repo").mkdir(parents=True)
    (runs / "agent-c" / "mini" / "repo" / "train.py").write_text("def broken(:\n", encoding="utf-8")
    (specs / "mini").mkdir(parents=True)
    (specs / "mini" / "sau.yaml").write_text(SPEC, encoding="utf-8")
    return runs, specs


def test_layout_batch_with_two_jobs(tmp_path):
    runs, specs = make_layout(tmp_path)
    pairs = discover_layout(runs, specs)
    assert [p.key for p in pairs] == ["agent-a/mini", "agent-b/mini", "agent-c/mini"]
    out = tmp_path / "out"
    rows = run_batch(pairs, out, jobs=2)
    assert [r["config"] for r in rows] == ["agent-a", "agent-b", "agent-c"]
    assert rows[0]["macro"] == 1.0
    assert rows[1]["numerical"] < 1.0  # clip range 0.3 instead of 0.2
    # A repo whose only file does not parse still gets a report: its SAUs are missing, never a crash.
    assert rows[2]["status"] == "ok" and rows[2]["macro"] == 0.0
    report = json.loads((out / "agent-b" / "mini.json").read_text())
    assert {s["id"]: s["status"] for s in report["saus"]}["mini-D1-002"] == "partial"
    paths = write_tables(out, rows)
    table = list(csv.DictReader(paths["csv"].open()))
    assert [r["config"] for r in table] == ["agent-a", "agent-b", "agent-c"]
    board = json.loads(paths["json"].read_text())["leaderboard"]
    assert [b["config"] for b in board] == ["agent-a", "agent-b", "agent-c"]
    assert "| agent-a | 1 | 0 |" in paths["markdown"].read_text()


def test_resume_skips_fresh_reports_and_redoes_changed_ones(tmp_path):
    runs, specs = make_layout(tmp_path)
    out = tmp_path / "out"
    pairs = discover_layout(runs, specs)
    run_batch(pairs, out)
    seen = []
    run_batch(pairs, out, progress=lambda pair, state: seen.append((pair.key, state)))
    assert sorted(seen) == [("agent-a/mini", "cached"), ("agent-b/mini", "cached"), ("agent-c/mini", "cached")]
    train = runs / "agent-a" / "mini" / "repo" / "train.py"
    later = os.stat(out / "agent-a" / "mini.json").st_mtime + 10
    os.utime(train, (later, later))
    seen.clear()
    run_batch(pairs, out, progress=lambda pair, state: seen.append((pair.key, state)))
    assert ("agent-a/mini", "done") in seen and ("agent-b/mini", "cached") in seen


def test_manifest_with_a_bad_spec_reports_an_error_row(tmp_path):
    good = write_repo(tmp_path / "good")
    bad = write_repo(tmp_path / "bad", spec="version: 1\nsaus: 3\n")
    manifest = tmp_path / "pairs.yaml"
    manifest.write_text(
        f"- {{config: x, paper: good, repo: {good}, spec: {good / 'sau.yaml'}}}\n"
        f"- {{config: x, paper: bad, repo: {bad}, spec: {bad / 'sau.yaml'}}}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["batch", "--manifest", str(manifest), "--out", str(tmp_path / "o"), "-q"])
    assert result.exit_code == 1
    assert "error: x/bad:" in result.output and "scored 1 of 2 pairs" in result.output


def test_ray_executor_on_a_local_instance(tmp_path):
    import pytest

    ray = pytest.importorskip("ray")
    runs, specs = make_layout(tmp_path)
    pairs = discover_layout(runs, specs)
    try:
        rows = run_batch(pairs, tmp_path / "out", executor="ray")
    finally:
        ray.shutdown()
    assert [(r["config"], r["status"]) for r in rows] == [("agent-a", "ok"), ("agent-b", "ok"), ("agent-c", "ok")]
    assert rows[0]["macro"] == 1.0 and rows[1]["numerical"] < 1.0
    assert (tmp_path / "out" / "agent-b" / "mini.json").is_file()


def test_scoring_a_pair_leaves_no_frozen_generation_behind(tmp_path):
    """A large repo's index is frozen out of the cyclic GC for its run; the next pair of a long batch must start
    with an empty permanent generation so cyclic garbage never accumulates across pairs."""
    import gc

    from verifier.batch import Pair, score_pair

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text("lr = 3e-4\n")
    (repo / "sau.yaml").write_text(
        "version: 1\nsaus:\n  - id: a-D1-001\n    dimension: D1\n    claim: lr\n"
        "    check: {kind: value, name: learning_rate, expect: 0.0003}\n"
    )
    gc.freeze()  # as build_index does for a repo of 200+ files
    result = score_pair(Pair(config="c", paper="a", repo=str(repo), spec=str(repo / "sau.yaml")), use_cache=False)
    assert result["error"] is None and result["report"]["saus"][0]["status"] == "pass"
    assert gc.get_freeze_count() == 0
