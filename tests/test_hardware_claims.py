"""The claim compiler turns statements of a run's GPUs into ``hardware`` checks; CPUs, RAM and budgets stay context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.compiler.claims import compile_claim
from verifier.compiler.protocol_claims import gpu_params
from verifier.spec.model import SAU

SABENCH_DEV = Path(__file__).resolve().parents[2] / "shared" / "sabench-dev"


def compiled(claim: str, dimension: str = "D1"):
    return compile_claim(SAU(id="hw-test", dimension=dimension, claim=claim))


def hardware(result) -> list[dict]:
    return [c.params for c in result.checks if c.kind == "protocol" and c.rule == "hardware"]


def test_gpus_become_a_check_and_cpus_and_ram_stay_context():
    out = compiled("Hardware: 4x NVIDIA H100 GPUs (80GB), 2x Intel Xeon Platinum CPUs, 1TB RAM.")
    assert hardware(out) == [{"gpus": 4, "gpu": "H100", "gpu_memory_gb": 80}]
    assert len(out.checks) == 1 and out.coverage == "full"
    assert [(f.outcome, f.reason.split(":")[0]) for f in out.fragments] == [("typed", ""), ("context", "hardware"),
                                                                           ("context", "hardware")]


def test_a_single_gpu_of_a_named_family():
    out = compiled("All experiments were run on a single RTX 3090.")
    assert hardware(out) == [{"gpus": 1, "gpu": "RTX 3090"}] and out.coverage == "full"


def test_different_counts_for_different_experiments_each_pass_on_one_run():
    out = compiled("Small-scale runs used 1 V100 GPU (3h); large-scale runs used 4 V100 GPUs (20h).")
    assert hardware(out) == [{"gpus": 1, "gpu": "V100", "any_run": True}, {"gpus": 4, "gpu": "V100", "any_run": True}]


def test_settings_and_the_gpus_of_one_sentence():
    out = compiled("Learning rate 3e-4, batch size 256, trained on 8 A100 GPUs.")
    assert [c.kind for c in out.checks] == ["value", "value", "protocol"]
    assert hardware(out) == [{"gpus": 8, "gpu": "A100"}]


def test_a_typed_setting_fragment_keeps_its_value_and_gains_the_accelerator():
    out = compiled("Trained for 3 days on 8 TPU v3 chips with batch size 1024.")
    assert hardware(out) == [{"gpus": 8, "gpu": "TPU v3"}]
    assert [c.model_dump(exclude_none=True)["name"] for c in out.checks if c.kind == "value"] == ["minibatch_size"]


@pytest.mark.parametrize("claim", [
    "Training took about 500 A100 GPU-hours.",  # a compute budget
    "Training hardware: 1 T4 (small) / 2x T4 (large).",  # which run is which: the judge's
    "Dataset generation on 2x AMD EPYC CPUs with 512GB RAM.",  # no GPU at all
])
def test_no_hardware_check(claim):
    assert hardware(compiled(claim)) == []


def test_method_and_ordering_claims_do_not_gain_a_setup_check():
    claim = "Setup: single NVIDIA A100 GPU, 50 sampling steps -> generate frames -> measure the time of each step"
    assert hardware(compiled(claim, "D4")) == []
    assert hardware(compiled("The attention is fused into a single GPU kernel.", "D2")) == []


def test_per_node_counts_keep_only_the_type():
    assert gpu_params("Training runs on 4 H100 GPUs per node with DDP") == {"gpu": "H100"}
    assert gpu_params("two nodes of 8 A100 GPUs") == {"gpus": 16, "gpu": "A100"}


@pytest.mark.skipif(not SABENCH_DEV.is_dir(), reason="SA-Bench dev split not present")
def test_sabench_dev_hardware_claims():
    """Which dev claims get a hardware check, and with what (the ids and values, not the claims' text)."""
    got = {}
    for path in sorted(SABENCH_DEV.glob("*.json")):
        for claim in json.loads(path.read_text())["claims"]:
            out = compile_claim(SAU(id=claim["id"], dimension=claim["dimension"], claim=claim["claim"]))
            if hardware(out):
                got[claim["id"]] = hardware(out)
    assert got["ca2-vdm-D1-010"] == [{"gpus": 1, "gpu": "A100", "gpu_memory_gb": 80}]
    assert got["lora-sb-D1-010"] == [{"gpus": 1, "gpu": "A6000"}]
    assert got["petl-visual-recognition-D1-026"] == [{"gpus": 8, "gpu": "RTX 6000 Ada"}]
    assert got["sc-fno-D1-011"] == [{"gpus": 1, "gpu": "V100"}]
    assert got["wdno-D1-001"] == [{"gpus": 1, "gpu": "A100", "any_run": True}, {"gpus": 2, "gpu": "A100", "any_run": True}]
    assert "wdno-D3-026" not in got  # two runs' hardware in one fragment: left as it was
    assert not any(key.split("-D")[-1].startswith(("2", "4")) for key in got)  # no D2 / D4 claim
