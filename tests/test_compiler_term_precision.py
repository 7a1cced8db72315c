"""Words that look like a dataset or a parameter but are not, in claims written for these tests: a dataset
named by an English word only when written as a name, a model identifier that starts with a dataset's name,
and a leaderboard's rank that is not LoRA's."""

from __future__ import annotations

import pytest

from verifier.compiler import compile_claim, terms
from verifier.spec.model import SAU


def datasets(text: str) -> list[str]:
    return [h.target for h in terms.find_protocol_terms(text) if h.category == "dataset"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ERA5 weather simulation over 20 hours", ["ERA5"]),
        ("Forecasting on ETTh1, Electricity, Traffic and Weather", ["ETTh1", "Electricity", "Traffic", "Weather"]),
        ("Instruction data: Dolly and Alpaca", ["Dolly", "Alpaca"]),
        ("heavy traffic on the shared cluster", []),
        # a model identifier that starts with a dataset's name is the model
        ("Targets: dolly-v2-12b and alpaca-7b", []),
        ("trained on CIFAR-10 and WikiText-103", ["CIFAR10", "WikiText-103"]),
    ],
)
def test_dataset_names_only_where_they_name_data(text, expected):
    assert datasets(text) == expected


def test_a_leaderboard_rank_is_not_lora_rank_but_a_lora_claims_rank_is():
    ranked = compile_claim(SAU(id="t-D3-001", dimension="D3", claim="Low-ranked target models: model-a (rank 125), model-b (rank 126)"))
    assert [c.name for c in ranked.checks if c.kind == "value"] == []
    lora = compile_claim(SAU(id="t-D1-001", dimension="D1", claim="LoRA adapters with rank 16 on all attention layers"))
    assert [(c.name, c.expect) for c in lora.checks if c.kind == "value"] == [("lora_rank", 16)]


def test_a_metric_named_by_an_alias_is_one_check():
    result = compile_claim(SAU(id="t-D3-001", dimension="D3", claim="Baselines: SAC, TD3. Metric: average return."))
    assert [(c.rule, c.expect) for c in result.checks if c.rule == "metric"] == [("metric", "episode return")]


def test_a_bare_std_after_a_preposition_names_nothing():
    result = compile_claim(SAU(id="t-D3-001", dimension="D3", claim="Gaussian noise with std in {0.01, 0.05} is added to observations"))
    assert [c for c in result.checks if c.kind == "value"] == []
    named = compile_claim(SAU(id="t-D1-001", dimension="D1", claim="Observation noise std=0.1 during evaluation"))
    assert [(c.name, c.expect) for c in named.checks if c.kind == "value"] == [("noise_std", 0.1)]
