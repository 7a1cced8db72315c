"""Rule ``model`` on small repos (verdict, score, evidence line), its name matching, and its fixtures."""

from __future__ import annotations

import textwrap

import pytest

from verifier.analysis.protocol import load_rule, validate_protocol_params
from verifier.analysis.protocol.examples import run_example
from verifier.analysis.protocol.model import Names, relation


def run(code: str, expect: str, files: dict[str, str] | None = None):
    params = {"expect": expect}
    assert validate_protocol_params("model", params) is None
    example = {"code": textwrap.dedent(code), "files": {k: textwrap.dedent(v) for k, v in (files or {}).items()},
               "params": params}
    result, _ = run_example("model", example)
    return result


def lines(result) -> list[tuple[str, int]]:
    return sorted((e.file, e.line) for e in result.evidence)


@pytest.mark.parametrize(("expect", "found", "want"), [
    ("Llama-3.2 3B", "meta-llama/Llama-3.2-3B", "same"),
    ("Llama-3.2 3B", "meta-llama/Llama-3.2-3B-Instruct", "variant"),
    ("Llama-3.2 3B", "meta-llama/Llama-3.2-1B", "variant"),
    ("Llama-3.2 3B", "Qwen/Qwen2.5-3B", None),
    ("RoBERTa-large", "FacebookAI/roberta-large", "same"),
    ("RoBERTa-large", "roberta-base", "variant"),
    ("BERT", "bert-base-uncased", "same"),
    ("BERT", "roberta-base", None),
    ("T5", "google/flan-t5-base", None),
    ("gpt-4o", "gpt-4o-mini", "variant"),
    ("gpt-4o", "gpt-4o-2024-05-13", "same"),
    ("gpt-4o-2024-05-13", "gpt-4o", "variant"),
    ("gpt-4", "gpt-4o", None),
    ("claude-3-5-sonnet-20240620", "claude-3-5-sonnet-20241022", "variant"),
    ("Mistral-7B", "mistralai/Mistral-7B-v0.1", "same"),
    ("Llama-2 7B", "meta-llama/Llama-2-7b-hf", "same"),
    ("ViT-B/16", "vit_base_patch16_224", "same"),
    ("ViT-B/16", "ViT-B-16", "same"),
    ("ViT-B/16", "google/vit-base-patch16-224-in21k", "same"),
    ("ViT-B/16", "vit_base_patch32_224", None),
    ("ViT-B/16", "ViT-B/32", None),
    ("ResNet-50", "resnet50", "same"),
    ("ResNet-50", "resnet101", None),
    ("Pythia-1.4B", "EleutherAI/pythia-1.4b", "same"),  # a decimal size is one piece
    ("Pythia", "EleutherAI/pythia-1.4b", "same"),
    ("Pythia-410M", "EleutherAI/pythia-1.4b", "variant"),
    ("OPT-1.3B", "facebook/opt-2.7b", "variant"),
    ("Qwen2.5-7B", "Qwen/Qwen2.5-7B", "same"),
    ("Qwen2.5-7B", "Qwen/Qwen2-7B", None),
])
def test_name_relation(expect, found, want):
    names = Names(load_rule("model"))
    assert relation(names.canonical(expect), names.canonical(found)) == want


def test_peft_base_model_from_a_launch_flag_over_the_default():
    code = """
        import argparse
        from transformers import AutoModelForCausalLM
        p = argparse.ArgumentParser()
        p.add_argument("--base", default="meta-llama/Llama-3.2-1B")
        args = p.parse_args()
        model = AutoModelForCausalLM.from_pretrained(args.base)
    """
    launch = {"run.sh": "python train.py --base meta-llama/Llama-3.2-3B\n"}
    result = run(code, "Llama-3.2 3B", launch)
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert lines(result) == [("run.sh", 1), ("train.py", 7)]
    drifted = run(code, "Llama-3.2 3B")
    assert (drifted.status.value, drifted.score) == ("mismatch", 0.0)
    assert lines(drifted) == [("train.py", 5), ("train.py", 7)]


def test_api_model_through_a_function_parameter_and_a_module_list():
    code = """
        from openai import OpenAI

        MODELS = ["gpt-4o-2024-05-13", "gpt-4o-mini-2024-07-18"]

        def ask(client, model, prompt):
            return client.chat.completions.create(model=model, messages=[{"role": "user", "content": prompt}])

        def main():
            client = OpenAI()
            for m in MODELS:
                ask(client, m, "hi")
    """
    result = run(code, "gpt-4o-2024-05-13")
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert ("train.py", 7) in lines(result)
    other = run(code, "claude-3-5-sonnet-20240620")
    assert (other.status.value, other.score) == ("missing", 0.0)
    assert "gpt-4o-2024-05-13" in other.message


def test_torchvision_constructor_torch_hub_and_clip():
    code = """
        import clip
        import torch
        import torchvision

        backbone = torchvision.models.resnet50(weights="IMAGENET1K_V2")
        dino = torch.hub.load("facebookresearch/dinov2", "dinov2_vitb14")
        clip_model, preprocess = clip.load("ViT-B/16", device="cpu")
    """
    r50 = run(code, "ResNet-50")
    assert (r50.status.value, lines(r50)) == ("pass", [("train.py", 6)])
    dino = run(code, "DINOv2 ViT-B/14")
    assert (dino.status.value, lines(dino)) == ("pass", [("train.py", 7)])  # the hub entry point's name
    assert run(code, "DINOv2 ViT-L/14").status.value == "missing"
    vit = run(code, "ViT-B/16")
    assert (vit.status.value, lines(vit)) == ("pass", [("train.py", 8)])
    assert run(code, "ViT-L/14").status.value == "missing"


def test_tokenizer_only_and_print_are_not_uses():
    code = """
        from transformers import AutoTokenizer
        tok = AutoTokenizer.from_pretrained("roberta-large")
        print("model: roberta-large")
    """
    result = run(code, "RoBERTa-large")
    assert (result.status.value, result.score) == ("missing", 0.0)
    assert ("train.py", 3) in lines(result) and all(e.role == "mention" for e in result.evidence)


def test_unresolvable_name_is_unverified_but_a_related_model_is_a_mismatch():
    code = """
        import os
        from transformers import AutoModel
        model = AutoModel.from_pretrained(os.environ["CKPT"])
    """
    result = run(code, "RoBERTa-large")
    assert (result.status.value, result.score) == ("unverified", None)
    assert lines(result) == [("train.py", 4)]
    config = {"configs/model.yaml": "encoder:\n  name: roberta-base\n"}
    code = """
        import yaml
        from transformers import AutoModel
        cfg = yaml.safe_load(open("configs/model.yaml"))
        model = AutoModel.from_pretrained(cfg["encoder"]["name"])
    """
    drift = run(code, "RoBERTa-large", config)
    assert (drift.status.value, drift.score) == ("mismatch", 0.0)
    assert lines(drift) == [("configs/model.yaml", 2), ("train.py", 5)]


def test_rule_examples_hold():
    from verifier.analysis.protocol.examples import example_problems

    rule = load_rule("model")
    for kind in ("valid", "invalid"):
        for example in rule["examples"][kind]:
            assert example_problems("model", example, kind == "valid") == [], example["name"]


# ----- the claim compiler -------------------------------------------------------------------------------------
def compiled_models(claim: str, dimension: str = "protocol") -> list[str]:
    from verifier.compiler import compile_claim
    from verifier.spec.model import SAU

    result = compile_claim(SAU(id="x-D3-001", dimension=dimension, claim=claim))
    return [c.params["expect"] for c in result.checks if getattr(c, "rule", None) == "model"]


@pytest.mark.parametrize(("claim", "dimension", "want"), [
    ("Qwen2.5 7B and Mistral-7B are fine-tuned on GSM8K with LoRA rank 16.", "protocol", ["Qwen2.5 7B", "Mistral-7B"]),
    ("Linear probing using ViT-L/16 pre-trained on ImageNet-21K.", "protocol", ["ViT-L/16"]),
    ("We fine-tune a pre-trained ResNet-50 on CIFAR-10 for 100 epochs.", "protocol", ["ResNet-50"]),
    ("Backbone: DeBERTa-v3-base with 12 layers", "numerical", ["DeBERTa-v3-base"]),
    ("Judges: gpt-4o-mini-2024-07-18 (OpenAI), claude-3-haiku-20240307 (Anthropic API)", "numerical",
     ["gpt-4o-mini-2024-07-18", "claude-3-haiku-20240307"]),
    # A qualified name, a plural comparison, the paper's own model, a bare family and a D2 claim compile to nothing.
    ("Fine-tune CLIP ViT-B/16 on ImageNet with 16 shots per class.", "protocol", []),
    ("Compare supervised vs. DINOv2 ViT-B/16 backbones on VTAB-1K.", "protocol", []),
    ("Initialise from the pretrained FMT-B-42M checkpoint.", "protocol", []),
    ("A frozen T5 text encoder conditions the denoiser.", "protocol", []),
    ("Target model: llama-13b (rank #129 on the leaderboard)", "protocol", []),
    ("Llama-3.2 3B is fine-tuned with LoRA adapters on every attention projection.", "methodological", []),
])
def test_compiled_model_checks(claim, dimension, want):
    assert compiled_models(claim, dimension) == want


def test_hosted_hub_ids_of_the_named_model():
    code = """
        from together import Together
        client = Together()
        out = client.chat.completions.create(model="meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo", messages=[])
    """
    result = run(code, "llama-3.1-70b-instruct")
    assert (result.status.value, result.score, lines(result)) == ("pass", 1.0, [("train.py", 4)])
    assert run(code, "llama-3.1-8b-instruct").status.value == "mismatch"


def test_keras_applications_comprehension_lists_and_calls_that_use_no_model():
    code = """
        from tensorflow import keras
        from openai import OpenAI

        MODELS = ["gpt-4o-2024-05-13"]
        base = keras.applications.ResNet50(weights="imagenet", include_top=False)
        x = keras.applications.resnet50.preprocess_input(images)
        client = OpenAI()
        answers = [client.chat.completions.create(model=m, messages=[]) for m in MODELS]
        row = dict(model="claude-3-haiku-20240307", score=0.5)
    """
    resnet = run(code, "ResNet-50")
    assert (resnet.status.value, lines(resnet)) == ("pass", [("train.py", 6)])
    gpt = run(code, "gpt-4o-2024-05-13")
    assert (gpt.status.value, lines(gpt)) == ("pass", [("train.py", 5), ("train.py", 9)])
    haiku = run(code, "claude-3-haiku-20240307")  # a results row names it; nothing queries it
    assert (haiku.status.value, lines(haiku)) == ("missing", [("train.py", 10)])
    assert run(code, "gpt-4o-mini").status.value == "mismatch"  # gpt-4o is queried instead


def test_pipeline_model_keyword_and_unreadable_kwargs():
    code = """
        from transformers import pipeline, AutoModel
        clf = pipeline("text-classification", model="FacebookAI/roberta-large")
    """
    assert lines(run(code, "RoBERTa-large")) == [("train.py", 3)]
    assert run(code, "text-classification").status.value == "missing"
    hidden = run("""
        from transformers import AutoModel
        def build(cfg):
            return AutoModel.from_pretrained(**cfg["model"])
    """, "RoBERTa-large")
    assert (hidden.status.value, lines(hidden)) == ("unverified", [("train.py", 4)])


def test_a_weights_file_named_after_the_model_counts_for_it_never_against_it():
    code = """
        import numpy as np
        from models.vit import VisionTransformer

        PRETRAINED = "checkpoints/imagenet21k_ViT-B_16.npz"
        model = VisionTransformer(patch_size=16, hidden_size=768, depth=12)
        model.load_from(np.load(PRETRAINED))
    """
    result = run(code, "ViT-B/16")
    assert (result.status.value, lines(result)) == ("pass", [("train.py", 7)])
    assert run(code, "ViT-B/32").status.value == "missing"
    assert run(code, "ViT-L/16").status.value == "missing"


def test_a_host_renamed_instruct_model_is_the_model_through_the_alias_table():
    code = """
        from together import Together
        client = Together()
        out = client.chat.completions.create(model="meta-llama/Llama-3-8b-chat-hf", messages=[])
    """
    result = run(code, "llama-3-8b-instruct")
    assert (result.status.value, result.score, lines(result)) == ("pass", 1.0, [("train.py", 4)])
    assert run(code, "llama-3-70b-instruct").status.value == "mismatch"


HYDRA_TRAIN = """
    import hydra
    from hydra.utils import instantiate


    @hydra.main(config_path="configs", config_name="train")
    def main(cfg):
        model = instantiate(cfg.model)
        model.train()


    if __name__ == "__main__":
        main()
"""


def test_a_model_named_in_a_hydra_target_node_is_the_model_loaded():
    config = """
        model:
          _target_: transformers.AutoModelForCausalLM.from_pretrained
          pretrained_model_name_or_path: meta-llama/Llama-3.2-3B
          torch_dtype: bfloat16
    """
    result = run(HYDRA_TRAIN, "Llama-3.2 3B", files={"configs/train.yaml": config})
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert ("configs/train.yaml", 3) in lines(result)
    drifted = run(HYDRA_TRAIN, "Llama-3.2 3B", files={"configs/train.yaml": config.replace("Llama-3.2-3B", "Llama-3.2-1B")})
    assert drifted.status.value != "pass"


def test_a_hydra_target_no_code_instantiates_says_nothing():
    config = """
        model:
          _target_: transformers.AutoModelForCausalLM.from_pretrained
          pretrained_model_name_or_path: meta-llama/Llama-3.2-1B
    """
    code = """
        from transformers import AutoModelForCausalLM
        model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-3B")
    """
    result = run(code, "Llama-3.2 3B", files={"configs/unused.yaml": config})
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert all(f != "configs/unused.yaml" for f, _ in lines(result))


def test_a_registry_of_hub_ids_a_loop_runs_names_each_model_it_holds():
    code = """
        from transformers import AutoModelForCausalLM

        MODELS = {"pythia": "EleutherAI/pythia-1.4b", "opt": "facebook/opt-1.3b"}

        def evaluate(key):
            return AutoModelForCausalLM.from_pretrained(MODELS[key])

        for key in MODELS.keys():
            evaluate(key)
    """
    for expect in ("Pythia-1.4B", "OPT-1.3B"):
        result = run(code, expect)
        assert (result.status.value, result.score) == ("pass", 1.0), result.message
        assert lines(result) == [("train.py", 4), ("train.py", 7)]
    other = run(code, "OPT-6.7B")
    assert (other.status.value, other.score) == ("mismatch", 0.0)
    items = """
        from transformers import AutoModel

        ENCODERS = {"small": "bert-base-uncased", "large": "roberta-large"}
        models = {key: AutoModel.from_pretrained(hub) for key, hub in ENCODERS.items()}
    """
    result = run(items, "RoBERTa-large")
    assert (result.status.value, result.score) == ("pass", 1.0)
    assert lines(result) == [("train.py", 4), ("train.py", 5)]
    picked = """
        import argparse
        from transformers import AutoModel

        ENCODERS = {"small": "bert-base-uncased", "large": "roberta-large"}
        args = argparse.ArgumentParser().parse_args()
        model = AutoModel.from_pretrained(ENCODERS[args.size])
    """
    unknown = run(picked, "RoBERTa-large")  # which entry a flag picks is not a loop over all of them
    assert (unknown.status.value, unknown.score) == ("unverified", None)


# ----- releases named by project and version ------------------------------------------------------------------
@pytest.mark.parametrize(("expect", "found", "want"), [
    ("Open-Sora v1.0", "Open-Sora v1", "same"),  # a release tag compares by its numbers
    ("Open-Sora v1.0", "Open-Sora v1.2", "variant"),
    ("Mistral-7B-v0.1", "Mistral-7B-v0.3", "variant"),
    ("Mistral-7B", "Mistral-7B-v0.3", "same"),  # a claim naming no release accepts any
])
def test_release_tags(expect, found, want):
    assert relation(expect, found) == want


def test_a_release_named_by_version_matches_the_weights_it_published():
    names = Names(load_rule("model"))
    assert names.canonical("OpenSora-v1-HQ-16x512x512") == "Open-Sora v1.0"
    assert names.canonical("hpcai-tech/OpenSora-STDiT-v3") == "Open-Sora v1.2"
    code = """
        import torch
        from models.stdit import STDiT

        def build():
            model = STDiT(depth=28, hidden_size=1152)
            state = torch.load("pretrained_models/OpenSora-v1-HQ-16x512x512.pth", map_location="cpu")
            model.load_state_dict(state, strict=False)
            return model
    """
    faithful = run(code, "Open-Sora v1.0", {"models/stdit.py": "class STDiT:\n    pass\n"})
    assert (faithful.status.value, faithful.score, lines(faithful)) == ("pass", 1.0, [("train.py", 7)])
    drift = run("""
        from opensora.models import STDiT2
        model = STDiT2.from_pretrained("hpcai-tech/OpenSora-STDiT-v3")
    """, "Open-Sora v1.0")
    assert (drift.status.value, drift.score, lines(drift)) == ("mismatch", 0.0, [("train.py", 3)])


def test_a_release_initialisation_in_a_claim_compiles_only_for_projects_the_table_knows():
    from verifier.compiler import compile_claim
    from verifier.spec.model import SAU

    known = compile_claim(SAU(id="x-D1-001", dimension="D1", claim="T5 text encoder, Open-Sora v1.0 initialization"))
    assert known.coverage == "full"
    assert [c.params["expect"] for c in known.checks if getattr(c, "rule", None) == "model"] == ["Open-Sora v1.0"]
    unknown = compile_claim(SAU(id="x-D1-002", dimension="D1", claim="MegaVid v2.1 initialization"))
    assert unknown.checks == [] and unknown.fragments[0].reason.startswith("initialised from a release named by project")
