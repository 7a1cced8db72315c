"""Argument order of model calls in formula checks: the paper writes ``ε_θ(x_t, t)`` whatever order the code's
network takes. A callee defined in the repo binds the call's arguments by its signature's parameter names; an
unknown callee's arguments line up only when each one's name gives it a distinct role (a time, a state); two
states are never swapped silently, and the wrong input in either order stays a mismatch."""

from __future__ import annotations

import pytest

from minirepo import make_repo
from verifier.analysis.code_sympy import sym, translate_source
from verifier.checks.formula import Signature, _argument_readings, _role_reading, argument_role
from verifier.engine import run_repo

x_t, x_0, t, cond = (sym(n) for n in ("x_t", "x_0", "t", "cond"))


def verdict(tmp_path, name: str, files: dict, claim: dict):
    return {v.id: v for v in run_repo(make_repo(tmp_path / name, files, [claim]), use_cache=False).verdicts}[claim["id"]]


def outcome(v) -> tuple:
    return v.status.value, v.score, v.evidence[0].file if v.evidence else None, v.evidence[0].line if v.evidence else None


# ----------------------------------------------------------------------------------------- roles and readings
@pytest.mark.parametrize("name, role", [
    ("t", "time"), ("t0", "time"), ("timesteps", "time"), ("sigma", "time"), ("t_batch", "time"),
    ("x", "state"), ("x_t", "state"), ("xt", "state"), ("z_0", "state"), ("y", "state"), ("latents", "state"),
    ("cond", ""), ("a_next", ""), ("T", ""), ("X", ""), ("", ""),
])
def test_argument_roles_come_from_the_first_word_of_the_name(name, role):
    assert argument_role(name) == role


def call_of(src: str, func: str = "f"):
    m = {m.qualname: m for m in translate_source(src)}[func]
    call = next(iter(m.calls))
    return call, m.calls[call]


def test_calls_record_keyword_names_written_names_and_callee():
    call, shape = call_of("def f(model, x_t, t):\n    return model(x_t.detach(), timesteps=t.float())\n")
    assert (shape.keyword_names, shape.written, shape.callee, shape.exact) == (("timesteps",), ("x_t", "t"), (), True)
    src = "class A:\n    def f(self, x, t):\n        return self.net(x, *t)\n"
    call, shape = call_of(src, "A.f")
    assert (shape.exact, shape.callee, shape.written) == (False, (), ())  # a starred list: no position is known
    call, shape = call_of("class A:\n    def f(self, x, t):\n        return self.net(t, x)\n", "A.f")
    assert (shape.callee, shape.written) == (("self", "A", "net"), ("t", "x"))


def test_role_readings_settle_distinct_roles_only():
    call, shape = call_of("def f(model, x_t, t):\n    return model(t, x_t)\n")
    assert _role_reading((x_t, t), call.args, shape, None) == (x_t, t)
    assert _argument_readings((x_t, t), call.args, shape) == ([(x_t, t)], True)
    # the callee's signature decides over the names: `def forward(self, x, t)` takes t as its x
    by_signature = Signature(("x", "t"), (), False, False)
    assert _argument_readings((x_t, t), call.args, shape, by_signature) == ([(t, x_t)], True)
    # two states: no role tells them apart, the positional order stands
    a, b = sym("x_a"), sym("x_b")
    call, shape = call_of("def f(g, x_a, x_b):\n    return g(x_b, x_a)\n")
    assert _role_reading((a, b), call.args, shape, None) is None
    assert _argument_readings((a, b), call.args, shape) == ([(b, a)], True)


def test_an_unknown_callee_never_drops_an_argument_with_a_paper_role():
    call, shape = call_of("def f(model, x_0, x_t, t):\n    return model(x_0, x_t, t)\n")
    readings, decisive = _argument_readings((x_t, t), call.args, shape)
    assert readings == []  # which state is the network's input is the signature's to say
    call, shape = call_of("def f(model, x_t, t, cond):\n    return model(x_t, t, cond)\n")
    assert _argument_readings((x_t, t), call.args, shape) == ([(x_t, t)], False)  # `cond` might be either


# ----------------------------------------------------------------------------------------- the check
LOSS = """
    import torch
    import torch.nn.functional as F

    def diffusion_loss(model, x_0, t, alpha_bar, cond):
        noise = torch.randn_like(x_0)
        x_t = alpha_bar.sqrt() * x_0 + (1 - alpha_bar).sqrt() * noise
        pred = {call}
        return F.mse_loss(pred, noise)
    """
LOSS_CLAIM = {
    "id": "t-D2-001", "dimension": "methodological", "claim": "The noise-prediction loss of the denoiser.",
    "check": {"kind": "formula", "expect": "(eps - eps_theta(x_t, t))**2", "scope": "diffusion_loss",
              "symbols": {"eps": "noise", "x_t": "x_t", "t": "t"}},
}


@pytest.mark.parametrize("call, expected", [
    ("model(t, x_t)", ("pass", 1.0, "d.py", 9)),  # neural-ODE order, each argument named for its role
    ("model(t, x_t, cond)", ("pass", 1.0, "d.py", 9)),
    ("model(noisy=x_t, timesteps=t)", ("pass", 1.0, "d.py", 9)),
    ("model(t, x_0)", ("mismatch", 0.0, "d.py", 9)),  # the clean sample in either order is the wrong input
    ("model(x_0, t)", ("mismatch", 0.0, "d.py", 9)),
    ("model(x_t, timesteps=x_0)", ("mismatch", 0.0, "d.py", 9)),  # a keyword binds by its name
    ("model(x_0, x_t, t)", ("unverified", None, "d.py", 9)),  # two states and no signature: which is the input?
    ("model(torch.cat([x_t, t], -1))", ("unverified", None, "d.py", 9)),  # the arguments are hidden in a cat
])
def test_unknown_callee_lines_up_arguments_by_role(tmp_path, call, expected):
    v = verdict(tmp_path, "r", {"d.py": LOSS.format(call=call)}, LOSS_CLAIM)
    assert outcome(v) == expected, v.message


NETWORK = """
    import torch
    from torch import nn

    class Denoiser(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.proj = nn.Linear(dim, dim)

        def forward(self, {signature}):
            return self.proj(x)
    """
TRAINER = """
    import torch
    from network import Denoiser

    class Trainer:
        def __init__(self, dim):
            self.net = Denoiser(dim)

        def loss(self, x_0, t, alpha_bar):
            noise = torch.randn_like(x_0)
            x_t = alpha_bar.sqrt() * x_0 + (1 - alpha_bar).sqrt() * noise
            pred = self.net({call})
            return ((noise - pred) ** 2).mean()
    """
TRAINER_CLAIM = {**LOSS_CLAIM, "check": {**LOSS_CLAIM["check"], "scope": "Trainer.loss"}}


@pytest.mark.parametrize("signature, call, expected", [
    ("t, x", "t, x_t", ("pass", 1.0, "train.py", 13)),
    ("x, t", "x_t, t", ("pass", 1.0, "train.py", 13)),
    ("x, timesteps, cond=None", "x_t, t, x_0", ("pass", 1.0, "train.py", 13)),  # the extra one binds to cond
    ("t, x", "x_t, t", ("mismatch", 0.0, "train.py", 13)),  # against the signature: the network gets t as x
    ("x, t", "t, x_t", ("mismatch", 0.0, "train.py", 13)),
    ("x, t", "x=t, t=x_t", ("mismatch", 0.0, "train.py", 13)),
    ("t, x", "t, x_0", ("mismatch", 0.0, "train.py", 13)),
])
def test_a_repo_callee_binds_arguments_by_its_signature(tmp_path, signature, call, expected):
    files = {"network.py": NETWORK.format(signature=signature), "train.py": TRAINER.format(call=call)}
    v = verdict(tmp_path, "r", files, TRAINER_CLAIM)
    assert outcome(v) == expected, v.message


def test_an_injected_network_has_no_signature_and_lines_up_by_names(tmp_path):
    injected = TRAINER.replace("def __init__(self, dim):\n            self.net = Denoiser(dim)",
                               "def __init__(self, net):\n            self.net = net")
    files = {"network.py": NETWORK.format(signature="x, t"), "train.py": injected.format(call="t, x_t")}
    v = verdict(tmp_path, "a", files, TRAINER_CLAIM)
    assert outcome(v) == ("pass", 1.0, "train.py", 13)  # `self.net = net`: not Denoiser's forward for sure
    files["train.py"] = injected.format(call="t, x_0")
    v = verdict(tmp_path, "b", files, TRAINER_CLAIM)
    assert outcome(v) == ("mismatch", 0.0, "train.py", 13)


PAIR = """
    def critic_score(f, a, b):
        return ((a - {call}) ** 2).mean()
    """
PAIR_CLAIM = {
    "id": "t-D2-002", "dimension": "methodological", "claim": "The score of a pair.",
    "check": {"kind": "formula", "expect": "(x_a - D(x_a, x_b))**2", "scope": "critic_score",
              "symbols": {"x_a": "a", "x_b": "b", "D": "f"}},
}


def test_two_states_swapped_are_a_mismatch(tmp_path):
    v = verdict(tmp_path, "a", {"p.py": PAIR.format(call="f(a, b)")}, PAIR_CLAIM)
    assert outcome(v) == ("pass", 1.0, "p.py", 3)
    v = verdict(tmp_path, "b", {"p.py": PAIR.format(call="f(b, a)")}, PAIR_CLAIM)
    assert outcome(v) == ("mismatch", 0.0, "p.py", 3)
    assert "differs from the formula" in v.message
