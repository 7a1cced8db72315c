"""`value` checks with `within: [low, high]` (a setting stated as a range) and `same_as: other` (alpha = r).

Each case is a small repo written to disk and indexed for real; the verdict, the score and the evidence lines are
asserted. The compiler writes these fields for "AR steps: 6-7" and "α = r"; the spec loader rejects a check that
gives two of expect / sweep / within / same_as.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from values_helpers import indexed_repo, run_value

from verifier.checks.base import Context
from verifier.checks.value import check_value
from verifier.results import Status
from verifier.spec.errors import SpecError
from verifier.spec.load import load_spec
from verifier.spec.model import Spec


repo, run = indexed_repo, run_value


def roles(result) -> list[tuple[str, int, str]]:
    return sorted((e.file, e.line, e.role) for e in result.evidence)


EVAL_CONFIG = "eval:\n  ar_steps: {steps}\n  total_frames: 80\n"


# ----- within -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("steps", [6, 7])
def test_a_value_inside_the_interval_passes(tmp_path: Path, steps: int) -> None:
    index = repo(tmp_path, {"configs/eval.yaml": EVAL_CONFIG.format(steps=steps)})
    result = run(index, name="ar_steps", within=[6, 7])
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert roles(result) == [("configs/eval.yaml", 2, "effective")]


def test_just_outside_the_interval_is_a_minor_deviation(tmp_path: Path) -> None:
    index = repo(tmp_path, {"configs/eval.yaml": EVAL_CONFIG.format(steps=8)})
    result = run(index, name="ar_steps", within=[6, 7])
    assert result.status is Status.partial and result.score == 0.75
    assert "claimed within [6, 7]" in result.message and "outside the interval" in result.message
    assert roles(result) == [("configs/eval.yaml", 2, "effective")]


@pytest.mark.parametrize("steps, graded", [(70, (Status.partial, 0.25)), (2, (Status.partial, 0.75)), (7000, (Status.partial, 0.25))])
def test_outside_the_interval_is_graded_against_the_nearer_bound(tmp_path: Path, steps: int, graded) -> None:
    index = repo(tmp_path, {"configs/eval.yaml": EVAL_CONFIG.format(steps=steps)})
    result = run(index, name="ar_steps", within=[6, 7])
    nearer = 6 if steps < 6 else 7
    assert (result.status, result.score) == graded
    assert (result.status, result.score) == ((r := run(index, name="ar_steps", expect=nearer)).status, r.score)


def test_interval_over_an_argparse_default_overridden_by_a_launch_flag(tmp_path: Path) -> None:
    index = repo(
        tmp_path,
        {
            "sample.py": "import argparse\np = argparse.ArgumentParser()\np.add_argument('--ar_steps', type=int, default=3)\n"
            "args = p.parse_args()\nprint(args.ar_steps)\n",
            "scripts/sample.sh": "python sample.py --ar_steps 6\n",
        },
    )
    result = run(index, name="ar_steps", within=[6, 7])
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert ("scripts/sample.sh", 1, "effective") in roles(result)


def test_interval_with_no_binding_is_missing(tmp_path: Path) -> None:
    index = repo(tmp_path, {"configs/eval.yaml": "eval:\n  total_frames: 80\n"})
    assert run(index, name="ar_steps", within=[6, 7]).status is Status.missing


# ----- same_as ----------------------------------------------------------------------------------------------
LORA_ARGS = """\
import argparse

from peft import LoraConfig


def build(args):
    return LoraConfig(r=args.rank, lora_alpha={alpha}, target_modules=["q_proj", "v_proj"])


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--rank", type=int, default=16)
    p.add_argument("--lora_alpha", type=int, default=32)
    build(p.parse_args())
"""


def test_alpha_bound_to_the_rank_passes_whatever_the_rank(tmp_path: Path) -> None:
    index = repo(tmp_path, {"train.py": LORA_ARGS.format(alpha="args.rank")})
    result = run(index, name="lora_alpha", same_as="lora_r")
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert "reads" in result.message
    assert ("train.py", 7, "effective") in roles(result)


def test_alpha_with_its_own_value_equal_to_the_rank_passes(tmp_path: Path) -> None:
    files = {
        "configs/lora.yaml": "lora:\n  r: 16\n  lora_alpha: 16\n",
        "train.py": "import yaml\ncfg = yaml.safe_load(open('configs/lora.yaml'))\nprint(cfg['lora']['r'], cfg['lora']['lora_alpha'])\n",
    }
    result = run(repo(tmp_path, files), name="lora_alpha", same_as="lora_r")
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert roles(result) == [("configs/lora.yaml", 2, "compared-with"), ("configs/lora.yaml", 3, "effective"),
                             ("train.py", 3, "read")]


def test_alpha_twice_the_rank_is_graded_as_the_number_would_be(tmp_path: Path) -> None:
    """alpha = 32 where the rank is 16: graded as ``expect: 16`` grades 32 (2x: a minor deviation)."""
    index = repo(tmp_path, {"train.py": LORA_ARGS.format(alpha="args.lora_alpha")})
    result = run(index, name="lora_alpha", same_as="lora_r")
    assert (result.status, result.score) == (Status.partial, 0.75)
    assert (result.status, result.score) == ((r := run(index, name="lora_alpha", expect=16)).status, r.score)
    assert "claimed equal to lora_r (16)" in result.message
    assert {("train.py", 12, "compared-with"), ("train.py", 13, "effective")} <= set(roles(result))


def test_no_rank_in_the_repo_is_missing_not_a_guess(tmp_path: Path) -> None:
    files = {"configs/lora.yaml": "lora:\n  lora_alpha: 16\n"}
    result = run(repo(tmp_path, files), name="lora_alpha", same_as="lora_r")
    assert result.status is Status.missing
    assert result.message.startswith("nothing to compare with")


# ----- the spec -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "check, message",
    [
        ("{kind: value, name: ar_steps, within: [6, 7], expect: 6}", "exactly one of"),
        ("{kind: value, name: ar_steps, within: [7, 6]}", "low <= high"),
        ("{kind: value, name: ar_steps, within: [6]}", "within"),
        ("{kind: value, name: lora_alpha, same_as: lora_r, sweep: [8, 16]}", "exactly one of"),
    ],
)
def test_the_loader_rejects_a_malformed_interval_or_reference(tmp_path: Path, check: str, message: str) -> None:
    spec = tmp_path / "sau.yaml"
    spec.write_text(f"version: 1\nsaus:\n  - id: x-D1-001\n    dimension: D1\n    claim: c\n    check: {check}\n", encoding="utf-8")
    with pytest.raises(SpecError) as err:
        load_spec(spec)
    assert message in str(err.value) and "sau.yaml" in str(err.value)


# ----- compiled from claims ---------------------------------------------------------------------------------------
from verifier.compiler import compile_claim  # noqa: E402
from verifier.spec.model import SAU  # noqa: E402


def compiled(text: str, dimension: str = "D1") -> list[dict]:
    result = compile_claim(SAU(id="x-D1-001", dimension=dimension, claim=text))
    return [c.model_dump(exclude_none=True, exclude_defaults=True) for c in result.checks]


@pytest.mark.parametrize(
    "text, checks",
    [
        ("Sampling config: AR steps: 6-7, total frames 80",
         [{"name": "num_ar_steps", "within": [6, 7]}, {"name": "num_frames", "expect": 80}]),
        ("warmup steps: 500-1000", [{"name": "warmup_steps", "within": [500, 1000]}]),
        ("Schedule: warmup steps 500-1000 depending on the dataset", [{"name": "warmup_steps", "within": [500, 1000]}]),
        ("Sampling: autoregressive steps: 4-6 per clip", [{"name": "num_ar_steps", "within": [4, 6]}]),
        ("Batch size: 16-64 per GPU", [{"name": "minibatch_size", "within": [16, 64]}]),
        ("learning rate = 1e-4 to 3e-4", [{"name": "learning_rate", "within": [0.0001, 0.0003]}]),
        ("LoRA config: alpha = r, dropout 0.05",
         [{"name": "lora_alpha", "same_as": "lora_rank"}, {"name": "lora_dropout", "expect": 0.05}]),
        ("LoRA baseline: α = r for every task", [{"name": "lora_alpha", "same_as": "lora_rank"}]),
        ("LoRA with rank r = 16 and alpha = r for every task",
         [{"name": "lora_rank", "expect": 16}, {"name": "lora_alpha", "same_as": "lora_rank"}]),
    ],
)
def test_ranges_and_equal_parameters_compile(text: str, checks: list[dict]) -> None:
    assert compiled(text) == checks


@pytest.mark.parametrize(
    "text",
    [
        "Layers: 6-11",  # which layers, not how many
        "ranks: 1-5",  # leaderboard positions: no parameter
        "Total overhead: 2-4 min",  # a measured duration
        "Training time 10-12 hours on 8 GPUs",
        "epochs 30-60 for fine-tuning",  # a span of epochs (when), not a setting
        "Mixup: alpha = beta",  # two symbols of different methods
        "k = K",  # a derivation's symbols
        "alpha in [0, 1]",  # a bracketed interval stays the symbol's domain (alpha_range)
    ],
)
def test_spans_durations_and_equations_do_not_compile_to_within_or_same_as(text: str) -> None:
    assert not any("within" in c or "same_as" in c for c in compiled(text))


def test_a_compiled_alpha_equals_rank_claim_passes_on_a_lora_repo(tmp_path: Path) -> None:
    index = repo(tmp_path, {"train.py": LORA_ARGS.format(alpha="args.rank")})
    (check,) = compile_claim(SAU(id="x-D1-001", dimension="D1", claim="LoRA config: alpha = r")).checks
    result = check_value(check, Context(index=index, spec=Spec()))
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert ("train.py", 7, "effective") in roles(result)
    drifted = repo(tmp_path / "drifted", {"train.py": LORA_ARGS.format(alpha="args.lora_alpha")})
    assert check_value(check, Context(index=drifted, spec=Spec())).status is Status.partial


@pytest.mark.parametrize(
    "text, checks",
    [
        ("train/val/test: 8000/1000/1000 samples",
         [{"name": "num_train_samples", "expect": 8000}, {"name": "num_val_samples", "expect": 1000}, {"name": "num_test_samples", "expect": 1000}]),
        ("Calibration data: train/test 4000/1000 examples, batch size 64",
         [{"name": "num_train_samples", "expect": 4000}, {"name": "num_test_samples", "expect": 1000}, {"name": "minibatch_size", "expect": 64}]),
    ],
)
def test_slash_lists_of_split_counts_name_each_split(text: str, checks: list[dict]) -> None:
    """A number after a slash is an item of the list, not a fraction's denominator (1000/1000 is not 1 sample)."""
    assert compiled(text) == checks


# ----- a parameter passed by position ----------------------------------------------------------------------------
CONV = """\
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, {k}, padding=1)
        self.skip = nn.Conv2d(c, c, 1)
"""


def test_a_kernel_size_passed_by_position_is_the_conv_kernel_size(tmp_path: Path) -> None:
    """`nn.Conv2d(c, c, 3)` writes no `kernel_size` binding: the library's parameter order says the third is it."""
    (check,) = [c for c in compile_claim(SAU(id="x-D2-001", dimension="D2", claim="3x3 convolutions")).checks]
    assert check.model_dump(exclude_none=True, exclude_defaults=True) == {"name": "kernel_size", "expect": 3}
    result = check_value(check, Context(index=repo(tmp_path, {"net.py": CONV.format(k=3)}), spec=Spec()))
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert roles(result) == [("net.py", 7, "effective")]
    drifted = check_value(check, Context(index=repo(tmp_path / "d", {"net.py": CONV.format(k=5)}), spec=Spec()))
    assert (drifted.status, drifted.score) == (Status.partial, 0.75)  # 5x5 and a 1x1 skip: neither is 3


def test_keyword_and_positional_kernel_sizes_are_read_together(tmp_path: Path) -> None:
    files = {"net.py": CONV.format(k=3).replace("nn.Conv2d(c, c, 1)", "nn.Conv2d(c, c, kernel_size=7)")}
    result = run(repo(tmp_path, files), name="kernel_size", expect=3)
    assert (result.status, result.score) == (Status.pass_, 1.0) and roles(result) == [("net.py", 7, "effective")]
    assert "other values at the same precedence: 7" in result.message


def test_a_second_setting_after_a_value_is_typed_or_reported_never_dropped() -> None:
    result = compile_claim(SAU(id="x-D1-001", dimension="D1", claim="x = 3 and y = z"))
    assert [f.reason for f in result.fragments] == ["a further setting ('y = z') is not typed"]
    assert result.coverage == "partial"



def test_a_setting_before_a_formula_is_not_swallowed_by_it() -> None:
    """"rank r = 8 and scale s = alpha / r": the formula's sides used to take the whole fragment and drop r = 8."""
    result = compile_claim(SAU(id="x-D2-001", dimension="D2", claim="LoRA rank r = 8 and scale s = alpha / r"))
    dumped = [c.model_dump(exclude_none=True, exclude_defaults=True) for c in result.checks]
    assert {"name": "lora_rank", "expect": 8} in dumped and {"expect": "alpha / r"} in dumped
    assert result.coverage == "full"


def test_a_hardware_range_is_not_a_setting() -> None:
    assert not any("within" in c for c in compiled("number of GPUs 4-8"))


def test_a_compiled_ar_steps_range_finds_the_repos_ar_steps_key(tmp_path: Path) -> None:
    """The compiler's name (num_ar_steps) reaches the repo's spelling (ar_steps) through the lexicon."""
    (check,) = compile_claim(SAU(id="x-D1-001", dimension="D1", claim="AR steps: 6-7")).checks
    result = check_value(check, Context(index=repo(tmp_path, {"configs/eval.yaml": EVAL_CONFIG.format(steps=6)}), spec=Spec()))
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert roles(result) == [("configs/eval.yaml", 2, "effective")]
