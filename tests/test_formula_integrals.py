"""Integrals in paper formulas against the Riemann sums and quadratures code writes for them (issue 6).

The compiler reads ``J = ∫_Ω |u - u_d|^2 dx + alpha ∫_Ω |f|^2 dx`` as means of the integrands and marks the
check ``integral: [dx]``; the formula check then takes the cell size on a summed term (``* dx``, ``* dx * dt``,
``h ** 2``, ``L / N``) and ``trapz``/``trapezoid``/``simpson`` calls as the integral's measure. Faithful
discretisations pass; a dropped term, a missing square, a wrong coefficient, another integrand or a measure
on one term only still fail. Claims are written for the tests, in SA-Bench's style."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy as sp
import yaml

from verifier.analysis.equivalence import as_integrals, strip_reductions
from verifier.engine import run_repo
from verifier.symbolic.core import RMEAN, RSUM

from compiler_helpers import compiled, dumps

CLAIM = "The tracking objective is J = ∫_Ω |u - u_d|^2 dx + alpha ∫_Ω |f|^2 dx."
REPO = '''
import numpy as np
import torch
from scipy.integrate import simpson


def tracking_cost(u, u_d, f, alpha, dx, dt, h, L, N):
    """The discretised objective of the control problem."""
    cost = {cost}
    return cost
'''
COST_LINE = 9
FAITHFUL = {
    "mean": "((u - u_d) ** 2).mean() + alpha * (f ** 2).mean()",
    "sum-dx": "((u - u_d) ** 2).sum() * dx + alpha * (f ** 2).sum() * dx",
    "sum-dx-dt": "(((u - u_d) ** 2).sum() + alpha * (f ** 2).sum()) * dx * dt",
    "one-sum-dx": "torch.sum((u - u_d) ** 2 + alpha * f ** 2) * dx",
    "dx-inside-the-sum": "(dx * (u - u_d) ** 2).sum() + alpha * (dx * f ** 2).sum()",
    "cell-area": "h ** 2 * ((u - u_d) ** 2).sum() + alpha * h ** 2 * (f ** 2).sum()",
    "length-over-count": "L / N * (np.sum((u - u_d) ** 2) + alpha * np.sum(f ** 2))",
    "torch-trapz": "torch.trapz((u - u_d) ** 2, dx=dx) + alpha * torch.trapz(f ** 2, dx=dx)",
    "numpy-trapezoid": "np.trapezoid((u - u_d) ** 2, dx=dx) + alpha * np.trapezoid(f ** 2, dx=dx)",
    "scipy-simpson": "simpson((u - u_d) ** 2, dx=dx) + alpha * simpson(f ** 2, dx=dx)",
    "trapz-2d": "torch.trapz(torch.trapz((u - u_d) ** 2, dx=dx, dim=-1), dx=dt)"
    " + alpha * torch.trapz(torch.trapz(f ** 2, dx=dx, dim=-1), dx=dt)",
}
DRIFTED = {
    "dropped-term": "((u - u_d) ** 2).sum() * dx",
    "missing-square": "(u - u_d).abs().sum() * dx + alpha * (f ** 2).sum() * dx",
    "wrong-coefficient": "((u - u_d) ** 2).sum() * dx + 2 * alpha * (f ** 2).sum() * dx",
    "other-integrand": "((u + u_d) ** 2).sum() * dx + alpha * (f ** 2).sum() * dx",
    "flipped-sign": "((u - u_d) ** 2).sum() * dx - alpha * (f ** 2).sum() * dx",
    "measure-on-one-term": "((u - u_d) ** 2).sum() * dx + alpha * (f ** 2).sum()",
    "trapz-coefficient": "torch.trapz((u - u_d) ** 2, dx=dx) + torch.trapz(f ** 2, dx=dx)",
}


def _verdict(tmp_path: Path, cost: str, check: dict | None = None):
    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    (repo / "control.py").write_text(REPO.format(cost=cost))
    sau = {"id": "t-D2-001", "dimension": "methodological", "claim": CLAIM}
    if check is not None:
        sau["check"] = check
    (repo / "sau.yaml").write_text(yaml.safe_dump({"version": 1, "paper": {"id": "t"}, "saus": [sau]}))
    (verdict,) = run_repo(repo, use_cache=False).verdicts
    return verdict


def test_the_compiled_check_says_its_means_are_integrals_over_dx():
    assert dumps(compiled(CLAIM)) == [
        {"expect": "mean(abs(u - u_d)**2) + alpha * mean(abs(f)**2)", "integral": ["dx"]}
    ]
    assert dumps(compiled("The energy is E = ∫_{[0,T]xD} |f|^2 dt dx + b."))[0]["integral"] == ["dt dx"]
    assert "integral" not in dumps(compiled("The loss is L = E[(y - f(x))^2] + lam * w^2."))[0]


@pytest.mark.parametrize("name", sorted(FAITHFUL))
def test_a_faithful_discretisation_of_the_integrals_passes(tmp_path, name):
    verdict = _verdict(tmp_path, FAITHFUL[name])
    assert (verdict.status.value, verdict.score) == ("pass", 1.0), verdict.message
    assert [(e.file, e.line) for e in verdict.evidence] == [("control.py", COST_LINE)]
    assert "tracking_cost (control.py:9) implements the formula" in verdict.checks[0].message


@pytest.mark.parametrize("name", sorted(DRIFTED))
def test_a_drifted_discretisation_still_fails(tmp_path, name):
    verdict = _verdict(tmp_path, DRIFTED[name])
    assert (verdict.status.value, verdict.score) == ("mismatch", 0.0), verdict.message
    assert [(e.file, e.line) for e in verdict.evidence] == [("control.py", COST_LINE)]
    assert "tracking_cost (control.py:9) computes" in verdict.checks[0].message
    assert "differs from the formula" in verdict.checks[0].message


def test_without_the_integral_field_a_cell_size_is_still_a_difference(tmp_path):
    """Default behaviour is unchanged: a hand-written `expect` of means does not accept `* dx`."""
    verdict = _verdict(tmp_path, FAITHFUL["sum-dx"], {"kind": "formula", "expect": "mean((u - u_d)**2) + alpha * mean(f**2)"})
    assert (verdict.status.value, verdict.score) == ("mismatch", 0.0)
    assert [(e.file, e.line) for e in verdict.evidence] == [("control.py", COST_LINE)]
    marked = _verdict(tmp_path / "marked", FAITHFUL["sum-dx"],
                      {"kind": "formula", "expect": "mean((u - u_d)**2) + alpha * mean(f**2)", "integral": ["dx"]})
    assert (marked.status.value, marked.score) == ("pass", 1.0)


NUMERIC_SPACING = '''
import torch


def tracking_cost(u, u_d, f, alpha):
    dx = 1.0 / 64
    cost = {local}
    return cost


class Objective:
    def __init__(self, n):
        self.n = n
        self.dx = 0.01

    def __call__(self, u, u_d, f, alpha):
        cost = {attr}
        return cost
'''


def _numeric_verdicts(tmp_path: Path, local: str, attr: str):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "control.py").write_text(NUMERIC_SPACING.format(local=local, attr=attr))
    check = {"kind": "formula", "expect": "mean(abs(u - u_d)**2) + alpha * mean(abs(f)**2)", "integral": ["dx"]}
    saus = [
        {"id": "t-D2-001", "dimension": "methodological", "claim": CLAIM, "check": {**check, "in": "tracking_cost"}},
        {"id": "t-D2-002", "dimension": "methodological", "claim": CLAIM, "check": {**check, "in": "Objective.__call__"}},
    ]
    (repo / "sau.yaml").write_text(yaml.safe_dump({"version": 1, "paper": {"id": "t"}, "saus": saus}))
    return [(v.status.value, v.score, [(e.file, e.line) for e in v.evidence]) for v in run_repo(repo, use_cache=False).verdicts]


def test_a_cell_size_the_code_sets_as_a_number_is_the_measure(tmp_path):
    """`dx = 1.0 / 64` is inlined as 1/64: the number a cell-size variable holds is still the measure, and a
    coefficient beside it (0.5 * dx) stays the formula's."""
    got = _numeric_verdicts(
        tmp_path,
        "((u - u_d) ** 2).sum() * dx + alpha * (f ** 2).sum() * dx",
        "torch.sum((u - u_d) ** 2) * self.dx + alpha * torch.sum(f ** 2) * self.dx",
    )
    assert got == [("pass", 1.0, [("control.py", 7)]), ("pass", 1.0, [("control.py", 17)])]


def test_a_number_cell_size_on_one_term_or_a_lost_coefficient_still_fails(tmp_path):
    got = _numeric_verdicts(
        tmp_path,
        "((u - u_d) ** 2).sum() * dx + alpha * (f ** 2).sum()",
        "0.5 * torch.sum((u - u_d) ** 2) * self.dx + alpha * torch.sum(f ** 2) * self.dx",
    )
    assert got == [("mismatch", 0.0, [("control.py", 7)]), ("mismatch", 0.0, [("control.py", 17)])]


# ----- the measure on its own ----------------------------------------------------------------------------------
u, ud, f, alpha, dx, dt, h, dx_paper = sp.symbols("u u_d f alpha dx dt h dx_paper")
PAPER = frozenset({"u", "u_d", "f", "alpha"})


def test_cell_sizes_come_off_each_sum_when_every_term_has_the_same():
    code = dx * RSUM((u - ud) ** 2) + alpha * dx * RSUM(f**2)
    assert strip_reductions(as_integrals(code, True, PAPER)) == (u - ud) ** 2 + alpha * f**2


def test_different_measures_on_one_differential_are_left_as_they_are():
    code = dx * RSUM((u - ud) ** 2) + alpha * RSUM(f**2)
    assert as_integrals(code, True, PAPER) == code
    # two differentials (a terminal cost over dx, a running cost over dx dt): each term its own measure
    assert strip_reductions(as_integrals(dx * RSUM(u**2) + alpha * dx * dt * RSUM(f**2), False, PAPER)) == u**2 + alpha * f**2


def test_a_paper_symbol_is_never_taken_for_a_cell_size():
    code = RSUM(u**2) * h + RSUM(f**2) * h
    assert as_integrals(code, True, PAPER | {"h"}) == code
    assert strip_reductions(as_integrals(code, True, PAPER)) == u**2 + f**2


def test_a_mean_times_a_cell_size_is_no_integral():
    code = dx * RMEAN(u**2) + alpha * dx * RMEAN(f**2)
    assert as_integrals(code, True, PAPER) == code


def test_a_number_cell_size_is_read_off_so_the_coefficients_left_are_plainest():
    dx_value, dt_value = sp.Rational(1, 100), sp.Rational(1, 10)
    code = RSUM(u**2) / 200 + alpha * RSUM(f**2) / 200  # 0.5 * dx on both terms, dx = 0.01 and dt = 0.1 in scope
    assert strip_reductions(as_integrals(code, True, PAPER, frozenset({dx_value, dt_value}))) == u**2 / 2 + alpha * f**2 / 2
    # the cell size on one term only: no number reads both terms as one measure, the value stays as it is
    lopsided = RSUM(u**2) / 100 + alpha * RSUM(f**2) / 3
    assert as_integrals(lopsided, True, PAPER, frozenset({dx_value})) == lopsided
