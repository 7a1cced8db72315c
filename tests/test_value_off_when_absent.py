"""A setting claimed off ("no dropout", "without LR warm-up") on a repo that never applies it: the value check's
`off_when_absent` reading (rules/lexicon.yaml), its guards, and the compiler's reading of the negations."""

from __future__ import annotations

import pytest
from values_helpers import bind, call, make_index

from verifier.checks.base import Context
from verifier.checks.value import check_value
from verifier.compiler import compile_claim
from verifier.index.facts import FileRole
from verifier.results import Status
from verifier.spec.model import SAU, Spec, ValueCheck


def run(index, **check):
    return check_value(ValueCheck(kind="value", **check), Context(index=index, spec=Spec()))


def plain_training_index(extra_bindings=(), extra_calls=(), roles=None):
    """A loop with an Adam optimizer and nothing else: no dropout, no warm-up, no mixup anywhere."""
    bindings = [bind("assign", "lr", "1e-3", "train.py:3"), *extra_bindings]
    calls = [call("optax.adam", "train.py:9", kwargs={"learning_rate": "lr"}), *extra_calls]
    return make_index(bindings, calls, roles=roles)


@pytest.mark.parametrize("name", ["dropout", "warmup_steps", "mixup_alpha", "cutmix_alpha", "drop_path", "label_smoothing", "weight_decay"])
def test_a_setting_the_repo_never_applies_is_off_as_claimed(name):
    result = run(plain_training_index(), name=name, expect=0)
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert "off, as claimed (0)" in result.message and result.details["absent"] is True
    assert result.evidence == ()  # an absence has no line to point at


def test_another_value_claimed_is_still_missing():
    result = run(plain_training_index(), name="dropout", expect=0.1)
    assert (result.status, result.score) == (Status.missing, 0.0)
    assert result.message.startswith("no binding of dropout")


def test_a_call_that_applies_it_with_an_unread_value_is_not_off():
    """`F.dropout(x, p)` with a `p` no lexicon name carries: dropout may be on, the verdict stays missing."""
    index = plain_training_index(extra_calls=[call("torch.nn.functional.dropout", "model.py:12", args=("x", "self.p"))])
    result = run(index, name="dropout", expect=0)
    assert result.status is Status.missing and "off" not in result.message


def test_a_hand_written_warmup_is_not_off():
    """`lr_warmup_iters` is no lexicon spelling of warmup_steps, but it names a warm-up the code applies by hand."""
    index = plain_training_index(extra_bindings=[bind("assign", "lr_warmup_iters", "500", "train.py:5")])
    assert run(index, name="warmup_steps", expect=0).status is Status.missing


def test_a_mention_only_in_tests_does_not_count():
    index = plain_training_index(extra_bindings=[bind("assign", "dropout_schedule", "[0.1, 0.3]", "tests/test_model.py:4")],
                                 roles={"tests/test_model.py": FileRole.test})
    result = run(index, name="dropout", expect=0)
    assert (result.status, result.score) == (Status.pass_, 1.0)


def test_a_call_only_in_tests_does_not_count():
    index = plain_training_index(extra_calls=[call("torch.nn.Dropout", "tests/test_model.py:8", args=("0.5",))])
    assert run(index, name="dropout", expect=0).status is Status.pass_


def test_a_bound_zero_is_graded_as_usual():
    index = plain_training_index(extra_bindings=[bind("assign", "dropout", "0.0", "config.py:2")])
    result = run(index, name="dropout", expect=0)
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert [(e.file, e.line) for e in result.evidence if e.role == "effective"] == [("config.py", 2)]
    assert "absent" not in result.details


def test_a_name_with_no_off_reading_stays_missing():
    assert run(plain_training_index(), name="num_heads", expect=0).status is Status.missing


def test_a_library_default_decides_before_absence():
    """torch's AdamW without weight_decay decays at 0.01: "no weight decay" is not met."""
    index = make_index([], [call("torch.optim.AdamW", "train.py:9", args=("params",))])
    result = run(index, name="weight_decay", expect=0)
    assert result.status is Status.partial and result.score == 0.25
    assert [(e.file, e.line) for e in result.evidence] == [("train.py", 9)]


# ----- the compiler's reading of "no X" -------------------------------------------------------------------
def values(claim: str) -> list[tuple[str, object, tuple[str, ...]]]:
    compiled = compile_claim(SAU(id="off-D1-001", dimension="numerical", claim=claim))
    return [(c.name, c.expect, tuple(c.names or ())) for c in compiled.checks if c.kind == "value"]


@pytest.mark.parametrize(("claim", "want"), [
    ("no dropout", [("dropout", 0, ())]),
    ("dropout disabled", [("dropout", 0, ())]),
    ("max length 4,096 tokens and dropout disabled", [("dropout", 0, ())]),
    ("no residual dropout", [("dropout", 0, ())]),
    ("attention dropout is disabled", [("attention_dropout", 0, ())]),
    ("no mixup / cutmix and no label smoothing", [("mixup_alpha", 0, ()), ("cutmix_alpha", 0, ()), ("label_smoothing", 0, ())]),
    ("no weight decay or dropout", [("weight_decay", 0, ()), ("dropout", 0, ())]),
])
def test_negations_of_settings_that_can_be_off(claim, want):
    assert sorted(values(claim)) == sorted(want)


def test_no_warmup_is_read_in_any_unit():
    assert ("warmup_steps", 0, ("warmup_ratio", "warmup_epochs")) in values("lr 4e-4 without LR warm-up")
    assert ("learning_rate", 0.0004, ()) in values("lr 4e-4 without LR warm-up")


@pytest.mark.parametrize("claim", ["no test-time augmentation", "no EMA", "with no bias terms", "no momentum"])
def test_negations_the_value_check_cannot_decide_stay_with_the_judge(claim):
    compiled = compile_claim(SAU(id="off-D1-001", dimension="numerical", claim=claim))
    assert not [c for c in compiled.checks if c.kind == "value"]
    assert compiled.coverage != "full"


@pytest.mark.parametrize("name", ["warm_steps", "rampup_iters"])
def test_a_warmup_under_another_spelling_is_not_off(name):
    index = plain_training_index(extra_bindings=[bind("assign", name, "500", "train.py:5")])
    assert run(index, name="warmup_steps", expect=0).status is Status.missing
