"""Free-text claims compile into the typed checks they contain, and report what they could not type."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.compiler import compile_claim
from verifier.compiler.formulas import find_formula, to_sympy
from verifier.compiler.orders import find_order, step_name
from verifier.spec.model import SAU


def compiled(claim: str, dimension: str = "D1", aliases=None):
    return compile_claim(SAU(id="p-D1-001", dimension=dimension, claim=claim), aliases or {})


def dumps(result) -> list[dict]:
    return [c.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True) for c in result.checks]


def test_bundled_values_split_into_one_check_each():
    result = compiled("batch_size=512, lr=8e-5 (Lion), 150K steps, dropout 0.1")
    assert dumps(result) == [
        {"name": "minibatch_size", "expect": 512},
        {"name": "learning_rate", "expect": 8e-5},
        {"target": "Lion | optax.lion"},
        {"name": "num_steps", "expect": 150_000},
        {"name": "dropout", "expect": 0.1},
    ]
    assert result.coverage == "full" and result.leftover == []


def test_phrases_sets_ranges_percent_and_labels():
    result = compiled(
        "AdamW optimizer with beta1=0.9, beta2=0.95, base learning rate 1e-4, cosine learning rate schedule with "
        "10% linear warmup, weight decay 0.01; LoRA rank: r ∈ {8, 16}; learning_rate range [0.001, 0.01]"
    )
    checks = dumps(result)
    assert {"target": "torch.optim.AdamW | optax.adamw | tensorflow.keras.optimizers.AdamW | transformers.AdamW"} in checks
    assert {"name": "beta1", "expect": 0.9} in checks and {"name": "beta2", "expect": 0.95} in checks
    assert {"name": "learning_rate", "expect": 0.0001} in checks
    assert {"name": "warmup_ratio", "expect": 0.1} in checks
    assert {"name": "weight_decay", "expect": 0.01} in checks
    assert {"name": "lora_rank", "sweep": [8, 16]} in checks  # a set: one run per rank
    assert {"name": "learning_rate", "within": [0.001, 0.01]} in checks  # a range bounds the one value
    assert result.coverage == "full"


def test_spec_aliases_name_paper_symbols():
    bare = compiled("chunk and condition lengths: l=16")  # no alias: a value check on the symbol's spellings
    (check,) = bare.checks
    assert check.kind == "value" and check.expect == 16 and "l" in check.all_names() and bare.coverage == "full"
    aliased = compiled("chunk and condition lengths: l=16", aliases={"chunk_len": ["l"]})
    assert dumps(aliased) == [{"name": "chunk_len", "expect": 16}]


def test_seeds_split_and_datasets_become_protocol_checks():
    result = compiled("Fine-tune on CIFAR-10 with an 80/10/10 train/val/test split; report FID over 5 random seeds.", "D3")
    checks = dumps(result)
    assert {"rule": "dataset", "expect": "CIFAR10"} in checks
    assert {"rule": "metric", "expect": "FID"} in checks
    assert {"rule": "seeds", "expect": 5} in checks
    assert {"rule": "split-ratio", "expect": {"train": 0.8, "val": 0.1, "test": 0.1}} in checks


def test_baselines_listed_after_a_cue():
    result = compiled("Compare against PEFT baselines (LoRA, DoRA, PiSSA) on GSM8K.", "D3")
    checks = dumps(result)
    assert [c["name"] for c in checks if c.get("rule") == "baseline"] == ["LoRA", "DoRA", "PiSSA"]
    assert {"rule": "dataset", "expect": "GSM8K"} in checks


def test_formula_claims():
    result = compiled("Pairwise preference: Pr(i > j) = 1 / (1 + exp(-(Q_i - Q_j) / s))", "D2")
    assert dumps(result) == [{"expect": "1 / (1 + exp(-(Q_i - Q_j) / s))"}]
    latex = compiled(r"The loss is L = \frac{1}{2} \| x - \hat{x} \|^2", "D2")
    assert latex.checks[0].latex.startswith(r"\frac{1}{2}")


@pytest.mark.parametrize(
    "text, expect",
    [
        ("x_t^k = mu_t + sigma_t * z", "mu_t + sigma_t * z"),
        ("W = W₀ + s * B", "W0 + s * B"),
        ("L = (1/2) * E[ ||x - x_hat||^2 ]", "(1 / 2) * mean(norm(x - x_hat)**2)"),
        ("x_{t+dt} = x_t + g_theta(x_t, t, h) * dt", "x_t + g_theta(x_t, t, h) * dt"),
    ],
)
def test_ascii_and_unicode_formulas_translate(text, expect):
    assert find_formula(text).expect == expect


@pytest.mark.parametrize("text, why", [("ΔW = −η sign(Σ_i ∇ L)", "gradient with no variable"), ("a = KL(q || p)", "KL"), ("h = W x + b", "one capital symbol")])
def test_untranslatable_notation_is_reported_with_the_reason(text, why):
    expect, reason = to_sympy(text.split("=", 1)[1])
    assert expect is None and why in reason


def test_formula_never_evaluates_its_text():
    assert find_formula("y = __import__('os').system('true')") is None or find_formula(
        "y = __import__('os').system('true')"
    ).expect is None


def test_arrow_phases_and_numbered_steps_become_order_checks():
    result = compiled("Experiment workflow: Train the model on InternVid → Generate videos → Compute FVD scores", "D4")
    order = result.checks[0]
    assert order.kind == "order" and order.relation == "phases"
    assert order.steps == ["train_model", "generate_videos", "compute_fvd_scores"]
    numbered = find_order("Step 1: Load pre-trained model. Step 2: Estimate gradients. Step 3: Compute SVD.", phases=False)
    assert numbered.steps == ("load_pre_trained", "estimate_gradients", "compute_svd")
    first = find_order("We first normalize the inputs, then train the classifier", phases=False)
    assert first.steps == ("normalize_inputs", "train_classifier") and first.relation == "before"


def test_step_names_drop_labels_and_qualifiers():
    assert step_name("Phase 1 — Initialization (one-time, before training)") == "initialization"


def test_context_and_leftover_are_told_apart():
    result = compiled("Training: lr=1e-4 on a single NVIDIA A100 GPU (80GB); uses 0.1% of the data")
    outcomes = {f.text: f.outcome for f in result.fragments}
    assert outcomes["Training: lr=1e-4 on a single NVIDIA A100 GPU (80GB)"] == "typed"
    assert outcomes["uses 0.1% of the data"] == "leftover"
    assert result.coverage == "partial"
    assert result.leftover == ["uses 0.1% of the data: number(s) 0.1% with no parameter name"]


def test_empty_and_prose_only_claims():
    assert compiled("").coverage == "none"
    prose = compiled("The method is elegant and general.", "D2")
    assert prose.coverage == "none" and prose.leftover


def test_compilation_is_deterministic():
    text = "lr=1e-4, batch 256, AdamW, GSM8K, accuracy, 3 seeds, A -> B -> C"
    first = [json.dumps(c.to_json(), sort_keys=True) for c in [compiled(text)]]
    second = [json.dumps(c.to_json(), sort_keys=True) for c in [compiled(text)]]
    assert first == second


SABENCH = Path(__file__).resolve().parents[2] / "shared" / "sabench-dev"


def test_every_sabench_claim_compiles_without_error():
    if not SABENCH.is_dir():
        pytest.skip("SA-Bench dev split not present")
    count = 0
    for path in sorted(SABENCH.glob("*.json")):
        for claim in json.loads(path.read_text())["claims"]:
            result = compile_claim(SAU(id=claim["id"], dimension=claim["dimension"], claim=claim["claim"]))
            assert result.coverage in ("full", "partial", "none")
            assert result.checks or result.leftover
            count += 1
    assert count > 400


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_any_text_compiles_without_raising(text):
    result = compile_claim(SAU(id="fuzz-D1-001", dimension="D1", claim=text))
    assert result.coverage in ("full", "partial", "none")
    assert result.checks or result.leftover


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["lr=1e-4", "batch size 64", "(", ")", "{", "}", "[0.1,", "→", "=", "AdamW", "Step 1:", "10%", "x_{t", "^", "ε", "Σ"]), max_size=30))
def test_claim_shaped_noise_compiles_without_raising(parts):
    compile_claim(SAU(id="fuzz-D2-001", dimension="D2", claim=" ".join(parts)))


def test_map_in_prose_is_not_the_map_metric_but_mAP_and_MAP_are():
    from verifier.compiler import terms

    assert [h.target for h in terms.find_protocol_terms("the operator maps from t=0; a map from t=0 to t=1")] == []
    assert [h.target for h in terms.find_protocol_terms("we report mAP and MAP@all, and mIoU")][:1] == ["mAP"]
    assert "mIoU" in [h.target for h in terms.find_protocol_terms("we report mAP and mIoU")]


def test_a_name_ending_a_hyphenated_compound_is_not_the_listed_name():
    from verifier.compiler import terms

    # Clopper-Pearson is an interval method, not a Pearson correlation; Mini-ImageNet is miniImageNet, not ImageNet
    assert [h.target for h in terms.find_protocol_terms("Clopper-Pearson intervals on Mini-ImageNet")] == ["miniImageNet"]
    # a modifier prefix keeps the name: a Post-LayerNorm block still uses LayerNorm
    assert [h.target.split(" | ")[0] for h in terms.find_apis("a Post-LayerNorm block")] == ["torch.nn.LayerNorm"]
    assert [h.target for h in terms.find_protocol_terms("Pearson correlation on ImageNet")] == ["Pearson correlation", "ImageNet"]
