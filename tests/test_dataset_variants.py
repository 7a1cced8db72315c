"""A benchmark's variant is another benchmark: "HumanEval+", "MMLU-Pro" and "MATH-500" are not HumanEval, MMLU
and MATH. The compiler keeps the variant as written, and the dataset rule does not accept the base's loader."""

from __future__ import annotations

import pytest

from compiler_helpers import verdict_of
from verifier.compiler import compile_claim
from verifier.spec.model import SAU


def datasets(claim: str) -> list[str]:
    result = compile_claim(SAU(id="v-D3-001", dimension="D3", claim=claim))
    return [c.expect for c in result.checks if c.kind == "protocol" and c.rule == "dataset"]


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("pass@1 on HumanEval+, MBPP+ and LiveCodeBench", ["HumanEval+", "MBPP+", "LiveCodeBench"]),
        ("AIME 2024, MATH-500 and GPQA-Diamond", ["AIME 2024", "MATH-500", "GPQA-Diamond"]),
        ("MMLU-Pro and MMLU", ["MMLU-Pro", "MMLU"]),  # an unlisted variant, as written
        ("CIFAR-10 and ImageNet-1K", ["CIFAR10", "ImageNet"]),  # listed spellings of the base
        ("Clevr-Distance 70K/6 classes", ["Clevr"]),  # a listed alias is not a variant
        ("Kinetics-400 clips", ["Kinetics"]),
        ("baselines DeepSeek-Coder-6.7B-Instruct, CodeLlama-13B-Instruct on HumanEval+", ["HumanEval+"]),
        ("PESQ on VoiceBank+DEMAND", ["VoiceBank+DEMAND"]),
    ],
)
def test_variants_and_new_benchmarks(claim, expected):
    assert datasets(claim) == expected


LOADER = 'from datasets import load_dataset\n\nds = load_dataset("{name}")\n'


@pytest.mark.parametrize(
    ("claim", "loaded", "status"),
    [
        ("evaluated on HumanEval+", "evalplus/humanevalplus", "pass"),
        ("evaluated on HumanEval+", "openai_humaneval", "missing"),  # the base benchmark is not its variant
        ("evaluated on HumanEval", "openai_humaneval", "pass"),
        ("evaluated on MMLU-Pro", "TIGER-Lab/MMLU-Pro", "pass"),
    ],
)
def test_the_dataset_rule_tells_a_variant_from_its_base(tmp_path, claim, loaded, status):
    verdict = verdict_of(tmp_path, {"eval.py": LOADER.format(name=loaded)}, claim, "protocol")
    assert verdict.status.value == status
    assert [(e.file, e.line) for e in verdict.evidence][:1] == ([("eval.py", 3)] if status == "pass" else [])


def test_a_baseline_list_without_a_colon_is_still_a_list():
    result = compile_claim(SAU(id="v-D3-001", dimension="D3",
                               claim="Code eval on HumanEval+; baselines DeepSeek-Coder-6.7B-Instruct, CodeLlama-13B-Instruct"))
    assert [c.name for c in result.checks if c.kind == "protocol" and c.rule == "baseline"] == [
        "DeepSeek-Coder-6.7B-Instruct", "CodeLlama-13B-Instruct"]
