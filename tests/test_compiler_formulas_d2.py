"""Methodological (D2) claims: the math papers write compiles into formula checks the formula check can read,
glossaries of a formula's symbols are part of it, and method vocabulary becomes `call` checks with
alternatives. Claims here are written for the tests, in SA-Bench's style."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from verifier.symbolic.latex import parse_formula
from verifier.compiler.formulas import find_formula, find_glossary, paper_side_problem, to_sympy
from verifier.engine import run_repo

from compiler_helpers import compiled, dumps


@pytest.mark.parametrize(
    "text, expect",
    [
        # an expectation is a mean, the squared L2 norm a sum of squares, whatever the subscript says
        ("L = E_{x_0, ε, t}[‖ε − ε_θ(x_t, t)‖²₂]", "mean(norm(eps - eps_theta(x_t, t))**2)"),
        ("L = (1/2) * E_{(x_0,x_1),k,t} [ || (1-t) * v(x_t, t) - (x_1 - x_0) ||^2_2 ]",
         "(1 / 2) * mean(norm((1 - t) * v(x_t, t) -(x_1 - x_0))**2)"),
        ("L = ||y - f(x)||_F^2", "norm(y - f(x))**2"),
        # (1/N) Σ_{i=1}^{N} is a mean; Σ with other bounds a sum over the term that follows
        ("L = (1/N) Σ_{i=1}^{N} (y_i − f(x_i))²", "mean((y_i - f(x_i))**2)"),
        ("u_0(x) = sum_{k=1}^{3} a_k * exp(-(x - c_k)^2 / (2 * w_k^2))", "sum(a_k * exp(-(x - c_k)**2 / (2 * w_k**2)))"),
        ("z = Σ_j w_j h_j + b", "sum(w_j * h_j) + b"),
        # elementwise product, square roots, absolute values, capitalised activations
        ("y = (x − x̂) ⊙ m", "(x - x_hat) * m"),
        ("h = w odot h_in + b", "w * h_in + b"),
        ("c = √(γ p / ρ)", "sqrt(gamma * p / rho)"),
        ("a = q / √d_k", "q / sqrt(d_k)"),
        ("M = |u| / c", "abs(u) / c"),
        ("y = Softmax(s / τ)", "softmax(s / tau)"),
        # superscript variants are names; a trailing remark or comment is not part of the expression
        ("x^{k_s} = x_0 + t * v", "x_0 + t * v"),
        ("L = P + l (total frames in a clip)", "P + l"),
        ("D = D_pos + D_neg  # 100 samples: 50 of each", "D_pos + D_neg"),
        ("F(p) = G_ODE-FNO(p) + b", "G_ODE_FNO(p) + b"),
        # an arg-extremum: the code computes the objective (or the scores) it is taken over
        ("θ* = argmin_θ Σ_i (y_i − f_θ(x_i))²", "sum((y_i - f_theta(x_i))**2)"),
        # an infimum over thresholds: the code scans candidates and tests the quantity compared with the bound
        ("λ̂ = inf{λ : (1/(n+1)) * (sum_{i=1}^n l(z_i, λ) + B) ≤ α}", "(1 / (n + 1)) * (sum(l(z_i, lam)) + B)"),
        ("t* = inf{t : c * exp(-t / tau) <= eps}", "c * exp(- t / tau)"),
    ],
)
def test_paper_math_translates_and_the_formula_check_reads_it(text, expect):
    found = find_formula(text)
    assert found is not None and found.expect == expect, found
    assert paper_side_problem(found.expect, None) == ""
    assert parse_formula(found.expect, None).expr.free_symbols  # the same parser the check uses


@pytest.mark.parametrize(
    "text, why",
    [
        ("g = (1/s²) σ^{-1} G", "power -1 of a scalar"),  # (BᵀB)⁻¹ is a matrix inverse: tests/test_compiler_matrix_inverse.py
        ("P = prod_{i=1}^{n} p_i", "nothing to compare"),  # a product of one symbol, as a sum of one
        ("J = exp(integral_0^T |u - u_t|^2 dt)", "integral inside a bracket"),  # not a term of its own
        ("J = integral_D |u - u_t|^2", "no differential"),
        ("s = x + ∇ log q(x)", "gradient with no variable"),  # ∇ of what variable? (∇_x is tests/test_formula_gradients.py)
        ("s = x + log + q", "without its argument"),  # "log" alone: not a function of anything
        ("L = -log p(z_0|z_1) + c", "conditional"),
        ("u = 2 * F_NO(u_0, x, t)", "nothing to compare"),  # one unknown function of the inputs
        ("ΔW = −η sign(Σ_i ∇²_W L)", "second derivative"),
        ("q = W̄^Q h_t + b", "one capital symbol"),  # a matrix applied to a vector, or a scalar times it?
        ("J = partial^2 u/partial p^2 + c", "second derivative"),
        ("x_k = k down to 1 * y", "prose"),
        ("ŷ = argmax(1/K * sum_{k=1}^{K} f_k(x))", "nothing to compare"),  # a mean of one opaque quantity
        ("λ = inf{λ : 1 - a(λ) <= α <= 1 - b(λ)}", "infimum over a set"),  # two comparisons: no one quantity tested
        ("λ = inf{λ : 1 - P(L <= α | λ) <= β}", "conditional"),  # the tested quantity is a probability
    ],
)
def test_notation_with_no_elementwise_reading_is_left_with_the_reason(text, why):
    found = find_formula(text)
    assert found is not None and found.expect is None and found.latex is None
    assert why in found.reason


def test_sum_bounds_are_not_a_transpose_and_equals_inside_bounds_do_not_cut():
    assert to_sympy("sum_{t=1}^{T} r_t * g^t") == ("sum(r_t * g_t)", "")
    assert find_formula("L_s = (1/M) * sum_{j=1}^{M} (u_j - v_j)^2").expect == "mean((u_j - v_j)**2)"


def test_latex_formula_is_only_emitted_when_its_parser_reads_it():
    good = compiled(r"Reconstruction loss: L = \frac{1}{2} \| x - \hat{x} \|^2")
    assert dumps(good) == [{"latex": r"\frac{1}{2} \| x - \hat{x} \|^2"}] and good.coverage == "full"
    assert paper_side_problem(None, r"\frac{1}{2} \unknowncmd{x}").startswith("the formula check cannot read it")


def test_glossary_lines_are_covered_by_the_formula_they_define():
    result = compiled(
        "Win probability: Pr(i beats j) = 1 / (1 + exp(-(R_i - R_j) / s))\n\nwhere:\n"
        "  R_i, R_j : ratings of the two models\n  s        : scale of the logistic curve"
    )
    assert dumps(result) == [{"expect": "1 / (1 + exp(-(R_i - R_j) / s))"}]
    assert result.coverage == "full" and result.leftover == []
    glossary = [f for f in result.fragments if f.text.startswith(("R_", "s "))]
    assert [f.text.split(":")[0].strip() for f in glossary] == ["R_i", "R_j", "s"]
    assert all(f.outcome == "typed" and f.checks == (0,) for f in glossary)


def test_glossary_inline_clause_and_unicode_symbols():
    result = compiled(
        "Masked reconstruction loss: L = (1/N) Σ_{i=1}^{N} ‖(x_i − x̂_i) ⊙ m_i‖², where m_i is the patch "
        "mask and x̂_i is the decoder output"
    )
    assert dumps(result) == [{"expect": "mean(norm((x_i - x_hat_i) * m_i)**2)"}]
    assert result.coverage == "full"


def test_a_glossary_line_stating_a_property_or_a_value_is_a_claim_of_its_own():
    result = compiled("Scaled logits: z = x / τ\nwhere:\n- τ: temperature, kept fixed during training")
    assert dumps(result) == [{"expect": "x / tau"}]
    assert result.coverage == "partial"
    assert any("kept fixed" in item for item in result.leftover)
    entries = find_glossary("where:\n- t: timestep with t_i = 0 for the prefix\n- m: the loss mask\n- Input: a prompt")
    assert [e.symbols for e in entries] == [("m",)]  # a formula in the description, a heading word: not entries


def test_a_glossary_of_symbols_no_formula_uses_is_not_covered():
    result = compiled("Score: y = a * x + b\nwhere:\n- q: the query length")
    assert dumps(result) == [{"expect": "a * x + b"}]
    assert result.coverage == "partial" and any(item.startswith("q: the query length") for item in result.leftover)


def test_method_vocabulary_compiles_to_calls_with_alternatives():
    result = compiled("Initialization: truncated SVD of the accumulated gradient")
    assert dumps(result) == [
        {"target": "torch.svd_lowrank | torch.linalg.svd | torch.svd | numpy.linalg.svd | scipy.linalg.svd | "
         "scipy.sparse.linalg.svds | sklearn.decomposition.TruncatedSVD"}
    ]
    masked = compiled("Temporal attention uses a lower triangular attention mask")
    assert dumps(masked) == [{"target": "tril | triu | generate_square_subsequent_mask"}]


def test_an_api_named_beside_an_untranslated_formula_still_describes_more():
    result = compiled("Whitened attention: A = softmax(Q K^T ⊗ M / √d) V")
    assert result.coverage == "partial"
    (item,) = result.leftover
    assert "describes more than the named API(s): a formula not translated (" in item


# ----- end to end: a compiled D2 claim against a small repo --------------------------------------------------
WIN_CLAIM = (
    "Win probability: Pr(i beats j) = 1 / (1 + exp(-(R_i - R_j) / s))\n\nwhere:\n"
    "  R_i, R_j : ratings of the two models\n  s        : scale of the logistic curve"
)
SVD_CLAIM = "Initialization: truncated SVD of the averaged gradient"
REPO = """\
import torch


def win_probability(r_i, r_j, scale):
    return {body}


def init_factors(grad, rank):
    u, s, v = {svd}(grad)
    return u[:, :rank], s[:rank], v[:, :rank]


if __name__ == "__main__":
    print(win_probability(torch.tensor(1.0), torch.tensor(0.0), 400.0))
    print(init_factors(torch.randn(8, 8), 2))
"""


def _run(tmp_path: Path, body: str, svd: str) -> dict:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "rank.py").write_text(REPO.format(body=body, svd=svd))
    saus = [
        {"id": "t-D2-001", "dimension": "methodological", "claim": WIN_CLAIM},
        {"id": "t-D2-002", "dimension": "methodological", "claim": SVD_CLAIM},
    ]
    (repo / "sau.yaml").write_text(yaml.safe_dump({"version": 1, "paper": {"id": "t"}, "saus": saus}))
    return {v.id: v for v in run_repo(repo, use_cache=False).verdicts}


def test_compiled_formula_and_any_of_call_pass_on_a_faithful_repo(tmp_path):
    got = _run(tmp_path, "1 / (1 + torch.exp(-(r_i - r_j) / scale))", "torch.linalg.svd")
    win, svd = got["t-D2-001"], got["t-D2-002"]
    assert (win.status.value, win.score) == ("pass", 1.0)
    assert [(e.file, e.line) for e in win.evidence] == [("rank.py", 5)]
    assert (svd.status.value, svd.score) == ("pass", 1.0)
    assert [(e.file, e.line) for e in svd.evidence] == [("rank.py", 9)]
    assert "torch.linalg.svd is called" in svd.checks[0].message


def test_compiled_formula_fails_on_a_drifted_repo_with_the_counterexample(tmp_path):
    got = _run(tmp_path, "1 / (1 + torch.exp(-(r_i - r_j) * scale))", "torch.linalg.qr")
    win, svd = got["t-D2-001"], got["t-D2-002"]
    assert (win.status.value, win.score) == ("mismatch", 0.0)
    assert [(e.file, e.line) for e in win.evidence] == [("rank.py", 5)]
    assert "differs from the formula" in win.message
    assert (svd.status.value, svd.score) == ("missing", 0.0)
    assert "no call to any of torch.svd_lowrank, torch.linalg.svd" in svd.checks[0].message



def test_a_condition_after_a_formula_is_reported_not_dropped():
    result = compiled("Attention: A = softmax(Q K^T / sqrt(d)) V with a causal mask")
    assert [c.kind for c in result.checks] == ["formula"]
    assert result.coverage == "partial"
    assert "with a causal mask" in result.fragments[0].reason


def test_a_description_of_the_left_hand_side_is_not_a_condition():
    result = compiled("L_train = P_max + l: maximum sequence length during training")
    assert [(c.kind, c.expect) for c in result.checks] == [("formula", "P_max + l")]
    assert result.coverage == "full"


def test_an_untranslated_formula_says_why_it_was_left():
    result = compiled("Decision rule: lambda_hat = inf{lambda: (1/(n+1)) * (sum_{i=1}^n loss_i + B) <= alpha}")
    assert result.checks == []
    assert result.fragments[-1].outcome == "leftover"
    assert result.fragments[-1].reason == "formula not translated: uses an infimum over a set"


def test_a_constant_set_after_a_formula_is_not_counted_as_checked_unless_the_claim_names_it():
    from compiler_helpers import compiled, dumps

    # read alone, `eps` would be Adam's epsilon: the formula is checked, the value is left
    result = compiled("Update: x_adv = x + ε · sign(∇_x L(θ, x, y)) with ε = 8/255.")
    assert [c.get("expect") for c in dumps(result)] == ["x + eps * sign(grad(L(theta, x, y), x))"]
    assert result.coverage == "partial"
    assert result.fragments[0].reason == "the formula is typed, not the value after it ('ε = 8/255')"
    # "adversarial" says which ε: the attack's budget
    named = compiled("FGSM adversarial examples: x_adv = x + ε · sign(∇_x L(θ, x, y)) with ε = 8/255.")
    assert {"name": "attack_epsilon", "expect": 8 / 255} in dumps(named) and named.coverage == "full"


@pytest.mark.parametrize(
    "claim, expects",
    [
        # a definition after "with" / "where" / "and" is a formula of its own, not the first one's qualifier
        ("H(y_hat) = -sum_c p_c * log(p_c) with p = softmax(logits)", ["- sum(p_c * log(p_c))", "softmax(logits)"]),
        ("the opacity between samples i and i+1 is alpha_i = max((Phi(f_i) - Phi(f_j)) / Phi(f_i), 0) with "
         "Phi(x) = sigmoid(s * x) and a learnable sharpness s = exp(10 * v)",
         ["max((Phi(f_i) - Phi(f_j)) / Phi(f_i), 0)", "sigmoid(s * x)", "exp(10 * v)"]),
        # a constant after the formula stays the constant's (a value, or the judge's)
        ("L_GP = λ (‖∇D(x̂)‖ − 1)² with λ = 10", []),
    ],
)
def test_each_formula_of_a_fragment_is_a_check(claim, expects):
    got = [c["expect"] for c in dumps(compiled(claim, "D2")) if "expect" in c and isinstance(c["expect"], str) and c.get("rule") is None]
    assert got == expects


@pytest.mark.parametrize(
    "claim, values",
    [
        # several constants after one formula: each is read, by its context (an attack's ε and α) or by its own name
        ("PGD update: x_{t+1} = clip(x_t + alpha * sign(grad_{x_t} L(f(x_t), y)), x - eps, x + eps) with eps = 8/255 "
         "and alpha = 2/255", [("attack_epsilon", 8 / 255), ("attack_step_size", 2 / 255)]),
        ("L_G = L_adv + lambda_fm * L_fm + lambda_mel * L_mel with lambda_fm = 2 and lambda_mel = 45",
         [("lambda_fm", 2), ("lambda_mel", 45)]),
        # bare symbols no word names stay the judge's, and the fragment says so
        ("L = -log(exp(s * cos(t + m)) / (exp(s * cos(t + m)) + sum_j exp(s * cos(t_j)))) with s = 64 and m = 0.5", []),
    ],
)
def test_the_constants_after_a_formula(claim, values):
    result = compiled(claim, "D2")
    got = [(c["name"], c["expect"]) for c in dumps(result) if c.get("kind", "value") == "value" and "name" in c and "rule" not in c]
    assert [n for n, _ in got] == [n for n, _ in values]
    assert all(g == pytest.approx(v) for (_, g), (_, v) in zip(got, values))
    assert any(c.get("expect") or c.get("latex") for c in dumps(result) if "name" not in c)  # the formula itself
    if not values:
        assert any("not the value after it" in f.reason for f in result.fragments)


@pytest.mark.parametrize(("claim", "expect"), [
    ("the critic minimizes (Q(s, a) - y)^2", "(Q(s, a) - y)**2"),
    ("and the temperature minimises -log_alpha * (logp + target_entropy)", "- log_alpha * (logp + target_entropy)"),
    ("the KL penalty is beta * (logp - logp_ref)", "beta * (logp - logp_ref)"),
])
def test_a_formula_stated_with_a_verb_is_a_formula_check(claim, expect):
    result = compiled(claim, "D2")
    assert [c.expect for c in result.checks if c.kind == "formula"] == [expect]
    assert result.coverage == "full"


@pytest.mark.parametrize("claim", [
    "the model is trained to minimize the reconstruction error",  # words, no expression
    "the loss is computed on the validation set",
    "the score is higher (better) for larger models",  # a bracket of prose
])
def test_prose_after_the_verb_is_no_formula(claim):
    assert [c for c in compiled(claim, "D2").checks if c.kind == "formula"] == []


def test_a_worded_loss_keeps_its_constants_and_the_apis_it_names():
    result = compiled("the box loss is lambda_L1 * ||b - b_hat||_1 + lambda_giou * (1 - GIoU) with lambda_L1 = 5 and "
                      "lambda_giou = 2 (F.l1_loss)", "D2")
    assert [(c.kind, c.expect if c.kind != "call" else c.target) for c in result.checks] == [
        ("formula", "lambda_L1 * sum(abs(b - b_hat)) + lambda_giou * (1 - GIoU)"), ("value", 5), ("value", 2),
        ("call", "torch.nn.functional.l1_loss | torch.nn.L1Loss")]
    assert result.coverage == "full"
