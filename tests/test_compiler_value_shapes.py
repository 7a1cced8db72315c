"""Value shapes the fifth held-out set showed: a value a parameter cannot take is never checked under its name
(a fraction is no count, a 128×128 size no number of frames), a terse "γ 0.99" is a setting, a list of one
value per stage is one list setting, and words that look like a known parameter ("LR patches", "res blocks",
"clip 1.0" of a language model) are read for what they are."""

from __future__ import annotations

import pytest

from verifier.compiler import compile_claim
from verifier.spec.model import SAU


def compiled(claim: str, dimension: str = "D1"):
    return compile_claim(SAU(id="s-D1-001", dimension=dimension, claim=claim))


def values(claim: str) -> list[tuple]:
    return [(c.name, c.expect) for c in compiled(claim).checks if c.kind == "value"]


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        # a count or a size is a whole number: "stoch." is read, and 0.05 never becomes a number of layers
        ("stoch. depth 0.05, 12 layers", [("drop_path", 0.05), ("num_layers", 12)]),
        # the terse lists' symbol-then-number
        ("MAPPO: GAE λ 0.95, γ 0.99", [("gae_lambda", 0.95), ("gamma", 0.99)]),
        ("TD3+BC: alpha 2.5, tau 0.005", [("alpha", 2.5), ("tau", 0.005)]),
        ("mixup α 0.1 + cutmix α 1.0", [("cutmix_alpha", 1), ("mixup_alpha", 0.1)]),  # "α 0.1 +" is read by its mixup
        # the learning rate written after the optimizer it drives
        ("trained with Adam at 1e-3, batch size 64", [("learning_rate", 0.001), ("minibatch_size", 64)]),
        ("SGD @ 0.1 momentum 0.9", [("learning_rate", 0.1), ("momentum", 0.9)]),
        ("Adam at 10 epochs", []),  # not a rate
        # a hyphenated warm-up is the warmup
        ("after 2,500 warm-up updates", [("warmup_steps", 2500)]),
        ("a 1,000-step warm-up", [("warmup_steps", 1000)]),
        # "LR" of a patch is a low resolution, "res blocks" are residual blocks
        ("16 res blocks, 48×48 LR patches, lr 1e-4", [("num_res_blocks", 16), ("learning_rate", 0.0001)]),
        # an explicit key is a setting even before a noun that counts data
        ("n_cal = 1000 calibration images", [("n_cal", 1000)]),
    ],
)
def test_value_shapes(claim, expected):
    assert values(claim) == expected


def test_a_fraction_is_refused_as_a_count_with_the_reason():
    result = compiled("depth 0.05")
    assert values("depth 0.05") == []
    assert "not a whole number" in result.fragments[0].reason


def test_a_size_is_refused_as_a_count_but_a_per_hop_list_is_not():
    result = compiled("event frames 128×128")
    assert values("event frames 128×128") == [] and "is a size, not a count" in result.fragments[0].reason
    assert values("neighbour sample sizes [25, 10] for the two hops") == [("num_neighbors", [25, 10])]


def test_one_value_per_stage_is_one_list_setting():
    checks = [c for c in compiled("Our WRN-28-10 has three stages of 160, 320 and 640 channels").checks if c.kind == "value"]
    assert [(c.name, c.names, c.expect) for c in checks] == [("channels", ["channels", "stage_channels", "widths"], [160, 320, 640])]
    assert values("3, 4, 6 and 3 blocks per stage") == [("depths", [3, 4, 6, 3])]
    assert values("320 and 640 channels") == [("num_channels", 320), ("num_channels", 640)]  # no stage word: not one list


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("MoE decoder pretrain: lr 4e-4, clip 1.0, bf16", ("max_grad_norm", 1)),  # a language model's gradient clipping
        ("PPO on Atari: clip 0.1", ("clip_range", 0.1)),  # the ratio clip of an RL claim
        ("clip 0.2", ("clip_range", 0.2)),  # no context: as written
    ],
)
def test_clip_is_read_by_the_kind_of_training(claim, expected):
    assert expected in values(claim)


# ----- LaTeX math is not money, and its thin spaces do not cut a fragment ---------------------------------------
def test_latex_dollars_are_math_and_a_price_is_still_context():
    result = compiled(r"the auxiliary loss is $L_{aux} = \alpha \, N \sum_{i=1}^{N} f_i P_i$ with $\alpha = 10^{-2}$", "D2")
    assert [f.outcome for f in result.fragments] == ["typed"]  # one fragment: the "\," is inside the math
    assert [c.latex for c in result.checks if c.kind == "formula"] == [r"\alpha \, N \sum_{i=1}^{N} f_i P_i"]
    price = compiled("open-source models $1.80 per 1M output tokens")
    assert [f.outcome for f in price.fragments] == ["context"]


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        (r"with $\lambda_{\mathrm{gp}} = 10$", [("lam_gp", 10)]),
        (r"the text condition is dropped with $p_{\text{uncond}} = 0.1$", [("cond_drop_prob", 0.1)]),
        (r"$\sigma_{\max} = 80$", [("sigma_max", 80)]),
        (r"chunks of H = 50 actions for $50\,\mathrm{Hz}$ control", [("H", 50)]),  # a value and its unit, no formula
    ],
)
def test_a_latex_symbol_with_a_named_subscript_is_a_setting(claim, expected):
    assert values(claim) == expected


def test_a_subscripted_lambda_is_spelled_as_code_spells_it():
    check = next(c for c in compiled("WGAN-GP with λ_gp = 10").checks if c.kind == "value")
    assert "lambda_gp" in check.all_names()


# ----- datasets the vocabulary does not know, from a list a data cue introduces --------------------------------
def datasets(claim: str) -> list[str]:
    return [c.expect for c in compiled(claim, "D3").checks if c.kind == "protocol" and c.rule == "dataset"]


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("SR benchmarks: Set5, Set14, BSD100, Urban100 and Manga109 at ×4; PSNR and SSIM on the Y channel",
         ["Set5", "Set14", "BSD100", "Urban100", "Manga109"]),
        ("We evaluate on VQAv2 test-dev and GQA (accuracy), TextVQA without OCR tokens and MMMU val",
         ["GQA", "VQAv2", "TextVQA", "MMMU"]),  # the unlisted one, from the list a known one makes a list of datasets
        ("Unsupervised domain adaptation on Office-31 (6 tasks), Office-Home (12 tasks) and VisDA-2017: target accuracy",
         ["Office-31", "Office-Home", "VisDA-2017"]),
        ("Pose eval: MPII val (PCKh@0.5); CrowdPose test (AP); single-scale, flip test on; vs HRNet-W48, ViTPose-B",
         ["MPII", "CrowdPose"]),
        ("SR benchmarks: Set5, Set14 and PyTorch", ["Set5", "Set14"]),  # a library is no dataset
    ],
)
def test_a_data_cue_lists_datasets(claim, expected):
    assert datasets(claim) == expected


@pytest.mark.parametrize(
    "claim",
    [
        "evaluated on 8 A100 GPUs with PyTorch",  # hardware and a library
        "Evaluation: CLIP score with ViT-L/14 and FID",  # a metric named after a model
        "baselines: OpenCLIP ViT-B/16 trained on LAION-2B, EVA-CLIP and CoCa",  # a baseline's data, the baselines
        "P4: Evaluate PEFT methods on full-size datasets",  # a sentence's first word
        "Tabular benchmark: 5-fold cross-validation",  # a protocol, not a dataset
        "We evaluate on HumanEval",  # one item after a verb: the vocabulary's business
    ],
)
def test_no_dataset_is_made_from_other_names(claim):
    assert [d for d in datasets(claim) if d not in ("HumanEval",)] == []


# ----- the terse recipe's other shapes ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("crop 512×1024", [("image_size", [512, 1024])]),  # a size: "×1024" is no power of ten
        ("lr 2x10-4", [("learning_rate", 0.0002)]),  # ... while "x10-4" with its sign is one
        ("crop 256 residues", [("num_residues", 256)]),  # the unit counts, "crop" names no image
        ("crop scale (0.08, 1)", [("crop_scale", [0.08, 1])]),
        ("beam 4, lenpen 0.6", [("num_beams", 4), ("length_penalty", 0.6)]),
        ("backbone lr mult 0.1, poly 0.9", [("backbone_lr_mult", 0.1), ("poly_power", 0.9)]),
        ("joint BPE 32k", [("vocab_size", 32000)]),
        ("inverse_sqrt lr 1e-3", [("learning_rate", 0.001)]),  # the schedule's name is no part of the model
        ("max_tokens=3584/GPU × 8 GPUs", [("max_new_tokens", 3584)]),  # a per-device setting, no formula
        ("no label smoothing, without weight decay", [("label_smoothing", 0), ("weight_decay", 0)]),
        ("w/o dropout, no warmup", [("dropout", 0), ("warmup_steps", 0)]),  # off where the code never applies them
    ],
)
def test_terse_recipe_shapes(claim, expected):
    assert values(claim) == expected


def test_encoder_and_decoder_layers_of_a_sequence_to_sequence_model():
    result = compiled("Transformer-big WMT14 En-De: 6+6 layers, d_model 1024")
    checks = [(c.name, c.names, c.expect) for c in result.checks if c.kind == "value"]
    assert checks[:2] == [("num_layers", ["num_encoder_layers", "encoder_layers"], 6),
                          ("num_decoder_layers", ["decoder_num_layers", "decoder_layers", "decoder_depth"], 6)]
    assert any(c.kind == "protocol" and c.rule == "dataset" and c.expect == "WMT14" for c in result.checks)  # its label's
    assert "num_decoder_layers" not in [n for n, _ in values("a 6+6 layers ablation grid")]  # no sequence-to-sequence word


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("the residual loss is weighted by λ_r = 1 and the boundary loss by λ_b = 10", [("lam_r", 1), ("lam_b", 10)]),
        ("trained at batch 10 on 368×496 crops", [("image_size", [368, 496]), ("minibatch_size", 10)]),
        ("a learning rate of 0.1 divided by 10 at epochs 10, 16 and 22 of 24",
         [("lr_decay_rate", 0.1), ("learning_rate", 0.1), ("epochs", 24), ("lr_milestones", [10, 16, 22])]),
    ],
)
def test_second_symbols_crops_and_a_milestone_lists_total(claim, expected):
    assert values(claim) == expected
    assert all(not f.reason for f in compiled(claim).fragments)  # every number read


def test_a_metric_list_keeps_names_with_an_apostrophe_and_drops_what_a_metric_is_plotted_against():
    metrics = [c.expect for c in compiled("Metrics: accuracy and Cohen's kappa", "D3").checks if c.kind == "protocol"]
    assert metrics == ["accuracy", "Cohen's kappa"]
    plotted = compiled("Primary metric: Top-1 Accuracy vs. tunable parameter count", "D3")
    assert [c.expect for c in plotted.checks if c.kind == "protocol"] == ["accuracy"]


def test_an_acronym_in_a_labelled_baseline_list_is_a_method_even_when_a_metric_shares_it():
    checks = [(c.rule, c.name or c.expect) for c in compiled("baselines: DANN, CDAN and MCC", "D3").checks if c.kind == "protocol"]
    assert checks == [("baseline", "DANN"), ("baseline", "CDAN"), ("baseline", "MCC")]  # Minimum Class Confusion
    metrics = [c.expect for c in compiled("Metrics: accuracy and MCC", "D3").checks if c.kind == "protocol"]
    assert "Matthews correlation" in metrics  # outside a baseline list, the metric


def test_a_metric_list_cut_at_its_commas_is_read_whole():
    result = compiled("Metrics: BLEU, chrF++ and COMET-22", "D3")
    assert [c.expect for c in result.checks if c.kind == "protocol"] == ["BLEU", "chrF++", "COMET"]  # COMET-22 is COMET
    assert result.coverage == "full"
    qualified = compiled("Metrics: MSE at the finest resolution, MAE", "D3")  # a qualifier: each fragment reads its own
    assert [c.expect for c in qualified.checks if c.kind == "protocol"] == ["MSE", "MAE"]
