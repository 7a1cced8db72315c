"""Gaussians with expression parameters: compiled to the reparameterised draw ``mean + std * noise`` (paper
side), Gaussian samplers translated to the same form (code side), and the noise role deciding verdicts."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest
import sympy as sp
import yaml

from verifier.analysis.code_sympy import sym, translate_source
from verifier.compiler import compile_claim
from verifier.compiler.distributions import gaussian_draw
from verifier.engine import run_repo
from verifier.spec.model import SAU

NOISE = {"noise": "standard_normal"}


def compiled(claim: str, dimension: str = "D2"):
    return compile_claim(SAU(id="g-D2-001", dimension=dimension, claim=claim))


def checks(claim: str) -> list[dict]:
    return [{"kind": c.kind, **c.model_dump(exclude_defaults=True)} for c in compiled(claim).checks]


# ----------------------------------------------------------------------------------------- paper side
@pytest.mark.parametrize(
    ("claim", "expect"),
    [
        # a perfect square (1-t)^2 (1-k)^2 gives the std (1-t)(1-k); the identity factor is dropped
        ("Interpolated state: q_t(x_t | x_0, x_1, k) ~ N(t*x_1 + k*(1-t)*x_0, (1-t)^2 * (1-k)^2 * I)",
         "k*x_0*(1 - t) + noise*(1 - k)*(1 - t) + t*x_1"),
        ("x_t ~ N(t x_1 + (1 - t) x_0, (1 - t)^2 I)", "noise*(1 - t) + t*x_1 + x_0*(1 - t)"),
        # a variance that is no square: its square root; the density's variable before ';'
        ("Forward step: q(x_t | x_{t-1}) = N(x_t; sqrt(1 - beta_t) x_{t-1}, beta_t I)",
         "sqrt(beta_t)*noise + x_tm1*sqrt(1 - beta_t)"),
        ("q(x_t | x_0) = N(x_t; √ᾱ_t x_0, (1 - ᾱ_t) I)", "sqrt(alpha_bar_t)*x_0 + noise*sqrt(1 - alpha_bar_t)"),
        (r"q(x_t|x_0) = \mathcal{N}(x_t; \sqrt{\bar\alpha_t} x_0, (1-\bar\alpha_t)\mathbf{I})",
         "sqrt(alpha_bar_t)*x_0 + noise*sqrt(1 - alpha_bar_t)"),
        ("Langevin update: x_{k+1} ~ N(x_k + eta * s_k, 2 * eta * I)", "sqrt(2)*sqrt(eta)*noise + eta*s_k + x_k"),
    ],
)
def test_gaussian_with_expression_parameters_compiles_to_the_reparameterised_draw(claim, expect):
    result = compiled(claim)
    assert result.coverage == "full"
    assert checks(claim) == [{"kind": "formula", "expect": expect, "assume": NOISE}]


def test_the_stated_noise_of_a_formula_takes_the_noise_role():
    assert checks("The latent is z = mu + sigma * eps with eps ~ N(0, I).") == [
        {"kind": "formula", "expect": "mu + sigma * eps", "assume": {"eps": "standard_normal"}}
    ]
    # another distribution is a condition the formula does not check
    uniform = compiled("z = mu + sigma * eps with eps ~ U(0, 1)")
    assert uniform.coverage == "partial" and "eps ~ U(0, 1)" in uniform.fragments[0].reason


@pytest.mark.parametrize(
    ("claim", "reason"),
    [
        # sigma_min may be 0 in a faithful repo (then only the mean is computed): neither check is right
        ("x_t ~ N(t x_1 + (1 - t) x_0, sigma_min^2 I)", "constant a faithful repo may set to 0"),
        (r"x_t ~ \mathcal{N}(t x_1 + (1 - t) x_0, \sigma^2 \mathbf{I})", "constant a faithful repo may set to 0"),
    ],
)
def test_a_constant_noise_scale_is_left_over_with_the_reason(claim, reason):
    """σ may be 0 in a faithful repo (it then computes only the mean): neither a draw nor a sampler call is right."""
    result = compiled(claim)
    assert result.coverage == "none" and not result.checks
    assert reason in result.fragments[0].reason


@pytest.mark.parametrize(
    ("claim", "why"),
    [
        ("Noise xi ~ N(0, sigma_k^2 * I) is added", "zero-mean draw scaled by sigma_k"),
        (r"p_\theta(x_{t-1} | x_t) = \mathcal{N}(x_{t-1}; \mu_\theta(x_t, t), \sigma_t^2 \mathbf{I})", "one quantity plus"),
        ("z ~ N(mu, Sigma)", "covariance matrix"),
        ("z ~ N(mu_t, sigma_t)", "the std or the variance"),
    ],
)
def test_draws_with_nothing_distinctive_keep_only_the_sampler_call(claim, why):
    """The repo must draw Gaussian noise; a formula of one quantity plus a scaled noise would match any such sum."""
    assert why in gaussian_draw(claim).reason
    assert checks(claim) == [{"kind": "call", "target": "normal | randn | randn_like | standard_normal"}]


def test_numeric_gaussians_stay_sampler_and_init_checks():
    assert gaussian_draw("W ~ N(0, 0.02)") is None and gaussian_draw("eps ~ N(0, I)") is None
    assert checks("Weights initialised from N(0, 0.02).") == [
        {"kind": "init", "name": "weight", "expect": "normal", "args": {"mean": 0, "std": 0.02}}
    ]


# ----------------------------------------------------------------------------------------- code side
SAMPLERS = """
    import numpy as np
    import torch
    from jax import random
    from torch.distributions import Normal

    def inline(x0, x1, t):
        return t * x1 + (1 - t) * x0 + (1 - t) * torch.randn_like(x0)

    def named(mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def torch_normal(mu, sigma):
        return torch.normal(mu, sigma)

    def numpy_normal(mu, sigma):
        return np.random.normal(mu, scale=sigma, size=3)

    def generator(mu, sigma, rng):
        return rng.normal(mu, sigma)

    def jax_normal(key, mu, sigma):
        return mu + sigma * random.normal(key, (3,))

    def distribution(mu, sigma):
        dist = Normal(mu, sigma)
        return dist.rsample()

    def refilled(x, s):
        eps = torch.empty_like(x)
        eps.normal_()
        return x + s * eps

    def not_a_draw(mesh, p):
        return mesh.normal(p)
    """


def test_gaussian_samplers_translate_to_mean_plus_std_times_a_draw():
    models = {m.qualname: m for m in translate_source(dedent(SAMPLERS))}
    mu, sigma, noise = sym("mu"), sym("sigma"), sym("noise")

    def returned(name):
        return [c.expr for c in models[name].candidates if c.target == "return"][-1]

    x0, x1, t = sym("x0"), sym("x1"), sym("t")
    assert sp.expand(returned("inline") - (t * x1 + (1 - t) * x0 + (1 - t) * noise)) == 0
    for name in ("torch_normal", "numpy_normal", "generator", "jax_normal", "distribution"):
        assert sp.expand(returned(name) - (mu + sigma * noise)) == 0, name
        assert models[name].normal_draws == {"noise"}, name
    assert models["named"].normal_draws == {"eps"}  # the assigned name is the draw's leaf
    assert models["refilled"].normal_draws == {"eps__2"}
    assert models["not_a_draw"].normal_draws == set()


# ----------------------------------------------------------------------------------------- verdicts
PATH = """
    import torch

    def sample_path(x0, x1, t, k):
        mean = t * x1 + k * (1 - t) * x0
        std = {std}
        {draw}
        return {ret}
    """
CLAIM = "Interpolated state: q_t(x_t | x_0, x_1, k) ~ N(t*x_1 + k*(1-t)*x_0, (1-t)^2 * (1-k)^2 * I)"


def verdict(tmp_path: Path, std="(1 - t) * (1 - k)", draw="noise = torch.randn_like(x0)", ret="mean + std * noise"):
    repo = tmp_path / "repo"
    (repo / "fm").mkdir(parents=True)
    (repo / "fm" / "path.py").write_text(dedent(PATH).format(std=std, draw=draw, ret=ret))
    spec = {"version": 1, "paper": {"id": "g"}, "saus": [{"id": "g-D2-001", "dimension": "methodological", "claim": CLAIM}]}
    (repo / "sau.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    (v,) = run_repo(repo, use_cache=False).verdicts
    return v


def test_faithful_draws_pass_whatever_the_sampler_or_the_sign_of_the_noise(tmp_path):
    for i, (draw, ret) in enumerate([
        ("noise = torch.randn_like(x0)", "mean + std * noise"),
        ("noise = torch.randn_like(x0)", "mean - std * noise"),  # eps and -eps are the same law
        ("pass", "torch.normal(mean, std)"),
    ]):
        v = verdict(tmp_path / str(i), draw=draw, ret=ret)
        assert (v.status.value, v.score) == ("pass", 1.0), (ret, v.message)
        assert [(e.file, e.line) for e in v.evidence] == [("fm/path.py", 8)]


def test_drifted_draws_are_mismatches(tmp_path):
    dropped = verdict(tmp_path / "a", std="1 - t")  # the (1-k) factor of the std dropped
    assert (dropped.status.value, dropped.score) == ("mismatch", 0.0)
    assert [(e.file, e.line) for e in dropped.evidence] == [("fm/path.py", 8)]
    # the mean alone (no noise drawn) does not sample a Gaussian of nonzero variance
    mean_only = verdict(tmp_path / "b", std="0", draw="pass", ret="mean")
    assert (mean_only.status.value, mean_only.score) == ("mismatch", 0.0)
    assert "noise__undrawn" in mean_only.message
    # a noise that is no draw (a model output) cannot stand for the paper's noise
    not_drawn = verdict(tmp_path / "c", draw="noise = model(x0)")
    assert not_drawn.status.value != "pass"


def test_a_crosswise_mapping_of_a_formula_symmetric_in_the_two_is_not_a_name_conflict() -> None:
    from types import SimpleNamespace

    import sympy as sp

    from verifier.checks.formula import _crosswise

    swapped = SimpleNamespace(mapping={"x_0": "x1", "x_1": "x0"}, how={"x_0": "search", "x_1": "search"})
    x0, x1, t = sp.symbols("x_0 x_1 t")
    assert _crosswise(swapped, (x0 - x1) ** 2 * t) == []
    assert _crosswise(swapped, t * x1 + (1 - t) * x0) == ["x_0->x1 and x_1->x0 although the names fit crosswise"]


def test_a_symbol_written_before_a_bracket_multiplies_it():
    from verifier.compiler import distributions

    draw = distributions.gaussian_draw("x_t ~ N(t*x_1 + (1-t)*x_0, sigma^2 t(1-t) I)")
    assert draw.expect == "noise*sigma*sqrt(t*(1 - t)) + t*x_1 + x_0*(1 - t)"
    function = distributions.gaussian_draw("z ~ N(f(x), g(x)^2 I)")
    assert function.expect == "noise*g(x) + f(x)"  # f and g are never used on their own: functions of x


def test_a_power_tower_in_a_gaussian_parameter_is_refused_not_evaluated():
    """SymPy would evaluate 2^(2^(2^1024)) without end; the compiler must answer at once with the reason."""
    from verifier.compiler import compile_claim, distributions
    from verifier.spec.model import SAU

    draw = distributions.gaussian_draw("x ~ N(t, 2^(2^(2^(2^10))) I)")
    assert draw.expect is None and "exponent too large" in draw.reason
    result = compile_claim(SAU(id="g-D2-009", dimension="D2", claim="x ~ N(t, 2^(2^(2^(2^10))) I)"))
    assert result.checks == [] and "exponent too large" in result.fragments[0].reason
