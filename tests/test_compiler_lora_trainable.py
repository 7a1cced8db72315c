"""LoRA parts in claims ("only the LoRA adapters are trained") compile to the `trainable` rule, which decides them
on a PEFT repo where no code names the adapters (get_peft_model adds them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from values_helpers import indexed_repo as repo

from verifier.checks.base import Context
from verifier.compiler import compile_claim
from verifier.results import Status
from verifier.spec.model import SAU, Spec


def compiled(text: str, dimension: str) -> list[dict]:
    result = compile_claim(SAU(id="x-D2-001", dimension=dimension, claim=text))
    return [c.model_dump(exclude_none=True, exclude_defaults=True) for c in result.checks]


def roles(result) -> list[tuple[str, int, str]]:
    return sorted((e.file, e.line, e.role) for e in result.evidence)


@pytest.mark.parametrize(
    "text, check",
    [
        ("Only the LoRA adapters are trained.", {"rule": "trainable", "name": "lora", "only": True}),
        ("Only the LoRA parameters are updated during fine-tuning.", {"rule": "trainable", "name": "lora", "only": True}),
        ("The LoRA weights are trainable.", {"rule": "trainable", "name": "lora"}),
    ],
)
def test_lora_parts_compile_to_the_trainable_rule(text: str, check: dict) -> None:
    assert compiled(text, "D2") == [check]


def test_only_the_lora_adapters_passes_on_a_peft_repo_and_fails_when_the_base_is_re_enabled(tmp_path: Path) -> None:
    from verifier.checks.protocol import check_protocol

    train = (
        "from peft import LoraConfig, get_peft_model\n"
        "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n\n"
        "model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-3.2-3B')\n"
        "model = get_peft_model(model, LoraConfig(r=16, target_modules=['q_proj', 'v_proj']))\n"
        "{extra}"
        "Trainer(model=model, args=TrainingArguments(output_dir='out')).train()\n"
    )
    (check,) = compile_claim(SAU(id="x-D2-001", dimension="D2", claim="Only the LoRA adapters are trained.")).checks
    faithful = check_protocol(check, Context(index=repo(tmp_path / "f", {"train.py": train.format(extra="")}), spec=Spec()))
    assert (faithful.status, faithful.score) == (Status.pass_, 1.0) and ("train.py", 5, "rule") in roles(faithful)
    drifted_code = train.format(extra="for p in model.parameters():\n    p.requires_grad = True\n")
    drifted = check_protocol(check, Context(index=repo(tmp_path / "d", {"train.py": drifted_code}), spec=Spec()))
    assert drifted.status is Status.mismatch


def test_dora_s_alpha_is_lora_s_alpha():
    from verifier.compiler import compile_claim
    from verifier.spec.model import SAU

    result = compile_claim(SAU(id="l-D2-001", dimension="D2", claim="DoRA on every projection, $r = 16$ and $\\alpha = 32$"))
    assert ("lora_alpha", 32) in [(c.name, c.expect) for c in result.checks if c.kind == "value"]
