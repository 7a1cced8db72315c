"""Context fragments, bare symbols, distributions, method APIs and protocol cues in free-text claims."""

from __future__ import annotations

import pytest

from verifier.compiler import compile_claim, context
from verifier.compiler.distributions import find
from verifier.spec.model import SAU


def compiled(claim: str, dimension: str = "D1"):
    return compile_claim(SAU(id="p-D1-001", dimension=dimension, claim=claim))


def dumps(result) -> list[dict]:
    """Checks as dicts with their kind (a default, so spelled out here)."""
    return [
        {"kind": c.kind, **c.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True)} for c in result.checks
    ]


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("single NVIDIA A100 GPU (80GB)", "hardware"),
        ("2x AMD EPYC 9554 64-Core CPUs", "hardware"),
        ("SC-FNO=764MB (approximate 6% increase)", "compute budget"),
        ("BitFit: 102K tunable params", "parameter count"),
        ("LayerNorm parameters: ~38K (0.04% of total 86M backbone)", "parameter count"),
        ("The corpus comprises 2.5M trajectories", "dataset statistic"),
        ("Setup mirrors Smith & Jones (2023, Section 5.1)", "citation"),
        ("Figure 4(b)", "citation"),
        ("Mean risk: A 0.3363 +/- 0.0007 vs B 0.1758 +/- 0.0006", "reported result"),
        ("enabling cache sharing across denoising timesteps", "rationale"),
    ],
)
def test_non_checkable_fragments_are_classified_with_their_category(text, category):
    assert (context.classify(text) or "").startswith(category)


@pytest.mark.parametrize("text", ["batch size 256", "learning rate 3e-4 on 4 GPUs", "dropout=0.1", "T=1000 steps"])
def test_settings_are_never_context(text):
    assert context.classify(text) is None


def test_context_is_excused_by_coverage_but_not_by_strict_coverage():
    result = compiled("Training: lr=1e-4, batch size 64. Hardware: 512GB RAM")  # GPUs would be a hardware check
    assert {"kind": "value", "name": "learning_rate", "expect": 0.0001} in dumps(result)
    assert [f.outcome for f in result.fragments].count("context") == 1
    assert result.coverage == "full" and result.strict_coverage == "partial"


def test_hardware_numbers_are_not_read_as_values():
    result = compiled("Training runs on 4 Nvidia H100 GPUs per node with batch size 32")
    # the GPUs are the hardware rule's (per node with no node count: only the type), never a value
    assert dumps(result) == [{"kind": "value", "name": "minibatch_size", "expect": 32},
                             {"kind": "protocol", "rule": "hardware", "gpu": "H100"}]


def test_bare_symbols_are_named_by_the_claims_own_words():
    (named,) = compiled("number of diffusion steps T = 1000").checks
    assert "diffusion_steps" in named.name and named.expect == 1000
    reynolds = compiled("Reynolds number Re=1000").checks[0]
    assert reynolds.all_names()[:2] == ["reynolds_number", "Re"] and reynolds.expect == 1000
    greek = compiled("λ = 0.5").checks[0]
    assert {"lam", "lambda_"} <= set(greek.all_names()) and greek.expect == 0.5


def test_sets_become_sweeps_and_shapes_list_values():
    assert dumps(compiled("ranks r ∈ {8, 16, 24}"))[0]["sweep"] == [8, 16, 24]
    assert dumps(compiled("video latent space: resolution=256×256")) == [{"kind": "value", "name": "image_size", "expect": [256, 256]}]


def test_distributions_become_call_or_init_checks():
    sampled = dumps(compiled("input distribution X ~ Uniform(0, 4)"))
    assert {"kind": "call", "target": "uniform", "args": {"low": 0, "high": 4}} in sampled
    init = dumps(compiled("position embeddings are initialized from N(0, 0.02)"))
    assert init == [{"kind": "init", "name": "position_embeddings", "expect": "normal", "args": {"mean": 0, "std": 0.02}}]
    (symbolic,) = find("Y | X ~ N(0, X^2)")
    # a symbolic variance: X * randn(...) samples it as much as torch.normal does, so any Gaussian sampler
    assert symbolic.variable == "Y" and symbolic.call == "normal | randn | randn_like | standard_normal"
    assert symbolic.call_args == {}


def test_method_apis_and_a_sentence_that_says_more_than_them():
    result = compiled("Optimised with RAdam and a OneCycleLR schedule", "D2")
    assert {c.target for c in result.checks} == {"torch.optim.RAdam", "torch.optim.lr_scheduler.OneCycleLR"}
    assert result.coverage == "full"
    wordy = compiled("The initialisation sums the signs of per-sample gradients (accumulate_signs) before the SVD", "D2")
    assert wordy.coverage == "partial" and "describes more than the named API" in wordy.leftover[0]


def test_protocol_cues_metrics_frozen_and_bracketed_split():
    checks = dumps(
        compiled(
            "Early stopping on the validation loss; primary metrics: aesthetic quality and motion smoothness; "
            "the backbone is kept frozen; train on an (80/20) split",
            "D3",
        )
    )
    assert {"kind": "protocol", "rule": "select-on-validation"} in checks
    assert {"kind": "protocol", "rule": "metric", "expect": "aesthetic quality"} in checks
    assert {"kind": "protocol", "rule": "frozen", "name": "backbone"} in checks
    assert {"kind": "protocol", "rule": "split-ratio", "expect": {"train": 0.8, "test": 0.2}} in checks


def test_reported_measurements_in_a_protocol_claim_are_context():
    result = compiled("Evaluate on CIFAR-10 with accuracy. Method A 45.05%, set size 2.92", "D3")
    assert result.coverage == "full" and not result.leftover  # "set size" is a metric; 2.92 what it measured
    assert [f.reason.split(":")[0] for f in result.fragments if f.outcome == "context"] == ["reported result"]


@pytest.mark.parametrize(
    "fragment",
    [
        "Total: 4DM params",
        "Each norm layer has 2 trainable parameters {gamma, beta}",
        "stacks 12M weight matrices (12 layers x 6 matrices Q/K/V/O/W1/W2)",
    ],
)
def test_counts_of_parameters_in_symbols_or_tensors_are_parameter_counts(fragment):
    (only,) = compiled(fragment, "D2").fragments
    assert (only.outcome, only.reason.split(":")[0]) == ("context", "parameter count")


def test_a_parameter_count_beside_a_setting_keeps_the_setting():
    result = compiled("2 trainable parameters per layer, batch size 64", "D1")
    assert dumps(result) == [{"kind": "value", "name": "minibatch_size", "expect": 64}]
    assert [f.outcome for f in result.fragments] == ["context", "typed"]


def test_a_bound_or_conclusion_restating_a_set_value_is_covered_by_its_check():
    result = compiled("With alpha = 0.2: any threshold t < 0.8 gives a loss > 0.2, hence the cut-off = 0.8")
    assert [(c.name, c.expect) for c in result.checks] == [("alpha", 0.2)]
    assert [(f.outcome, f.reason.split(":")[0]) for f in result.fragments] == [("typed", ""), ("context", "derived value")]
    assert result.coverage == "full"


@pytest.mark.parametrize("claim", [
    "With alpha = 0.2: any threshold t < 0.7 gives a loss > 0.2, hence the cut-off = 0.7",  # 0.7 is not 1 - 0.2
    "dropout 0.5 on the features and 0.5 on the adjacency matrix",  # a second setting with the same value
])
def test_a_number_that_restates_no_set_value_stays_for_the_judge(claim):
    assert compiled(claim).coverage == "partial"
