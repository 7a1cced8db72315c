"""A method name in a claim becomes a call check only when the claim says the code calls that API: not a piece
of a setting's identifier, not the inverse of the named transform, not a schedule of something other than the
learning rate, not a model that shares a decomposition's acronym."""

from __future__ import annotations

import pytest
from compiler_helpers import compiled, dumps

WAVEDEC = "pywt.wavedec | pywt.wavedec2"
WAVEREC = "pywt.waverec | pywt.waverec2"
COSINE = "torch.optim.lr_scheduler.CosineAnnealingLR"


def targets(text: str, dimension: str = "D2") -> list[str]:
    return [c["target"] for c in dumps(compiled(text, dimension)) if "target" in c]


@pytest.mark.parametrize(
    "text",
    ["Finetuned for 5k steps with lambda_VAE=1", "resnet_block_groups=8", "Model uses svd_rank=4 and lr 1e-3"],
)
def test_a_name_inside_an_identifier_is_a_setting_not_an_api(text: str) -> None:
    assert targets(text, "D1") == []


def test_a_one_letter_subscript_keeps_the_api() -> None:
    assert targets("Prediction: hat_y = argmax_j f_j(x)") == ["argmax"]


@pytest.mark.parametrize(
    "text, prefix",
    [
        ("Final output is obtained by inverse DWT on the coefficients", WAVEREC),
        ("IDWT is the inverse discrete wavelet transform", WAVEREC),
        ("Coefficients come from a discrete wavelet transform", WAVEDEC),
    ],
)
def test_the_inverse_transform_is_its_own_api(text: str, prefix: str) -> None:
    (target,) = targets(text)
    assert target.startswith(prefix)


def test_a_schedule_of_the_guidance_is_not_an_lr_scheduler() -> None:
    result = compiled("guidance_weight=120000 with cosine scheduler for guidance intensity", "D1")
    # the guidance's own schedule, a setting (guidance_schedule: cosine), never an LR scheduler call
    assert [c.get("name") for c in dumps(result)] == ["guidance_scale", "guidance_schedule"]
    assert not [c for c in result.checks if c.kind == "call"]
    assert targets("AdamW, lr 1e-4 with cosine scheduler", "D1")[1].startswith(COSINE)
    assert targets("cosine scheduler", "D1")[0].startswith(COSINE)


def test_svd_a_method_is_based_on_is_the_video_model() -> None:
    result = compiled("Baseline StreamT2V (based on SVD)", "D3")
    assert targets("Baseline StreamT2V (based on SVD)", "D3") == []
    assert any("Stable Video Diffusion" in f.reason for f in result.fragments)
    assert targets("V^T = SVD(Delta W)") == ["svd | svd_lowrank | svds"]


def test_a_bare_vae_is_not_stable_diffusions() -> None:
    assert targets("A VAE compresses the states", "D1") == []
    assert targets("VAE from Stable Diffusion", "D1") == ["AutoencoderKL | AutoencoderKLTemporalDecoder"]


@pytest.mark.parametrize(
    "text, dtype",
    [("torch.bfloat16 base model precision", "bfloat16"), ("Training uses DDP in float16 precision", "float16"),
     ("bf16 mixed precision training", "bf16")],
)
def test_a_number_format_is_not_the_precision_metric(text: str, dtype: str) -> None:
    checks = dumps(compiled(text, "D1"))
    assert {"name": "dtype", "expect": dtype} in checks
    assert not any(c.get("rule") == "metric" for c in checks)


def test_precision_as_a_metric_stays_one() -> None:
    assert [c["expect"] for c in dumps(compiled("Report precision, recall and F1", "D3"))] == ["precision", "recall", "F1"]


def test_a_metric_word_in_a_purpose_or_an_identifier_is_not_a_metric_check() -> None:
    purpose = dumps(compiled("Parameters are sampled from U(a, b) to ensure balanced coverage across the range", "D3"))
    assert not any(c.get("rule") == "metric" for c in purpose)
    signature = dumps(compiled("Algorithm: simulate(target_model, detection_accuracy, strategy)", "D2"))
    assert not any(c.get("rule") == "metric" for c in signature)
    assert [c["expect"] for c in dumps(compiled("Report coverage and interval length", "D3"))] == ["coverage", "interval length"]


def test_a_dirichlet_boundary_condition_is_a_setting_not_the_distribution(tmp_path) -> None:
    from values_helpers import indexed_repo as repo

    from verifier.checks.base import Context
    from verifier.checks.value import check_value
    from verifier.results import Status
    from verifier.spec.model import Spec

    result = compiled("nu=0.01 Dirichlet BC", "D1")
    assert dumps(result) == [{"name": "nu", "expect": 0.01}, {"name": "boundary_condition", "expect": "Dirichlet"}]
    assert [c["target"] for c in dumps(compiled("Number of Dirichlet samples = 1000", "D1")) if "target" in c] == [
        "dirichlet | torch.distributions.Dirichlet"]
    bc = result.checks[1]
    faithful = check_value(bc, Context(index=repo(tmp_path / "f", {"cfg.yaml": "nu: 0.01\nboundary_condition: dirichlet\n"}), spec=Spec()))
    assert (faithful.status, faithful.score) == (Status.pass_, 1.0)
    assert [(e.file, e.line) for e in faithful.evidence] == [("cfg.yaml", 2)]
    drifted = check_value(bc, Context(index=repo(tmp_path / "d", {"cfg.yaml": "nu: 0.01\nbc: periodic\n"}), spec=Spec()))
    assert (drifted.status, drifted.score) == (Status.mismatch, 0.0)


def test_a_reported_gain_is_not_a_metric_check() -> None:
    gains = dumps(compiled("Leverages prediction diversity across PEFT methods for consistent accuracy gains", "D2"))
    assert not any(c.get("rule") == "metric" for c in gains)
    improved = dumps(compiled("with uniform improvements in sensitivity capture and inversion accuracy", "D2"))
    assert not any(c.get("rule") == "metric" for c in improved)
    listed = dumps(compiled("Primary metric: accuracy gain (positive delta = regularization helps)", "D3"))
    assert [c["expect"] for c in listed] == ["accuracy", "accuracy gain"]


def test_what_an_api_is_used_for_is_not_a_second_api() -> None:
    result = compiled("Uses sign() to approximate AdamW first-step behavior (moments initialized to zero)", "D2")
    assert dumps(result) == [{"target": "sign"}] and result.coverage == "full"
    assert targets("AdamW is used to train the adapter") == ["torch.optim.AdamW | optax.adamw | tensorflow.keras.optimizers.AdamW | transformers.AdamW"]


def test_a_layer_a_module_is_placed_after_is_no_call_check() -> None:
    # the attention is where the adapter runs: a call check on torch.nn.MultiheadAttention would fail the
    # faithful timm ViT (its attention is its own class) and say nothing about the adapters
    houlsby = compiled("Houlsby adapters: two bottleneck adapters per block, one inserted after the multi-head "
                       "attention sub-layer and one after the feed-forward (MLP) sub-layer.")
    assert [c for c in dumps(houlsby) if c.get("target")] == []
    assert [c.get("after") for c in dumps(houlsby) if c.get("rule") == "placement"] == [["attention", "mlp"]]
    assert houlsby.coverage == "full"
    # with no placement check to say it, the position is what the judge still has to read; the subject stays a call
    prenorm = compiled("Each block applies LayerNorm before the multi-head self-attention and uses GELU.")
    assert [c["target"].split(" | ")[0] for c in dumps(prenorm) if c.get("target")] == ["torch.nn.LayerNorm", "torch.nn.GELU"]
    assert prenorm.coverage == "partial" and "before the multi-head self-attention" in prenorm.fragments[0].reason


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("a shared MLP implemented as 1×1 Conv1d layers with BatchNorm1d", ["torch.nn.Conv1d", "torch.nn.BatchNorm1d"]),
        ("each block a 3×3 Conv2d", ["torch.nn.Conv2d"]),
        ("a BiLSTM with 256 hidden units per direction", ["torch.nn.LSTM"]),
        ("weight normalisation on every convolution", ["torch.nn.utils.weight_norm"]),
        ("a Linear layer on the pooled features", ["torch.nn.Linear"]),
    ],
)
def test_layers_named_as_code_are_call_checks_beside_their_sizes(text, first):
    assert [t.split(" | ")[0] for t in targets(text)] == first


def test_a_pooling_named_without_its_dimension_accepts_every_dimension():
    (target,) = targets("features aggregated by max pooling")
    assert {"torch.nn.MaxPool1d", "torch.nn.MaxPool2d", "torch.nn.functional.max_pool1d"} <= set(target.split(" | "))
    result = compiled("2×2 average pooling after each block", "D2")
    assert {"name": "pool_size", "expect": [2, 2]} in dumps(result)


POINTNET = '''import torch
import torch.nn as nn


class PointNetEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Conv1d(3, 64, 1), nn.BatchNorm1d(64), nn.ReLU(), nn.Conv1d(64, 1024, 1))
        self.pool = {pool}

    def forward(self, x):
        return self.pool(self.mlp(x)).squeeze(-1)
'''


@pytest.mark.parametrize(
    ("pool", "status"),
    [("nn.AdaptiveMaxPool1d(1)", "pass"), ("nn.MaxPool1d(1024)", "pass"), ("nn.AdaptiveAvgPool1d(1)", "missing")],
)
def test_a_point_cloud_max_pool_passes_in_one_dimension(tmp_path, pool, status):
    from values_helpers import indexed_repo

    from verifier.checks.base import Context
    from verifier.checks.call import check_call
    from verifier.spec.model import Spec

    (check,) = [c for c in compiled("aggregated by a symmetric max pooling over points", "D2").checks if c.kind == "call"]
    result = check_call(check, Context(index=indexed_repo(tmp_path, {"model.py": POINTNET.format(pool=pool)}), spec=Spec()))
    assert result.status.value == status, result.message
    if status == "pass":
        assert [(e.file, e.line) for e in result.evidence][:1] == [("model.py", 9)]


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("a CRF layer on top of the BiLSTM", ["CRF", "torch.nn.LSTM"]),
        ("bilinear upsampling to the input size", ["torch.nn.functional.interpolate"]),
        ("QuantileTransformer on numerical features", ["sklearn.preprocessing.QuantileTransformer"]),
        ("Hungarian matching of predictions to targets", ["scipy.optimize.linear_sum_assignment"]),
        ("the normaliser is computed with logsumexp", ["logsumexp"]),
    ],
)
def test_operations_of_tagging_segmentation_tabular_and_detection_papers(text, first):
    assert [t.split(" | ")[0] for t in targets(text)] == first
