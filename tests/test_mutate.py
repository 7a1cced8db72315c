"""Mutation testing: drifts applied to a copy (never the repo), caught or surviving, deterministic per seed."""

from __future__ import annotations

import hashlib
import json

from click.testing import CliRunner

from minirepo import write_repo
from verifier.cli import main
from verifier.mutate.mutants import build_mutants
from verifier.mutate.operators import OPERATORS
from verifier.mutate.runner import mutate_repo


def digest(root):
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(root).as_posix().encode() + p.read_bytes())
    return h.hexdigest()


def test_operators_cover_every_dimension_and_parse(tmp_path):
    repo = write_repo(tmp_path / "mini")
    mutants, discarded = build_mutants(repo, ["train.py"], sorted(OPERATORS), 500, 0)
    ops = {m.operator for m, _ in mutants}
    assert {"const-scale", "const-neighbour", "sign-flip", "drop-factor", "stub-body", "swap-steps"} <= ops
    scaled = [m for m, _ in mutants if m.operator == "const-scale" and "0.0003 -> " in m.description]
    assert scaled and scaled[0].file == "train.py" and scaled[0].line == 10


def test_constant_drift_is_caught_and_repo_untouched(tmp_path):
    repo = write_repo(tmp_path / "mini")
    before = digest(repo)
    report = mutate_repo(repo, seed=1, max_mutants=40, operators=["const-scale", "const-neighbour", "stub-body"])
    assert digest(repo) == before
    lr = [o for o in report.outcomes if o.mutant.line == 10 and o.mutant.operator == "const-scale"]
    assert lr and all("mini-D1-001" in o.caught_by for o in lr)
    gamma = [o for o in report.outcomes if o.mutant.line == 12 and o.mutant.operator == "const-neighbour"]
    assert gamma and gamma[0].caught_by == ["mini-D1-003"]
    summary = report.summary()
    assert summary["false_alarms"] == 0
    # Every mutant that changes a line a SAU claims (a default, the optimizer call, a stubbed body) is caught.
    assert summary["relevant_mutants"] >= 10 and summary["relevant_kill_rate"] == 1.0
    assert summary["per_operator"]["const-scale"]["kill_rate"] > 0.3


def test_same_seed_same_mutants_and_json_cli(tmp_path):
    repo = write_repo(tmp_path / "mini")
    a = mutate_repo(repo, seed=7, max_mutants=15)
    b = mutate_repo(repo, seed=7, max_mutants=15)
    assert [o.mutant.diff for o in a.outcomes] == [o.mutant.diff for o in b.outcomes]
    result = CliRunner().invoke(main, ["mutate", str(repo), "--seed", "7", "--max-mutants", "15", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["summary"]["mutants"] == len(a.outcomes)
    assert all(m["diff"].startswith("--- a/") for m in data["mutants"])
