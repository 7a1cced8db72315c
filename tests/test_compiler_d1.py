"""D1 name inference: values named by labels, lead noun phrases, head nouns, lists, grids and per-case tables."""

from __future__ import annotations

import math

import pytest

from verifier.compiler import compile_claim
from verifier.compiler.numbers import parse_value
from verifier.spec.model import SAU


def compiled(claim: str, dimension: str = "D1"):
    return compile_claim(SAU(id="p-D1-001", dimension=dimension, claim=claim))


def values(claim: str) -> list[tuple[str, object]]:
    """(name, expect), or (name, ("sweep", values)) for a check over swept values."""
    return [(c.name, c.expect if c.sweep is None else ("sweep", c.sweep)) for c in compiled(claim).checks if c.kind == "value"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8x", 8),
        ("[0, pi]", [0, math.pi]),
        ("[2pi, 4π]", [2 * math.pi, 4 * math.pi]),
        ("[2, 3.5, 4] x1e3", [2000, 3500, 4000]),
        ("{1, 2} × 10^2", [100, 200]),
    ],
)
def test_numbers_with_multipliers_and_pi(text, expected):
    assert parse_value(text) == pytest.approx(expected)


def test_one_minus_symbol_is_solved_and_the_lead_names_the_last_value():
    result = compiled("Coverage level of the band; miss rate is 1 - gamma = 0.1 = 0.9")
    assert values("Coverage level of the band; miss rate is 1 - gamma = 0.1 = 0.9") == [
        ("coverage_level", 0.9),
        ("gamma", 0.9),
    ]
    assert result.coverage == "full"


def test_lead_noun_phrase_names_a_value_stated_with_its_derivation():
    result = compiled("Upper clipping bound; the score s must satisfy f(x, s) <= 2.5 = 2.5")
    assert values("Upper clipping bound; the score s must satisfy f(x, s) <= 2.5 = 2.5") == [("upper_clipping_bound", 2.5)]
    assert result.coverage == "full"


def test_a_lead_never_renames_a_value_its_own_key_names():
    assert values("Sampler chunk and window lengths: w=12, L_max=40")[1:] == [("l_max", 40)]


def test_counted_symbol_settings_and_description_keys_named_by_the_label():
    assert values("Four tau settings used for plotting the histogram in Figure 2 = [0.1, 0.2, 0.3, 0.4]") == [
        ("tau", ("sweep", [0.1, 0.2, 0.3, 0.4]))
    ]
    assert values("Task kind for ImageNet: controlling the top error in multiclass labelling = multiclass_classification") == [
        ("task_kind", "multiclass_classification")
    ]


def test_label_then_a_number_with_prose_after_it():
    assert values("Replay subsample fraction: 0.5% (1/200) of each task's buffer") == [("replay_subsample_fraction", 0.005)]
    # a number followed by its own noun is that noun's count, not the label's value
    assert values("Shared settings: 12 evaluated agents") == [("num_agents", 12)]


def test_lists_and_grids_after_a_noun_phrase_with_prose_after_them():
    assert values("Sweep configs: dropout probabilities [0.1, 0.2, 0.3] on the small model; noise grid [1, 2, 4] x1e-2 for the large one") == [
        ("dropout_probabilities", ("sweep", [0.1, 0.2, 0.3])),  # the label says they are swept
        ("noise", ("sweep", [0.01, 0.02, 0.04])),  # a grid
    ]
    assert values("The encoder applies per-level pooling factors of 4, 2, and 1 to the three feature maps") == [
        ("pooling_factors", [4, 2, 1])
    ]
    assert values("Noise levels evaluated in the study: 0.5 (strong), 0.2 (mild), 0.0") == [("noise", [0.5, 0.2, 0])]


def test_per_case_tables_and_qualified_counts():
    assert values("Data: 4x10^3 samples for task A, 2x10^3 for task B, 300 and 60 samples for task C") == [
        ("num_samples", 4000),
        ("num_samples", 2000),
        ("num_samples", 300),
        ("num_samples", 60),
    ]
    assert values("Per pair: 30 positive samples and 30 randomly drawn negative samples") == [
        ("num_positive_samples", 30),
        ("num_negative_samples", 30),
    ]
    assert values("Recurrent core: 3 static + 5 dynamic layers, batch=32") == [
        ("num_static_layers", 3),
        ("num_dynamic_layers", 5),
        ("minibatch_size", 32),
    ]


def test_rates_intervals_lengths_and_trailing_assignments():
    assert values("Simulated detector: 90% detection accuracy, 10% false positive rate") == [
        ("detection_accuracy", 0.9),
        ("false_positive_rate", 0.1),
    ]
    assert values("Leaderboard scores recomputed every 500 simulated games") == [("update_interval", 500)]
    assert values("The corpus holds sequences of length 128") == [("sequence_length", 128)]
    assert values("spatial domain x in [0, 2pi] with N=64 points") == [("spatial_domain", [0, 2 * math.pi]), ("N", 64)]
    # the values after a symbol's own noun are read too; the prose before it ("we sample") names nothing
    assert values("for every prompt we sample G = 8 completions at temperature T = 1.0 with at most 1024 new tokens") == [
        ("G", 8), ("temperature", 1), ("max_new_tokens", 1024)]


def test_word_valued_settings_and_precision():
    assert values("Transform: 2D DWT using db2 wavelet, reflect padding mode, bf16 mixed precision") == [
        ("wavelet", "db2"),
        ("padding_mode", "reflect"),
        ("dtype", "bf16"),
    ]
    # a word before "wavelet" that is not a wavelet family or known value names nothing
    assert values("Compare the discrete wavelet transform against the FFT") == []


def test_nested_label_and_data_time_steps():
    result = compiled("rollout config: AR steps: 3, total frames 48")
    assert [(c.name, c.expect) for c in result.checks if c.kind == "value"] == [("num_ar_steps", 3), ("num_frames", 48)]
    assert values("Heat equation data: 64 stored timesteps per trajectory") == [("num_time_steps", 64)]


def test_precision_guards_keep_wrong_names_out():
    # "rate of trials exceeding the threshold" is a rate, not the threshold
    assert values("maximum tolerated rate of runs exceeding the risk threshold = 0.1") == [("maximum_tolerated_rate", 0.1)]
    # a remark in parentheses after a value is not read as more values
    assert values("finetune config: steps=12k (stage 2, 48-frame)") == [("num_steps", 12000)]
    # hardware with a time range is context, not an unnamed number
    result = compiled("Training: lr=3e-4. Runs on 2 A100 GPUs (3.5-4h)")
    assert result.coverage == "full" and values("Training: lr=3e-4. Runs on 2 A100 GPUs (3.5-4h)") == [("learning_rate", 0.0003)]


def test_statistics_labels_and_parameter_variants():
    # counts under a statistics label describe the data: context, no check
    result = compiled("Characteristics of the crawled forum corpus: 120,500 posts from 8,200 unique users; 900 in spam")
    assert result.checks == [] and all(f.outcome == "context" for f in result.fragments)
    # sizes under a parameter label are counts; the settings that give them are read from the parentheses
    assert values("The decoder comes in two parameter variants: 20M (base dims 32) and 90M (base dims 96)") == [
        ("base_dim", 32),
        ("base_dim", 96),
    ]
    assert values("Backbone sizes: small-5M/384d, large-80M/1024d") == [("hidden_size", 384), ("hidden_size", 1024)]


def test_model_named_by_a_role_label_and_code_identifiers_at_the_end_of_a_key():
    assert values("Sweep: 0.1, 0.2, 0.3. Reference model: mistral-7b (fixed across runs)") == [("reference_model", "mistral-7b")]
    assert values("finetuned on 100 trajectories for 2k steps with lambda_KL=0.5") == [("lambda_kl", 0.5), ("num_steps", 2000)]


def test_formula_with_symbol_definitions_is_typed_and_definitions_are_context():
    claim = "Terms of the cost model c_total = a * N + b: N = number of queries sent. b = fixed setup cost per run"
    result = compiled(claim)
    assert [c.kind for c in result.checks] == ["formula"]
    assert result.fragments[0].outcome == "typed"


def test_plural_nouns_restatements_and_paired_names():
    assert values("Prompting: 40 class text prompts per image") == [("num_prompts", 40)]
    assert values("Target miss rate; equivalent to 95% coverage target = 0.05") == [("target_miss_rate", 0.05)]
    assert values("Simulation: symmetric 2% FPR/FNR") == [("false_positive_rate", 0.02), ("false_negative_rate", 0.02)]
    assert values("Grid: 0.5-degree latitude-longitude resolution") == [("resolution", 0.5)]


# ----- comma-split damage, scopes, flags and benchmark structure --------------------------------------------------
def fragments(claim: str) -> list[tuple[str, str]]:
    return [(f.text, f.outcome) for f in compiled(claim).fragments]


def test_a_coordinate_pair_is_not_cut_at_its_comma_and_each_coordinate_gets_the_domain():
    claim = "Heat equation domain: spatial x,y in [0,2] with N_x=N_y=128 points, Reynolds number Re=500"
    result = compiled(claim)
    assert values(claim) == [("x", [0, 2]), ("y", [0, 2]), ("n_y", 128), ("N_x", 128), ("reynolds_number", 500)]
    assert fragments(claim)[0] == ("Heat equation domain: spatial x,y in [0,2] with N_x=N_y=128 points", "typed")
    assert result.coverage == "full"


def test_names_after_a_scoped_value_are_the_rest_of_its_scope_not_untyped_settings():
    claim = "Sampler config: sampling_steps=25, DDIM_eta=0.5 for Darcy, Helmholtz, and Kolmogorov flow"
    result = compiled(claim)
    assert values(claim) == [("sampling_steps", 25), ("ddim_eta", 0.5)]
    assert fragments(claim)[2:] == [("Helmholtz", "context"), ("and Kolmogorov flow", "context")]
    assert result.coverage == "full"
    # without the "for <Name>" that opens the scope, bare names stay for the judge
    assert compiled("Sampler config: sampling_steps=25, Helmholtz, Kolmogorov flow").coverage == "partial"


def test_one_d_and_two_d_qualifiers_do_not_hide_hardware_context():
    claim = "Adam, lr=3e-4; 1D runs on 1 V100 GPU (5.5-6h), 3D on 4 H100 GPUs (20-21h)"
    result = compiled(claim)
    assert [o for _, o in fragments(claim)][-2:] == ["typed", "typed"]  # hardware checks, one run each
    assert [c.params for c in result.checks if c.kind == "protocol"] == [
        {"gpus": 1, "gpu": "V100", "any_run": True}, {"gpus": 4, "gpu": "H100", "any_run": True}]
    assert result.coverage == "full"
    # a qualifier next to a setting is still read as a setting, not context
    assert values("2D runs use batch_size=8") == [("minibatch_size", 8)]


def test_a_colon_inside_a_parenthetical_remark_is_not_a_label():
    claim = "Corpus setup: 6 topic categories (Table 2: sports, politics, science, art, travel, food); 300 prompts per category"
    assert values(claim) == [("num_categories", 6), ("num_prompts", 300)]
    assert compiled(claim).coverage == "full"


def test_a_true_false_pair_is_a_switch_tried_both_ways():
    assert parse_value("[true, false]") == [True, False]
    assert values("Adapter search: scale range [0.1, 1, 10], zero init [true, false]") == [
        ("scale", ("sweep", [0.1, 1, 10])),
        ("zero_init", ("sweep", [True, False])),
    ]


def test_counts_that_describe_a_benchmark_are_not_settings():
    claim = "GLUE benchmark: 9 tasks in 3 groups, 500 training samples per task"
    assert values(claim) == [("num_train_samples", 500)]
    # outside a benchmark's description a task count is still a setting
    assert values("Meta-training: 5 tasks per batch") == [("num_tasks", 5)]


def test_a_parenthetical_ratio_restating_a_named_split_is_not_a_train_test_split():
    checks = compiled("Data: train/val split 900/100 (90/10 split)").checks
    assert [c.expect for c in checks if c.kind == "protocol" and c.rule == "split-ratio"] == [{"train": 0.9, "val": 0.1}]
    # an unnamed split on its own still reads as train/test
    checks = compiled("Data: 90/10 split").checks
    assert [c.expect for c in checks if c.kind == "protocol" and c.rule == "split-ratio"] == [{"train": 0.9, "test": 0.1}]


def test_a_bare_role_word_names_no_setting():
    result = compiled("Super-resolution: target [64,128,128]")
    assert values("Super-resolution: target [64,128,128]") == []
    assert result.coverage == "none"


def test_factors_of_a_product_are_not_two_settings():
    claim = "Adapter stack: rank=4, 24 layers x 4 matrices Q/K/V/O"
    assert values(claim) == [("lora_rank", 4)]
    assert compiled(claim).fragments[1].reason == "number(s) 24, 4 with no parameter name"


def test_a_value_the_method_achieves_is_a_reported_result():
    claim = "The speed-up eta=12 is achieved by token merging compared to a baseline of 8 frames"
    result = compiled(claim)
    assert result.checks == []
    assert [(f.outcome, f.reason.split(":")[0]) for f in result.fragments] == [("context", "reported result")]
    # the same value stated as a setting is still read
    assert values("Token merging: merge ratio r=0.5, speed-up eta=12") == [("merge_ratio", 0.5), ("speed_up", 12)]


def test_the_reason_left_for_the_judge_names_what_no_check_kind_covers():
    result = compiled("Rollout config: horizon=16, evaluation config: AR steps: 3-4, models: gpt-4o-mini-2024-07-18 (OpenAI)")
    assert [f.outcome for f in result.fragments if f.outcome == "leftover"] == []
    # a range for one setting is a `within` check, never a list the value would have to equal
    assert [(c.name, c.within, c.expect) for c in result.checks if c.kind == "value" and c.within] == [("num_ar_steps", [3, 4], None)]
    span = compiled("Adapter placement: Layers: 6-11")
    assert [c for c in span.checks if c.kind == "value"] == []
    assert [f.reason for f in span.fragments if f.outcome == "leftover"][0].startswith("a range (6-11) with no parameter name")
    # an API id with its provider is a model the run queries: the `model` rule checks it
    assert [c.expect for c in result.checks if c.kind == "protocol" and c.rule == "model"] == ["gpt-4o-mini-2024-07-18"]
    assert [f.outcome for f in result.fragments if "gpt-4o" in f.text] == ["typed"]


def test_title_case_words_after_a_scope_are_not_its_names_unless_the_list_ends_with_and():
    claim = "Training: lr=0.1 for Stage A, Xavier Init"
    result = compiled(claim)
    assert [f.outcome for f in result.fragments] == ["typed", "typed"]  # Xavier Init is its own fact, not a scope name
    assert result.checks[-1].target.startswith("torch.nn.init.xavier_uniform_ | ")


def test_samples_per_batch_is_the_batch_size_not_a_dataset_statistic():
    claim = "Detector training: 90K iterations, 8 images per batch, base learning rate 0.01"
    assert values(claim) == [("num_steps", 90000), ("minibatch_size", 8), ("learning_rate", 0.01)]
    assert compiled(claim).coverage == "full"
    # images counted without "per batch" are still the dataset's
    assert values("Dataset: 5000 images, batch size 8") == [("minibatch_size", 8)]


def test_a_number_list_closed_by_and_is_not_cut_at_its_commas():
    claim = "SGD, 120 epochs, learning rate decayed by 10x at epochs 40, 80 and 100"
    assert ("lr_milestones", [40, 80, 100]) in values(claim)
    assert [f.text for f in compiled(claim).fragments][-1] == "learning rate decayed by 10x at epochs 40, 80 and 100"
    # a list with no closing "and" may go on in the next fragment: not read as milestones
    assert ("lr_milestones", [40, 80]) not in values("lr decayed at epochs 40, 80, batch size 64")


def test_a_symbol_interval_is_also_looked_for_as_the_symbol_range():
    (check,) = [c for c in compiled("Forcing: alpha in [1,3]").checks if c.kind == "value"]
    assert (check.name, check.names, check.expect) == ("alpha", ["alpha_range", "alpha_domain", "alpha_bounds"], [1, 3])
    # a tuple-valued setting keeps its own name only
    (betas,) = [c for c in compiled("Adam betas=(0.9, 0.999)").checks if c.kind == "value"]
    assert not any(n.endswith("_range") for n in betas.all_names())


@pytest.mark.parametrize(
    "claim, expect",
    [
        ("Query each model and output 512 tokens", 512),
        ("generate up to 256 tokens per prompt", 256),
        ("responses of at most 1024 tokens", 1024),
    ],
)
def test_a_generation_verb_before_a_token_count_names_the_generation_length(claim, expect):
    result = compiled(claim)
    assert [(c.name, c.expect) for c in result.checks] == [("max_new_tokens", expect)]
    assert [f.outcome for f in result.fragments] == ["typed"]


def test_a_token_count_without_a_generation_verb_is_not_a_generation_length():
    assert all(c.name != "max_new_tokens" for c in compiled("trained on sequences of 2048 tokens").checks)


def test_a_qlora_claim_names_the_adapter_settings():
    result = compiled("QLoRA fine-tuning: rank 64, alpha 16, dropout 0.1")
    assert [(c.name, c.expect) for c in result.checks] == [("lora_rank", 64), ("lora_alpha", 16), ("lora_dropout", 0.1)]


def test_exact_match_accuracy_is_one_metric():
    result = compiled("Evaluation on GSM8K; metric: exact-match accuracy.", "D3")
    assert [c.expect for c in result.checks if c.kind == "protocol" and c.rule == "metric"] == ["exact match"]


def test_a_derived_count_that_the_claims_own_setting_gives_is_context():
    from compiler_helpers import compiled

    holds = compiled("Zoned PDE2: the domain is divided into S=40 segments, yielding 2S+2=82 total parameters.", "D1")
    assert holds.coverage == "full"
    assert [(f.outcome, f.reason) for f in holds.fragments][1] == (
        "context", "derived count: 2S+2 = 82 follows from S = 40, which its value check decides")
    assert [(c.name, c.expect) for c in holds.checks] == [("S", 40)]
    # arithmetic that does not hold, or a symbol the claim never sets, is still the judge's
    for claim in ("The domain is divided into S=40 segments, yielding 2S+2=84 total parameters.",
                  "Zoned PDE2: yielding 2S+2=82 total parameters."):
        last = compiled(claim, "D1").fragments[-1]
        assert last.outcome == "leftover" and last.reason.startswith("a derived count")


@pytest.mark.parametrize("claim, expect", [
    # a symbol's value named by the words after it, capitalised or not
    ("Spectral convolution: N = 16 Fourier modes per dimension, width 64.", [("fourier_modes", 16), ("hidden_size", 64)]),
    # a count the claim derives without an operator sign is still the claim's own arithmetic
    ("N = 16 Fourier modes, giving 2N = 32 real coefficients per channel.", [("fourier_modes", 16)]),
    # the step size of a written gradient step, a momentum coefficient, a Polyak τ
    ("Manual SGD: w ← w − η ∇_w L, with η = 0.1.", [("learning_rate", 0.1)]),
    ("Momentum buffer: m ← β m + (1 − β) g, with β = 0.9.", [("momentum", 0.9)]),
    ("Soft target update after every gradient step: θ_targ ← τ θ + (1 − τ) θ_targ, τ = 0.005.", [("tau_target", 0.005)]),
    # ... and the same symbols elsewhere keep their names
    ("InfoNCE with temperature τ = 0.07.", [("temperature", 0.07)]),
    ("VPT-Deep: 10 learnable prompt tokens per layer, batch size 64.", [("prompt_length", 10), ("minibatch_size", 64)]),
])
def test_symbols_named_by_what_the_claim_says_they_are(claim, expect):
    from compiler_helpers import compiled, dumps

    assert [(c["name"], c["expect"]) for c in dumps(compiled(claim, "D1")) if "name" in c] == expect


def test_a_value_the_words_rename_drops_the_parameters_a_heading_suggested():
    from compiler_helpers import compiled

    # "weight decay" in the heading is λ's, not η's: a repo's weight_decay = 0.1 must not pass η's check
    result = compiled("Manual SGD with coupled weight decay: w ← w − η (∇_w L + λ w), with η = 0.1.", "D2")
    (step,) = [c for c in result.checks if getattr(c, "name", None) == "learning_rate"]
    assert step.expect == 0.1 and "weight_decay" not in (step.names or [])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a 32K BPE vocabulary", [("vocab_size", 32000)]),
        ("frame stack of 4", [("frame_stack", 4)]),
        ("4 stacked frames per observation", [("frame_stack", 4)]),
        ("replay ratio 1, batch size 512", [("replay_ratio", 1), ("minibatch_size", 512)]),
        ("n-step returns with n = 3", [("n_step", 3)]),
        ("up to 30 no-op actions at the start of each episode", [("noop_max", 30)]),
        ("horizontal flip with probability 0.5", [("flip_prob", 0.5)]),
        ("the class label is dropped with probability 10%", [("cond_drop_prob", 0.1)]),
        ("label dropout of 10%", [("cond_drop_prob", 0.1)]),
        ("token dimension 192", [("hidden_size", 192)]),
        ("test images are resized to 256 and center-cropped to 224", [("resize_size", 256), ("image_size", 224)]),
        ("rotary embeddings with base θ = 10,000", [("rope_theta", 10000)]),
        ("RoPE base 500000", [("rope_theta", 500000)]),
        ("Adam betas (0.9, 0.999)", [("betas", [0.9, 0.999])]),
        ("AdamW with betas of 0.9 and 0.95, weight decay 0.1", [("betas", [0.9, 0.95]), ("weight_decay", 0.1)]),
        ("linear β schedule from 1e-4 to 0.02", [("beta_start", 0.0001), ("beta_end", 0.02)]),
    ],
)
def test_common_settings_of_rl_vision_llm_and_diffusion_papers_are_named(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("theta = 0.5", [("theta", 0.5)]),  # no rotary context: the symbol stays itself
        ("a grid of n = 64 points", [("n", 64)]),
        ("beta from 0.1 to 20", []),  # an SDE's beta_min/beta_max or anything else: no schedule word
        ("Initialization data subsample fraction: 0.1%", [("initialization_data_subsample_fraction", 0.001)]),
    ],
)
def test_the_new_names_do_not_capture_other_settings(text, expected):
    assert values(text) == expected


FLIP = '''from torchvision import transforms

train_tf = transforms.Compose([
    transforms.RandomResizedCrop(224),
    {flip},
    transforms.ToTensor(),
])
'''


@pytest.mark.parametrize(
    ("flip", "status", "score"),
    [
        ("transforms.RandomHorizontalFlip()", "pass", 1.0),  # torchvision's documented default p=0.5
        ("transforms.RandomHorizontalFlip(p=0.5)", "pass", 1.0),
        ("transforms.RandomHorizontalFlip(p=0.2)", "partial", 0.75),  # within 3x: a minor deviation
    ],
)
def test_a_flip_probability_is_read_from_the_transform(tmp_path, flip, status, score):
    from values_helpers import indexed_repo

    from verifier.checks.base import Context
    from verifier.checks.value import check_value
    from verifier.spec.model import Spec

    (check,) = [c for c in compiled("horizontal flip with probability 0.5").checks if c.kind == "value"]
    result = check_value(check, Context(index=indexed_repo(tmp_path, {"data.py": FLIP.format(flip=flip)}), spec=Spec()))
    assert (result.status.value, result.score) == (status, score), result.message
    assert [(e.file, e.line) for e in result.evidence][:1] == [("data.py", 5)]


def test_words_saying_how_a_listed_series_runs_restate_the_list():
    result = compiled("per-layer dropout of 0.1, 0.2 and 0.3, with deeper layers more strongly regularised")
    assert values("per-layer dropout of 0.1, 0.2 and 0.3, with deeper layers more strongly regularised") == [("dropout", [0.1, 0.2, 0.3])]
    assert [f.outcome for f in result.fragments] == ["typed", "context"] and result.coverage == "full"


def test_the_same_words_after_one_value_are_left_for_the_judge():
    result = compiled("dropout 0.1, with deeper layers more strongly regularised")
    assert [f.outcome for f in result.fragments] == ["typed", "leftover"] and result.coverage == "partial"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a value outside the range the parameter can take is not that parameter
        ("MC dropout: dropout p = 0.1 in every layer, T = 50 stochastic forward passes at test time", [("dropout", 0.1)]),
        ("dropout 50", []),
        # a release year is part of the data's name
        ("trained on ImageNet 2012 for 90 epochs", [("epochs", 90)]),
        ("5-fold cross-validation on the BraTS 2021 training cases", [("num_folds", 5)]),  # the folds; the year is the data's name
        # a length of time is no clip range, no class count
        ("a 3-second reference clip", []),
        ("clip 0.2", [("clip_range", 0.2)]),
        # Adam's pair written with β, a tuple of symbols set at once, a mel band's edges
        ("Adam with lr 0.002 and β = (0, 0.99), batch size 32", [("betas", [0, 0.99]), ("learning_rate", 0.002), ("minibatch_size", 32)]),
        ("AdamW with β=(0.8, 0.99) and weight decay 0.01", [("betas", [0.8, 0.99]), ("weight_decay", 0.01)]),
        ("the VAE uses β = 4", [("beta_kl", 4)]),
        ("DP-SGD with (ε, δ) = (8, 10^-5)", [("target_epsilon", 8), ("target_delta", 1e-05)]),
        ("mel spectrograms between 0 and 8 kHz", [("fmin", 0), ("fmax", 8000)]),
        ("audio at 16 kHz", [("sample_rate", 16000)]),
        ("test images are resized to 256 and center-cropped to 224", [("resize_size", 256), ("image_size", 224)]),
        # the words around a symbol or a shared word say which parameter it is
        ("temperature T = 4, α = 0.9 on the soft-target term", [("temperature", 4), ("kd_alpha", 0.9)]),
        ("SGD with lr 0.1, momentum 0.9 and weight decay 1e-4 from a ResNet-34 teacher",
         [("learning_rate", 0.1), ("momentum", 0.9), ("weight_decay", 0.0001)]),
        ("differential privacy with ε = 8 and δ = 1e-5", [("target_epsilon", 8), ("target_delta", 1e-05)]),
    ],
)
def test_settings_other_papers_write_are_named_and_nothing_else_is(text, expected):
    assert values(text) == expected


def test_a_value_refused_by_its_range_says_why():
    (fragment,) = compiled("dropout 50").fragments
    assert (fragment.outcome, fragment.reason) == ("leftover", "50 is outside the range of dropout [0, 1]: not that parameter")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("k = 20 nearest neighbours for the dynamic graph", [("num_neighbors", 20)]),
        ("LightGCN: K = 3 propagation layers", [("num_layers", 3)]),
    ],
)
def test_a_symbol_is_named_by_the_words_after_it(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("MAML, 5-way 1-shot", [("num_ways", 5), ("num_shots", 1)]),
        ("evaluated 5-way 1-shot and 5-shot", [("num_ways", 5), ("num_shots", ("sweep", [1, 5]))]),
        ("documents split into 512-token chunks with a 64-token overlap", [("chunk_size", 512), ("chunk_overlap", 64)]),
        ("top-10 retrieval", [("top_k", 10)]),
        ("top-1 accuracy of 76.1", []),  # a metric, not a retrieval depth
        ("clips of 16 frames with temporal stride 4", [("num_frames", 16), ("frame_stride", 4)]),
        ("Adam lr 1e-4 decayed by 0.96 every 100K steps", [("lr_decay_rate", 0.96), ("lr_step_size", 100000), ("learning_rate", 0.0001)]),
        ("learning rate 2e-4 decayed by a factor 0.999875 every epoch", [("lr_decay_rate", 0.999875), ("learning_rate", 0.0002)]),
    ],
)
def test_settings_with_a_shape_of_their_own(text, expected):
    assert values(text) == expected


STEP = '''import torch

model = torch.nn.Linear(4, 2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size={every}, gamma={rate})
'''


@pytest.mark.parametrize(
    ("every", "rate", "statuses"),
    [("100000", "0.96", ["pass", "pass"]), ("100000", "0.5", ["partial", "pass"]), ("1000", "0.96", ["pass", "partial"])],
)
def test_a_step_decay_is_read_from_the_scheduler(tmp_path, every, rate, statuses):
    from values_helpers import indexed_repo

    from verifier.checks.base import Context
    from verifier.checks.value import check_value
    from verifier.spec.model import Spec

    checks = [c for c in compiled("Adam lr 1e-4 decayed by 0.96 every 100K steps").checks if getattr(c, "name", None) in ("lr_decay_rate", "lr_step_size")]
    ctx = Context(index=indexed_repo(tmp_path, {"train.py": STEP.format(every=every, rate=rate)}), spec=Spec())
    results = [check_value(c, ctx) for c in checks]
    assert [r.status.value for r in results] == statuses, [r.message for r in results]
    assert all((e.file, e.line) == ("train.py", 5) for r in results for e in r.evidence[:1])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Eight prompt categories, 200 prompts sampled per category", [("num_categories", 8), ("num_prompts", 200)]),
        ("two hidden layers with 256 units each", [("num_layers", 2), ("hidden_size", 256)]),
        ("a three-layer MLP", [("num_layers", 3)]),
        ("one of the models", []),  # "one" is never read as a count
        ("Three lambda settings used for the figure = [0.7, 0.8, 0.9]", []),  # the list's length, in words
        ("the first 3 layers are frozen", []),  # which layers, not how many the model has
        ("the mean over the final 10 evaluation episodes", [("num_episodes", 10)]),
    ],
)
def test_counts_in_words_and_selections(text, expected):
    assert [(n, v) for n, v in values(text) if not n.startswith("lambda")] == expected


def test_runs_counted_in_words_are_a_seeds_check():
    (check,) = compiled("Results averaged over three random seeds", "D3").checks
    assert (check.rule, check.expect) == ("seeds", 3)


def test_a_method_claims_counts_in_words_are_prose():
    assert not compiled("The head compares two variants with a two-layer MLP", "D2").checks


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # values written in LaTeX
        ("learning rate $10^{-5}$", [("learning_rate", 1e-05)]),
        ("learning rate $5\\times10^{-3}$", [("learning_rate", 0.005)]),
        ("weight decay 5 \\times 10^{-4}", [("weight_decay", 0.0005)]),
        ("batch size of $2{,}048$", [("minibatch_size", 2048)]),
        ("$\\eta = 3\\times 10^{-4}$ with linear decay", [("learning_rate", 0.0003)]),
        ("$25\\mathrm{K}$ initial random steps", [("learning_starts", 25000)]),
        # the terse style of generated SAU lists
        ("lr=3e-4, bs=64, 100k steps, warmup 2k, wd 0.05",
         [("learning_rate", 0.0003), ("minibatch_size", 64), ("num_steps", 100000), ("warmup_steps", 2000), ("weight_decay", 0.05)]),
        ("300 ep, 20 warmup ep", [("epochs", 300), ("warmup_epochs", 20)]),
        ("grad clip 1.0, clip 0.2", [("max_grad_norm", 1), ("clip_range", 0.2)]),
        ("β=(0.9, 0.95), mask ratio 75%", [("betas", [0.9, 0.95]), ("mask_ratio", 0.75)]),
        ("5 epochs of 4 minibatches per update", [("update_epochs", 5), ("num_minibatches", 4)]),
        ("peak lr 2.0e-4 -> 2.0e-5 (cosine)", [("learning_rate", 0.0002), ("min_learning_rate", 2e-05)]),
        ("mosaic switched off for the last 15 epochs of 300 epochs", [("epochs", 300)]),
    ],
)
def test_latex_values_and_terse_lists(text, expected):
    assert values(text) == expected


def test_a_formula_in_latex_is_left_as_written():
    from verifier.compiler.numbers import plain_latex_numbers

    assert plain_latex_numbers(r"$L = \frac{1}{N}\sum_i x_i^{2}$") == r"$L = \frac{1}{N}\sum_i x_i^{2}$"
    assert plain_latex_numbers(r"$\epsilon = 10^{-8}$") == "ε = 1e-8"


def test_the_masked_autoencoder_is_no_mean_absolute_error():
    assert not [c for c in compiled("MAE ViT-L pretrain: mask ratio 75%").checks if getattr(c, "rule", None) == "metric"]
    assert [c.expect for c in compiled("test MAE and RMSE on the held-out year", "D3").checks] == ["MAE", "RMSE"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$\\eta_0 = 0.01$ multiplied by $0.1$ every 30 epochs with SGD",
         [("lr_decay_rate", 0.1), ("lr_step_size", 30), ("learning_rate", 0.01)]),
        ("dropout 0.2 before a 100-way classifier", [("num_classes", 100), ("dropout", 0.2)]),
        ("focal loss with $\\alpha = 0.25$, $\\gamma = 2$", [("focal_alpha", 0.25), ("focal_gamma", 2)]),
        ("CatBoost: iterations=3000, depth=8, od_wait=100", [("n_estimators", 3000), ("max_depth", 8), ("early_stopping_rounds", 100)]),
        ("Rainbow: 3-step returns", [("n_step", 3)]),
        ("discount gamma 0.99", [("gamma", 0.99)]),
    ],
)
def test_the_words_of_a_method_name_its_settings(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("inner-loop lr α = 0.01, outer Adam lr β = 0.001", [("inner_lr", 0.01), ("learning_rate", 0.001)]),
        ("discount factor γ = 0.99", [("gamma", 0.99)]),
        ("KL weight β = 4", [("beta_kl", 4)]),
        ("with a = 3", [("a", 3)]),
    ],
)
def test_a_phrase_right_before_a_symbol_names_its_value(text, expected):
    assert values(text) == expected
