"""A compiled value whose name the compiler made from the claim's words binds nothing: undecided, not absent.

"50 demonstrations per task" compiles to `num_demonstrations`; a faithful repo may call it `n_demos`. Scoring
it 0 would punish the compiler's guess, so it is left for the judge. A lexicon name that binds nothing ("batch
size 64" with no batch size anywhere) and a name the claim writes as code stay missing."""

from __future__ import annotations

import pytest

from compiler_helpers import verdict_of
from verifier.compiler import compile_claim
from verifier.spec.model import SAU

TRAIN = """import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--n_demos", type=int, default=50)
parser.add_argument("--lr", type=float, default=1e-4)
args = parser.parse_args()
"""


def _verdict(tmp_path, claim: str):
    return verdict_of(tmp_path, {"train.py": TRAIN}, claim)


def test_the_claim_compiles_to_a_name_of_its_own_words():
    (check,) = compile_claim(SAU(id="g-D1-001", dimension="D1", claim="50 demonstrations per task")).checks
    assert (check.kind, check.name, check.expect) == ("value", "num_demonstrations", 50)


def test_a_guessed_name_that_binds_nothing_is_undecided(tmp_path):
    verdict = _verdict(tmp_path, "50 demonstrations per task")
    assert (verdict.status.value, verdict.score) == ("unverified", None)
    assert "a name made from the claim's words" in verdict.checks[0].message
    assert verdict.evidence == ()


@pytest.mark.parametrize(
    ("claim", "message"),
    [
        ("batch size 64", "no binding of minibatch_size"),  # the lexicon's parameter, absent: a real omission
        ("num_demonstrations = 50", "no binding of num_demonstrations"),  # the claim names the code
    ],
)
def test_a_known_or_written_name_that_binds_nothing_is_missing(tmp_path, claim, message):
    verdict = _verdict(tmp_path, claim)
    assert (verdict.status.value, verdict.score) == ("missing", 0.0)
    assert verdict.checks[0].message.startswith(message)


def test_a_known_name_still_decides(tmp_path):
    verdict = _verdict(tmp_path, "learning rate 1e-4")
    assert (verdict.status.value, verdict.score) == ("pass", 1.0)
    assert [(e.file, e.line) for e in verdict.evidence][:1] == [("train.py", 5)]


@pytest.mark.parametrize("claim", ["β = 6", "TRADES β = 6", "the discount γ = 0.99"])
def test_a_bare_greek_symbol_that_binds_nothing_is_undecided(tmp_path, claim):
    """β is how the paper writes it; the repo may say `trades_beta`: unbound, the symbol is the judge's, not 0."""
    verdict = _verdict(tmp_path, claim)
    assert (verdict.status.value, verdict.score) == ("unverified", None)
    assert "a name made from the claim's words" in verdict.checks[0].message


def test_a_greek_symbol_the_code_binds_still_decides(tmp_path):
    files = {"train.py": TRAIN + 'parser.add_argument("--beta", type=float, default=6.0)\n'}
    verdict = verdict_of(tmp_path, files, "TRADES β = 6")
    assert (verdict.status.value, verdict.score) == ("pass", 1.0)
    assert [(e.file, e.line) for e in verdict.evidence][:1] == [("train.py", 7)]


def test_a_phrase_named_parameter_behind_a_symbol_stays_decided(tmp_path):
    verdict = _verdict(tmp_path, "KL weight β = 0.1")
    assert (verdict.status.value, verdict.score) == ("missing", 0.0)
