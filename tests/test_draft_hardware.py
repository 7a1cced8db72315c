"""`draft` proposes the paper's GPUs as a ``hardware`` check: a sentence that says what the experiments ran on,
never a requirement or a speed comparison; and GPU names written with a dash ("H-100") are read as the family."""

from __future__ import annotations

import yaml

from verifier.compiler.protocol_claims import gpu_params
from verifier.draft import draft
from verifier.spec.model import Spec

PAPER = """# A Paper

## 4 Experiments

All models are trained on 8 NVIDIA A100 GPUs (80GB) with mixed precision.
Our method requires at least one GPU such as an RTX 3090.
Inference is 2x faster than the baseline on a V100 GPU.

## 5 Training details

Training uses the same 8 NVIDIA A100 GPUs (80GB).
"""


def _hardware(text: str) -> list[tuple[dict, str]]:
    spec = yaml.safe_load(draft(text, "paper.md"))
    Spec.model_validate(spec)  # the draft is a valid spec as written
    return [({k: v for k, v in s["check"].items() if k != "kind"}, s["source"]) for s in spec["saus"]
            if s["check"].get("rule") == "hardware"]


def test_the_run_sentence_becomes_one_hardware_check_with_its_section():
    assert _hardware(PAPER) == [({"rule": "hardware", "gpus": 8, "gpu": "A100", "gpu_memory_gb": 80}, "4 Experiments")]


def test_requirements_and_speed_comparisons_are_not_drafted():
    assert _hardware("# P\n\n## Setup\n\nThe code requires a GPU such as an RTX 3090.\n"
                     "Training is 3x faster than on a V100 GPU.\n") == []


def test_a_dashed_gpu_name_is_its_family_not_a_count():
    assert gpu_params("Distributed training on a 4 H-100 GPU node") == {"gpus": 4, "gpu": "H100"}
    assert gpu_params("trained on 8 V-100 GPUs") == {"gpus": 8, "gpu": "V100"}
