"""Precision rules: a value is typed only under a name its context supports; formulas and pseudo-code give none."""

from __future__ import annotations

import pytest

from verifier.compiler import compile_claim
from verifier.spec.model import SAU


def pairs(claim: str, dimension: str = "D1") -> list[tuple[str, object]]:
    result = compile_claim(SAU(id="p-D1-001", dimension=dimension, claim=claim))
    return [(c.name, c.expected()) for c in result.checks if c.kind == "value"]  # a sweep compares like a list


def names(claim: str, dimension: str = "D1") -> list[str]:
    return [name for name, _ in pairs(claim, dimension)]


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("AdamW, lr=1e-4, trained for 100k steps", ("num_steps", 100000)),
        ("Inference: 50 DDIM sampling steps per video", ("sampling_steps", 50)),
        ("Generate 56 frames (7 AR steps)", ("num_ar_steps", 7)),
        ("DDPM noise schedule: T=1000 timesteps", ("diffusion_steps", 1000)),
        ("Adam optimizer with β₁=0.9", ("beta1", 0.9)),
        ("DDPM noise schedule: linear beta schedule with β₁=1e-4, β_T=0.02", ("beta_start", 0.0001)),
        ("DDPM noise schedule: linear beta schedule with β₁=1e-4, β_T=0.02", ("beta_end", 0.02)),
        ("AdamW optimizer, epsilon=1e-8", ("adam_epsilon", 1e-8)),
        ("LoRA-XS baseline config: α = 16 for GLUE", ("lora_alpha", 16)),
        ("Rank shift targets: 1, 2, 5, 10, 20 positions", ("rank_shift_targets", [1, 2, 5, 10, 20])),
        ("encoder (embedding dim=96, heads=4)", ("hidden_size", 96)),
        ("Each U-Net: initial dim=128", ("initial_dim", 128)),
        ("Each model generated a 49-frame video", ("num_frames", 49)),
        ("video latent space: resolution=256×256", ("image_size", [256, 256])),
        ("1D PDE solver grid: resolution=120", ("resolution", 120)),
        ("RoBERTa-large fine-tuned on 6 GLUE tasks at ranks r ∈ {8, 16, 24}", ("ranks", [8, 16, 24])),
        ("the spatial domain is divided into S=40 segments", ("S", 40)),
    ],
)
def test_names_follow_the_claims_context(claim, expected):
    assert expected in pairs(claim)


@pytest.mark.parametrize(
    ("claim", "wrong_name"),
    [
        ("Predict 80 stored timesteps of advection evolution, compare against DDPM", "diffusion_steps"),
        ("Autoregressive generation: 48 frames with 6 AR steps", "num_steps"),
        ("1D Burgers dataset: 81 stored time steps, 120 grid points", "num_steps"),
        ("ODE parameters: epsilon in [0.0, 0.2] (initial position)", "adam_epsilon"),
        ("Head interpolation with alpha in [0, 1], then LoRA-style merging", "lora_alpha"),
        ("Ablation: training sample size. Reduce training set to 0.2, 0.4 of full 9000 samples", "ablation"),
        ("Zero-shot super-resolution: evaluate at 160x240 (1x), 320x480 (2x)", "image_size"),
    ],
)
def test_no_typed_check_under_a_name_the_context_contradicts(claim, wrong_name):
    assert wrong_name not in names(claim)


@pytest.mark.parametrize(
    "claim",
    [
        "Data collection: For i = 1 to n_responses_per_model do query the model",
        "AR inference loop: for each AR step k (k = 0, 1, 2, ...) denoise the chunk",
        "DDPM reverse step: x = mu + sigma * z, where z ~ N(0, I) if k > 1 else z = 0",
        "Loss mask (m_i = 1 if i ≥ P else 0)",
        "Solution operator: u[0:S_x, 0:S_y, t=0] -> u[0:S_x, 0:S_y, t=3]",
        "Mode switch: k=1 corresponds to the deterministic operator",
        "Efficiency ratio: eta = (4 * 16^2)^2 / (2^2 + 4^2) = 15",
        "Encoder: y = E_omega(x), x_hat = D_omega(y)",
        "Compute chunk-wise FVD between AR step 1 and steps 2-6",
        "shifting a low-ranked model by 1 to 50 positions",
    ],
)
def test_formulas_and_pseudo_code_give_no_values(claim):
    assert pairs(claim, "D2") == []


# ----- one parameter at two values, measurement batches, baselines that are not library calls -------------
def compiled(claim: str, dimension: str = "D3"):
    return compile_claim(SAU(id="p-D3-001", dimension=dimension, claim=claim))


@pytest.mark.parametrize(
    "claim",
    ["Models: BERT-base (LoRA r=8 vs LoRA-SB r=16)", "Learning rates: lr=1e-4 vs lr=3e-4 for the baseline"],
)
def test_one_parameter_at_two_values_is_left_to_the_judge(claim):
    result = compiled(claim)
    assert [c for c in result.checks if c.kind == "value"] == []
    assert result.fragments[-1].outcome == "leftover"
    assert "compared at two values" in result.fragments[-1].reason


def test_methods_side_by_side_with_one_setting_still_compile():
    assert pairs("Mistral-7B vs Gemma-2 9B: lr=1e-4") == [("learning_rate", 0.0001)]


def test_a_measurement_batch_is_the_evaluation_batch():
    assert pairs("Report inference time (batch 1, one GPU) for every model", "D3") == [("eval_batch_size", 1)]
    assert pairs("Training: batch size 32; evaluation batch size 128") == [
        ("minibatch_size", 32),
        ("eval_batch_size", 128),
    ]


def test_baseline_names_are_baseline_checks_not_library_calls():
    result = compiled("Compare our solver against DDPM, FNO and U-Net on the 2D task")
    assert [(c.kind, getattr(c, "name", None)) for c in result.checks] == [
        ("protocol", "DDPM"),
        ("protocol", "FNO"),
        ("protocol", "U-Net"),
    ]


def test_a_named_wavelet_transform_accepts_any_wavelet_library():
    (check,) = compiled("Data preparation: a 3D DWT of every trajectory", "D2").checks
    assert check.kind == "call"
    targets = [t.strip() for t in check.target.split("|")]
    assert {"pywt.wavedecn", "ptwt.wavedec3", "pytorch_wavelets.DWTForward"} <= set(targets)


def test_plural_figure_references_are_context():
    result = compiled("Evaluate on the held-out split. Results: Figures 5 and 6")
    assert result.fragments[-1].outcome == "context"


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("clip range epsilon 0.2", [("clip_range", 0.2)]),
        ("discount γ 0.99", [("gamma", 0.99)]),
        ("weight decay lambda 0.01", [("weight_decay", 0.01)]),
        ("batch size B 256", [("minibatch_size", 256)]),
        ("30 positive samples and 30 negative samples", [("num_positive_samples", 30), ("num_negative_samples", 30)]),
    ],
)
def test_a_phrase_names_the_value_its_paper_symbol_stands_before(claim, expected):
    assert pairs(claim) == expected


def test_selection_on_a_held_out_validation_set_is_a_protocol_check_not_a_dataset_statistic():
    result = compiled("Hyperparameters are selected on a held-out validation set of 5,000 images")
    assert [(c.kind, c.rule) for c in result.checks] == [("protocol", "select-on-validation")]
    assert result.coverage == "full"


def test_architectures_in_a_baseline_list_are_baselines():
    result = compiled("Baselines: ResNet-50, DeiT-S and Swin-T")
    assert [(c.kind, c.name) for c in result.checks] == [
        ("protocol", "ResNet-50"),
        ("protocol", "DeiT-S"),
        ("protocol", "Swin-T"),
    ]


def test_steps_per_rollout_are_the_rollout_length_not_the_training_length():
    assert pairs("2048 steps per rollout, trained for 1M steps") == [("rollout_steps", 2048), ("num_steps", 1000000)]


def test_a_qualified_metric_is_the_metric_and_its_qualifier_is_reported():
    result = compiled("Metrics: MSE at the finest resolution, relative L2 error")
    assert [(c.rule, c.expect) for c in result.checks] == [("metric", "MSE"), ("metric", "relative L2 error")]
    assert "at the finest resolution" in result.fragments[0].reason
    assert result.coverage == "partial"


def test_a_unit_after_a_metric_is_not_a_qualifier():
    result = compiled("Metrics: total cost in USD")
    assert [(c.rule, c.expect) for c in result.checks] == [("metric", "total cost")]
    assert result.coverage == "full"


def test_a_setting_in_words_goes_to_the_judge_not_to_context():
    # ("no data augmentation" is typed now: rule `augmentation`, tests/test_protocol_augmentation.py)
    result = compile_claim(SAU(id="p-D1-002", dimension="D1", claim="lr=1e-3, no weight tying"))
    assert [(f.outcome, f.reason) for f in result.fragments] == [
        ("typed", ""),
        ("leftover", "no value, name, formula or sequence the compiler can type"),
    ]
    assert result.coverage == "partial"


def test_model_names_a_value_applies_to_are_context():
    result = compile_claim(SAU(id="p-D1-003", dimension="D1", claim="LoRA rank r=16 for Mistral-7B, Gemma-2 9B"))
    assert [c.name for c in result.checks] == ["lora_rank"]
    assert result.fragments[1].outcome == "context"
    assert result.coverage == "full"


def test_the_lead_phrase_of_a_claim_is_typed_by_the_value_it_names():
    result = compile_claim(SAU(id="p-D1-004", dimension="D1", claim="Target risk threshold; the rule requires R <= 0.3 = 0.3"))
    assert [(c.name, c.expect) for c in result.checks] == [("risk_threshold", 0.3)]
    assert [f.outcome for f in result.fragments] == ["typed", "typed"]
    assert result.fragments[0].checks == (0,)


def test_a_lora_claim_names_its_rank_alpha_and_dropout_anywhere_in_it():
    assert pairs("LoRA adapters with rank 16, α = 32 and dropout 0.05 on the attention projections") == [
        ("lora_rank", 16),
        ("lora_alpha", 32),
        ("lora_dropout", 0.05),
    ]


def test_a_rank_outside_a_lora_claim_is_not_lora_rank():
    assert pairs("The matrix has rank 4") == []
    assert pairs("Transformer: dropout 0.1 on attention weights") == []


def test_a_sweep_under_a_plural_name_is_the_runs_singular_parameter():
    result = compile_claim(SAU(id="p-D1-005", dimension="D1", claim="LoRA ranks r ∈ {8, 16, 24}"))
    assert [(c.name, c.sweep) for c in result.checks] == [("lora_rank", [8, 16, 24])]


def test_a_set_of_seeds_is_a_seed_count():
    result = compile_claim(SAU(id="p-D3-002", dimension="D3", claim="seeds ∈ {0, 1, 2}"))
    assert [(c.kind, c.rule, c.expect) for c in result.checks] == [("protocol", "seeds", 3)]


def test_one_parameter_at_two_values_in_an_ablation_is_a_sweep_of_both():
    result = compiled("Drop path ablation: drop_path=0 vs. drop_path=0.1 on all VTAB-1K tasks")
    assert [c.model_dump(exclude_none=True, exclude_defaults=True) for c in result.checks] == [
        {"name": "drop_path", "sweep": [0, 0.1]},
        {"rule": "dataset", "expect": "VTAB-1K"},
    ]
    assert result.coverage == "full"


def test_a_labelled_dataset_outside_the_vocabulary_is_a_dataset_check():
    result = compiled("Datasets: CIFAR-10 and Tiny Shakespeare")
    assert [(c.rule, c.expect) for c in result.checks] == [("dataset", "CIFAR10"), ("dataset", "Tiny Shakespeare")]
    assert compiled("Dataset: the training data of the previous stage").checks == []
