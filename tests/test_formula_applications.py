"""Applications in formula checks: a paper's ``D(x̂)`` / ``ε_θ(x_t, t)`` / ``Q(s_next, a_next)`` keeps its
arguments, a code call (``self.critic(x_hat)``, ``d_out = model(x_t, t)``) keeps its own, and the check
compares them under the symbol mapping: ``D(x_real)`` is not ``D(x̂)``."""

from __future__ import annotations

import sympy as sp

from minirepo import make_repo
from verifier.analysis.code_sympy import Grad, sym, translate_source
from verifier.analysis.equivalence import APPLY, decide
from verifier.engine import run_repo
from verifier.symbolic.latex import parse_latex, parse_sympy

x, x_hat, x_real, t, x_t, h = (sym(n) for n in ("x", "x_hat", "x_real", "t", "x_t", "h"))


# ----------------------------------------------------------------------------------------- paper side
def test_paper_applications_keep_their_arguments():
    f = parse_sympy("r + gamma * Q(s_next, a_next)")
    assert f.applications == {"Q__s_next_a_next": ("Q", (sym("s_next"), sym("a_next")))}
    f = parse_sympy("(f(x + h) - f(x - h)) / (2*h)")
    assert f.applications == {"f__x_p_h": ("f", (x + h,)), "f__x_m_h": ("f", (x - h,))}
    f = parse_latex(r"\left(\|\nabla_{\hat{x}} D(\hat{x})\|_2 - 1\right)^2")
    assert f.applications == {"D__hat_x": ("D", (x_hat,))}
    f = parse_latex(r"\|\epsilon - \epsilon_\theta(x_t, t)\|^2")
    assert f.applications == {"epsilon_theta__x_t_t": ("epsilon_theta", (x_t, t))}


def test_paper_applications_that_cannot_be_read_are_not_recorded():
    assert parse_sympy("log(pi(y_w|x))").applications == {}  # a conditional: no argument list
    assert parse_latex(r"r + \gamma Q(s^\prime, a^\prime)").applications == {}  # this parser folds s' into s
    assert parse_sympy("D(x, y) + D(x_y)").applications == {}  # one symbol name, two argument lists


# ----------------------------------------------------------------------------------------- code side
def models(src: str) -> dict:
    return {m.qualname: m for m in translate_source(src)}


def test_code_calls_keep_their_arguments_and_how_they_were_written():
    m = models(
        "def f(critic, model, x_hat, x_t, t, cond):\n"
        "    d_out = critic(x_hat.detach())\n"
        "    pred = model(x_t, timesteps=t)\n"
        "    other = model(x_t, t, lambda z: z)\n"
        "    return d_out + pred + other\n"
    )["f"]
    critic, model = sp.Function("critic"), sp.Function("model")
    assert m.applications["d_out"] == critic(x_hat)  # detach() keeps the value
    assert m.applications["pred"] == model(x_t, t)
    shape = m.calls[model(x_t, t)]
    assert shape.unreadable  # the same call also written with a lambda it could not read
    assert (m.calls[critic(x_hat)].positional, m.calls[critic(x_hat)].keywords) == (1, 0)
    kw = models("def g(model, x_t, t):\n    return model(x_t, timesteps=t)\n")["g"].calls[model(x_t, t)]
    assert (kw.positional, kw.keywords, kw.unreadable) == (1, 1, False)


# ----------------------------------------------------------------------------------------- evaluation
def test_applications_evaluate_as_one_function_of_their_arguments():
    D = sym("D")
    assert decide(APPLY(D, x_hat), APPLY(D, x_hat)).equivalent
    assert decide(APPLY(D, x_hat), APPLY(D, x_real)).kind == "not-equivalent"
    assert decide(APPLY(D, x_hat), APPLY(sym("G"), x_hat)).kind == "not-equivalent"  # another function
    assert decide(APPLY(sym("f"), x + h) - APPLY(sym("f"), x - h), sp.Integer(0)).kind == "not-equivalent"
    # one value of all arguments together, not a sum of one term per argument: mixed pairs differ
    Q, s1, s2, a1, a2 = (sym(n) for n in ("Q", "s1", "s2", "a1", "a2"))
    assert decide(APPLY(Q, s1, a1) + APPLY(Q, s2, a2), APPLY(Q, s1, a2) + APPLY(Q, s2, a1)).kind == "not-equivalent"
    # gradients of applications: the same application and variable agree, another argument does not
    assert decide(Grad(APPLY(D, x_hat), x_hat), Grad(APPLY(D, x_hat), x_hat)).equivalent
    assert decide(Grad(APPLY(D, x_real), x_hat), Grad(APPLY(D, x_hat), x_hat)).kind == "not-equivalent"


# ----------------------------------------------------------------------------------------- the check
PENALTY = """
    import torch

    def gradient_penalty(critic, real, fake, lambda_gp):
        alpha = torch.rand(real.size(0), 1)
        x_hat = alpha * real + (1 - alpha) * fake
        d_hat = critic(x_hat)
        grads = torch.autograd.grad(d_hat, x_hat, grad_outputs=torch.ones_like(d_hat), create_graph=True)[0]
        penalty = lambda_gp * ((grads.norm(2, dim=1) - 1) ** 2).mean()
        return penalty
    """
GP_CLAIM = {
    "id": "t-D2-001", "dimension": "methodological", "claim": "The gradient penalty.",
    "check": {"kind": "formula", "latex": r"\lambda \left(\|\nabla_{\hat{x}} D(\hat{x})\|_2 - 1\right)^2",
              "symbols": {"lambda": "lambda_gp", "x_hat": "x_hat"}},
}


def verdict(tmp_path, name: str, files: dict, claim: dict):
    return {v.id: v for v in run_repo(make_repo(tmp_path / name, files, [claim]), use_cache=False).verdicts}[claim["id"]]


def test_critic_on_the_real_batch_is_a_mismatch(tmp_path):
    v = verdict(tmp_path, "a", {"gp.py": PENALTY}, GP_CLAIM)
    assert (v.status.value, v.score, v.evidence[0].file, v.evidence[0].line) == ("pass", 1.0, "gp.py", 9)
    drifted = PENALTY.replace("d_hat = critic(x_hat)", "d_hat = critic(real)")
    v = verdict(tmp_path, "b", {"gp.py": drifted}, GP_CLAIM)
    assert (v.status.value, v.score, v.evidence[0].file, v.evidence[0].line) == ("mismatch", 0.0, "gp.py", 9)
    assert "applies critic to other arguments (critic(real))" in v.message


TD = """
    def td_target(q_net, target_net, obs, act, next_obs, next_act, reward, gamma):
        q_next = target_net(next_obs, next_act)
        return reward + gamma * q_next
    """
TD_CLAIM = {
    "id": "t-D2-002", "dimension": "methodological", "claim": "The TD target.",
    "check": {"kind": "formula", "expect": "r + gamma * Q(s_next, a_next)", "scope": "td_target",
              "symbols": {"r": "reward", "gamma": "gamma", "s_next": "next_obs", "a_next": "next_act", "Q": "target_net"}},
}


def test_td_target_arguments_are_compared_through_the_mapping(tmp_path):
    v = verdict(tmp_path, "a", {"td.py": TD}, TD_CLAIM)
    assert (v.status.value, v.score, v.evidence[0].file, v.evidence[0].line) == ("pass", 1.0, "td.py", 4)
    drifted = TD.replace("target_net(next_obs, next_act)", "target_net(obs, act)")
    v = verdict(tmp_path, "b", {"td.py": drifted}, TD_CLAIM)
    assert (v.status.value, v.score, v.evidence[0].file, v.evidence[0].line) == ("mismatch", 0.0, "td.py", 4)


DIFFUSION = """
    import torch
    import torch.nn.functional as F

    def diffusion_loss(model, x_0, t, alpha_bar, cond):
        noise = torch.randn_like(x_0)
        x_t = alpha_bar.sqrt() * x_0 + (1 - alpha_bar).sqrt() * noise
        pred = model(x_t, t, cond)
        return F.mse_loss(pred, noise)
    """
DIFFUSION_CLAIM = {
    "id": "t-D2-003", "dimension": "methodological", "claim": "The noise-prediction loss.",
    "check": {"kind": "formula", "expect": "(eps - eps_theta(x_t, t))**2", "scope": "diffusion_loss",
              "symbols": {"eps": "noise", "x_t": "x_t", "t": "t"}},
}


def test_extra_keyword_and_unreadable_arguments(tmp_path):
    # an extra conditioning argument the paper does not write is ignored when the others line up
    v = verdict(tmp_path, "a", {"d.py": DIFFUSION}, DIFFUSION_CLAIM)
    assert (v.status.value, v.score, v.evidence[0].file, v.evidence[0].line) == ("pass", 1.0, "d.py", 9)
    v = verdict(tmp_path, "b", {"d.py": DIFFUSION.replace("model(x_t, t, cond)", "model(t=t, x=x_t)")}, DIFFUSION_CLAIM)
    assert (v.status.value, v.score) == ("pass", 1.0)  # keyword arguments may stand for any paper argument
    # the wrong input with the same arity is a mismatch
    v = verdict(tmp_path, "c", {"d.py": DIFFUSION.replace("model(x_t, t, cond)", "model(x_0, t)")}, DIFFUSION_CLAIM)
    assert (v.status.value, v.score, v.evidence[0].file, v.evidence[0].line) == ("mismatch", 0.0, "d.py", 9)
    # with an extra argument no reading fits, and with an argument the translator cannot read: unverified
    v = verdict(tmp_path, "d", {"d.py": DIFFUSION.replace("model(x_t, t, cond)", "model(x_0, t, cond)")}, DIFFUSION_CLAIM)
    assert (v.status.value, v.score, v.evidence[0].file, v.evidence[0].line) == ("unverified", None, "d.py", 9)
    assert "takes 3 argument(s)" in v.message
    unread = DIFFUSION.replace("model(x_t, t, cond)", "model(x_t, t, lambda z: z)")
    v = verdict(tmp_path, "e", {"d.py": unread}, DIFFUSION_CLAIM)
    assert (v.status.value, v.score, v.evidence[0].file, v.evidence[0].line) == ("unverified", None, "d.py", 9)
    assert "could not be read" in v.message
