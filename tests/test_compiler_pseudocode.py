"""Pseudo-code listings in claims compile into call / exists / order / formula checks, and only the
statements something was made of count as typed. Claims are written for the tests, in SA-Bench's style."""

from __future__ import annotations

from pathlib import Path

import yaml

from verifier.compiler import compile_claim
from verifier.compiler.pseudocode import find_listings, read_listing, specific
from verifier.engine import run_repo
from verifier.spec.model import SAU

CLASSIFIER = """Algorithm: train_response_classifier(responses, labels)

  from sklearn.feature_extraction.text import TfidfVectorizer
  from sklearn.linear_model import LogisticRegression

  # bag of n-grams, then a linear classifier
  vectorizer = TfidfVectorizer(max_features=5000)
  features = vectorizer.fit_transform(responses)
  clf = LogisticRegression(C=1.0, max_iter=1000)"""

PIPELINE = """Rating pipeline:

  # Load the pairwise votes
  votes = load_pairwise_votes(path)
  ratings = fit_bradley_terry(votes)
  ranking = rank_models(ratings)
  gap = (ratings_a - ratings_b) / scale"""


def compiled(claim: str, dimension: str = "D2"):
    return compile_claim(SAU(id="t-D2-001", dimension=dimension, claim=claim))


def dumps(checks) -> list[dict]:
    return [c.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True) for c in checks]


def test_listing_states_library_calls_with_their_arguments_and_the_function_it_defines():
    listing = read_listing(CLASSIFIER)
    assert dumps(listing.checks) == [
        {"symbol": "train_response_classifier"},
        {"target": "sklearn.feature_extraction.text.TfidfVectorizer", "args": {"max_features": 5000}},
        {"target": "sklearn.linear_model.LogisticRegression", "args": {"C": 1.0, "max_iter": 1000}},
    ]
    covered = {CLASSIFIER[a:b].strip(): made for (a, b), made in listing.covered}
    assert covered["from sklearn.linear_model import LogisticRegression"] == [2]  # the import is the call's
    assert covered["features = vectorizer.fit_transform(responses)"] == [1]  # a method of the object made above
    assert covered["# bag of n-grams, then a linear classifier"] == []  # comments belong to the listing


def test_listing_claim_compiles_fully():
    result = compiled(CLASSIFIER)
    assert result.coverage == "full" and result.leftover == []
    assert {"symbol": "train_response_classifier"} in dumps(result.checks)


def test_a_chain_of_calls_is_an_order_check_and_arithmetic_a_formula():
    listing = read_listing(PIPELINE)
    assert dumps(listing.checks) == [
        {"expect": "(ratings_a - ratings_b) / scale"},
        {"steps": ["load_pairwise_votes", "fit_bradley_terry", "rank_models"]},
    ]
    result = compiled(PIPELINE)
    assert result.coverage == "full"


def test_calls_on_unrelated_data_are_not_a_sequence():
    listing = read_listing("Steps:\n  a = load_pairwise_votes(path)\n  b = fit_bradley_terry(other)\n  c = rank_models(more)")
    assert listing is None  # no chain, no library call: nothing the listing states can be checked


def test_plumbing_calls_and_helpers_of_unknown_modules_are_not_calls():
    text = (
        "Bound:\n  import numpy as np\n  from utils import helper\n  w = np.random.dirichlet(np.ones(n + 1), size=1000)\n"
        "  out = helper(w)"
    )
    listing = read_listing(text)
    assert dumps(listing.checks) == [{"target": "numpy.random.dirichlet", "args": {"size": 1000}}]
    covered = {text[a:b].strip() for (a, b), _ in listing.covered}
    assert covered == {"import numpy as np", "w = np.random.dirichlet(np.ones(n + 1), size=1000)"}


def test_generic_names_are_not_exists_checks():
    assert specific("identity_probing_detector") and specific("TrainLoop")
    assert not specific("main") and not specific("sample") and not specific("train") and not specific("x_y")


def test_constants_alone_are_a_config_not_a_listing():
    text = "Training config:\n  lr = 3e-4\n  batch_size = 64\n  epochs = 10"
    assert find_listings(text) == [] and read_listing(text) is None
    result = compiled(text, "D1")
    assert dumps(result.checks) == [
        {"name": "learning_rate", "expect": 0.0003},
        {"name": "minibatch_size", "expect": 64},
        {"name": "epochs", "expect": 10},
    ]


def test_lines_nothing_was_made_of_stay_for_the_judge():
    text = "Detector:\n  import numpy as np\n  w = np.random.dirichlet(alpha, size=100)\n  R ~ M(P)\n  score = w @ losses\n"
    result = compiled(text)
    assert result.coverage == "partial"
    assert any(item.startswith("score = w @ losses") for item in result.leftover)


# ----- end to end ---------------------------------------------------------------------------------------------
REPO = """from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression


def train_response_classifier(responses, labels):
    vectorizer = TfidfVectorizer(max_features=5000)
    features = vectorizer.fit_transform(responses)
    clf = LogisticRegression(C={c}, max_iter=1000)
    clf.fit(features, labels)
    return clf


if __name__ == "__main__":
    train_response_classifier(["a b", "c d"], [0, 1])
"""


def _verdict(tmp_path: Path, c: str):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "detector.py").write_text(REPO.format(c=c))
    spec = {"version": 1, "paper": {"id": "t"}, "saus": [{"id": "t-D2-001", "dimension": "D2", "claim": CLASSIFIER}]}
    (repo / "sau.yaml").write_text(yaml.safe_dump(spec))
    (verdict,) = run_repo(repo, use_cache=False).verdicts
    return verdict


def test_compiled_listing_passes_on_a_faithful_repo(tmp_path):
    v = _verdict(tmp_path, "1.0")
    assert (v.status.value, v.score) == ("pass", 1.0)
    calls = [c for c in v.checks if c.kind == "call"]
    assert any("LogisticRegression is called with C=1.0, max_iter=1000 at detector.py:8" in c.message for c in calls)
    assert any((e.file, e.line) == ("detector.py", 5) for e in v.evidence)  # the function the listing defines


def test_compiled_listing_catches_a_drifted_argument(tmp_path):
    v = _verdict(tmp_path, "0.01")
    assert (v.status.value, v.score) == ("partial", 0.75)
    (drifted,) = [c for c in v.checks if c.kind == "call" and c.score < 1]
    assert drifted.score == 0.25 and "C: 0.01 is 100x smaller than the claimed 1.0" in drifted.message
    assert any((e.file, e.line) == ("detector.py", 8) for e in v.evidence)
