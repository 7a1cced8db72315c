"""Bounds of the formula analysis: hostile formulas and code end `unverified` fast, and the proof worker dies
with its parent. Each test pins one mechanism found by tests/test_robustness.py."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sympy as sp
import yaml

from verifier.analysis.code_sympy import MAX_EXPR_NODES, Translator, sym
from verifier.analysis.equivalence import MAX_UNMAPPED, Target, match
from verifier.symbolic.latex import (
    MAX_EXPONENT,
    FormulaSyntaxError,
    FormulaTooLarge,
    parse_latex,
    parse_sympy,
)

PROJECT = Path(__file__).resolve().parents[1]


def run_check(tmp_path: Path, files: dict[str, str], check: dict):
    """One formula SAU over a small repo written for it; its verdict."""
    from verifier.engine import run_repo

    repo = tmp_path / "repo"
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    sau = {"id": "r-D2-001", "dimension": "methodological", "claim": "a formula", "check": check}
    (repo / "sau.yaml").write_text(yaml.safe_dump({"version": 1, "paper": {"id": "r"}, "saus": [sau]}, sort_keys=False))
    (verdict,) = run_repo(repo, use_cache=False).verdicts
    return verdict


# ----- 1. numbers SymPy would evaluate without end ------------------------------------------------------------


@pytest.mark.parametrize(
    "text, reason",
    [
        ("y - 10**(10**(10**10))", "exponent too large"),
        ("y - 10^(10^(10^10))", "exponent too large"),
        ("x**(1/(1/10**999))", "exponent too large"),  # the exponent's value, not its spelling, is bounded
        ("(10**900)**900 + x", "number too large"),
        ("x - 1" + "0" * 100, "number too large"),
    ],
)
def test_huge_numeric_powers_are_refused_before_sympy_evaluates_them(text, reason):
    started = time.perf_counter()
    with pytest.raises(FormulaTooLarge) as info:
        parse_sympy(text)
    assert reason in info.value.reason
    assert time.perf_counter() - started < 1.0


def test_power_tower_position_points_into_the_formula():
    with pytest.raises(FormulaTooLarge) as info:
        parse_sympy("y - 10**(10**(10**10))")
    assert info.value.position == 9  # `10**(10**10)`: the first power whose exponent is over the bound


def test_latex_power_tower_is_refused():
    with pytest.raises(FormulaTooLarge, match="exponent too large"):
        parse_latex(r"y - 10^{10^{10^{10}}}")
    with pytest.raises(FormulaTooLarge):
        parse_latex(r"\sqrt[10^{-999}]{10}")


def test_ordinary_powers_still_parse():
    assert parse_sympy("x**(1/2) + 10**3 * y").expr == sp.sqrt(sym("x")) + 1000 * sym("y")
    assert parse_sympy(f"x**{MAX_EXPONENT}").expr == sym("x") ** MAX_EXPONENT
    assert parse_latex(r"x^{2} + 10^{3}").expr == sym("x") ** 2 + 1000


def test_power_tower_in_repo_code_is_opaque_not_evaluated():
    import ast

    src = "import torch\n\ndef f(y):\n    big = 10 ** (10 ** 10)\n    same = torch.pow(10, 10 ** 10)\n    return y - big\n"
    started = time.perf_counter()
    (model,) = Translator(ast.parse(src), "a.py", src).all_functions()
    assert time.perf_counter() - started < 2
    values = {c.target: c.expr for c in model.candidates}
    assert values["big"] == sym("big") and values["same"] == sym("same")  # opaque leaves, named after the code
    assert values["return"] == sym("y") - sym("big")


def test_too_large_is_still_a_formula_syntax_error_for_old_callers():
    assert issubclass(FormulaTooLarge, FormulaSyntaxError)


POWER_TOWER_REPO = {"loss.py": "def objective(y):\n    loss = y - 3\n    return loss\n"}


def test_power_tower_check_is_unverified_with_one_line_reason(tmp_path):
    started = time.perf_counter()
    result = run_check(tmp_path, POWER_TOWER_REPO, {"kind": "formula", "expect": "y - 10**(10**(10**10))"})
    assert result.status.value == "unverified" and result.score is None
    assert "exponent too large" in result.message and "\n" not in result.message
    assert time.perf_counter() - started < 10


# ----- 2. a code value too large to translate is not `missing` -----------------------------------------------------


def long_sum(n: int) -> str:
    return " + ".join(f"w{i} * x{i}" for i in range(n))


def test_parenthesised_long_sum_parses_in_linear_time():
    started = time.perf_counter()
    f = parse_sympy(f"loss - ({long_sum(2000)})")
    assert len(f.expr.args) == 2001
    assert time.perf_counter() - started < 5  # was ~30 s: pairwise `+` re-flattens the sum every step


def test_translator_records_the_dropped_value_with_its_bound():
    import ast

    n = MAX_EXPR_NODES  # comfortably above the node bound once translated
    src = "def objective(" + ", ".join(f"w{i}, x{i}" for i in range(n)) + "):\n    loss = " + long_sum(n) + "\n    return loss\n"
    (model,) = Translator(ast.parse(src), "gen/long_expr.py", src).all_functions()
    assert (2, "loss", f"more than {MAX_EXPR_NODES} expression nodes") in model.dropped


def test_too_large_code_expression_is_unverified_not_missing(tmp_path):
    n = 300
    src = "def objective(" + ", ".join(f"w{i}, x{i}" for i in range(n)) + "):\n    loss = " + long_sum(n) + "\n    return loss\n"
    result = run_check(
        tmp_path, {"gen/long_expr.py": src}, {"kind": "formula", "expect": f"loss - ({long_sum(n)})", "in": "gen/long_expr.py"}
    )
    assert result.status.value == "unverified", result.message
    assert "gen/long_expr.py:2" in result.message and "too large" in result.message
    assert str(MAX_EXPR_NODES) in result.message
    assert [(e.file, e.line) for e in result.evidence] == [("gen/long_expr.py", 2)]


def test_small_missing_formula_is_still_missing(tmp_path):
    result = run_check(tmp_path, {"m.py": "def f(a, b):\n    out = a * b\n    return out\n"},
                       {"kind": "formula", "expect": "exp(q) / (1 + exp(q))", "in": "m.py"})
    assert result.status.value == "missing", result.message


# ----- 3. many unmapped symbols: undecided before the combinatorial search ------------------------------------------


def test_match_refuses_more_unmapped_symbols_than_the_bound_quickly():
    n = 2000
    paper = sp.Add(*(sym(f"w_{i}") * sym(f"x_{i}") for i in range(n)))
    code = sp.Add(*(sym(f"a{i}") * sym(f"b{i}") for i in range(20)))
    targets = [Target(f"c{i}", sym(f"c{i}")) for i in range(n)]
    started = time.perf_counter()
    res = match(paper, code, targets, {}, timeout=5.0)
    assert time.perf_counter() - started < 2  # was 33-90 s
    assert res.decision.kind == "undecided"
    assert res.decision.limit == f"formula too large: {2 * n} unmapped symbols (limit {MAX_UNMAPPED})"


def test_match_stops_at_its_timeout():
    syms = [sym(f"p{i}") for i in range(MAX_UNMAPPED)]
    paper = sp.Add(*(s**2 for s in syms))
    code = sp.Add(*(sym(f"c{i}") ** 3 for i in range(MAX_UNMAPPED)))  # never equal: every mapping is tried
    targets = [Target(f"c{i}", sym(f"c{i}")) for i in range(MAX_UNMAPPED)]
    started = time.perf_counter()
    res = match(paper, code, targets, {}, timeout=0.0)
    assert time.perf_counter() - started < 5
    assert res.decision.kind == "undecided" and "time limit" in res.decision.limit


def test_two_thousand_term_latex_check_is_unverified_within_the_timeout(tmp_path):
    n = 2000
    src = "def objective(w, x):\n    loss = (w * x).sum()\n    return loss\n"
    latex = "L = " + " + ".join(f"w_{{{i}}} x_{{{i}}}" for i in range(n))
    started = time.perf_counter()
    result = run_check(tmp_path, {"obj.py": src}, {"kind": "formula", "latex": latex})
    assert time.perf_counter() - started < 10
    assert result.status.value == "unverified", result.message
    assert "unmapped symbols" in result.message and "\n" not in result.message


# ----- 4. the proof worker dies with its parent -----------------------------------------------------------------------


def test_proof_worker_exits_when_its_parent_is_killed(tmp_path):
    script = (
        "import os, sympy as sp\n"
        "from verifier.analysis.equivalence import ProofWorker\n"
        "x = sp.Symbol('x')\n"
        "w = ProofWorker()\n"
        "assert w.run((x + x, 2 * x, [], 1, True), 30) == 'expand'\n"
        "open(os.environ['PID_FILE'], 'w').write(str(w.proc.pid))\n"
        "os._exit(0)\n"
    )
    pid_file = tmp_path / "worker.pid"
    env = dict(os.environ, PYTHONPATH=str(PROJECT), PID_FILE=str(pid_file))
    done = subprocess.run([sys.executable, "-c", script], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, timeout=60, check=False)
    assert done.returncode == 0
    child = int(pid_file.read_text())

    def alive() -> bool:
        try:
            return "\nState:\tZ" not in Path(f"/proc/{child}/status").read_text()
        except OSError:
            return False

    deadline = time.monotonic() + 5
    while alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    still = alive()
    if still:
        os.kill(child, 9)  # the orphan this test made
    assert not still, "the proof worker outlived its parent by 5 s"


def _prove_in_forked_process(_):
    from verifier.analysis.equivalence import prove

    x = sp.Symbol("x")
    return prove(x + x, 2 * x, timeout=30)


@pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(), reason="needs fork")
def test_a_process_forked_after_the_worker_started_proves_with_its_own_worker():
    """``mutate --jobs 4`` forks after the original run started the worker: the children used to fail every
    formula check with 'can only test a child process' (hundreds of false alarms)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from verifier.analysis.equivalence import _WORKER, prove

    x = sp.Symbol("x")
    assert prove(x * 3, x + x + x, timeout=30) == "expand"
    parent_worker = _WORKER.proc.pid
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("fork")) as pool:
        assert list(pool.map(_prove_in_forked_process, range(2))) == ["expand", "expand"]
    assert _WORKER.proc is not None and _WORKER.proc.pid == parent_worker and _WORKER.proc.is_alive()
    assert prove(x * 2, x + x, timeout=30) == "expand"


def test_an_infinite_point_on_both_sides_is_no_gap_and_warns_nothing():
    """inf - inf is NaN: numpy used to print 'invalid value encountered in subtract' on the user's stderr."""
    import warnings

    import numpy as np

    from verifier.analysis.equivalence import _large_gap

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _large_gap(np.array([np.inf, 1.0]), np.array([np.inf, 1.0]), 1, np.array([True, True])) is False
        assert _large_gap(np.array([np.inf, 1.0]), np.array([np.inf, 3.0]), 1, np.array([True, True])) is True
