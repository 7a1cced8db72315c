"""A method repos write by hand (rules/claim_apis.yaml lists it by a bare name, ``dice_loss``) is found as the
repo's own function or class named after it (``soft_dice``, ``DiceLoss``, ``compute_info_nce``): a faithful
repo must not be reported missing its Dice loss because it spells the function differently. The name must carry
every word of the method's, as whole word pieces (``LambdaLR`` is no LAMB)."""

from __future__ import annotations

import pytest

from compiler_helpers import verdict_of

TRAIN = """\
import torch


{definition}


def step(model, x, y):
    loss = {call}(torch.sigmoid(model(x)), y)
    loss.backward()
"""


@pytest.mark.parametrize(
    ("name", "defined"),
    [
        ("soft_dice", "def soft_dice(pred, target):\n    return 1 - 2 * (pred * target).sum() / (pred.sum() + target.sum())"),
        ("DiceLoss", "class DiceLoss(torch.nn.Module):\n    def forward(self, pred, target):\n        return 1 - (pred * target).mean()"),
        ("compute_dice_loss", "def compute_dice_loss(pred, target):\n    return 1 - (pred * target).mean()"),
    ],
)
def test_a_hand_written_loss_named_after_the_method_is_its_call(tmp_path, name, defined):
    call = f"{name}()" if name[0].isupper() else name
    text = TRAIN.format(definition=defined, call=call)
    verdict = verdict_of(tmp_path, {"train.py": text}, "The segmentation network is trained with the Dice loss.", "methodological")
    assert (verdict.status.value, verdict.score) == ("pass", 1.0)
    loss_line = text.splitlines().index(f"    loss = {call}(torch.sigmoid(model(x)), y)") + 1
    assert [(e.file, e.line) for e in verdict.evidence] == [("train.py", loss_line)]
    assert "named after it" in verdict.checks[0].message


@pytest.mark.parametrize(
    ("name", "defined"),
    [
        ("overlap_score", "def overlap_score(pred, target):\n    return (pred * target).mean()"),  # another name
        ("dicey", "def dicey(pred, target):\n    return (pred * target).mean()"),  # not the whole word
    ],
)
def test_a_function_not_named_after_the_method_is_not_its_call(tmp_path, name, defined):
    verdict = verdict_of(tmp_path, {"train.py": TRAIN.format(definition=defined, call=name)},
                         "The segmentation network is trained with the Dice loss.", "methodological")
    assert (verdict.status.value, verdict.score) == ("missing", 0.0)
    assert "no call to dice_loss" in verdict.checks[0].message


def test_a_library_path_target_is_not_matched_by_name(tmp_path):
    # torch.nn.functional.ctc_loss names a library API: a repo function called my_ctc_loss is not it
    verdict = verdict_of(tmp_path, {"train.py": TRAIN.format(definition="def my_ctc_loss(a, b):\n    return (a - b).mean()",
                                                             call="my_ctc_loss")},
                         "Training minimises the CTC loss.", "methodological")
    assert verdict.status.value == "missing"
