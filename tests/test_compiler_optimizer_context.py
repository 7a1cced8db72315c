"""A paper's η and ε are the optimizer's step size and epsilon where the claim names an optimizer (any of them,
not only Adam), "decay" beside RMSProp is its smoothing constant, and a warm-up's length is read up to where the
schedule goes on ("then cosine decay over 600 epochs" is no warm-up)."""

from __future__ import annotations

import pytest

from compiler_helpers import verdict_of
from verifier.compiler import compile_claim
from verifier.spec.model import SAU


def values(claim: str, dimension: str = "D1") -> list[tuple[str, object]]:
    result = compile_claim(SAU(id=f"o-{dimension}-001", dimension=dimension, claim=claim))
    return [(c.name, c.expect) for c in result.checks if c.kind == "value"]


@pytest.mark.parametrize(("claim", "expected"), [
    ("RMSProp with decay 0.9, momentum 0.9 and ε = 0.0316, η = 0.064",
     [("rmsprop_alpha", 0.9), ("adam_epsilon", 0.0316), ("momentum", 0.9), ("learning_rate", 0.064)]),
    ("Lion, η = 1e-4", [("learning_rate", 0.0001)]),
    ("Adam (ε = 1e-8)", [("adam_epsilon", 1e-08)]),
    ("Adam optimizer, lr=1e-4. DDIM inference: 50 steps, eta=1", [("learning_rate", 0.0001), ("sampling_steps", 50), ("ddim_eta", 1)]),
    ("PPO with Adam, clip ε = 0.2", [("clip_range", 0.2)]),  # another epsilon, named by its own words
    ("EMA of the weights with decay 0.9999", [("ema_decay", 0.9999)]),
])
def test_symbols_and_decay_read_by_the_optimizer_the_claim_names(claim, expected):
    assert values(claim) == expected


def test_a_bare_decay_beside_no_optimizer_is_left_for_the_judge():
    result = compile_claim(SAU(id="o-D1-001", dimension="D1", claim="the codebook uses decay 0.8"))
    assert [c for c in result.checks if c.kind == "value"] == [] and result.coverage == "none"


@pytest.mark.parametrize(("claim", "expected"), [
    ("warmed up linearly over the first 1,000 of 100K steps", [("warmup_steps", 1000), ("num_steps", 100000)]),
    ("3 warm-up epochs then cosine decay over 600 epochs", [("warmup_epochs", 3)]),  # 600 is the run's, not the warm-up's
    ("lr warmed up over 5 epochs", [("warmup_epochs", 5)]),
])
def test_a_warm_up_length_stops_where_the_schedule_goes_on(claim, expected):
    assert values(claim) == expected


def test_rmsprop_settings_bind_torch_s_keywords(tmp_path):
    verdict = verdict_of(tmp_path, {"train.py": (
        "import torch\nmodel = torch.nn.Linear(2, 2)\n"
        "opt = torch.optim.RMSprop(model.parameters(), lr=0.064, alpha=0.9, eps=0.0316, momentum=0.9)\n")},
        "RMSProp with decay 0.9, momentum 0.9 and ε = 0.0316, η = 0.064")
    assert (verdict.status.value, verdict.score) == ("pass", 1.0)
    assert {(e.file, e.line) for e in verdict.evidence} == {("train.py", 3)}
    drifted = verdict_of(tmp_path / "drift", {"train.py": (
        "import torch\nmodel = torch.nn.Linear(2, 2)\n"
        "opt = torch.optim.RMSprop(model.parameters(), lr=0.064, eps=0.0316, momentum=0.9)\n")},
        "RMSProp with decay 0.9, momentum 0.9 and ε = 0.0316, η = 0.064")
    assert drifted.status.value == "partial"  # torch's default alpha is 0.99, not the claimed 0.9


@pytest.mark.parametrize(("claim", "expected"), [
    ("entropic regularisation ε = 10 and 100 Sinkhorn iterations", [("sinkhorn_reg", 10), ("sinkhorn_iterations", 100)]),
    ("Sinkhorn–Knopp centring with 3 iterations", [("sinkhorn_iterations", 3)]),
    ("500 epochs of 1,250 iterations", [("epochs", 500), ("steps_per_epoch", 1250)]),
    ("teacher temperature warmed up from 0.04 to 0.07 over 30 epochs", [("teacher_temperature_warmup_epochs", 30)]),
    ("100 Euler steps", [("sampling_steps", 100)]),
    ("12 Transformer layers", [("num_layers", 12)]),
])
def test_an_inner_algorithm_s_iterations_and_another_quantity_s_warm_up_are_not_the_run_s(claim, expected):
    assert values(claim) == expected


@pytest.mark.parametrize(("claim", "expected"), [
    # "1,024" is one number: a list "of 1, 24 and 300" was read out of "a width of 1,024 and 300 queries"
    ("a feed-forward width of 1,024 and 300 object queries", [("ffn_hidden_size", 1024), ("num_queries", 300)]),
    ("downsample factors of 8, 4, 2, and 1", [("downsample_factors", [8, 4, 2, 1])]),
    # the optimizer before η says whose η it is, it is no name of its own
    (r"AdamW $\eta = 2\times10^{-4}$, weight decay $0.01$", [("learning_rate", 0.0002), ("weight_decay", 0.01)]),
])
def test_thousands_in_a_list_and_an_optimizer_before_its_symbol(claim, expected):
    assert values(claim) == expected


def test_a_verb_before_a_symbol_is_no_name_for_it():
    assert values("the dual potentials are updated L = 100 times", "D2") == [("L", 100)]


@pytest.mark.parametrize(("claim", "expected"), [
    ("horizontal flips with p = 0.5", [("flip_prob", 0.5)]),
    ("symmetric label flipping with p = 0.4", [("p", 0.4)]),  # a noise rate, no augmentation's probability
    ("early stopping after 20 epochs without a validation AUC gain", [("patience", 20)]),
    ("the learning rate rising linearly from 0 to 3e-4 over 2,000 iterations", [("warmup_steps", 2000)]),
])
def test_an_augmentation_s_p_patience_and_a_rising_warm_up(claim, expected):
    assert values(claim) == expected
