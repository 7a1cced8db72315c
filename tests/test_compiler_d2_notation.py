"""D2 notation the compiler reads since issue 6's second pass: integrals over the domain, KL terms, index
bounds inside formulas, the loop a numbered procedure runs in, and the title of a pseudo-code listing. Each
translation is checked end to end on a small repo: faithful code passes, drifted code fails. Claims here are
written for the tests, in SA-Bench's style."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from verifier.compiler.formulas import find_formula, mask_indexes
from verifier.engine import run_repo

from compiler_helpers import compiled, dumps


# ----- integrals ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, expect",
    [
        ("r = -∫_Ω |u - u_d|^2 dx - alpha * ∫_Ω |f|^2 dx", "- mean(abs(u - u_d)**2) - alpha * mean(abs(f)**2)"),
        ("J = integral_D (u - v)^2 dx", "mean((u - v)**2)"),
        ("J = 2 * \\int_0^1 f(t) * g(t) dt + c", "2 * mean(f(t) * g(t)) + c"),
        ("E = ∫_{[0,T]xD} |f|^2 dt dx + b", "mean(abs(f)**2) + b"),
    ],
)
def test_an_integral_that_is_a_term_of_its_own_is_a_reduction_of_its_integrand(text, expect):
    found = find_formula(text)
    assert found is not None and found.expect == expect, found


@pytest.mark.parametrize(
    "text, why",
    [
        ("J = exp(∫_0^T f dt) + c", "integral inside a bracket or a product"),
        ("J = ∫_Ω u dx * v + c", "integral inside a bracket or a product"),
        ("J = ∫_Ω (u - v)^2 + c", "no differential"),
    ],
)
def test_an_integral_inside_another_operation_is_left_with_the_reason(text, why):
    found = find_formula(text)
    assert found is not None and found.expect is None and why in found.reason


# ----- KL divergence terms -------------------------------------------------------------------------------------
def test_a_kl_term_between_two_distributions_is_one_named_quantity():
    found = find_formula("L = (1/2) * E[ ||x - x_hat||^2 ] + beta * KL( q_phi(z|x) || p(z) )")
    assert found.expect == "(1 / 2) * mean(norm(x - x_hat)**2) + beta * KL"
    assert find_formula("L = E[||x - y||^2] + D_KL(q ‖ p)").expect == "mean(norm(x - y)**2) + KL"


def test_kl_with_no_two_distributions_is_left_with_the_reason():
    found = find_formula("L = x + KL(y) * 2")  # which two distributions is not said
    assert found is not None and found.expect is None
    assert found.reason == "uses a KL divergence between distributions"


def test_log_of_an_applied_function_needs_no_brackets_but_a_gradient_is_refused():
    assert find_formula("L = -log p_theta(x) + c * h").expect == "- log(p_theta(x)) + c * h"
    assert find_formula("s = x + grad_x log q(x)").expect == "x + grad(log(q(x)), x)"  # ∇_x: tests/test_formula_gradients.py
    assert find_formula("s = x + ∇ log q(x)").reason == "uses a gradient with no variable it is taken with respect to"
    assert find_formula("L = grad_norm * c + d").expect == "grad_norm * c + d"  # a name, not the operator


def test_a_transposed_variant_is_the_transpose_of_that_variant():
    assert find_formula("A_i = V^{(i)} Softmax(K^{(i)^T} Q^{(i)} / sqrt(d))").expect == (
        "matmul(V_i, softmax(matmul(transpose(K_i), Q_i) / sqrt(d)))"
    )


def test_a_times_sign_beside_matrices_is_refused_not_read_elementwise():
    why = "uses × beside matrices (a matrix or an elementwise product?)"
    for text in ("A = V × Softmax(K^T Q / sqrt(d))", "A = V^{(i)} x Softmax(K^{(i)^T} Q^{(i)} / sqrt(d))", "S = H × W + 1"):
        found = find_formula(text)
        assert (found.expect, found.reason) == (None, why), text
    assert find_formula("c = 2 × a + b").expect == "2 * a + b"
    assert find_formula("y = W_0 x + B A x").expect == "matmul(W_0, x) + matmul(B, A, x)"  # x here is the vector


# ----- numbers inside formulas ------------------------------------------------------------------------------
def test_index_bounds_and_variant_indexes_are_blanked_and_values_are_not():
    assert mask_indexes("{a_k}_{k=1..K} and prod_{i=1}^{n} p_i") == "{a_k}_{k=§..K} and prod_{i=§}^{n} p_i"
    assert mask_indexes("W_{u,[0,T]}^{(0)}") == "W_{u,[§,T]}^{(§)}"
    assert mask_indexes("beta_1 = 0.9, lr = 10^{-4}, x_{t-1}") == "beta_1 = 0.9, lr = 10^{-4}, x_{t-1}"


def test_an_index_bound_is_not_reported_as_an_unnamed_number():
    result = compiled("Forward noising: x_k = sqrt(a_k) * x_0 + sqrt(1 - a_k) * eps, where {a_k}_{k=1..K} is the noise schedule")
    assert [f.reason for f in result.fragments if "number" in f.reason] == []


def test_a_product_with_bounds_is_a_formula_left_with_its_reason_not_context():
    result = compiled("Joint likelihood: P_all = prod_{i=1}^{n} p_i")  # a product of one symbol, as a sum of one
    (fragment,) = result.fragments
    assert fragment.outcome == "leftover" and "nothing to compare" in fragment.reason
    product = compiled("Joint win probability: P = ∏_{i=1}^{N} σ(s_i - t_i)")
    assert dumps(product) == [{"expect": "prod(sigma(s_i - t_i))"}] and product.coverage == "full"


@pytest.mark.parametrize("text", ["where a_bar_k = prod_{i=1..k} a_i", "ᾱ_t = ∏_{s=1}^{t} α_s", "abar_t = prod_{s=1}^{t} (1 - b_s)"])
def test_a_running_product_up_to_the_own_index_is_a_cumprod_call(text):
    result = compiled(f"Noise schedule: {text}")
    assert dumps(result) == [{"target": "cumprod"}]
    assert result.coverage == "full"


@pytest.mark.parametrize("text", ["a_k = prod_{i=1..k} b_i * c", "a_k = prod_{i=1..k} b_j"])
def test_any_other_running_product_is_neither_a_cumprod_nor_a_product_over_all_entries(text):
    found = find_formula(text)
    assert (found.expect, found.call) == (None, "") and "running product" in found.reason


# ----- lead-ins and titles of typed structures -------------------------------------------------------------
def test_the_loop_numbered_steps_run_in_belongs_to_the_order():
    result = compiled("Training procedure (Algorithm 1): for each batch, (1) encode inputs, (2) decode latents, (3) update weights")
    assert dumps(result) == [{"steps": ["encode_inputs", "decode_latents", "update_weights"]}]
    assert result.coverage == "full"
    assert [f.outcome for f in result.fragments] == ["typed"] * 4


def test_a_lead_in_that_is_not_a_loop_stays_unchecked():
    result = compiled("Training procedure: we first warm up the model, (1) encode inputs, (2) decode latents")
    assert result.coverage == "partial"
    assert result.fragments[0].outcome == "leftover"


LISTING = """Novelty Scoring Detector | Algorithm: novelty_scoring_detector(samples, reference_bank)

  # Step 1: embed the samples
  feats = embed_samples(samples)
  # Step 2: score against the bank
  scores = score_against_bank(feats, reference_bank)
  flags = threshold_scores(scores)
"""


def test_the_title_before_an_algorithm_header_is_covered_by_the_header():
    result = compiled(LISTING)
    assert {"symbol": "novelty_scoring_detector"} in dumps(result)
    title = result.fragments[0]
    assert (title.text, title.outcome, title.reason) == ("Novelty Scoring Detector", "typed", "")
    assert result.coverage == "full"


def test_a_title_with_a_number_is_read_on_its_own_not_covered_by_the_header():
    result = compiled(LISTING.replace("Novelty Scoring Detector", "Detector with 512 samples"))
    title = result.fragments[0]
    assert [dumps(result)[i] for i in title.checks] == [{"name": "num_samples", "expect": 512}]


# ----- end to end ------------------------------------------------------------------------------------------------
REWARD_CLAIM = "Tracking reward: r = -∫_Ω |u - u_d|^2 dx - alpha * ∫_Ω |f|^2 dx"
SCHEDULE_CLAIM = "Cumulative noise schedule: alpha_bar_t = prod_{s=1}^{t} (1 - beta_s)"
VAE_CLAIM = "VAE objective: L = (1/2) * E[ ||x - x_hat||^2 ] + beta * KL( q_phi(z|x) || p(z) )"
REPO = """\
import torch
import torch.nn.functional as F


def reward(u, u_d, f, alpha):
    return {reward}


def vae_loss(x, x_hat, mu, logvar, beta):
    recon = F.mse_loss(x_hat, x)
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return {vae}


def schedule(betas):
    return {schedule}


if __name__ == "__main__":
    print(reward(torch.randn(8), torch.randn(8), torch.randn(8), 0.1))
    print(vae_loss(torch.randn(4), torch.randn(4), torch.randn(4), torch.randn(4), 0.5))
    print(schedule(torch.linspace(1e-4, 0.02, 10)))
"""


def _run(tmp_path: Path, reward: str, vae: str, schedule: str) -> dict:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "losses.py").write_text(REPO.format(reward=reward, vae=vae, schedule=schedule))
    saus = [
        {"id": "t-D2-001", "dimension": "methodological", "claim": REWARD_CLAIM},
        {"id": "t-D2-002", "dimension": "methodological", "claim": VAE_CLAIM},
        {"id": "t-D2-003", "dimension": "methodological", "claim": SCHEDULE_CLAIM},
    ]
    (repo / "sau.yaml").write_text(yaml.safe_dump({"version": 1, "paper": {"id": "t"}, "saus": saus}))
    return {v.id: v for v in run_repo(repo, use_cache=False).verdicts}


def test_integral_kl_and_cumprod_pass_on_a_faithful_repo(tmp_path):
    got = _run(tmp_path, "-((u - u_d) ** 2).mean() - alpha * (f ** 2).mean()", "0.5 * recon + beta * kld", "(1 - betas).cumprod(dim=0)")
    reward, vae = got["t-D2-001"], got["t-D2-002"]
    assert (reward.status.value, reward.score) == ("pass", 1.0)
    assert [(e.file, e.line) for e in reward.evidence] == [("losses.py", 6)]
    assert (vae.status.value, vae.score) == ("pass", 1.0)
    assert [(e.file, e.line) for e in vae.evidence] == [("losses.py", 12)]
    cumulative = got["t-D2-003"]
    assert (cumulative.status.value, cumulative.score) == ("pass", 1.0)
    assert [(e.file, e.line) for e in cumulative.evidence] == [("losses.py", 16)]


def test_integral_kl_and_cumprod_fail_on_a_drifted_repo(tmp_path):
    got = _run(tmp_path, "-((u - u_d) ** 2).mean() + alpha * (f ** 2).mean()", "recon + beta * kld", "torch.cumsum(1 - betas, dim=0)")
    reward, vae = got["t-D2-001"], got["t-D2-002"]
    assert (reward.status.value, reward.score) == ("mismatch", 0.0)
    assert [(e.file, e.line) for e in reward.evidence] == [("losses.py", 6)]
    assert "differs from the formula" in reward.message
    assert vae.score == 0.0 and vae.status.value in ("mismatch", "missing")
    cumulative = got["t-D2-003"]
    assert (cumulative.status.value, cumulative.score) == ("missing", 0.0)
