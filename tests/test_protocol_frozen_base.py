"""Rule ``frozen`` with the semantic name ``base_weights``: the pretrained model an adaptation method adapts stays
frozen. Verdict, score and evidence lines on small repos, faithful and drifted."""

from __future__ import annotations

import textwrap

from verifier.analysis.protocol import validate_protocol_params
from verifier.analysis.protocol.examples import run_example


def run(code: str, files: dict[str, str] | None = None):
    params = {"name": "base_weights"}
    assert validate_protocol_params("frozen", params) is None
    result, _ = run_example("frozen", {"code": textwrap.dedent(code), "files": files or {}, "params": params})
    return result


def verdict(result) -> tuple[str, float | None]:
    return result.status.value, result.score


def lines(result) -> list[tuple[str, int]]:
    return sorted((e.file, e.line) for e in result.evidence)


PEFT = """
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM


    def build():
        model = AutoModelForCausalLM.from_pretrained("gpt2")
        model = get_peft_model(model, LoraConfig(r=8, target_modules=["c_attn"]))
        {extra}
        return model, torch.optim.AdamW(model.parameters(), lr=1e-4)
"""


def test_a_peft_wrap_passes_with_the_wrap_and_the_optimizer_as_evidence():
    result = run(PEFT.format(extra="model.print_trainable_parameters()"))
    assert verdict(result) == ("pass", 1.0)
    assert lines(result) == [("train.py", 9), ("train.py", 11)]


def test_re_enabling_every_parameter_after_the_peft_wrap_is_a_mismatch():
    result = run(PEFT.format(extra="model.requires_grad_(True)"))
    assert verdict(result) == ("mismatch", 0.0)
    assert lines(result) == [("train.py", 9), ("train.py", 10)]
    loop = run(PEFT.format(extra="for p in model.parameters(): p.requires_grad = True"))
    assert verdict(loop) == ("mismatch", 0.0)
    assert lines(loop) == [("train.py", 9), ("train.py", 10)]


def test_a_negated_adapter_filter_re_enables_the_base():
    result = run(PEFT.format(extra='for n, p in model.named_parameters():\n            if "lora" not in n: p.requires_grad = True'))
    assert verdict(result) == ("mismatch", 0.0)
    assert lines(result) == [("train.py", 9), ("train.py", 10)]


def test_a_global_freeze_of_a_pretrained_vit_then_adapters_unfrozen_passes():
    result = run("""
        import timm
        import torch


        def build(inject):
            model = timm.create_model("vit_small_patch16_224", pretrained=True, num_classes=10)
            model.requires_grad_(False)
            inject(model)
            for n, p in model.named_parameters():
                if "adapter" in n or n.startswith("head."):
                    p.requires_grad = True
            return torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01)
    """)
    assert verdict(result) == ("pass", 1.0)
    assert lines(result) == [("train.py", 8), ("train.py", 13)]


def test_a_freeze_written_as_a_name_test_and_a_head_of_a_torchvision_model():
    result = run("""
        import torch
        from torch import nn
        from torchvision import models


        def build():
            net = models.resnet50(weights=models.ResNet50_Weights.DEFAULT)
            for name, param in net.named_parameters():
                param.requires_grad = "lora" in name
            net.fc = nn.Linear(2048, 10)
            return torch.optim.Adam(net.fc.parameters(), lr=1e-3)
    """)
    assert verdict(result) == ("pass", 1.0)
    assert lines(result) == [("train.py", 9), ("train.py", 12)]


def test_an_optimizer_over_adapter_parameters_alone_passes_without_a_freeze():
    result = run("""
        import torch
        from transformers import AutoModel


        def build(add_lora):
            model = add_lora(AutoModel.from_pretrained("roberta-base"))
            params = [p for n, p in model.named_parameters() if "lora_" in n]
            return torch.optim.AdamW(params, lr=1e-3)
    """)
    assert verdict(result) == ("pass", 1.0)
    assert lines(result) == [("train.py", 9)]


def test_full_fine_tuning_of_a_pretrained_model_is_a_mismatch():
    result = run("""
        import torch
        from transformers import AutoModelForSequenceClassification


        def build():
            model = AutoModelForSequenceClassification.from_pretrained("roberta-base", num_labels=2)
            return torch.optim.AdamW(filter(lambda p: p.requires_grad, model.parameters()), lr=2e-5)
    """)
    assert verdict(result) == ("mismatch", 0.0)
    assert lines(result) == [("train.py", 7), ("train.py", 8)]


def test_a_frozen_reference_model_does_not_excuse_a_fully_trained_policy():
    result = run("""
        import torch
        from transformers import AutoModelForCausalLM


        def build():
            policy = AutoModelForCausalLM.from_pretrained("gpt2")
            ref = AutoModelForCausalLM.from_pretrained("gpt2")
            ref.requires_grad_(False)
            return torch.optim.AdamW(policy.parameters(), lr=1e-6)
    """)
    assert verdict(result) == ("mismatch", 0.0)
    assert lines(result) == [("train.py", 7), ("train.py", 10)]


def test_a_hf_trainer_trains_what_requires_grad():
    wrapped = run("""
        from peft import LoraConfig, get_peft_model
        from transformers import AutoModelForCausalLM, Trainer


        def main(args, data):
            model = get_peft_model(AutoModelForCausalLM.from_pretrained("gpt2"), LoraConfig(r=4))
            Trainer(model=model, args=args, train_dataset=data).train()
    """)
    assert verdict(wrapped) == ("pass", 1.0)
    assert lines(wrapped) == [("train.py", 7), ("train.py", 8)]
    full = run("""
        from transformers import AutoModelForCausalLM, Trainer


        def main(args, data):
            model = AutoModelForCausalLM.from_pretrained("gpt2")
            Trainer(model=model, args=args, train_dataset=data).train()
    """)
    assert verdict(full) == ("mismatch", 0.0)
    assert lines(full) == [("train.py", 6), ("train.py", 7)]


def test_re_enabling_a_base_block_by_name_is_unverified():
    result = run("""
        import torch
        from transformers import AutoModel


        def build():
            model = AutoModel.from_pretrained("bert-base-uncased")
            model.requires_grad_(False)
            for n, p in model.named_parameters():
                if "layer.11" in n:
                    p.requires_grad = True
            return torch.optim.AdamW(model.parameters(), lr=1e-4)
    """)
    assert verdict(result) == ("unverified", None)
    assert "no adapter word" in result.message and "train.py:9" in result.message


def test_a_re_enable_before_the_freeze_does_not_count():
    result = run("""
        import torch
        from transformers import AutoModel


        def build():
            model = AutoModel.from_pretrained("bert-base-uncased")
            model.requires_grad_(True)
            model.requires_grad_(False)
            model.classifier.requires_grad_(True)
            return torch.optim.AdamW(model.parameters(), lr=1e-4)
    """)
    assert verdict(result) == ("pass", 1.0)
    assert lines(result) == [("train.py", 9), ("train.py", 11)]


def test_nothing_pretrained_or_no_optimizer_is_unverified():
    unknown_model = run("""
        import torch


        def build(make_model):
            model = make_model()
            model.requires_grad_(False)
            return torch.optim.AdamW(model.parameters(), lr=1e-4)
    """)
    assert verdict(unknown_model) == ("unverified", None)
    nothing = run("""
        import torch
        x = torch.zeros(3)
    """)
    assert verdict(nothing) == ("unverified", None)



def test_a_head_re_enabled_inside_a_frozen_model_passes_and_an_encoder_is_unverified():
    code = """
        import torch
        from torchvision import models


        def build():
            net = models.resnet50(weights="IMAGENET1K_V2")
            net.requires_grad_(False)
            net.{part}.requires_grad_(True)
            return torch.optim.SGD(net.parameters(), lr=0.1)
    """
    head = run(code.replace("{part}", "fc"))
    assert verdict(head) == ("pass", 1.0)
    assert lines(head) == [("train.py", 8), ("train.py", 10)]
    encoder = run(code.replace("{part}", "layer4"))
    assert verdict(encoder) == ("unverified", None)
    assert "`net.layer4`, a part of the frozen model (train.py:9)" in encoder.message


def test_loralib_marks_only_lora_trainable_and_a_helper_that_freezes_its_argument():
    marked = run("""
        import loralib as lora
        import torch
        from transformers import AutoModel


        def build():
            model = AutoModel.from_pretrained("roberta-base")
            lora.mark_only_lora_as_trainable(model)
            return torch.optim.AdamW(model.parameters(), lr=1e-3)
    """)
    assert verdict(marked) == ("pass", 1.0)
    assert lines(marked) == [("train.py", 9), ("train.py", 10)]
    helper = run("""
        import timm
        import torch

        from lib import add_lora


        def build():
            model = add_lora(timm.create_model("vit_base_patch16_224", pretrained=True), rank=4)
            return torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    """, files={"lib.py": "def add_lora(vit, rank):\n    for p in vit.parameters():\n        p.requires_grad = False\n    return vit\n"})
    assert verdict(helper) == ("pass", 1.0)
    assert lines(helper) == [("train.py", 9), ("train.py", 10)]
    assert "lib.py:2" in helper.message


def test_a_model_passed_to_an_unknown_package_before_the_optimizer_is_not_called_trained():
    code = """
        import torch
        from transformers import AutoModel
        {imp}


        def build():
            model = AutoModel.from_pretrained("roberta-base")
            attach(model)
            return torch.optim.AdamW(model.parameters(), lr=1e-3)
    """
    opaque = run(code.replace("{imp}", "from somepackage import attach"))
    assert verdict(opaque) == ("unverified", None)
    seen = run(code.replace("{imp}", ""), files={"helpers.py": "def attach(model):\n    return model\n"})
    assert verdict(seen) == ("mismatch", 0.0)
    assert lines(seen) == [("train.py", 8), ("train.py", 10)]


def test_adapters_train_adapter_and_a_freeze_helper_by_its_name_freeze_the_base():
    hub = run("""
        import torch
        from transformers import AutoAdapterModel


        def build():
            model = AutoAdapterModel.from_pretrained("bert-base-uncased")
            model.add_adapter("task")
            model.train_adapter("task")
            return torch.optim.AdamW(model.parameters(), lr=1e-4)
    """)
    assert verdict(hub) == ("pass", 1.0)
    assert lines(hub) == [("train.py", 9), ("train.py", 10)]
    named = run("""
        import torch
        from transformers import AutoModel
        from vendor_utils import freeze_backbone


        def build():
            model = AutoModel.from_pretrained("bert-base-uncased")
            freeze_backbone(model)
            return torch.optim.AdamW(model.parameters(), lr=1e-4)
    """)
    assert verdict(named) == ("pass", 1.0)
    assert lines(named) == [("train.py", 9), ("train.py", 10)]
