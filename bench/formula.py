"""Formula-check benchmark on the formula fixtures: verdicts against expected, and time per check.

Run: python bench/formula.py
For every formula SAU of every fixture repo (faithful and drifted variants): is the verdict the expected
one (equivalent pairs judged equivalent, drifted pairs caught, no wrong verdict), and how long did the check
take -- "warm" as in a real run (one Context per repo, so the repo is translated once and shared) and
"cold" (a fresh Context per check, translation included). Then matrix pairs written here (LoRA, attention,
linear projections; faithful and drifted), then gradient pairs (torch.autograd.grad, backward + ``x.grad``
and jax.grad against ``∇_x``, faithful, drifted and hand-derived), then integral pairs (the check the compiler writes for
``J = ∫_Ω |u - u_d|^2 dx + alpha ∫_Ω |f|^2 dx`` against means, Riemann sums and quadratures, faithful and
drifted), then update rules (``θ ← θ − η ∇_θ L`` and an EMA against hand-written steps in their torch and JAX
spellings, drifted, and a library optimizer), concatenations / slices (``[c, P, X] + E``, ``V_h[:r]``:
order, bounds, layouts) and applications (``ε_θ(x_t, t)``, ``Q(s_next, a_next)``, ``D(x̂)``, ``f(x + h)`` against
model calls: other arguments, keyword and extra arguments, an unreadable one, argument order by the arguments'
roles and by the callee's signature, two states swapped); all counted in the totals and
shown on their own too.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from textwrap import dedent

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from harness import expected_for, fixture_cases, materialize

from verifier.checks import Context, Options, load_all
from verifier.engine import load_for
from verifier.index.build import build_index


def formula_checks(spec):
    for sau in sorted(spec.saus, key=lambda s: s.id):
        for check in sau.all_checks():
            if check.kind == "formula":
                yield sau, check


LORA = """
import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        self.lora_A = nn.Parameter(torch.zeros(r, base.in_features))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        self.scaling = alpha / r

    def merged_weight(self, W0):
        return W0 + self.scaling * (self.lora_B @ self.lora_A)

    def forward(self, x, W0):
        return x @ W0.T + (x @ self.lora_A.T @ self.lora_B.T) * self.scaling
"""
ATTENTION = """
import math
import torch


def attention(q, k, v, dim):
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(dim)
    return torch.softmax(scores, dim=-1) @ v
"""
PROJECTION = """
import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.fc1 = nn.Linear(d, h)

    def forward(self, x):
        return torch.relu(self.fc1(x))
"""
LORA_SYMBOLS = {"s": "self.scaling", "B": "self.lora_B", "A": "self.lora_A"}
LORA_FORWARD = {"latex": r"W_0 x + s B A x", "symbols": {**LORA_SYMBOLS, "W_0": "W0", "x": "x"}, "in": "LoRALinear.forward"}
ATTN_CHECK = {"latex": r"\mathrm{softmax}\left(\frac{Q K^\top}{\sqrt{d}}\right) V",
              "symbols": {"Q": "q", "K": "k", "V": "v", "d": "dim"}}
LINEAR_CHECK = {"latex": r"\max(W x + b, 0)", "symbols": {"W": "self.fc1.weight", "b": "fc1_bias", "x": "x"}, "matrices": ["W"]}
MATRIX_PAIRS = [
    ("lora-merged", LORA, {"latex": r"W_0 + s B A", "symbols": LORA_SYMBOLS}, "pass"),
    ("lora-merged/swapped", LORA.replace("self.lora_B @ self.lora_A", "self.lora_A @ self.lora_B"),
     {"latex": r"W_0 + s B A", "symbols": LORA_SYMBOLS}, "mismatch"),
    ("lora-merged/transposed", LORA.replace("self.lora_B @ self.lora_A", "self.lora_B @ self.lora_A.T"),
     {"latex": r"W_0 + s B A", "symbols": LORA_SYMBOLS}, "mismatch"),
    ("lora-forward", LORA, LORA_FORWARD, "pass"),
    ("lora-forward/unscaled", LORA.replace(") * self.scaling", ")"), LORA_FORWARD, "mismatch"),
    ("attention", ATTENTION, ATTN_CHECK, "pass"),
    ("attention/no-transpose", ATTENTION.replace("k.transpose(-2, -1)", "k"), ATTN_CHECK, "mismatch"),
    ("attention/value-first", ATTENTION.replace("dim=-1) @ v", "dim=-1).T @ v"), ATTN_CHECK, "mismatch"),
    ("linear-layer", PROJECTION, LINEAR_CHECK, "pass"),
    ("linear-layer/no-bias", PROJECTION.replace("nn.Linear(d, h)", "nn.Linear(d, h, bias=False)"), LINEAR_CHECK,
     "mismatch"),
]


INTEGRAL = """
import numpy as np
import torch
from scipy.integrate import simpson


def tracking_cost(u, u_d, f, alpha, dx, dt):
    return {cost}
"""
INTEGRAL_CHECK = {"expect": "mean(abs(u - u_d)**2) + alpha * mean(abs(f)**2)", "integral": ["dx"]}
INTEGRAL_PAIRS = [
    ("mean", "((u - u_d) ** 2).mean() + alpha * (f ** 2).mean()", "pass"),
    ("sum-dx", "((u - u_d) ** 2).sum() * dx + alpha * (f ** 2).sum() * dx", "pass"),
    ("sum-dx-dt", "(((u - u_d) ** 2).sum() + alpha * (f ** 2).sum()) * dx * dt", "pass"),
    ("torch-trapz", "torch.trapz((u - u_d) ** 2, dx=dx) + alpha * torch.trapz(f ** 2, dx=dx)", "pass"),
    ("numpy-trapezoid", "np.trapezoid((u - u_d) ** 2, dx=dx) + alpha * np.trapezoid(f ** 2, dx=dx)", "pass"),
    ("scipy-simpson", "simpson((u - u_d) ** 2, dx=dx) + alpha * simpson(f ** 2, dx=dx)", "pass"),
    ("sum-dx/dropped-term", "((u - u_d) ** 2).sum() * dx", "mismatch"),
    ("sum-dx/no-square", "(u - u_d).abs().sum() * dx + alpha * (f ** 2).sum() * dx", "mismatch"),
    ("sum-dx/coefficient", "((u - u_d) ** 2).sum() * dx + 2 * alpha * (f ** 2).sum() * dx", "mismatch"),
    ("sum-dx/integrand", "((u + u_d) ** 2).sum() * dx + alpha * (f ** 2).sum() * dx", "mismatch"),
    ("sum-dx/measure-on-one-term", "((u - u_d) ** 2).sum() * dx + alpha * (f ** 2).sum()", "mismatch"),
    ("trapz/no-coefficient", "torch.trapz((u - u_d) ** 2, dx=dx) + torch.trapz(f ** 2, dx=dx)", "mismatch"),
]


GRADIENT = """
import torch
import jax
import jax.numpy as jnp


def attack_step(model, loss_fn, x, y, alpha):
    x = x.detach().requires_grad_(True)
    loss = loss_fn(model(x), y)
    {grad}
    return x + alpha * {step}


def descend(x, eta):
    return x - eta * {descent}
"""
SIGN_CHECK = {"expect": "x + alpha * sign(grad(L, x))", "symbols": {"L": "loss", "x": "x"}, "scope": "attack_step"}
STEP_CHECK = {"expect": "x + alpha * grad(L, x)", "symbols": {"L": "loss", "x": "x"}, "scope": "attack_step"}
ENERGY_CHECK = {"latex": r"x - \eta \nabla_x E(x)", "scope": "descend"}
EXPLICIT_CHECK = {"latex": r"x - \eta \frac{\partial}{\partial x} \frac{x^2}{2}", "scope": "descend"}
# (name, {grad, step, descent}, check, expected): torch autograd, backward + .grad and jax.grad against ∇
GRADIENT_PAIRS = [
    ("autograd-sign", {"grad": "g = torch.autograd.grad(loss, x)[0]", "step": "g.sign()"}, SIGN_CHECK, "pass"),
    ("backward-sign", {"grad": "loss.backward()\n    g = x.grad", "step": "torch.sign(g)"}, SIGN_CHECK, "pass"),
    ("autograd-sign/no-sign", {"grad": "g = torch.autograd.grad(loss, x)[0]", "step": "g"}, SIGN_CHECK, "mismatch"),
    ("autograd-sign/wrt-label", {"grad": "g = torch.autograd.grad(loss, y)[0]", "step": "g.sign()"}, SIGN_CHECK, "mismatch"),
    ("autograd/scaled-loss", {"grad": "g = torch.autograd.grad(2 * loss, x)[0]", "step": "g"}, STEP_CHECK, "mismatch"),
    ("autograd/hand-derived", {"grad": "g = 2 * (model(x) - y)", "step": "g"}, STEP_CHECK, "unverified"),
    ("jax-energy", {"descent": "jax.grad(lambda z: jnp.sum(energy(z)))(x)"}, ENERGY_CHECK, "pass"),
    ("jax-energy/wrt-step", {"descent": "jax.grad(lambda e: jnp.sum(energy(x) * e))(eta)"}, ENERGY_CHECK, "mismatch"),
    ("jax-explicit", {"descent": "jax.grad(lambda z: jnp.sum(z ** 2 / 2))(x)"}, EXPLICIT_CHECK, "pass"),
    ("hand-explicit", {"descent": "x"}, EXPLICIT_CHECK, "pass"),
    ("hand-explicit/doubled", {"descent": "2 * x"}, EXPLICIT_CHECK, "mismatch"),
]


UPDATE = """
import jax
import torch


def step(params, grads, lr, beta, m, g):
    {body}
"""
SGD_CHECK = {"expect": "theta <- theta - eta * grad(L, theta)", "scope": "step"}
EMA_CHECK = {"expect": "m <- beta * m + (1 - beta) * g", "scope": "step"}
# (name, body of `step`, check, expected): hand-written update rules against `X <- f(X)`; a library optimizer
# in place of the rule is unverified, never a mismatch
UPDATE_PAIRS = [
    ("sgd-rebind", "theta = params\n    theta = theta - lr * grads\n    return theta", SGD_CHECK, "pass"),
    ("sgd-augmented", "for p in params:\n        p -= lr * p.grad", SGD_CHECK, "pass"),
    ("sgd-add_", "for p in params:\n        p.data.add_(p.grad, alpha=-lr)", SGD_CHECK, "pass"),
    ("sgd-sub_", "for p, g in zip(params, grads):\n        p.sub_(lr * g)", SGD_CHECK, "pass"),
    ("sgd-data", "for p in params:\n        p.data = p.data - lr * p.grad", SGD_CHECK, "pass"),
    ("sgd-copy_", "for p in params:\n        p.copy_(p - lr * p.grad)", SGD_CHECK, "pass"),
    ("sgd-no-grad", "with torch.no_grad():\n        for w in params:\n            w -= lr * w.grad", SGD_CHECK, "pass"),
    ("sgd-tree-map", "params = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)\n    return params",
     SGD_CHECK, "pass"),
    ("sgd-add_/ascent", "for p in params:\n        p.data.add_(p.grad, alpha=lr)", SGD_CHECK, "mismatch"),
    ("sgd-tree-map/no-lr", "params = jax.tree_util.tree_map(lambda p, g: p - g, params, grads)\n    return params",
     SGD_CHECK, "mismatch"),
    ("sgd-library", "opt = torch.optim.SGD(params, lr=lr)\n    opt.step()", SGD_CHECK, "unverified"),
    ("ema-chain", "m.mul_(beta).add_(g, alpha=1 - beta)", EMA_CHECK, "pass"),
    ("ema-chain/no-alpha", "m.mul_(beta).add_(g)", EMA_CHECK, "mismatch"),
]
STRUCTURES = """
import torch


def embed(cls, prompts, patches, pos):
    return {tokens} + pos


def factors(delta_w, rank):
    U, S, Vh = torch.linalg.svd(delta_w)
    A = {a}
    return A
"""
CAT_CHECK = {"expect": "[c, P, X] + E", "symbols": {"c": "cls", "P": "prompts", "X": "patches", "E": "pos"}, "scope": "embed"}
SLICE_CHECK = {"expect": "V_h[:r]", "symbols": {"V_h": "Vh", "r": "rank"}, "scope": "factors"}
SLICE_T_CHECK = {"expect": "transpose(V[:, :r])", "symbols": {"V": "Vh", "r": "rank"}, "scope": "factors"}
# (name, {tokens, a}, check, expected): concatenations (ordered, axis not compared) and slices (bounds mapped)
STRUCTURE_PAIRS = [
    ("cat", {"tokens": "torch.cat([cls, prompts, patches], dim=1)"}, CAT_CHECK, "pass"),
    ("cat-tuple-positional", {"tokens": "torch.cat((cls, prompts, patches), 1)"}, CAT_CHECK, "pass"),
    ("cat/swapped", {"tokens": "torch.cat([cls, patches, prompts], dim=1)"}, CAT_CHECK, "mismatch"),
    ("cat/dropped-prompts", {"tokens": "torch.cat([cls, patches], dim=1)"}, CAT_CHECK, "unverified"),
    ("cat/stack", {"tokens": "torch.stack([cls, prompts, patches], dim=1)"}, CAT_CHECK, "unverified"),
    ("slice", {"a": "Vh[:rank]"}, SLICE_CHECK, "pass"),
    ("slice-explicit-axes", {"a": "Vh[0:rank, :]"}, SLICE_CHECK, "pass"),
    ("slice/double-bound", {"a": "Vh[: 2 * rank]"}, SLICE_CHECK, "mismatch"),
    ("slice/other-layout", {"a": "Vh[:, :rank]"}, SLICE_CHECK, "unverified"),
    ("slice/transposed-layout", {"a": "Vh[:rank]"}, SLICE_T_CHECK, "unverified"),
]

APPLICATION = """
import torch
import torch.nn.functional as F


def diffusion_loss(model, x_0, t, alpha_bar, cond):
    noise = torch.randn_like(x_0)
    x_t = alpha_bar.sqrt() * x_0 + (1 - alpha_bar).sqrt() * noise
    pred = {pred}
    return F.mse_loss(pred, noise)


def td_target(q_net, target_net, obs, act, next_obs, next_act, reward, gamma):
    q_next = {q_next}
    return reward + gamma * q_next


def penalty(critic, real, fake, alpha):
    x_hat = alpha * real + (1 - alpha) * fake
    grads = torch.autograd.grad({out}, x_hat)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


def central_difference(f, x, h):
    return ({plus} - f(x - h)) / (2 * h)


def flow_matching_loss(func, x_0, x_1, t):
    x_t = (1 - t) * x_0 + t * x_1
    v = {velocity}
    return F.mse_loss(v, x_1 - x_0)


class Denoiser(torch.nn.Module):
    def forward(self, {signature}):
        return x


class DiffusionTrainer:
    def __init__(self):
        self.net = Denoiser()

    def loss(self, x_0, t, alpha_bar):
        noise = torch.randn_like(x_0)
        x_t = alpha_bar.sqrt() * x_0 + (1 - alpha_bar).sqrt() * noise
        pred = {net_call}
        return F.mse_loss(pred, noise)
"""
DIFFUSION_CHECK = {"expect": "(eps - eps_theta(x_t, t))**2", "symbols": {"eps": "noise", "x_t": "x_t", "t": "t"},
                   "scope": "diffusion_loss"}
TD_SYMBOLS = {"r": "reward", "gamma": "gamma", "s_next": "next_obs", "a_next": "next_act"}
TD_CHECK = {"expect": "r + gamma * Q(s_next, a_next)", "symbols": {**TD_SYMBOLS, "Q": "target_net"}, "scope": "td_target"}
TD_UNNAMED = {"expect": "r + gamma * Q(s_next, a_next)", "symbols": TD_SYMBOLS, "scope": "td_target"}
GP_CHECK = {"latex": r"\left(\|\nabla_{\hat{x}} D(\hat{x})\|_2 - 1\right)^2", "symbols": {"x_hat": "x_hat"}, "scope": "penalty"}
DIFFERENCE_CHECK = {"expect": "(f(x + h) - f(x - h)) / (2*h)", "symbols": {"x": "x", "h": "h"}, "scope": "central_difference"}
FLOW_CHECK = {"expect": "(v_theta(x_t, t) - (x_1 - x_0))**2", "symbols": {"x_t": "x_t", "t": "t", "x_0": "x_0", "x_1": "x_1"},
              "scope": "flow_matching_loss"}
SIGNATURE_CHECK = {**DIFFUSION_CHECK, "scope": "DiffusionTrainer.loss"}
# (name, {pred, q_next, out, plus}, check, expected): a model applied to arguments, `D(x̂)` vs `D(x_real)`
APPLICATION_PAIRS = [
    ("diffusion", {"pred": "model(x_t, t)"}, DIFFUSION_CHECK, "pass"),
    ("diffusion-detach", {"pred": "model(x_t.detach(), t)"}, DIFFUSION_CHECK, "pass"),
    ("diffusion-keyword", {"pred": "model(x_t, timesteps=t)"}, DIFFUSION_CHECK, "pass"),
    ("diffusion-keywords-only", {"pred": "model(t=t, x=x_t)"}, DIFFUSION_CHECK, "pass"),
    ("diffusion-extra-argument", {"pred": "model(x_t, t, cond)"}, DIFFUSION_CHECK, "pass"),
    ("diffusion/on-x0", {"pred": "model(x_0, t)"}, DIFFUSION_CHECK, "mismatch"),
    ("diffusion/on-x0-extra-argument", {"pred": "model(x_0, t, cond)"}, DIFFUSION_CHECK, "unverified"),
    ("diffusion/unreadable-argument", {"pred": "model(x_t, t, lambda z: z)"}, DIFFUSION_CHECK, "unverified"),
    ("td-target", {}, TD_CHECK, "pass"),
    ("td-target/unnamed-network", {}, TD_UNNAMED, "unverified"),
    ("td-target/current-state", {"q_next": "target_net(obs, act)"}, TD_CHECK, "mismatch"),
    ("td-target/current-action", {"q_next": "target_net(next_obs, act)"}, TD_CHECK, "mismatch"),
    ("gp-inline", {}, GP_CHECK, "pass"),
    ("gp-inline/on-real", {"out": "critic(real)"}, GP_CHECK, "mismatch"),
    ("gp-inline/on-fake", {"out": "critic(fake)"}, GP_CHECK, "mismatch"),
    ("central-difference", {}, DIFFERENCE_CHECK, "pass"),
    ("central-difference/forward-point", {"plus": "f(x)"}, DIFFERENCE_CHECK, "mismatch"),
    # argument order: an unknown callee's arguments line up by their names' roles (time vs state) ...
    ("diffusion-time-first", {"pred": "model(t, x_t)"}, DIFFUSION_CHECK, "pass"),
    ("diffusion-time-first-extra-argument", {"pred": "model(t, x_t, cond)"}, DIFFUSION_CHECK, "pass"),
    ("diffusion/time-first-on-x0", {"pred": "model(t, x_0)"}, DIFFUSION_CHECK, "mismatch"),
    ("diffusion/keyword-time-on-x0", {"pred": "model(x_t, timesteps=x_0)"}, DIFFUSION_CHECK, "mismatch"),
    ("diffusion/two-states-extra-argument", {"pred": "model(x_0, x_t, t)"}, DIFFUSION_CHECK, "unverified"),
    ("diffusion/concatenated-input", {"pred": "model(torch.cat([x_t, t], -1))"}, DIFFUSION_CHECK, "unverified"),
    ("flow-ode-order", {"velocity": "func(t, x_t)"}, FLOW_CHECK, "pass"),
    ("flow-state-first", {"velocity": "func(x_t, t)"}, FLOW_CHECK, "pass"),
    ("flow-ode-order/on-x0", {"velocity": "func(t, x_0)"}, FLOW_CHECK, "mismatch"),
    ("td-target/swapped-arguments", {"q_next": "target_net(next_act, next_obs)"}, TD_CHECK, "mismatch"),
    # ... and a callee defined in the repo binds them by its signature's parameter names
    ("signature-time-first", {"signature": "t, x", "net_call": "self.net(t, x_t)"}, SIGNATURE_CHECK, "pass"),
    ("signature-extra-parameter", {"signature": "x, t, cond=None", "net_call": "self.net(x_t, t, x_0)"}, SIGNATURE_CHECK, "pass"),
    ("signature-keywords", {"signature": "x, timesteps", "net_call": "self.net(timesteps=t, x=x_t)"}, SIGNATURE_CHECK, "pass"),
    ("signature/called-state-first", {"signature": "t, x", "net_call": "self.net(x_t, t)"}, SIGNATURE_CHECK, "mismatch"),
    ("signature/called-time-first", {"signature": "x, t", "net_call": "self.net(t, x_t)"}, SIGNATURE_CHECK, "mismatch"),
    ("signature/keywords-swapped", {"signature": "x, t", "net_call": "self.net(x=t, t=x_t)"}, SIGNATURE_CHECK, "mismatch"),
    ("signature/on-x0", {"signature": "t, x", "net_call": "self.net(t, x_0)"}, SIGNATURE_CHECK, "mismatch"),
]


def application_source(parts: dict) -> str:
    fill = {"pred": "model(x_t, t)", "q_next": "target_net(next_obs, next_act)", "out": "critic(x_hat)", "plus": "f(x + h)",
            "velocity": "func(x_t, t)", "signature": "x, t", "net_call": "self.net(x_t, t)"}
    return APPLICATION.format(**{**fill, **parts})


def update_source(body: str) -> str:
    return UPDATE.format(body=body)


def structure_source(parts: dict) -> str:
    return STRUCTURES.format(**{"tokens": "cls", "a": "Vh", **parts})


def gradient_source(parts: dict) -> str:
    fill = {"grad": "pass", "step": "0", "descent": "0", **parts}
    return GRADIENT.format(**fill)


def matrix_repo(root: Path, source: str, check: dict, claim: str = "a matrix formula") -> Path:
    root.mkdir(parents=True)
    (root / "model.py").write_text(dedent(source))
    sau = {"id": "mx-D2-001", "dimension": "methodological", "claim": claim, "check": {"kind": "formula", **check}}
    (root / "sau.yaml").write_text(yaml.safe_dump({"version": 1, "paper": {"id": "mx"}, "saus": [sau]}, sort_keys=False))
    return root


def main() -> int:
    checker = load_all()["formula"]
    rows = []
    cases = [c for c in fixture_cases() if c[0].startswith("formula-")]
    with tempfile.TemporaryDirectory() as tmp:
        for i, (fixture, variant) in enumerate(cases):
            repo = materialize(fixture, variant, Path(tmp) / str(i))
            loaded = load_for(repo)
            expected = expected_for(fixture, variant)
            index = build_index(repo, include=list(loaded.spec.repo.include), exclude=list(loaded.spec.repo.exclude), use_cache=False)
            shared = Context(index=index, spec=loaded.spec, options=Options())
            for sau, check in formula_checks(loaded.spec):
                shared.sau = sau
                t0 = time.perf_counter()
                result = checker(check, shared)
                warm = time.perf_counter() - t0
                cold_ctx = Context(index=index, spec=loaded.spec, options=Options(), sau=sau)
                t0 = time.perf_counter()
                checker(check, cold_ctx)
                cold = time.perf_counter() - t0
                want = expected.get(sau.id, {}).get("status")
                rows.append((fixture, variant or "faithful", sau.id, want, result.status.value,
                             result.details.get("decision", ""), warm, cold))
        cases = [("matrix", name, matrix_repo(Path(tmp) / f"matrix-{i}", source, check), want)
                 for i, (name, source, check, want) in enumerate(MATRIX_PAIRS)]
        cases += [("integral", name, matrix_repo(Path(tmp) / f"integral-{i}", INTEGRAL.format(cost=cost), INTEGRAL_CHECK,
                                                 "a tracking objective"), want)
                  for i, (name, cost, want) in enumerate(INTEGRAL_PAIRS)]
        cases += [("gradient", name, matrix_repo(Path(tmp) / f"gradient-{i}", gradient_source(parts), check,
                                                 "a gradient step"), want)
                  for i, (name, parts, check, want) in enumerate(GRADIENT_PAIRS)]
        cases += [("update", name, matrix_repo(Path(tmp) / f"update-{i}", update_source(body), check, "an update rule"), want)
                  for i, (name, body, check, want) in enumerate(UPDATE_PAIRS)]
        cases += [("structure", name, matrix_repo(Path(tmp) / f"structure-{i}", structure_source(parts), check,
                                                  "a concatenation or a slice"), want)
                  for i, (name, parts, check, want) in enumerate(STRUCTURE_PAIRS)]
        cases += [("application", name, matrix_repo(Path(tmp) / f"application-{i}", application_source(parts), check,
                                                    "a model applied to arguments"), want)
                  for i, (name, parts, check, want) in enumerate(APPLICATION_PAIRS)]
        for family, name, repo, want in cases:  # one small repo each, timed cold
            loaded = load_for(repo)
            index = build_index(repo, use_cache=False)
            for sau, check_ in formula_checks(loaded.spec):
                t0 = time.perf_counter()
                result = checker(check_, Context(index=index, spec=loaded.spec, options=Options(), sau=sau))
                cold = time.perf_counter() - t0
                rows.append((family, name, sau.id, want, result.status.value, result.details.get("decision", ""), cold, cold))
    width = max(len(f"{r[0]}/{r[1]}") for r in rows)
    print(f"{'case':<{width}}  {'sau':<12} {'expected':<9} {'got':<9} {'decision':<23} {'warm ms':>8} {'cold ms':>8}")
    for fixture, variant, sid, want, got, decision, warm, cold in rows:
        flag = "" if want == got else "  <-- WRONG"
        print(f"{fixture + '/' + variant:<{width}}  {sid:<12} {want:<9} {got:<9} {decision:<23} {warm * 1000:8.1f} {cold * 1000:8.1f}{flag}")
    equivalent = [r for r in rows if r[3] == "pass"]
    drifted = [r for r in rows if r[3] in ("mismatch", "stub", "missing")]
    eq_ok = sum(1 for r in equivalent if r[4] == "pass")
    drift_ok = sum(1 for r in drifted if r[4] == r[3])
    wrong = sum(1 for r in rows if (r[3] == "pass" and r[4] in ("mismatch", "stub", "missing"))
                or (r[3] in ("mismatch", "stub", "missing") and r[4] == "pass"))
    warm_times = [r[6] for r in rows]
    cold_times = [r[7] for r in rows]
    print()
    print(f"equivalent pairs judged equivalent: {eq_ok}/{len(equivalent)}")
    print(f"drifted pairs caught:               {drift_ok}/{len(drifted)}")
    print(f"wrong verdicts (pass<->fail):       {wrong}")
    print(f"decided correctly overall:          {sum(1 for r in rows if r[3] == r[4])}/{len(rows)}")
    matrix = [r for r in rows if r[0] == "matrix"]
    print(f"  of which matrix pairs:            {sum(1 for r in matrix if r[3] == r[4])}/{len(matrix)}")
    integral = [r for r in rows if r[0] == "integral"]
    print(f"  of which integral pairs:          {sum(1 for r in integral if r[3] == r[4])}/{len(integral)}")
    gradient = [r for r in rows if r[0] == "gradient"]
    print(f"  of which gradient pairs:          {sum(1 for r in gradient if r[3] == r[4])}/{len(gradient)}")
    update = [r for r in rows if r[0] == "update"]
    print(f"  of which update-rule pairs:       {sum(1 for r in update if r[3] == r[4])}/{len(update)}")
    structure = [r for r in rows if r[0] == "structure"]
    print(f"  of which concat / slice pairs:    {sum(1 for r in structure if r[3] == r[4])}/{len(structure)}")
    application = [r for r in rows if r[0] == "application"]
    print(f"  of which application pairs:       {sum(1 for r in application if r[3] == r[4])}/{len(application)}")
    print(f"time per check, warm: median {statistics.median(warm_times) * 1000:.1f} ms, worst {max(warm_times) * 1000:.1f} ms")
    print(f"time per check, cold: median {statistics.median(cold_times) * 1000:.1f} ms, worst {max(cold_times) * 1000:.1f} ms")
    return 0 if wrong == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
