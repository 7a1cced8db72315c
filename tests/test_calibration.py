"""D1 calibration on SA-Bench's levels: exact, within 3x, more than 3x, order of magnitude, wrong kind."""

import pytest

from verifier.analysis.calibration import Substitutes, compare, fmt
from verifier.results import Status

P, PART, MIS = Status.pass_, Status.partial, Status.mismatch


@pytest.mark.parametrize(
    ("expected", "actual", "status", "score"),
    [
        (3e-4, 3e-4, P, 1.0),
        (3e-4, "3e-4", P, 1.0),
        (3e-4, 3 * 10**-4, P, 1.0),  # float rounding
        (64, 64.0, P, 1.0),
        (3e-4, 1e-4, PART, 0.75),  # exactly 3x is still "within 3x"
        (0.2, 0.1, PART, 0.75),
        (3e-4, 5e-5, PART, 0.5),  # 6x
        (4096, 1024, PART, 0.5),
        (3e-4, 3e-3, PART, 0.25),  # exactly 10x is an order of magnitude
        (1e-4, 1e-2, PART, 0.25),
        (0.1, 0.0, PART, 0.25),  # disabled
        (0.2, -0.2, MIS, 0.0),
        (0.9, "cosine", MIS, 0.0),
        ("cosine", 0.9, MIS, 0.0),
        (True, False, MIS, 0.0),
        (True, "true", P, 1.0),
        (False, 0, P, 1.0),
        (True, 0.5, MIS, 0.0),
        (None, None, P, 1.0),
        (0.1, None, MIS, 0.0),
    ],
)
def test_numbers_and_booleans(expected, actual, status, score):
    got = compare(expected, actual)
    assert (got[0], got[1]) == (status, score), got[2]


def test_tolerance_is_relative():
    assert compare(10000, 10400, tolerance=0.05)[:2] == (P, 1.0)
    assert compare(10000, 10600, tolerance=0.05)[:2] == (PART, 0.75)
    assert "tolerance" in compare(0.1, 0.104, tolerance=0.05)[2]


@pytest.mark.parametrize(
    ("expected", "actual", "status", "score"),
    [
        ("AdamW", "adamw", P, 1.0),
        ("AdamW", "torch.optim.AdamW", P, 1.0),
        ("adamw", "adamw_torch", P, 1.0),
        ("AdamW", "Adam", PART, 0.75),
        ("Adam", "AdamW", PART, 0.75),
        ("gelu", "gelu_new", PART, 0.75),
        ("GELU", "gelu_pytorch_tanh", PART, 0.75),
        ("cosine", "CosineAnnealingLR", P, 1.0),
        ("AdamW", "SGD", MIS, 0.0),
        ("relu", "gelu", MIS, 0.0),
        ("CIFAR-10", "cifar10", P, 1.0),
    ],
)
def test_strings_and_substitutes(expected, actual, status, score):
    got = compare(expected, actual)
    assert (got[0], got[1]) == (status, score), got[2]


def test_substitute_table_can_be_given():
    table = Substitutes.from_data({"same": [["x", "ex"]], "substitutes": [["x", "y"]]})
    assert compare("x", "ex", substitutes=table)[:2] == (P, 1.0)
    assert compare("x", "y", substitutes=table)[:2] == (PART, 0.75)
    assert compare("AdamW", "Adam", substitutes={"same": [], "substitutes": []})[:2] == (MIS, 0.0)


@pytest.mark.parametrize(
    ("expected", "actual", "status", "score"),
    [
        ([0.9, 0.999], (0.9, 0.999), P, 1.0),
        ([0.9, 0.999], [0.9, 0.95], PART, 0.75),
        (["q_proj", "v_proj"], ["v_proj", "q_proj"], P, 1.0),  # order not claimed
        (["q_proj", "v_proj"], ["q_proj", "k_proj", "v_proj"], PART, 0.75),
        (["q_proj", "v_proj"], ["q_proj", "o_proj"], PART, 0.5),
        (["q_proj", "v_proj"], ["fc1"], MIS, 0.0),
        ([0.9, 0.999], 0.9, MIS, 0.0),
        ({"a", "b"}, ("b", "a"), P, 1.0),
    ],
)
def test_sequences(expected, actual, status, score):
    got = compare(expected, actual)
    assert (got[0], got[1]) == (status, score), got[2]


def test_library_default_that_differs_is_a_quarter():
    assert compare(0.1, 0.0, library_default=True)[:2] == (PART, 0.25)
    assert compare(1e-5, 1e-8, library_default=True)[:2] == (PART, 0.25)
    assert compare(0.2, 0.25, library_default=True)[:2] == (PART, 0.25)  # even when within 3x
    assert compare(0.9, 0.9, library_default=True)[:2] == (P, 1.0)  # the default is the claim


def test_reasons_read_like_a_paper():
    assert compare(3e-4, 1e-4)[2] == "1e-4 is 3x smaller than the claimed 3e-4 (within 3x)"
    assert compare(4096, 1024)[2] == "1024 is 4x smaller than the claimed 4096 (more than 3x)"
    assert "1,000x" in compare(1e-5, 1e-8)[2]


@pytest.mark.parametrize(
    ("value", "text"),
    [(3e-4, "3e-4"), (1e-4, "1e-4"), (2.5e-5, "2.5e-5"), (0.2, "0.2"), (1e8, "1e8"), (64, "64"),
     ((0.9, 0.999), "(0.9, 0.999)"), ([1, 2], "[1, 2]"), (True, "True"), (0.0, "0.0")],
)
def test_fmt(value, text):
    assert fmt(value) == text
