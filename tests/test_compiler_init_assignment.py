"""``R_init = I`` / ``B_{init} = 0`` in method claims: an ``init`` check of the tensor, not a value check of a
config key ``r_init`` no repository has; end to end on the small LoRA-SB repo of test_compiler_methods."""

from __future__ import annotations

import pytest

from test_compiler_methods import LORA_SB, _verdict, _where
from verifier.compiler import compile_claim
from verifier.spec.model import SAU


def checks(claim: str) -> list[dict]:
    compiled = compile_claim(SAU(id="p-D2-001", dimension="D2", claim=claim))
    return [{"kind": c.kind, **c.model_dump(exclude_none=True, exclude_defaults=True)} for c in compiled.checks]


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("Adapter start: R_init = 0", [{"kind": "init", "name": "R", "expect": "zeros"}]),
        ("B_{init} = 0", [{"kind": "init", "name": "B", "expect": "zeros"}]),
        ("R^{init} = I", [{"kind": "init", "name": "R", "expect": "identity"}]),
        ("R_init = I_r", [{"kind": "init", "name": "R", "expect": "identity"}]),
        ("lora_R_init = 0", [{"kind": "init", "name": "lora_R", "expect": "zeros"}]),
    ],
)
def test_an_initial_value_assignment_is_an_init_check(claim, expected):
    assert checks(claim) == expected


@pytest.mark.parametrize(
    ("claim", "reason"),
    [
        ("h_init = 0", "the paper symbol h names no code object"),  # a hidden state, not a named parameter
        ("Ablated variant (no scaling): R_init = I", "describes a baseline or an ablation"),
    ],
)
def test_an_assignment_the_init_check_cannot_decide_is_left_with_the_reason(claim, reason):
    compiled = compile_claim(SAU(id="p-D2-001", dimension="D2", claim=claim))
    assert compiled.checks == [] and compiled.coverage == "none"
    assert reason in compiled.fragments[-1].reason


def test_a_time_step_state_is_not_an_initialisation():
    """``W_0 = I`` may be the state at step 0 or the pretrained weight: no init check is emitted."""
    assert not [c for c in checks("W_0 = I") if c["kind"] == "init"]


CLAIM = "Initialization: R_init = 0"


def test_the_init_assignment_passes_on_a_zero_initialised_r(tmp_path):
    verdict = _verdict(tmp_path, LORA_SB, claim=CLAIM)
    assert (verdict.status.value, verdict.score) == ("pass", 1.0)
    (init,) = verdict.checks
    assert init.message == "R (lora_R) is initialised with zeros at model.py:11."
    assert _where(init) == [("model.py", 11, "init")]


def test_the_init_assignment_fails_on_a_randomly_initialised_r(tmp_path):
    verdict = _verdict(tmp_path, LORA_SB.replace("torch.zeros(rank, rank)", "torch.randn(rank, rank) * 0.02"), claim=CLAIM)
    assert (verdict.status.value, verdict.score) == ("mismatch", 0.0)
    assert "normal where zeros is claimed" in verdict.checks[0].message
    assert _where(verdict.checks[0]) == [("model.py", 11, "init")]


def test_an_identity_assignment_passes_on_eye_and_fails_on_zeros(tmp_path):
    eye = _verdict(tmp_path / "eye", LORA_SB.replace("torch.zeros(rank, rank)", "torch.eye(rank)"), claim="R_init = I")
    assert (eye.status.value, eye.score) == ("pass", 1.0)
    assert _where(eye.checks[0]) == [("model.py", 11, "init")]
    zeros = _verdict(tmp_path / "zeros", LORA_SB, claim="R_init = I")
    assert (zeros.status.value, zeros.score) == ("mismatch", 0.0)
    assert _where(zeros.checks[0]) == [("model.py", 11, "init")]
