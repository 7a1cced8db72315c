"""Gradients in formula checks: ∇ / ∂ / grad_x on the paper side, autograd / backward / jax.grad on the code
side, one ``Grad(f, x)`` object on both, and refusals that must stay refusals."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest
import sympy as sp

from minirepo import make_repo
from verifier.analysis.code_sympy import RMEAN, RSUM, sym, translate_source
from verifier.analysis.equivalence import decide
from verifier.compiler.formulas import find_formula, to_sympy
from verifier.engine import run_repo
from verifier.symbolic.latex import FormulaSyntaxError, Grad, parse_latex, parse_sympy

x, x_hat, W, L, lam, eps, eta = (sym(n) for n in ("x", "x_hat", "W", "L", "lambda_", "epsilon", "eta"))


# ----------------------------------------------------------------------------------------- the object
def test_grad_canonical_forms():
    a = sym("a")
    assert Grad(x**2, x) == 2 * x  # explicit in x alone: differentiated
    assert Grad(sp.exp(3 * x), x) == 3 * sp.exp(3 * x)
    assert Grad(RSUM(L), x) == Grad(L, x)  # grad_outputs=ones / .sum(): the per-sample gradient
    assert Grad(-3 * L + x**3, x) == 3 * x**2 - 3 * Grad(L, x)  # linearity, numeric factors out
    assert Grad(a * x**2, x).func is Grad  # another symbol may depend on x: stays opaque
    assert Grad(RMEAN(L), x).args == (RMEAN(L), x)  # a mean's 1/N stays
    assert Grad(sp.Integer(4), x) == 0


def test_opaque_gradients_compare_by_function_and_variable():
    f = sp.Function("loss_fn")(W, x)
    assert decide(-eta * sp.sign(Grad(f, W)), -eta * sp.sign(Grad(RSUM(f), W))).equivalent
    assert decide(Grad(f, W), Grad(f, x)).kind == "not-equivalent"  # the wrong variable
    assert decide(sp.sign(Grad(f, W)), Grad(f, W)).kind == "not-equivalent"  # a dropped sign
    assert decide(lam * Grad(L, x), Grad(L, x)).kind == "not-equivalent"  # a dropped factor
    assert decide(3 * Grad(L, x), Grad(3 * L, x)).equivalent


# ----------------------------------------------------------------------------------------- paper: LaTeX
@pytest.mark.parametrize(
    ("latex", "expected"),
    [
        (r"\lambda (\|\nabla_{\hat{x}} D(\hat{x})\|_2 - 1)^2", lam * (sp.sqrt(RSUM(Grad(sym("D__hat_x"), x_hat) ** 2)) - 1) ** 2),
        (r"x + \epsilon \, \mathrm{sign}(\nabla_x L(\theta, x, y))", x + eps * sp.sign(Grad(sym("L__theta_x_y"), x))),
        (r"\frac{\partial L}{\partial W}", Grad(L, W)),
        (r"\frac{\partial}{\partial x} x^2", 2 * x),
        (r"\nabla_\theta \log p_\theta(x)", Grad(sp.log(sym("p_theta__x")), sym("theta"))),
        (r"-\eta \, \mathrm{sign}(\sum_i \nabla_W L(W, x_i))", -eta * sp.sign(Grad(sym("L__W_x_i"), W))),
    ],
)
def test_latex_gradients(latex, expected):
    assert parse_latex(latex).expr == expected


@pytest.mark.parametrize(
    ("latex", "reason"),
    [
        (r"\nabla L", "a gradient with no variable"),
        (r"\nabla_x^2 f", "a higher-order derivative"),
        (r"\nabla_{x + y} f", "a gradient with respect to an expression"),
        (r"\frac{\partial L}{W}", "a derivative whose denominator"),
    ],
)
def test_latex_gradient_refusals(latex, reason):
    with pytest.raises(FormulaSyntaxError) as info:
        parse_latex(latex)
    assert reason in info.value.reason


def test_sympy_syntax_grad_and_sign():
    assert parse_sympy("x + eps * sign(grad(L(x), x))").expr == sym("eps") * sp.sign(Grad(sym("L__x"), x)) + x
    assert parse_sympy("sum(grad(L(W, x_i), W))").expr == Grad(sym("L__W_x_i"), W)  # Σ ∇ = ∇ Σ


# ----------------------------------------------------------------------------------------- paper: free text
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("λ (||∇_x̂ D(x̂)||_2 − 1)²", "lam * (norm(grad(D(x_hat), x_hat)) - 1)**2"),
        ("x + ε · sign(∇_x L(θ, x, y))", "x + eps * sign(grad(L(theta, x, y), x))"),
        ("−η sign(Σ_i ∇_W L(W₀, x_i))", "- eta * sign(sum(grad(L(W0, x_i), W)))"),
        ("∂L/∂W", "grad(L, W)"),
        ("∂(x²)/∂x", "grad((x**2), x)"),
        ("grad_x log q(x)", "grad(log(q(x)), x)"),
        ("partial_u/partial_p", "grad(u, p)"),
        ("∂_t u + c ∂_x u", "grad(u, t) + c * grad(u, x)"),
    ],
)
def test_ascii_gradients(text, expected):
    assert to_sympy(text) == (expected, "")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("∇L", "uses a gradient with no variable it is taken with respect to"),
        ("∂²u/∂x² - f", "uses a second derivative, divergence or curl"),
        ("∇·u", "uses a second derivative, divergence or curl"),
        ("∇^2 φ + ρ", "uses a second derivative, divergence or curl"),
        ("∂Ω", "uses a gradient with no variable it is taken with respect to"),
    ],
)
def test_ascii_gradient_refusals(text, reason):
    assert to_sympy(text) == (None, reason)


def test_compiled_gradient_claims():
    found = find_formula("x_adv = x + ε · sign(∇_x L(θ, x, y))")
    assert (found.lhs, found.expect, found.reason) == ("x_adv", "x + eps * sign(grad(L(theta, x, y), x))", "")
    # ∂(x²)/∂x is 2x: one symbol, nothing to compare, as for any such formula
    assert find_formula("y = ∂(x²)/∂x").reason == "one symbol and constants, nothing to compare"
    assert find_formula("g = ∇L").reason == "uses a gradient with no variable it is taken with respect to"


# ----------------------------------------------------------------------------------------- code side
def models(src: str) -> dict:
    return {m.qualname: m for m in translate_source(dedent(src), "m.py")}


def value(model, target: str) -> sp.Expr:
    return [c for c in model.candidates if c.target == target][-1].expr


def test_autograd_grad_forms():
    m = models(
        """
        import torch
        from torch import autograd

        def gp(critic, real, fake, lam):
            a = torch.rand(real.size(0), 1)
            x_hat = a * real + (1 - a) * fake
            x_hat.requires_grad_(True)
            d = critic(x_hat)
            g = autograd.grad(outputs=d, inputs=x_hat, grad_outputs=torch.ones_like(d), create_graph=True)[0]
            pen = lam * ((g.norm(2, dim=1) - 1) ** 2).mean()

        def unpacked(model, x):
            g, = torch.autograd.grad(model(x).sum(), x)
            return g

        def two_inputs(f, u, v, w):
            gu, gv = torch.autograd.grad(f, [u, v], grad_outputs=w)
            return gu + gv
        """
    )
    a, real, fake, d = sym("a"), sym("real"), sym("fake"), sym("d")
    mix = a * real + (1 - a) * fake
    assert value(m["gp"], "g") == Grad(d, mix)
    assert value(m["gp"], "pen") == sym("lam") * RMEAN((sp.sqrt(RSUM(Grad(d, mix) ** 2)) - 1) ** 2)
    assert value(m["unpacked"], "return") == Grad(sp.Function("model")(x), x)
    f, w = sym("f"), sym("w")
    assert value(m["two_inputs"], "return") == Grad(f * w, sym("u")) + Grad(f * w, sym("v"))


def test_backward_then_dot_grad_is_the_gradient_of_that_loss():
    m = models(
        """
        import torch
        import torch.nn.functional as F

        def fgsm(model, x, y, eps):
            x = x.clone().detach().requires_grad_(True)
            loss = F.mse_loss(model(x), y)
            loss.backward()
            return x + eps * x.grad.sign()

        def step(p, lr):
            return p - lr * p.grad
        """
    )
    loss = RMEAN((sp.Function("model")(x) - sym("y")) ** 2)
    assert value(m["fgsm"], "return") == x + sym("eps") * sp.sign(Grad(loss, x))
    assert m["fgsm"].unresolved_gradients == []
    # no backward() in the function: the old leaf `grad` (an optimizer's p.grad), recorded as unresolved
    p = sym("p")
    assert value(m["step"], "return") == p - sym("lr") * sym("grad")
    assert m["step"].unresolved_gradients == [(12, "`p.grad` read with no `backward()` before it in the function")]


def test_jax_and_torch_func_transforms():
    m = models(
        """
        import jax
        import jax.numpy as jnp
        import torch
        from torch.func import grad as fgrad

        def per_example(w, x):
            return jnp.log1p(jnp.exp(-x * w))

        def closure(w0, xs, lr):
            def total(w):
                return jnp.sum(per_example(w, xs))
            g = jax.grad(total)(w0)
            return -lr * jnp.sign(g)

        def by_argnums(w0, xs):
            return jax.grad(lambda w, x: jnp.sum(per_example(w, x)), argnums=1)(w0, xs)

        def both(w0, xs):
            v, g = jax.value_and_grad(lambda w: jnp.mean(per_example(w, xs)))(w0)
            return g

        def square(z):
            return fgrad(lambda u: (u ** 2).sum())(z)

        def jac(f_in, p):
            return jax.jacrev(lambda q: q * p)(p)

        def torch_jac(p):
            return torch.autograd.functional.jacobian(lambda q: q ** 3, p)

        def unknown(w0):
            return jax.grad(imported_elsewhere)(w0)
        """
    )
    w0, xs, lr, p = sym("w0"), sym("xs"), sym("lr"), sym("p")
    per = sp.log(1 + sp.exp(-xs * w0))
    assert value(m["closure"], "return") == -lr * sp.sign(Grad(per, w0))
    assert value(m["by_argnums"], "return") == Grad(per, xs)
    assert value(m["both"], "return") == Grad(RMEAN(per), w0)
    assert value(m["square"], "return") == 2 * sym("z")
    assert value(m["jac"], "return") == 2 * p  # q * p at q = p: p**2, explicit in p
    assert value(m["torch_jac"], "return") == 3 * p**2
    assert "return" not in {c.target for c in m["unknown"].candidates}
    assert m["unknown"].unresolved_gradients == [
        (33, "`jax.grad`: the function or its argument is not translated")
    ]


# ----------------------------------------------------------------------------------------- the check
SCORE = """
    import torch

    def score_step(x, density, step):
        x = x.detach().requires_grad_(True)
        logp = torch.log(density(x)).sum()
        grad_logp = torch.autograd.grad(logp, x)[0]
        x_next = x + step * grad_logp
        return x_next
    """


def test_check_passes_and_fails_on_gradients(tmp_path):
    claim = {"id": "t-D2-001", "dimension": "methodological", "claim": "Langevin drift: x' = x + η ∇_x log p(x)"}
    repo = make_repo(tmp_path / "a", {"score.py": SCORE}, [claim])
    v = {v.id: v for v in run_repo(repo, use_cache=False).verdicts}["t-D2-001"]
    assert (v.status.value, v.score, v.evidence[0].file, v.evidence[0].line) == ("pass", 1.0, "score.py", 8)
    drifted = SCORE.replace("grad_logp = torch.autograd.grad(logp, x)[0]", "grad_logp = torch.autograd.grad(logp, step)[0]")
    repo = make_repo(tmp_path / "b", {"score.py": drifted}, [claim])
    v = {v.id: v for v in run_repo(repo, use_cache=False).verdicts}["t-D2-001"]
    assert (v.status.value, v.score, v.evidence[0].file, v.evidence[0].line) == ("mismatch", 0.0, "score.py", 8)


def test_unreadable_or_hand_derived_gradients_are_unverified(tmp_path):
    claim = {
        "id": "t-D2-001", "dimension": "methodological", "claim": "a step",
        "check": {"kind": "formula", "expect": "x + eta * grad(L(x), x)"},
    }
    hand = """
        def step(x, eta, target):
            residual = x - target
            return x + eta * 2 * residual
        """
    v = {v.id: v for v in run_repo(make_repo(tmp_path / "a", {"s.py": hand}, [claim]), use_cache=False).verdicts}["t-D2-001"]
    assert v.status.value == "unverified" and v.score is None
    assert "no gradient computed in scope could be read" in v.message
    unread = """
        def step(x, eta):
            return x + eta * x.grad
        """
    v = {v.id: v for v in run_repo(make_repo(tmp_path / "b", {"s.py": unread}, [claim]), use_cache=False).verdicts}["t-D2-001"]
    assert (v.status.value, v.evidence[0].file, v.evidence[0].line) == ("unverified", "s.py", 3)
    assert "`x.grad` read with no `backward()`" in v.message


SALIENCY = """
    import torch

    def saliency(model, images, labels):
        images = images.clone().requires_grad_(True)
        scores = model(images).gather(1, labels[:, None]).sum()
        scores.backward()
        saliency_map = images.grad.abs()
        return saliency_map
    """


def test_an_absolute_gradient_in_bars_is_read_and_checked(tmp_path):
    assert to_sympy("|∂y_c/∂x|") == ("abs(grad(y_c, x))", "")
    assert "abs" not in (to_sympy("|a, b|")[0] or "")  # a pair in bars is no absolute value
    claim = {"id": "t-D2-001", "dimension": "methodological",
             "claim": "Saliency: the absolute input gradient of the class score, S = |∂y_c/∂x|."}
    v = {v.id: v for v in run_repo(make_repo(tmp_path / "a", {"sal.py": SALIENCY}, [claim]), use_cache=False).verdicts}["t-D2-001"]
    (found,) = [c for c in v.checks if c.kind == "formula"]
    # the class score is `model(images)` and `labels` shares the claim's "class": a mapping the user confirms
    assert (found.status.value, found.evidence[0].file, found.evidence[0].line) == ("unverified", "sal.py", 8)
    assert "confirm it with `symbols:`" in found.message
    typed = {"id": "t-D2-001", "dimension": "methodological", "claim": "S = |∂y_c/∂x|",
             "check": {"kind": "formula", "expect": "abs(grad(y_c, x))", "symbols": {"y_c": "scores", "x": "images"}}}
    v = {v.id: v for v in run_repo(make_repo(tmp_path / "b", {"sal.py": SALIENCY}, [typed]), use_cache=False).verdicts}["t-D2-001"]
    assert (v.status.value, v.score, v.evidence[0].file, v.evidence[0].line) == ("pass", 1.0, "sal.py", 8)
    signed = SALIENCY.replace("images.grad.abs()", "images.grad")
    v = {v.id: v for v in run_repo(make_repo(tmp_path / "c", {"sal.py": signed}, [typed]), use_cache=False).verdicts}["t-D2-001"]
    assert (v.status.value, v.score, v.evidence[0].line) == ("mismatch", 0.0, 8)
