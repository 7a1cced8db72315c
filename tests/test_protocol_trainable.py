"""Rule ``trainable`` on small repos: verdict, score and the evidence line, faithful and drifted."""

from __future__ import annotations

import textwrap

from verifier.analysis.protocol import validate_protocol_params
from verifier.analysis.protocol.examples import run_example

LORA_SB_MODEL = """
    import torch
    from torch import nn


    class LoRASBLinear(nn.Module):
        def __init__(self, base, r):
            super().__init__()
            self.base = base
            self.lora_A = nn.Parameter(torch.randn(r, base.in_features), requires_grad=False)
            self.lora_B = nn.Parameter(torch.randn(base.out_features, r), requires_grad=False)
            self.lora_R = nn.Parameter(torch.zeros(r, r))

        def forward(self, x):
            return self.base(x) + x @ self.lora_A.T @ self.lora_R.T @ self.lora_B.T
"""


def run(code: str, name: str, only: bool = False, files: dict[str, str] | None = None):
    params = {"name": name, **({"only": True} if only else {})}
    assert validate_protocol_params("trainable", params) is None
    result, _ = run_example("trainable", {"code": textwrap.dedent(code), "files": files or {}, "params": params})
    return result


def verdict(result) -> tuple[str, float | None]:
    return result.status.value, result.score


def lines(result) -> list[tuple[str, int]]:
    return sorted((e.file, e.line) for e in result.evidence)


def test_only_r_through_a_name_filter_passes_and_a_paper_symbol_resolves_to_lora_r():
    train = """
        import torch

        def make_optimizer(model):
            for p in model.base.parameters():
                p.requires_grad = False
            params = [p for n, p in model.named_parameters() if "lora_R" in n]
            return torch.optim.AdamW(params, lr=1e-4)
    """
    result = run(train, "R", only=True, files={"lora.py": textwrap.dedent(LORA_SB_MODEL)})
    assert verdict(result) == ("pass", 1.0)
    assert ("train.py", 8) in lines(result)
    assert "`R` is `lora_R` in the code" in result.message


def test_drifted_optimizer_over_every_adapter_matrix_is_a_mismatch_with_only():
    train = """
        import torch

        def make_optimizer(model):
            params = [p for n, p in model.named_parameters() if "lora_" in n]
            return torch.optim.AdamW(params, lr=1e-4)
    """
    result = run(train, "lora_R", only=True, files={"lora.py": textwrap.dedent(LORA_SB_MODEL)})
    assert verdict(result) == ("mismatch", 0.0)
    assert lines(result) == [("train.py", 5)]
    # without `only` the same code trains R: it passes
    assert verdict(run(train, "lora_R", files={"lora.py": textwrap.dedent(LORA_SB_MODEL)})) == ("pass", 1.0)


def test_a_frozen_matrix_is_a_mismatch_pointing_at_the_barrier():
    result = run("import torch\n", "lora_A", files={"lora.py": textwrap.dedent(LORA_SB_MODEL)})
    assert verdict(result) == ("mismatch", 0.0)
    assert lines(result) == [("lora.py", 10)]


def test_bitfit_bias_only_by_a_name_filter_and_a_drift_that_also_trains_the_head():
    faithful = """
        import torch

        def build(model):
            for name, param in model.named_parameters():
                if "bias" not in name:
                    param.requires_grad = False
            return torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    """
    result = run(faithful, "bias", only=True)
    assert verdict(result) == ("pass", 1.0)
    assert ("train.py", 5) in lines(result) and ("train.py", 8) in lines(result)
    drifted = """
        import torch

        def build(model):
            for name, param in model.named_parameters():
                if "bias" in name or "classifier" in name:
                    param.requires_grad = True
                else:
                    param.requires_grad = False
            return torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    """
    flagged = run(drifted, "bias", only=True)
    assert verdict(flagged) == ("mismatch", 0.0)
    assert lines(flagged) == [("train.py", 7)]
    assert verdict(run(drifted, "bias")) == ("pass", 1.0)


def test_freeze_all_without_re_enabling_the_part_is_a_mismatch():
    code = """
        import torch

        def build(model):
            model.requires_grad_(False)
            return torch.optim.Adam(model.head.parameters(), lr=1e-3)
    """
    result = run(code, "head")
    assert verdict(result) == ("mismatch", 0.0)
    assert lines(result) == [("train.py", 5)]


def test_adapters_injected_after_a_freeze_are_not_called_frozen():
    code = """
        import torch

        def build(model, inject):
            model.requires_grad_(False)
            inject(model)
            return torch.optim.Adam(model.head.parameters(), lr=1e-3)
    """
    assert verdict(run(code, "head")) == ("pass", 1.0)


def test_a_whole_model_optimizer_with_nothing_frozen_leaves_only_unverified():
    code = """
        import torch

        def build(model):
            model.head.requires_grad_(True)
            return torch.optim.Adam(model.parameters(), lr=1e-3)
    """
    assert verdict(run(code, "head")) == ("pass", 1.0)
    result = run(code, "head", only=True)
    assert verdict(result) == ("unverified", None)
    assert ("train.py", 6) in lines(result)


def test_optimizer_params_built_by_an_unknown_helper_are_unverified():
    code = """
        import torch
        from utils import param_groups

        def build(model):
            x = model.prompt
            return torch.optim.Adam(param_groups(model), lr=1e-3)
    """
    result = run(code, "prompt")
    assert verdict(result) == ("unverified", None)
    assert "cannot be resolved" in result.message


def test_param_group_dicts_and_a_part_left_out():
    code = """
        import torch

        def build(model):
            groups = [{"params": model.encoder.parameters(), "lr": 1e-5}, {"params": model.decoder.parameters()}]
            return torch.optim.AdamW(groups, lr=1e-4)
    """
    assert verdict(run(code, "decoder", only=True)) == ("mismatch", 0.0)
    assert verdict(run(code, "decoder")) == ("pass", 1.0)
    left_out = run("""
        import torch

        def build(model):
            model.head.requires_grad_(True)
            groups = [{"params": model.encoder.parameters(), "lr": 1e-5}, {"params": model.decoder.parameters()}]
            return torch.optim.AdamW(groups, lr=1e-4)
    """, "head")
    assert verdict(left_out) == ("mismatch", 0.0)
    assert lines(left_out) == [("train.py", 7)]


def test_a_bare_symbol_no_code_name_ends_in_is_unverified_and_an_absent_name_missing():
    assert verdict(run("import torch\nR = 3\n", "R")) == ("unverified", None)
    assert verdict(run("import torch\nopt = torch.optim.SGD([], lr=0.1)\n", "gate")) == ("missing", 0.0)


def test_only_must_be_a_boolean():
    assert validate_protocol_params("trainable", {"name": "R", "only": "yes"}) is not None
    assert validate_protocol_params("trainable", {"only": True}) is not None


def test_a_parameter_created_without_grad_and_switched_on_later_trains_but_a_buffer_never_does():
    model = """
        import torch
        from torch import nn

        class Prompted(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.prompt = nn.Parameter(torch.zeros(4, d), requires_grad=False)
                self.register_buffer("scale", torch.ones(d))
    """
    train = """
        import torch

        def build(model):
            model.prompt.requires_grad_(True)
            model.scale.requires_grad_(True)
            return torch.optim.Adam([model.prompt, model.scale], lr=1e-3)
    """
    files = {"model.py": textwrap.dedent(model)}
    assert verdict(run(train, "prompt", files=files)) == ("pass", 1.0)
    buffer = run(train, "scale", files=files)
    assert verdict(buffer) == ("mismatch", 0.0)
    assert lines(buffer) == [("model.py", 9)]


def test_evaluation_under_no_grad_does_not_freeze_the_head():
    code = """
        import torch

        def train(model, batches):
            optimizer = torch.optim.SGD(model.head.parameters(), lr=0.1)
            for x, y in batches:
                torch.nn.functional.cross_entropy(model.head(x), y).backward()
                optimizer.step()

        def evaluate(model, x):
            with torch.no_grad():
                return model.head(x)
    """
    result = run(code, "head")
    assert verdict(result) == ("pass", 1.0)
    assert lines(result) == [("train.py", 5)]


def test_a_second_optimizer_over_another_part_breaks_only_but_one_over_another_model_does_not():
    code = """
        import torch

        def build(model, critic):
            opt_r = torch.optim.AdamW(model.lora_R.parameters(), lr=1e-4)
            opt_head = torch.optim.AdamW(model.head.parameters(), lr=1e-3)
            opt_critic = torch.optim.AdamW(critic.parameters(), lr=1e-3)
            return opt_r, opt_head, opt_critic
    """
    result = run(code, "lora_R", only=True)
    assert verdict(result) == ("mismatch", 0.0)
    assert lines(result) == [("train.py", 6)]
    alone = run(code.replace("            opt_head = torch.optim.AdamW(model.head.parameters(), lr=1e-3)\n", ""), "lora_R", only=True)
    assert verdict(alone) == ("pass", 1.0)
    assert lines(alone) == [("train.py", 5)]


PEFT_TRAIN = """
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

    model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-3B")
    model = get_peft_model(model, LoraConfig(r=16, target_modules=["q_proj", "v_proj"]))
    {extra}
    trainer = Trainer(model=model, args=TrainingArguments(output_dir="out"))
    trainer.train()
"""


def test_the_lora_layers_a_peft_wrap_adds_are_trained_though_no_code_names_them():
    code = PEFT_TRAIN.format(extra="")
    assert verdict(run(code, "lora_A")) == ("pass", 1.0)
    only = run(code, "lora", only=True)
    assert verdict(only) == ("pass", 1.0) and ("train.py", 6) in lines(only)  # the get_peft_model line


def test_only_the_adapters_fails_when_the_base_is_re_enabled_after_the_wrap():
    code = PEFT_TRAIN.format(extra="for p in model.parameters():\n        p.requires_grad = True")
    result = run(code, "lora", only=True)
    assert result.status.value == "mismatch" and "not alone" in result.message


def test_without_a_peft_wrap_an_unnamed_adapter_is_still_missing():
    code = """
        import torch
        from torch import nn
        model = nn.Linear(4, 4)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    """
    assert run(code, "lora", only=True).status.value == "missing"


# ----- the scale kind: learned per-channel scales (DiffFit's gamma, SSF's scale) -------------------------------
DIFFFIT_BLOCK = """
    import torch
    from torch import nn


    class Block(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.norm1 = nn.LayerNorm(dim)
            self.attn = nn.MultiheadAttention(dim, 8)
            self.scale = (dim // 8) ** -0.5
            self.gamma1 = nn.Parameter(torch.ones(dim))

        def forward(self, x):
            h = self.norm1(x)
            return x + self.gamma1 * self.attn(h, h, h)[0]
"""


def test_learned_scales_switched_on_by_a_name_filter_are_trained():
    train = """
        import torch
        from model import Block

        model = Block(64)
        for name, p in model.named_parameters():
            p.requires_grad = "bias" in name or "norm" in name or "gamma" in name
        # ok: trainable
        optimizer = torch.optim.AdamW(filter(lambda p: p.requires_grad, model.parameters()), lr=1e-3)
    """
    result = run(train, "feature_scale", files={"model.py": textwrap.dedent(DIFFFIT_BLOCK)})
    assert verdict(result) == ("pass", 1.0)
    assert ("train.py", 6) in lines(result) and ("train.py", 9) in lines(result)


def test_learned_scales_left_frozen_by_the_name_filter_are_a_mismatch():
    train = """
        import torch
        from model import Block

        model = Block(64)
        for name, p in model.named_parameters():
            p.requires_grad = "bias" in name or "norm" in name
        optimizer = torch.optim.AdamW(filter(lambda p: p.requires_grad, model.parameters()), lr=1e-3)
    """
    result = run(train, "feature_scale", files={"model.py": textwrap.dedent(DIFFFIT_BLOCK)})
    assert verdict(result) == ("mismatch", 0.0)
    assert ("train.py", 6) in lines(result)


def test_an_attention_scale_float_is_no_learned_scale():
    block = DIFFFIT_BLOCK.replace("            self.gamma1 = nn.Parameter(torch.ones(dim))\n", "").replace(
        "x + self.gamma1 * self.attn", "x + self.attn")
    train = """
        import torch
        from model import Block

        model = Block(64)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    """
    result = run(train, "feature_scale", files={"model.py": textwrap.dedent(block)})
    assert verdict(result) == ("missing", 0.0)


def test_a_name_filter_written_with_any_over_a_tuple_selects_its_words():
    train = """
        import torch
        from model import Block

        model = Block(64)
        for name, p in model.named_parameters():
            p.requires_grad = any(key in name for key in ("bias", "gamma"))
        optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    """
    files = {"model.py": textwrap.dedent(DIFFFIT_BLOCK)}
    trained = run(train, "feature_scale", files=files)
    assert verdict(trained) == ("pass", 1.0) and ("train.py", 8) in lines(trained)
    left_out = run(train, "norm", files=files)
    assert verdict(left_out) == ("mismatch", 0.0) and lines(left_out) == [("train.py", 6)]


def test_parameters_returned_by_a_helper_and_a_filter_over_a_module_tuple():
    train = """
        import torch
        from model import Block

        TUNED = ("bias", "gamma")


        def tuned_parameters(net):
            for name, p in net.named_parameters():
                p.requires_grad = any(key in name for key in TUNED)
            return [p for p in net.parameters() if p.requires_grad]


        model = Block(64)
        optimizer = torch.optim.AdamW(tuned_parameters(model), lr=1e-3)
    """
    files = {"model.py": textwrap.dedent(DIFFFIT_BLOCK)}
    trained = run(train, "feature_scale", files=files)
    assert verdict(trained) == ("pass", 1.0)
    assert lines(trained) == [("model.py", 12), ("train.py", 9), ("train.py", 15)]  # the declaration, filter, optimizer
    left_out = run(train, "norm", files=files)
    assert verdict(left_out) == ("mismatch", 0.0) and lines(left_out) == [("train.py", 9)]
