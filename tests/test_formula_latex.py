"""Paper formulas -> SymPy: SymPy syntax, SA-Bench ASCII and LaTeX, with errors that name the position."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
import sympy as sp

from verifier.analysis.code_sympy import RMEAN, RSUM, sym
from verifier.symbolic.latex import (
    FormulaSyntaxError,
    parse_formula,
    parse_latex,
    parse_sympy,
)

SABENCH = Path(__file__).resolve().parents[2] / "shared" / "sabench-dev"


def s(*names):
    return [sym(n) for n in names]


def test_special_names_are_plain_symbols():
    f = parse_sympy("beta*gamma + N*S - Q/E + pi")
    beta, gamma, N, S, Q, E, pi = s("beta", "gamma", "N", "S", "Q", "E", "pi")
    assert f.expr == beta * gamma + N * S - Q / E + pi
    assert all(isinstance(x, sp.Symbol) for x in f.expr.free_symbols)


def test_sympy_syntax_functions_and_power():
    f = parse_sympy("-log(sigmoid(beta*(a - b))) + x^2")
    beta, a, b, x = s("beta", "a", "b", "x")
    assert sp.simplify(f.expr - (sp.log(1 + sp.exp(-beta * (a - b))) + x**2)) == 0


def test_sabench_ascii_formula_drops_the_lhs():
    f = parse_sympy("Pr(i > j) = 1 / (1 + exp(-(Q_i - Q_j) / s))")
    Qi, Qj, s_ = s("Q_i", "Q_j", "s")
    assert f.lhs == "Pr(i > j)"
    assert f.expr == 1 / (1 + sp.exp(-(Qi - Qj) / s_))


def test_unknown_function_application_is_one_quantity():
    f = parse_sympy("log(pi(y_w)) - log(ref(y_w))")
    assert {x.name for x in f.expr.free_symbols} == {"pi__y_w", "ref__y_w"}


def test_declared_functions_stay_functions():
    f = parse_sympy("LN(x) + x", functions=["LN"])
    assert any(getattr(n.func, "__name__", "") == "LN" for n in sp.preorder_traversal(f.expr))


def test_latex_ddpm_step():
    f = parse_latex(
        r"x_{t-1} = \frac{1}{\sqrt{\alpha_t}}\left(x_t - \frac{1-\alpha_t}{\sqrt{1-\bar{\alpha}_t}}"
        r"\epsilon_\theta(x_t, t)\right) + \sigma_t z"
    )
    a, ab, x, e, sg, z = s("alpha_t", "alpha_bar_t", "x_t", "epsilon_theta__x_t_t", "sigma_t", "z")
    want = 1 / sp.sqrt(a) * (x - (1 - a) / sp.sqrt(1 - ab) * e) + sg * z
    assert f.lhs == "x_tm1"
    assert sp.simplify(f.expr - want) == 0


def test_latex_log_is_natural_and_sigma_of_paren_is_sigmoid():
    f = parse_latex(r"\log \sigma(\beta x)")
    beta, x = s("beta", "x")
    assert sp.simplify(f.expr - sp.log(1 / (1 + sp.exp(-beta * x)))) == 0
    assert parse_latex(r"\sigma_t z").expr == sym("sigma_t") * sym("z")


def test_latex_ppo_clip_expectation_hat_and_min():
    f = parse_latex(
        r"L^{CLIP}(\theta) = \hat{\mathbb{E}}_t\left[\min\left(r_t(\theta)\hat{A}_t, "
        r"\mathrm{clip}(r_t(\theta), 1-\epsilon, 1+\epsilon)\hat{A}_t\right)\right]"
    )
    r, A, eps = s("r_t__theta", "A_hat_t", "epsilon")
    want = RMEAN(sp.Min(r * A, sp.Min(sp.Max(r, 1 - eps), 1 + eps) * A))
    assert f.expr == want


def test_latex_sum_with_bound_and_norms():
    f = parse_latex(r"\frac{1}{N}\sum_{i=1}^{N} \|x_i - y_i\|^2")
    x, y, N = s("x_i", "y_i", "N")
    assert f.expr == RSUM(RSUM((x - y) ** 2)) / N
    assert f.sum_bounds == frozenset({N})


def test_latex_leftarrow_and_accents():
    f = parse_latex(r"\theta_t \leftarrow \theta_{t-1} - \eta \hat{m}_t / (\sqrt{\hat{v}_t} + \epsilon)")
    th, eta, m, v, eps = s("theta_tm1", "eta", "m_hat_t", "v_hat_t", "epsilon")
    assert f.lhs == "theta_t"
    assert sp.simplify(f.expr - (th - eta * m / (sp.sqrt(v) + eps))) == 0


@pytest.mark.parametrize(
    ("text", "position"),
    [(r"x + \foo{y}", 4), (r"\frac{1}{2", 10), (r"a + \mathrm{clip}(x, 1", 22)],
)
def test_latex_errors_name_the_position(text, position):
    with pytest.raises(FormulaSyntaxError) as info:
        parse_latex(text)
    assert info.value.position == position
    assert f"position {position}" in str(info.value)


@pytest.mark.parametrize(
    ("text", "position"),
    [("x + (y", 6), ("x +* y", 3), ("a \\frac{1}{2}", 2), ("lambda x: x", 0), ("x.__class__", 1)],
)
def test_sympy_errors_name_the_position(text, position):
    with pytest.raises(FormulaSyntaxError) as info:
        parse_sympy(text)
    assert info.value.position == position


def test_unicode_ascii_formula():
    f = parse_sympy("α·x² − √(β)")
    alpha, x, beta = s("alpha", "x", "beta")
    assert f.expr == alpha * x**2 - sp.sqrt(beta)


def test_parse_formula_prefers_expect():
    f = parse_formula("a + b", r"\frac{a}{b}")
    assert f.expr == sym("a") + sym("b")
    with pytest.raises(FormulaSyntaxError):
        parse_formula(None, None)


def test_two_thousand_terms_parse_quickly():
    text = " + ".join(f"c{i}*x{i}" for i in range(2000))
    started = time.perf_counter()
    f = parse_sympy(text)
    assert len(f.expr.args) == 2000
    latex = " + ".join(f"c_{{{i}}} x_{{{i}}}" for i in range(2000))
    g = parse_latex(latex)
    assert len(g.expr.args) == 2000
    assert time.perf_counter() - started < 20


def test_deeply_nested_latex_is_an_error_not_a_crash():
    text = r"\frac{1}{" * 3000 + "x" + "}" * 3000
    with pytest.raises(FormulaSyntaxError):
        parse_latex(text)


@pytest.mark.skipif(not SABENCH.is_dir(), reason="SA-Bench dev data not present")
def test_sabench_ascii_formulas_parse_or_error_cleanly():
    """Every `lhs = rhs` fragment of the dev claims either parses or raises FormulaSyntaxError."""
    fragments = 0
    parsed = 0
    for path in sorted(SABENCH.glob("*.json")):
        data = json.loads(path.read_text())
        for claim in data["claims"]:
            if claim["dimension"] != "D2":
                continue
            for m in re.finditer(r"([A-Za-z_][\w()<> ]{0,20}=\s*[^,;\n]{3,80})", claim["claim"]):
                fragments += 1
                try:
                    parse_sympy(m.group(1))
                    parsed += 1
                except FormulaSyntaxError:
                    pass
    assert fragments > 0
    assert parsed > 0


@pytest.mark.parametrize(
    ("braceless", "braced"),
    [
        (r"\hat x + 1", r"\hat{x} + 1"),
        (r"\bar\theta \cdot y", r"\bar{\theta} \cdot y"),
        (r"\tilde x_t - x", r"\tilde{x}_t - x"),
        (r"\lambda (\|\nabla_{\hat x} D(\hat x)\|_2 - 1)^2", r"\lambda (\|\nabla_{\hat{x}} D(\hat{x})\|_2 - 1)^2"),
    ],
)
def test_an_accent_without_braces_takes_one_token_as_latex_does(braceless, braced):
    assert parse_latex(braceless).expr == parse_latex(braced).expr


@pytest.mark.parametrize(
    ("latex", "function"),
    [(r"\mathrm{MLP}(x + y)", "MLP"), (r"\operatorname{LN}(x) + x", "LN"), (r"\mathrm{MLP}^{(k)}(h + m)", "MLP_k")],
)
def test_a_named_function_in_a_font_command_is_applied_not_multiplied(latex, function):
    formula = parse_latex(latex)
    assert [name for name, _ in formula.applications.values()] == [function]
    assert not any(str(s) in ("MLP", "LN", "MLP_k") for s in formula.expr.free_symbols)


def test_known_functions_in_a_font_command_keep_their_reading():
    assert parse_latex(r"\text{ReLU}(W x)").expr == parse_latex(r"\max(0, W x)").expr


def test_prose_after_a_latex_formula_is_not_part_of_it():
    from verifier.compiler.formulas import find_formula

    assert find_formula(r"Z = \sum_i \exp(z_i) is the softmax normaliser").latex == r"\sum_i \exp(z_i)"
    assert find_formula(r"where \mu and \sigma are the channel-wise mean and standard deviation") is None
