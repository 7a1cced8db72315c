"""Function bodies -> SymPy: SSA inlining, in-place chains, self attributes, helpers, branches, bounds."""

from __future__ import annotations

import time
from textwrap import dedent

import sympy as sp

from verifier.analysis.code_sympy import PICK, RMEAN, RVAR1, sym, translate_source


def models(src: str, **kw):
    return {m.qualname: m for m in translate_source(dedent(src), "m.py", **kw)}


def last(model, target):
    found = [c for c in model.candidates if c.target == target]
    assert found, f"no candidate {target} in {[c.target for c in model.candidates]}"
    return found[-1]


def test_reassignment_is_inlined_in_order():
    m = models(
        """
        def f(x, y):
            z = x + 1
            z = z * y
            out = z - x
            return out
        """
    )["f"]
    x, y = sym("x"), sym("y")
    assert last(m, "out").expr == (x + 1) * y - x
    assert last(m, "return").expr == (x + 1) * y - x
    assert [c.line for c in m.candidates if c.target == "z"] == [3, 4]


def test_inplace_chain_updates_the_receiver():
    m = models(
        """
        import torch
        def step(exp_avg, grad, beta1):
            exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
            new = exp_avg * 2
        """
    )["step"]
    m_, g, b = sym("exp_avg"), sym("grad"), sym("beta1")
    assert sp.expand(last(m, "exp_avg").expr - (b * m_ + (1 - b) * g)) == 0
    assert sp.expand(last(m, "new").expr - 2 * (b * m_ + (1 - b) * g)) == 0


def test_addcdiv_and_data_attribute():
    m = models(
        """
        import torch
        def upd(p, exp_avg, denom, step_size):
            p.data.addcdiv_(exp_avg, denom, value=-step_size)
        """
    )["upd"]
    p, e, d, s = sym("p"), sym("exp_avg"), sym("denom"), sym("step_size")
    assert last(m, "p").expr == p - s * e / d


def test_self_attributes_come_from_init():
    m = models(
        """
        import torch
        class D:
            def __init__(self, betas):
                self.alphas = 1.0 - betas
                self.sqrt_recip = torch.sqrt(1.0 / self.alphas)
                self.beta = 0.1
            def f(self, x):
                y = self.sqrt_recip * x * self.beta
                return y
        """
    )["D.f"]
    betas, x, beta = sym("betas"), sym("x"), sym("beta")
    assert sp.simplify(last(m, "y").expr - sp.sqrt(1 / (1 - betas)) * x * beta) == 0


def test_repo_helper_is_inlined():
    m = models(
        """
        def extract(a, t, shape):
            out = a.gather(-1, t)
            return out.reshape(-1, 1)
        def f(coef, t, x):
            c = extract(coef, t, x.shape)
            return c * x
        """
    )["f"]
    assert last(m, "return").expr == PICK(sym("coef")) * sym("x")


def test_branches_split_into_paths_and_pin_decides():
    src = """
        import torch.nn.functional as F
        import torch
        class T:
            def loss(self, logits):
                if self.loss_type == "sigmoid":
                    losses = -F.logsigmoid(self.beta * logits)
                elif self.loss_type == "hinge":
                    losses = torch.relu(1 - self.beta * logits)
                else:
                    raise ValueError(self.loss_type)
                return losses
        """
    m = models(src)["T.loss"]
    assert m.paths == ["not (self.loss_type == 'sigmoid') and self.loss_type == 'hinge'", "self.loss_type == 'sigmoid'"]
    pinned = models(src, pin={"loss_type": "hinge"})["T.loss"]
    assert pinned.paths == [""]
    beta, z = sym("beta"), sym("logits")
    assert last(pinned, "losses").expr == sp.Max(1 - beta * z, 0)


def test_torch_var_is_unbiased_numpy_var_is_biased():
    torch_m = models(
        """
        import torch
        def f(x):
            a = x.var(-1)
            b = x.var(-1, unbiased=False)
            c = torch.var(x, correction=0)
        """
    )["f"]
    x = sym("x")
    biased = RMEAN((x - RMEAN(x)) ** 2)
    assert last(torch_m, "a").expr == RVAR1(x)
    assert last(torch_m, "b").expr == biased
    assert last(torch_m, "c").expr == biased
    np_m = models(
        """
        import numpy as np
        def f(x):
            a = np.var(x)
            b = x.var(ddof=1)
        """
    )["f"]
    assert last(np_m, "a").expr == biased
    assert last(np_m, "b").expr == RVAR1(x)


def test_clamp_where_minimum_and_unknown_calls():
    m = models(
        """
        import torch
        import numpy as np
        def f(r, eps, a, b, x):
            c = torch.clamp(r, 1 - eps, 1 + eps)
            lo = r.clamp(min=eps)
            w = torch.where(a > b, a, b)
            mn = np.minimum(a, b)
            u = mystery(a, b) + 1
        """
    )["f"]
    r, eps, a, b = sym("r"), sym("eps"), sym("a"), sym("b")
    assert last(m, "c").expr == sp.Min(sp.Max(r, 1 - eps), 1 + eps)
    assert last(m, "lo").expr == sp.Max(r, eps)
    assert last(m, "w").expr == sp.Piecewise((a, a > b), (b, True))
    assert last(m, "mn").expr == sp.Min(a, b)
    assert last(m, "u").expr == sp.Function("mystery")(a, b) + 1  # opaque, never dropped


def test_loss_functions_and_reductions():
    m = models(
        """
        import torch.nn.functional as F
        def f(pred, target, logits, y):
            a = F.mse_loss(pred, target)
            b = F.mse_loss(pred, target, reduction="sum")
            c = F.cross_entropy(logits, y, label_smoothing=0.1)
        """
    )["f"]
    p, t = sym("pred"), sym("target")
    assert last(m, "a").expr == RMEAN((p - t) ** 2)
    assert last(m, "b").expr == sp.Function("rsum")((p - t) ** 2)
    assert "pick" in str(last(m, "c").expr) and "rmean" in str(last(m, "c").expr)


def test_opaque_model_outputs_become_named_leaves():
    m = models(
        """
        def f(self, x, t):
            predicted_noise = self.model(x, t)
            y = x - predicted_noise
        """
    )["f"]
    assert last(m, "y").expr == sym("x") - sym("predicted_noise")


def test_continue_cuts_the_path():
    m = models(
        """
        def f(params, lr):
            for p in params:
                if p.grad is None:
                    continue
                p.data.add_(p.grad, alpha=-lr)
        """
    )["f"]
    assert all("p.grad is None" not in c.path or "not (" in c.path for c in m.candidates)
    assert m.paths == ["not (p.grad is None)"]


def test_two_thousand_term_expression_does_not_hang():
    body = " + ".join(f"w{i} * x{i}" for i in range(2000))
    src = f"def f(x):\n    y = {body}\n    z = y * 2\n"
    started = time.perf_counter()
    m = models(src)["f"]
    assert time.perf_counter() - started < 30
    assert [c.target for c in m.candidates] in (["y", "z"], ["z"], [])


def test_deeply_nested_code_does_not_crash():
    expr = "(" * 150 + "x" + " + 1)" * 150
    src = f"def f(x):\n    y = {expr}\n    return y\n"
    m = models(src)["f"]
    assert m.qualname == "f"
    nested_ifs = "def g(a, x):\n" + "".join("    " * (i + 1) + f"if a > {i}:\n" for i in range(60))
    nested_ifs += "    " * 61 + "x = x + 1\n" + "    return x\n"
    g = models(nested_ifs)["g"]
    assert len(g.paths) <= 16


def test_many_branches_are_bounded():
    src = "def f(x, " + ", ".join(f"c{i}" for i in range(30)) + "):\n"
    for i in range(30):
        src += f"    if c{i}:\n        x = x + {i}\n"
    src += "    return x\n"
    started = time.perf_counter()
    m = models(src)["f"]
    assert len(m.paths) <= 16
    assert any("path limit" in n for n in m.notes)
    assert time.perf_counter() - started < 20


def test_syntax_error_source_gives_no_functions():
    assert translate_source("def f(:\n  pass") == []
