"""Paper notation the LaTeX reader once refused or misread: floor / ceil / nearest brackets, a function of one
indexed data point, a capitalised SoftMax, and a product of counts under a square root."""

from __future__ import annotations

import pytest
from verifier.compiler import compile_claim
from verifier.spec.model import SAU
from verifier.symbolic.latex import parse_latex


@pytest.mark.parametrize(
    ("latex", "expected"),
    [
        (r"\lfloor M/2 \rfloor", "floor(M/2)"),
        (r"\lceil \sqrt{k} \rceil + 1", "ceil(sqrt(k)) + 1"),
        (r"\lfloor \mathrm{clip}(v / s, -Q_N, Q_P) \rceil", "round(Min(Q_P, Max(-Q_N, v/s)))"),  # LSQ's rounding
        (r"1 / \sqrt{N_W Q_P}", "1/sqrt(N_W*Q_P)"),  # counts under a root, not a matrix product
        (r"\alpha (x + y)", "alpha*(x + y)"),  # a coefficient times a sum stays a product
        (r"F_k(w) + 1", "F_k__w + 1"),  # a subscripted capital of one letter: client k's objective of w, applied
        (r"c_{skip}(\sigma) x", "c_skip*x"),  # a schedule coefficient of the noise level: one value
    ],
)
def test_brackets_roots_and_products(latex, expected):
    assert str(parse_latex(latex).expr) == expected


def test_a_function_of_one_indexed_point_is_applied():
    formula = parse_latex(r"\frac{1}{n} \sum_i [\mu_1(x_i) - \mu_0(x_i) + \frac{t_i (y_i - \mu_1(x_i))}{e(x_i)}]")
    assert sorted(f for f, _ in formula.applications.values()) == ["e", "mu_0", "mu_1"]
    assert {tuple(map(str, args)) for _, args in formula.applications.values()} == {("x_i",)}


def test_softmax_in_any_capitalisation_is_softmax():
    assert parse_latex(r"\mathrm{SoftMax}(x)").expr == parse_latex(r"\mathrm{softmax}(x)").expr


def test_a_method_s_greek_symbol_is_named_after_the_method():
    checks = compile_claim(SAU(id="g-D1-001", dimension="D1", claim="CQL $\\alpha = 5$, EWC λ = 5000, GAE λ = 0.95")).checks
    assert [(c.name, c.expect) for c in checks] == [("cql_alpha", 5), ("ewc_lambda", 5000), ("gae_lambda", 0.95)]
