"""A loss stated in words ("the MSE loss between predicted and true noise") is a formula check of its
elementwise term: it passes on `F.mse_loss` and on the hand-written mean of squares alike, and fails an L1 loss."""

from __future__ import annotations

from pathlib import Path

import pytest
from compiler_helpers import compiled, dumps
from values_helpers import indexed_repo as repo

from verifier.checks.base import Context
from verifier.checks.formula import check_formula
from verifier.results import Status
from verifier.spec.model import Spec


@pytest.mark.parametrize(
    "text, expect",
    [
        ("Training loss is the standard DDPM MSE loss between predicted and true noise", "(predicted_noise - noise)**2"),
        ("The loss is the L1 distance between the reconstruction and the input", "Abs(reconstruction - input)"),
        ("Trained with MAE loss between current and target states using Adam", "Abs(current_state - target_state)"),
        ("In code: MSE between u_pred(T) and u_target", "(u_pred(T) - u_target)**2"),
    ],
)
def test_a_loss_between_two_operands_is_a_formula(text: str, expect: str) -> None:
    result = compiled(text, "D2")
    assert {"expect": expect} in dumps(result) and result.coverage == "full"
    assert not any("mse_loss" in c.get("target", "") or "l1_loss" in c.get("target", "") for c in dumps(result))


@pytest.mark.parametrize("text", ["MSE loss", "The MSE between them is minimised"])
def test_a_loss_without_operands_stays_what_it_was(text: str) -> None:
    assert not any("expect" in c and "**2" in str(c["expect"]) for c in dumps(compiled(text, "D2")))


TRAIN = '''import torch
import torch.nn.functional as F


def p_losses(model, x_noisy, t, noise):
    predicted_noise = model(x_noisy, t)
    return {loss}
'''


@pytest.mark.parametrize(
    "loss, status",
    [
        ("F.mse_loss(predicted_noise, noise)", Status.pass_),
        ("((noise - predicted_noise) ** 2).mean()", Status.pass_),
        ("F.l1_loss(predicted_noise, noise)", Status.mismatch),
    ],
)
def test_the_compiled_loss_decides_library_and_hand_written_code(tmp_path: Path, loss: str, status: Status) -> None:
    (check,) = compiled("Training loss is the MSE loss between predicted and true noise", "D2").checks
    result = check_formula(check, Context(index=repo(tmp_path, {"train.py": TRAIN.format(loss=loss)}), spec=Spec()))
    assert result.status is status and result.score == (1.0 if status is Status.pass_ else 0.0)
    assert [(e.file, e.line) for e in result.evidence][:1] == [("train.py", 7)]


@pytest.mark.parametrize(
    "text, expect",
    [
        ("The reward is the negative MSE between the state and the target", "-mean((state - target)**2)"),
        (
            "In code: negative MSE between current state and target state minus alpha * MSE of action",
            "-mean((current_state - target_state)**2) - alpha * mean((action)**2)",
        ),
        ("Loss: MAE between prediction and label plus lam * MAE of weights", "mean(Abs(prediction - label)) + lam * mean(Abs(weights))"),
    ],
)
def test_a_negated_or_regularised_loss_is_the_whole_sum(text: str, expect: str) -> None:
    assert {"expect": expect} in dumps(compiled(text, "D2"))


REWARD = '''def reward(current_state, target_state, action, alpha=2e-5):
    return {expr}
'''


@pytest.mark.parametrize(
    "expr, status",
    [
        ("-((current_state - target_state) ** 2).mean() - alpha * (action ** 2).mean()", Status.pass_),
        ("-((current_state - target_state) ** 2).mean()", Status.missing),  # the energy term dropped: only near
        ("-((current_state - target_state) ** 2).mean() + alpha * (action ** 2).mean()", Status.mismatch),
    ],
)
def test_the_compiled_reward_decides_the_regulariser(tmp_path: Path, expr: str, status: Status) -> None:
    text = "In code: negative MSE between current state and target state minus alpha * MSE of action"
    (check,) = [c for c in compiled(text, "D2").checks if c.kind == "formula"]
    result = check_formula(check, Context(index=repo(tmp_path, {"env.py": REWARD.format(expr=expr)}), spec=Spec()))
    assert result.status is status, result.message
    assert result.score == (1.0 if status is Status.pass_ else 0.0)
    assert [(e.file, e.line) for e in result.evidence][:1] == [("env.py", 2)]
