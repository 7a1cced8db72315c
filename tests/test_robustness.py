"""End-to-end robustness: one hostile repo exercising every check kind must yield a report, never a crash.

The repo is generated at test time (huge, deep, broken, binary, cyclic and escaping inputs beside a realistic
training script) and run through the CLI in a subprocess, so a hang is cut by a wall-clock bound and a
traceback shows up on stderr. Two runs (cold, then warm from the cache) must give byte-identical JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
WALL_LIMIT = 120  # seconds for one CLI run over the hostile repo
SECRET = "SAU_SECRET_OUTSIDE_MARKER_7731"

# ----- the hostile repo -----------------------------------------------------------------------------------------

TRAIN_PY = '''\
"""PPO-style trainer, written the way agents write them."""
import argparse
import random

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, random_split
from torchvision.datasets import CIFAR10

from gen.mutual import prepare_0
from gen.huge_fn import train_step


class Policy(nn.Module):
    def __init__(self, hidden=256):
        super().__init__()
        self.body = nn.Linear(64, hidden)
        self.head = nn.Linear(hidden, 10)
        nn.init.normal_(self.head.weight, std=0.02)
        nn.init.zeros_(self.head.bias)
        self.ref_model = nn.Linear(64, 64)
        self.ref_model.requires_grad_(False)

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))


def evaluate(model, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(-1) == y).sum().item()
    accuracy = correct / len(loader.dataset)
    return accuracy


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--num_seeds", type=int, default=5)
    args = parser.parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    data = CIFAR10("data", train=True, download=True)
    test_set = CIFAR10("data", train=False, download=True)
    train_set, val_set = random_split(data, [0.9, 0.1])
    model = Policy()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    prepare_0(train_set)
    best = 0.0
    for epoch in range(10):
        train_step(model, optimizer, DataLoader(train_set, batch_size=64))
        val_acc = evaluate(model, DataLoader(val_set))
        if val_acc > best:
            best = val_acc
            torch.save(model.state_dict(), "best.pt")
    model.load_state_dict(torch.load("best.pt"))
    print("test accuracy", evaluate(model, DataLoader(test_set)))


if __name__ == "__main__":
    main()
'''

SPEC = r'''
version: 1
paper: {id: hostile, title: Robustness torture test}
repo:
  include: ["**/*", "../outside/**"]
aliases:
  learning_rate: [lr]
saus:
  - {id: h-D1-001, dimension: numerical, claim: lr is 3e-4, check: {kind: value, name: learning_rate, expect: 0.0003}}
  - {id: h-D1-002, dimension: numerical, claim: generated constant, check: {kind: value, name: c_49999, expect: 49999}}
  - {id: h-D1-003, dimension: numerical, claim: long sum, check: {kind: value, name: long_total, expect: 2000}}
  - {id: h-D1-004, dimension: numerical, claim: deep parens, check: {kind: value, name: deep_value, expect: 1}}
  - {id: h-D1-005, dimension: numerical, claim: Adam lr, check: {kind: value, name: lr, call: torch.optim.Adam, arg: lr, expect: 0.0003}}
  - {id: h-D1-006, dimension: numerical, claim: value from escaping glob, check: {kind: value, name: secret_lr, expect: 0.123456, in: "../outside/*.py"}}
  - {id: h-D1-007, dimension: numerical, claim: alias bomb key, check: {kind: value, name: lol9, expect: lol}}
  - {id: h-D1-008, dimension: numerical, claim: big json key, check: {kind: value, name: batch_size, expect: 64}}
  - {id: h-D1-009, dimension: numerical, claim: latin1 file value, check: {kind: value, name: latin_lr, expect: 0.001}}
  - {id: h-D2-001, dimension: methodological, claim: Adam is used, check: {kind: call, target: torch.optim.Adam, args: {lr: 0.0003}, count: {min: 1}}}
  - {id: h-D2-002, dimension: methodological, claim: deep nested calls, check: {kind: call, target: wrap, count: {min: 1, max: 1000}}}
  - {id: h-D2-003, dimension: methodological, claim: mutual recursion is reachable, check: {kind: exists, symbol: prepare_17, reachable: true}}
  - {id: h-D2-004, dimension: methodological, claim: huge train step exists, check: {kind: exists, symbol: train_step, reachable: true}}
  - {id: h-D2-005, dimension: methodological, claim: class cycle exists, check: {kind: exists, symbol: CycleModel}}
  - {id: h-D2-006, dimension: methodological, claim: head init, check: {kind: init, name: head.weight, expect: normal, args: {std: 0.02}}}
  - {id: h-D2-007, dimension: methodological, claim: class-cycle init, check: {kind: init, name: cyc_weight, expect: zeros}}
  - {id: h-D2-010, dimension: methodological, claim: long expression, check: {kind: formula, expect: "{long_formula}", in: "gen/long_expr.py"}}
  - {id: h-D2-011, dimension: methodological, claim: sympy names, check: {kind: formula, expect: "Q - (r + gamma * E * S * N * beta)", symbols: {Q: q_value, r: reward}}}
  - {id: h-D2-012, dimension: methodological, claim: unbalanced latex, check: {kind: formula, latex: "L = \\frac{1}{2 \\left( x"}}
  - {id: h-D2-013, dimension: methodological, claim: integral latex, check: {kind: formula, latex: "Z = \\int_0^\\infty e^{-x^2} \\, dx \\cdot \\sum_{k=1}^{\\infty} \\frac{1}{k^2}"}}
  - {id: h-D2-014, dimension: methodological, claim: cases latex, check: {kind: formula, latex: "f(x) = \\begin{cases} x & x > 0 \\\\ 0.01 x & \\text{otherwise} \\end{cases}"}}
  - {id: h-D2-015, dimension: methodological, claim: power tower, check: {kind: formula, expect: "y - 10**(10**(10**10))"}}
  - {id: h-D2-016, dimension: methodological, claim: 2000-term latex, check: {kind: formula, latex: "{long_latex}"}}
  - {id: h-D2-017, dimension: methodological, claim: expectation latex, check: {kind: formula, latex: "\\mathcal{L} = \\mathbb{E}_{x \\sim p_{data}}[\\log D(x)] + \\mathbb{E}_{z}[\\log(1 - D(G(z)))]"}}
  - {id: h-D2-020, dimension: methodological, claim: pattern on huge code, check: {kind: pattern, require: "$OPT.step()", forbid: "eval($X)"}}
  - {id: h-D2-021, dimension: methodological, claim: pattern with inside, check: {kind: pattern, require: "wrap($X)", inside: "def $F(...): ..."}}
  - {id: h-D2-030, dimension: methodological, claim: judged, check: {kind: judge, hints: [secrets.yaml, leak.py, "../outside/secret.py", train_step]}}
  - {id: h-D3-001, dimension: protocol, claim: split, check: {kind: protocol, rule: split-ratio, expect: {train: 0.9, val: 0.1}}}
  - {id: h-D3-002, dimension: protocol, claim: no leak, check: {kind: protocol, rule: no-test-leakage}}
  - {id: h-D3-003, dimension: protocol, claim: eval mode, check: {kind: protocol, rule: eval-mode}}
  - {id: h-D3-004, dimension: protocol, claim: seeded, check: {kind: protocol, rule: seeded}}
  - {id: h-D3-005, dimension: protocol, claim: five seeds, check: {kind: protocol, rule: seeds, expect: 5}}
  - {id: h-D3-006, dimension: protocol, claim: cifar, check: {kind: protocol, rule: dataset, expect: CIFAR-10}}
  - {id: h-D3-007, dimension: protocol, claim: accuracy, check: {kind: protocol, rule: metric, expect: accuracy}}
  - {id: h-D3-008, dimension: protocol, claim: baseline, check: {kind: protocol, rule: baseline, name: PPO}}
  - {id: h-D3-009, dimension: protocol, claim: select on val, check: {kind: protocol, rule: select-on-validation}}
  - {id: h-D3-010, dimension: protocol, claim: frozen ref, check: {kind: protocol, rule: frozen, name: ref_model}}
  - {id: h-D4-001, dimension: ordering, claim: zero-backward-step, check: {kind: order, steps: [zero_grad, backward, step], relation: before, in: train_step}}
  - {id: h-D4-002, dimension: ordering, claim: per iteration, check: {kind: order, steps: [zero_grad, backward, step], relation: per-iteration, in: "gen/huge_fn.py"}}
  - {id: h-D4-003, dimension: ordering, claim: phases through a cycle, check: {kind: order, steps: [prepare_0, prepare_29, train_step], relation: phases}}
  - {id: h-D4-004, dimension: ordering, claim: deep ifs, check: {kind: order, steps: [load_data, fit], relation: before, in: "gen/deep_ifs.py"}}
'''


def long_expr_terms(n: int) -> list[str]:
    return [f"w{i} * x{i}" for i in range(n)]


def huge_function(n_statements: int) -> str:
    body = ["def train_step(model, optimizer, loader):", "    h = 0"]
    body += ["    for x, y in loader:", "        optimizer.zero_grad()", "        loss = model(x).sum()"]
    body += [f"        h = h + {i % 7}" for i in range(n_statements)]
    body += ["        loss.backward()", "        optimizer.step()", "    return h", ""]
    return "\n".join(body)


def nested_ifs(depth: int) -> str:
    lines = ["def pipeline(cfg):", "    load_data(cfg)"]
    for d in range(depth):
        lines.append("    " + "    " * d + f"if cfg.level > {d}:")
    lines.append("    " + "    " * depth + "fit(cfg)")
    return "\n".join(lines) + "\n"


def alias_bomb(levels: int = 10) -> str:
    out = ['lol0: &lol0 "lol"']
    for i in range(1, levels):
        prev = f"*lol{i - 1}"
        out.append(f"lol{i}: &lol{i} [{', '.join([prev] * 9)}]")
    return "\n".join(out) + "\n"


def write_hostile_repo(root: Path) -> dict[str, str]:
    """Write the repo; return {problem file: what is wrong with it} for the notes assertions."""
    repo, outside = root / "repo", root / "outside"
    repo.mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.py").write_text(f"secret_lr = 0.123456\nTOKEN = '{SECRET}'\n")

    def put(rel: str, data: str | bytes) -> None:
        p = repo / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            p.write_bytes(data)
        else:
            p.write_text(data, encoding="utf-8")

    put("train.py", TRAIN_PY)
    put("gen/__init__.py", "")
    put("gen/big_generated.py", "".join(f"c_{i} = {i}\n" for i in range(50_000)))
    put("gen/long_expr.py", "def objective(" + ", ".join(f"w{i}, x{i}" for i in range(2000)) + "):\n"
        "    loss = " + " + ".join(long_expr_terms(2000)) + "\n    return loss\n\n"
        "long_total = " + " + ".join(["1"] * 2000) + "\n")
    put("gen/deep_parens.py", "deep_value = " + "(" * 500 + "1" + ")" * 500 + "\n")
    put("gen/deep_calls.py", "def wrap(x):\n    return x\n\n\nnested = " + "wrap(" * 500 + "0" + ")" * 500 + "\n")
    put("gen/deep_ifs.py", nested_ifs(500))
    put("gen/huge_fn.py", huge_function(20_000))
    mutual = [f"def prepare_{i}(data):\n    return prepare_{(i + 1) % 30}(data)\n\n" for i in range(30)]
    mutual.append("def prepare_29_leaf(data):\n    return data\n")
    put("gen/mutual.py", "\n".join(mutual))
    put("gen/class_cycle.py",
        "import torch.nn as nn\n\n\nclass CycleA(Alias):\n    pass\n\n\nclass CycleB(CycleA):\n    pass\n\n\n"
        "Alias = CycleB\n\n\nclass CycleModel(Alias):\n    def __init__(self):\n"
        "        super().__init__()\n        self.cyc_weight = nn.Parameter(torch.zeros(4))\n"
        "        nn.init.zeros_(self.cyc_weight)\n\n\nCycleA.__bases__ = (CycleModel,)\n")
    put("gen/sympy_names.py",
        "def td_target(q_value, reward, gamma, E, S, N, beta):\n"
        "    target = reward + gamma * E * S * N * beta\n    loss = q_value - target\n    return loss\n")
    problems = {
        "broken/syntax_error.py": "syntax error",
        "broken/truncated.py": "truncated",
        "broken/latin1.py": "non-UTF-8",
        "broken/nul_bytes.py": "NUL bytes",
        "weights/model.pt": "binary",
        "configs/bomb.yaml": "YAML alias bomb",
        "configs/huge.json": "5 MB JSON",
        "notebooks/broken.ipynb": "invalid JSON notebook",
        "scripts/run.sh": "unterminated quote",
        "loop_a": "symlink loop",
        "loop_b": "symlink loop",
        "secrets.yaml": "symlink out of the repo",
        "leak.py": "symlink out of the repo",
        "escape_dir": "directory symlink out of the repo",
    }
    put("broken/syntax_error.py", "def train(:\n    lr = 0.1\n")
    put("broken/truncated.py", TRAIN_PY[: TRAIN_PY.index("default=3e-4") + 9])  # cut inside a call
    put("broken/latin1.py", b"# r\xe9glage du taux d'apprentissage \xff\xfe\nlatin_lr = 1e-3\n")
    put("broken/nul_bytes.py", b"nul_lr = 1e-3\x00\x00\nx = 1\n")
    put("weights/model.pt", b"PK\x03\x04" + bytes(range(256)) * 64 + b"\x80\x02}q\x00.")
    put("configs/bomb.yaml", alias_bomb(10))
    big = {"train": {"batch_size": 64}, "rows": [{"id": i, "v": [i, i * 0.5, "x" * 20]} for i in range(85_000)]}
    put("configs/huge.json", json.dumps(big))
    put("notebooks/broken.ipynb", '{"cells": [{"cell_type": "code", "source": ["lr = 1e-3\\n"]}, ')
    put("scripts/run.sh", '#!/bin/bash\nset -e\npython train.py --lr 3e-4 --note "unterminated\n')
    os.symlink("loop_b", repo / "loop_a")
    os.symlink("loop_a", repo / "loop_b")
    os.symlink(".", repo / "self_dir")  # a directory cycle: repo/self_dir/self_dir/...
    os.symlink("/etc/passwd", repo / "secrets.yaml")
    os.symlink(outside / "secret.py", repo / "leak.py")
    os.symlink(outside, repo / "escape_dir")
    put("sau.yaml", SPEC.replace("{long_formula}", "loss - (" + " + ".join(long_expr_terms(2000)) + ")")
        .replace("{long_latex}", "L = " + " + ".join(f"w_{{{i}}} x_{{{i}}}" for i in range(2000))))
    return problems


# ----- running the CLI with a wall-clock bound ------------------------------------------------------------------


def run_cli(args: list[str], cache_dir: Path, timeout: float = WALL_LIMIT) -> dict:
    """Run ``python -m verifier.cli``; on timeout kill its whole process group (workers included)."""
    env = dict(os.environ, SAU_VERIFY_CACHE_DIR=str(cache_dir), PYTHONPATH=str(PROJECT), NO_COLOR="1")
    for key in [k for k in env if k.startswith("SAU_VERIFY_JUDGE")]:
        env.pop(key)
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "verifier.cli", *args], cwd=cache_dir.parent, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
        rc = None
    return {"rc": rc, "stdout": out, "stderr": err.decode("utf-8", "replace"), "seconds": time.monotonic() - started}


def spec_ids() -> list[str]:
    import yaml

    return [s["id"] for s in yaml.safe_load(SPEC)["saus"]]


STATUSES = {"pass", "partial", "mismatch", "stub", "missing", "judged", "unverified", "error"}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    problems = write_hostile_repo(root)
    cache = root / "cache"
    cache.mkdir()
    return root / "repo", problems, cache


# SAUs whose formulas are known hazards run one at a time (a hang then names its SAU); the rest run together.
FORMULA_HAZARDS = {
    "h-D2-010": "2,000-term expression in code",
    "h-D2-015": "10**(10**(10**10)) in expect",
    "h-D2-016": "2,000-term LaTeX formula",
}
HAZARD_LIMIT = 45


def safe_ids() -> str:
    return ",".join(i for i in spec_ids() if i not in FORMULA_HAZARDS)


@pytest.fixture(scope="module")
def cold(hostile):
    """First run over an empty cache (it fills the cache)."""
    repo, _, cache = hostile
    return run_cli([str(repo), "--format", "json", "--only", safe_ids()], cache)


@pytest.fixture(scope="module")
def warm(hostile, cold):
    """The same run again, answered from the cache the first one wrote."""
    if cold["rc"] is None:
        pytest.fail(f"the cold run did not finish within {WALL_LIMIT}s, nothing to compare")
    repo, _, cache = hostile
    return run_cli([str(repo), "--format", "json", "--only", safe_ids()], cache)


@pytest.fixture(scope="module")
def full(hostile, cold):
    """Every SAU of the spec at once, as a user runs it."""
    repo, _, cache = hostile
    return run_cli([str(repo), "--format", "json"], cache)


@pytest.fixture(scope="module")
def hazard_runs(hostile, cold):
    repo, _, cache = hostile
    runs: dict[str, dict] = {}

    def get(sau_id: str) -> dict:
        if sau_id not in runs:
            runs[sau_id] = run_cli([str(repo), "--format", "json", "--only", sau_id], cache, timeout=HAZARD_LIMIT)
        return runs[sau_id]

    return get


def finished(run: dict) -> dict:
    assert run["rc"] is not None, f"no result within {WALL_LIMIT}s (hang); stderr tail: {run['stderr'][-500:]}"
    assert "Traceback" not in run["stderr"], run["stderr"][-2000:]
    assert run["rc"] in (0, 1), f"exit {run['rc']}: {run['stderr'][-500:]}"
    return json.loads(run["stdout"])


def by_id(report: dict) -> dict:
    return {s["id"]: s for s in report["saus"]}


# ----- the hostile repo, end to end -----------------------------------------------------------------------------


def test_hostile_run_returns_a_report(full):
    report = finished(full)
    assert sorted(by_id(report)) == sorted(spec_ids())
    for sau in report["saus"]:
        assert sau["status"] in STATUSES, sau
        assert sau["message"] and "\n" not in sau["message"], sau
        if sau["status"] in ("error", "unverified"):
            assert len(sau["message"]) < 400, sau["message"]
        else:
            assert sau["score"] is not None, sau


@pytest.mark.parametrize("sau_id", [i for i in spec_ids() if i not in FORMULA_HAZARDS])
def test_no_check_crashed(cold, sau_id):
    """An internal exception caught by the engine guard is a bug in that checker, not a verdict."""
    sau = by_id(finished(cold))[sau_id]
    crashed = " check failed: " in sau["message"] or "too deeply nested" in sau["message"]
    assert not crashed, f"{sau_id}: {sau['status']}: {sau['message']}"


def test_realistic_claims_survive_the_hostile_neighbours(cold):
    """Nothing else lost: the training script's claims are still decided, with evidence where it is."""
    sau = by_id(finished(cold))
    expected = {
        "h-D1-001": ("pass", 1.0, {"scripts/run.sh", "train.py"}),
        "h-D1-005": ("pass", 1.0, {"train.py"}),
        "h-D2-001": ("pass", 1.0, {"train.py"}),
        "h-D2-006": ("pass", 1.0, {"train.py"}),
        "h-D2-007": ("pass", 1.0, {"gen/class_cycle.py"}),
        # the formula is there, in a module train.py's main never reaches: written, but no run computes it
        "h-D2-011": ("partial", 0.75, {"gen/sympy_names.py"}),
        "h-D3-001": ("pass", 1.0, {"train.py"}),
        "h-D3-004": ("pass", 1.0, {"train.py"}),
        "h-D3-006": ("pass", 1.0, {"train.py"}),
    }
    for sau_id, (status, score, files) in expected.items():
        got = sau[sau_id]
        assert got["status"] == status, (sau_id, got["message"])
        assert got["score"] == score, sau_id
        assert {e["file"] for e in got["evidence"]} & files, (sau_id, got["evidence"])
    assert "no run uses it: `td_target` is reached from no entry point" in sau["h-D2-011"]["message"]


def test_problem_files_are_noted(cold, hostile):
    report = finished(cold)
    _, problems, _ = hostile
    noted = {n["file"]: n["reason"] for n in report["notes"]}
    missing = []
    for rel, what in sorted(problems.items()):
        if rel == "weights/model.pt":
            continue  # not a source type: never a candidate (checked below)
        if rel not in noted:
            missing.append(f"{rel} ({what})")
        else:
            assert "\n" not in noted[rel] and noted[rel], rel
    for rel in ("gen/deep_parens.py", "gen/deep_calls.py", "gen/deep_ifs.py", "self_dir"):
        if rel not in noted:
            missing.append(rel)
    assert not missing, f"not in the report's notes: {missing}"
    assert any(n["file"] == "<spec>" and "../outside" in n["reason"] for n in report["notes"]), report["notes"]
    assert "weights/model.pt" not in json.dumps([s["evidence"] for s in report["saus"]])


def test_nothing_outside_the_repo_is_read(cold):
    text = cold["stdout"].decode("utf-8", "replace")
    finished(cold)
    assert SECRET not in text and "root:x:0:0" not in text
    report = json.loads(text)
    for sau in report["saus"]:
        for ev in sau["evidence"]:
            f = ev["file"]
            assert not f.startswith(("/", "..")) and f not in ("leak.py", "secrets.yaml"), (sau["id"], f)
            assert not f.startswith(("escape_dir/", "self_dir/", "loop_")), (sau["id"], f)
    assert by_id(report)["h-D1-006"]["status"] != "pass"


def test_two_runs_are_byte_identical(cold, warm):
    finished(cold)
    finished(warm)
    assert warm["stdout"] == cold["stdout"]


# ----- hazardous formulas one at a time, so a hang names its SAU ---------------------------------------------------


@pytest.mark.parametrize("sau_id", sorted(FORMULA_HAZARDS))
def test_hostile_formula_is_bounded(hazard_runs, sau_id):
    run = hazard_runs(sau_id)
    assert run["rc"] is not None, f"{FORMULA_HAZARDS[sau_id]}: no verdict within {HAZARD_LIMIT}s (hang)"
    (sau,) = finished(run)["saus"]
    assert sau["status"] in STATUSES and sau["message"] and "\n" not in sau["message"]
    assert " check failed: " not in sau["message"], sau["message"]


def test_too_large_code_expression_is_not_reported_missing(hazard_runs):
    """gen/long_expr.py computes the formula; an analysis bound hit there is `unverified`, not `missing`."""
    run = hazard_runs("h-D2-010")
    assert run["rc"] is not None, f"no verdict within {HAZARD_LIMIT}s"
    (sau,) = finished(run)["saus"]
    assert sau["status"] in ("pass", "unverified"), sau["message"]
    if sau["status"] == "unverified":
        assert "large" in sau["message"] or "bound" in sau["message"], sau["message"]


@pytest.mark.parametrize("sau_id", ["h-D2-012", "h-D2-013", "h-D2-014", "h-D2-015", "h-D2-016"])
def test_unparseable_or_oversized_formula_is_not_decided(cold, hazard_runs, sau_id):
    if sau_id in FORMULA_HAZARDS:
        run = hazard_runs(sau_id)
        assert run["rc"] is not None, f"no verdict within {HAZARD_LIMIT}s"
        (sau,) = finished(run)["saus"]
    else:
        sau = by_id(finished(cold))[sau_id]
    assert sau["status"] in ("error", "unverified"), (sau["status"], sau["message"])
    assert sau["score"] is None


# ----- bad arguments: exit 2, one line, no traceback ----------------------------------------------------------------


def bad_argument_cases(repo: Path) -> dict[str, list[str]]:
    return {
        "missing-repo": [str(repo.parent / "no-such-repo")],
        "repo-is-a-file": [str(repo / "train.py")],
        "spec-missing": [str(repo), "--spec", str(repo / "no-such-spec.yaml")],
        "spec-is-a-directory": [str(repo), "--spec", str(repo / "gen")],
        "only-unknown-ids": [str(repo), "--only", "h-D1-001,no-such-sau"],
        "format-unknown": [str(repo), "--format", "xml"],
        "spec-is-a-symlink-loop": [str(repo), "--spec", str(repo / "loop_a")],
        "spec-is-binary": [str(repo), "--spec", str(repo / "weights" / "model.pt")],
        "spec-is-an-alias-bomb": [str(repo), "--spec", str(repo / "configs" / "bomb.yaml")],
        "spec-is-invalid-json": [str(repo), "--spec", str(repo / "notebooks" / "broken.ipynb")],
    }


@pytest.mark.parametrize("case", sorted(bad_argument_cases(Path("x"))))
def test_bad_arguments_exit_2_with_one_line(hostile, case):
    repo, _, cache = hostile
    run = run_cli([*bad_argument_cases(repo)[case], "--format", "json"], cache, timeout=60)
    assert run["rc"] == 2, (run["rc"], run["stderr"][-500:])
    assert "Traceback" not in run["stderr"]
    assert run["stdout"] == b""
    lines = [ln for ln in run["stderr"].splitlines() if ln.strip() and not ln.startswith(("Usage:", "Try "))]
    assert len(lines) == 1, run["stderr"]
    assert "error" in lines[0].lower()


# ----- a killed run leaves nothing behind ---------------------------------------------------------------------------


def test_proof_worker_dies_with_its_parent(tmp_path):
    """CI kills a run that overruns: the SymPy/z3 worker must not outlive it (it would hold the output pipe)."""
    script = (
        "import os, sympy as sp\n"
        "from verifier.analysis.equivalence import ProofWorker\n"
        "x = sp.Symbol('x')\n"
        "w = ProofWorker()\n"
        "w.run((x + x, 2 * x, frozenset(), 'exact', True), 30)\n"
        "open(os.environ['PID_FILE'], 'w').write(str(w.proc.pid))\n"
        "os._exit(0)\n"
    )
    pid_file = tmp_path / "worker.pid"
    env = dict(os.environ, PYTHONPATH=str(PROJECT), PID_FILE=str(pid_file))
    # no pipes: an orphaned worker would hold them open and hang this test instead of failing it
    out = subprocess.run([sys.executable, "-c", script], check=False, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, timeout=60)
    assert out.returncode == 0
    child = int(pid_file.read_text())

    def alive() -> bool:
        try:
            state = Path(f"/proc/{child}/status").read_text()
        except OSError:
            return False
        return "\nState:\tZ" not in state

    deadline = time.monotonic() + 10
    while alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    lingering = alive()
    if lingering:
        os.kill(child, 9)  # the orphan this test made
    assert not lingering, "the proof worker outlived its parent by 10s"
