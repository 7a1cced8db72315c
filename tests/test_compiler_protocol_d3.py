"""Protocol (D3) prose compiles into the protocol checks the rule library runs: comparison lists written as
sentences, family lists, ablated components, and the fragments no repository implements (context)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.compiler import compile_claim
from verifier.compiler.protocol_claims import (
    baseline_name,
    checkable_metric,
    code_spellings,
    context_note,
    find_baseline_lists,
    heading_label,
    study_heading,
)
from verifier.engine import run_repo
from verifier.spec.model import SAU

SABENCH = Path(__file__).resolve().parents[2] / "shared" / "sabench-dev"


def compiled(claim: str, dimension: str = "D3"):
    return compile_claim(SAU(id="p-D3-001", dimension=dimension, claim=claim), {})


def dumps(result) -> list[dict]:
    return [c.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True) for c in result.checks]


def outcomes(result) -> list[tuple[str, str, str]]:
    return [(f.text, f.outcome, f.reason.split(":")[0]) for f in result.fragments]


# ----- comparison lists in running prose ------------------------------------------------------------------
def test_prose_list_after_against_ends_at_its_qualifier():
    result = compiled("Compare TreeNet against CRU-D, Latent ODE, mTAN and NRDE on CIFAR-10.")
    assert dumps(result) == [
        {"rule": "baseline", "name": "CRU-D", "aliases": ["cru_d", "CRUD"]},
        {"rule": "baseline", "name": "Latent ODE", "aliases": ["latent_ode", "LatentODE"]},
        {"rule": "baseline", "name": "mTAN"},
        {"rule": "baseline", "name": "NRDE"},
        {"rule": "dataset", "expect": "CIFAR10"},
    ]
    assert result.coverage == "full" and result.leftover == []


def test_vs_list_and_bare_compare_list():
    result = compiled("Measure error growth for GraphNet vs MGN, GNOT, Transolver on 2D flows. Metric: MSE.")
    assert [c["name"] for c in dumps(result) if c.get("rule") == "baseline"] == ["MGN", "GNOT", "Transolver"]
    assert {"rule": "metric", "expect": "MSE"} in dumps(result) and result.coverage == "full"
    bare = compiled("Compare Full FT, CLIP Zero-Shot, 8 PEFT methods, and WiSE variants.")
    assert [c for c in dumps(bare) if c.get("rule") == "baseline"] == [
        {"rule": "baseline", "name": "Full fine-tuning", "aliases": ["full_fine_tuning", "FullFineTuning"]},
        {"rule": "baseline", "name": "CLIP Zero-Shot", "aliases": ["clip_zero_shot", "CLIPZeroShot"]},
        {"rule": "baseline", "name": "WiSE"},
    ]
    assert {"name": "num_methods", "expect": 8} in dumps(bare)  # "8 PEFT methods" is a count, not a name


def test_subject_of_vs_is_not_a_baseline_and_quoted_results_are_context():
    result = compiled("Compare KernelNet vs ResMLP, DenseMLP, and SparseMLP (numbers taken from its paper).")
    assert [c["name"] for c in dumps(result)] == ["ResMLP", "DenseMLP"]
    assert outcomes(result)[-1] == ("and SparseMLP (numbers taken from its paper)", "context", "reported result")
    assert result.coverage == "full"


def test_family_members_are_the_baselines_and_a_bare_family_is_left_for_the_judge():
    members = compiled("Compare the adapter against Full FT and PEFT baselines (LoRA, DoRA, PiSSA) on GSM8K.")
    assert [c.get("name") or c.get("expect") for c in dumps(members)] == [
        "Full fine-tuning", "LoRA", "DoRA", "PiSSA", "GSM8K",
    ]
    family = compiled("Baselines: PEFT methods, SOTA models. Metric: accuracy.")
    assert dumps(family) == [{"rule": "metric", "expect": "accuracy"}]
    assert family.coverage == "partial"
    assert [f.outcome for f in family.fragments] == ["leftover", "leftover", "typed"]


def test_counted_list_with_abbreviations():
    result = compiled(
        "The loss is applied to three distinct architectures -- Graph Network Simulator (GNS), MeshGraphNet, "
        "and Transolver -- to show generality."
    )
    assert [c["name"] for c in dumps(result)] == ["GNS", "MeshGraphNet", "Transolver"]


@pytest.mark.parametrize(
    "text",
    [
        "Compare methods under input-dependent noise X ~ Uniform(0,4) with n=200 samples.",
        "Three methods compared on relative frequency of exceedance (95% Clopper-Pearson CI).",
        "Baselines: detector_acc = 1.0 (perfect detector), detector_acc = 0.9 (weak detector).",
        "Compare KV-cache memory: Ours 0.77-0.86GB vs Live2diff 17.70GB.",
        "Train 3 variants: S-6M (256d embedding), B-42M (512d), L-138M (768d).",
        "Data: 22 models: proprietary (via provider APIs: Anthropic, OpenAI) + open-source.",
        "P7 — DINOv2 vs. ImageNet-21K Comparison.",
        "Compare DWT (pytorch_wavelets) vs PyTorch 2D FFT.",
        "Baselines: N/A (descriptive evaluation).",
        "Baseline: worst-performing method per dataset (relative baseline = 0).",
        "Compare detection rates between naive and informed adversaries.",
        "Ablation: wavelet vs Fourier transform.",
    ],
)
def test_no_baseline_from_prose_that_names_none(text):
    assert find_baseline_lists(text).names == []
    assert not [c for c in compiled(text).checks if getattr(c, "rule", None) == "baseline"]


@pytest.mark.parametrize(
    "text, names",
    [
        ("We compare against the strongest baseline from prior work, which uses a ResNet-50 backbone.", []),
        ("Robustness against Gaussian noise and JPEG compression.", []),
        ("Compared with Adam and SGD optimizers on CIFAR-10.", []),  # optimizers: call checks, not baselines
        ("Our method outperforms the baselines (see Table 3).", []),
        ("The baseline is trained for 10 epochs.", []),
        ("Baselines include random search, grid search and Bayesian optimization.", ["Random search", "Grid search"]),
        ("Compare with the Euler and Heun solvers.", ["Euler", "Heun"]),
        ("compared against PPO and SAC with 5 seeds each", ["PPO", "SAC"]),
        ("Compare to prior SOTA: DreamBooth, Textual Inversion, and Custom Diffusion.",
         ["DreamBooth", "Textual Inversion", "Custom Diffusion"]),
        ("Compared to two groups: pixel (PixNet, GridNet) and latent (LatNet, CodeNet).",
         ["PixNet", "GridNet", "LatNet", "CodeNet"]),
    ],
)
def test_baseline_lists_in_other_phrasings(text, names):
    assert find_baseline_lists(text).names == names


@pytest.mark.parametrize(
    "item, name",
    [
        ("and DDPM baselines", "DDPM"),
        ("Houl. Adapter", "Adapter"),
        ("VICON-88M", "VICON"),
        ("FMT-S-6M", "FMT"),
        ("Pythia-1.4B", "Pythia-1.4B"),  # a public checkpoint's size is part of which baseline it is
        ("InstructBLIP-7B", "InstructBLIP-7B"),
        ("OPT-1.3B", "OPT-1.3B"),
        ("FNO's", "FNO"),
        ("do_nothing", "do_nothing"),
        ("linear probing", "Linear probing"),
        ("PEFT baselines", None),
        ("8 PEFT methods", None),
        ("PyTorch 2D FFT", None),
        ("ImageNet-21K Comparison", None),
        ("Scenario 1", None),
        ("J", None),
        ("worst-performing PEFT method", None),
    ],
)
def test_baseline_name_of_a_list_item(item, name):
    assert baseline_name(item) == name


def test_code_spellings():
    assert code_spellings("OS-Ext") == ["os_ext", "OSExt"]
    assert code_spellings("Diffusion+FFT") == ["diffusion_fft", "DiffusionFFT"]
    assert code_spellings("LoRA") == []


def test_ablated_component_named_by_its_abbreviation():
    result = compiled("The model is evaluated with and without prefix-enhancement (PE) at T=50 steps.")
    assert {"rule": "baseline", "name": "prefix-enhancement", "aliases": ["prefix_enhancement", "PrefixEnhancement"]} in dumps(result)
    standard = compiled("Each network is evaluated in its standard form and with the energy penalty (EP- variant) on both tasks.")
    assert dumps(standard) == [{"rule": "baseline", "name": "energy penalty", "aliases": ["energy_penalty", "EnergyPenalty"]}]
    unnamed = compiled("The model is evaluated with and without data augmentation.")
    assert not unnamed.checks and unnamed.coverage == "none"


def test_baseline_lists_are_not_read_in_method_claims():
    assert not compiled("Compare against CRU-D and mTAN.", "D2").checks


# ----- context: what no repository implements ------------------------------------------------------------
@pytest.mark.parametrize(
    "fragment, category",
    [
        ("Methods marked with † are trained on extra data", "citation"),
        ("and RivalNet (results from GitHub, same device)", "reported result"),
        ("N/A (descriptive evaluation)", "not applicable"),
        ("Additionally", "connective"),
        ("For each prompt category", "heading of the parts that follow"),
        ("after training on inputs drawn from [a, b]", "heading of the parts that follow"),
        ("Proprietary models use different API pricing tiers", "compute budget"),
        ("Extra r×r matrix R adds negligible overhead", "compute budget"),
        ("total transform time (seconds)", "compute budget"),
        ("Parameter counts", "parameter count"),
        ("Verify slower error accumulation for our model", "reported result"),
        ("Real-world dataset (0.25deg, surface to 100km)", "dataset statistic"),
        ("long-term dependency", "heading"),
        ("Wavelet reconstruction fidelity test", "heading"),
        ("optimal gradient approximation vs initialization quality", "heading"),
    ],
)
def test_context_notes(fragment, category):
    assert context_note(fragment).split(":")[0] == category


@pytest.mark.parametrize(
    "fragment",
    [
        "strong augmentation",
        "spatial attention",
        "Evaluate at multiple super-resolution levels",
        "parallel vs. sequential adapter designs on self-supervised features",
        "(d) within-category vs. cross-category similarity analysis",
        "Simulation only (no control)",
        "For 100 epochs",
        "after 5000 warmup steps",
        "initialization sample count",
        "balancing risk control and efficiency",
        "Real-world dataset with 40000 trajectories",
        "None of the baselines use pretraining",
        "hyperparameter values from the official implementation",
    ],
)
def test_fragments_that_state_a_fact_are_not_context(fragment):
    assert context_note(fragment) is None


def test_context_notes_only_for_protocol_claims():
    protocol = compiled("Ablation: long-term dependency. Compare against GRU-D and mTAN.")
    assert outcomes(protocol)[0] == ("Ablation: long-term dependency", "context", "heading")
    assert protocol.coverage == "full"
    method = compiled("Ablation: long-term dependency. The encoder uses GELU.", "D2")
    assert method.fragments[0].outcome == "leftover"


def test_whole_claim_in_sabench_style():
    result = compiled(
        "Ablation: noise robustness. Compare ShockNet vs WENO-Net, CNO and DiffusionPDE on CIFAR-10. "
        "Methods marked with * are trained on train+test. Verify lower error for ShockNet. Metric: MSE."
    )
    assert dumps(result) == [
        {"rule": "baseline", "name": "WENO-Net", "aliases": ["weno_net", "WENONet"]},
        {"rule": "baseline", "name": "CNO"},
        {"rule": "baseline", "name": "DiffusionPDE"},
        {"rule": "dataset", "expect": "CIFAR10"},
        {"rule": "metric", "expect": "MSE"},
    ]
    assert [o for _, o, _ in outcomes(result)] == ["context", "typed", "typed", "context", "context", "typed"]
    assert result.coverage == "full"


# ----- end to end: a compiled D3 claim against a small repo ------------------------------------------------
TRAIN = '''\
"""Train a small classifier on MNIST and compare it with two baselines."""
import torch
from sklearn.metrics import accuracy_score
from torchvision import datasets


class TinyNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(784, 10)

    def forward(self, x):
        return self.fc(x.flatten(1))


class WideMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))

    def forward(self, x):
        return self.fc(x.flatten(1))


class DeepNetB(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Sequential(torch.nn.Linear(784, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))

    def forward(self, x):
        return self.fc(x.flatten(1))


def evaluate(model, images, labels):
    preds = model(images).argmax(1)
    return accuracy_score(labels.numpy(), preds.numpy())


def main():
    test_set = datasets.MNIST("data", train=False, download=True)
    images, labels = test_set.data.float() / 255.0, test_set.targets
    for model in (TinyNet(), WideMLP(), DeepNetB()):
        print(type(model).__name__, evaluate(model, images, labels))


if __name__ == "__main__":
    main()
'''

SPEC = '''\
version: 1
paper: {id: tiny, title: Tiny}
saus:
  - id: tiny-D3-001
    dimension: D3
    claim: >-
      Ablation: capacity sensitivity. Compare TinyNet against WideMLP and DeepNet-B on MNIST.
      Methods marked with * use numbers from their papers. Metric: accuracy.
'''


def write_repo(root: Path, train: str) -> Path:
    root.mkdir(parents=True)
    (root / "train.py").write_text(train, encoding="utf-8")
    (root / "sau.yaml").write_text(SPEC, encoding="utf-8")
    return root


def test_compiled_claim_of_the_end_to_end_spec():
    claim = SPEC.split("claim: >-\n", 1)[1].replace("\n      ", " ").strip()
    result = compiled(claim)
    assert dumps(result) == [
        {"rule": "baseline", "name": "WideMLP"},
        {"rule": "baseline", "name": "DeepNet-B", "aliases": ["deepnet_b", "DeepNetB"]},
        {"rule": "dataset", "expect": "MNIST"},
        {"rule": "metric", "expect": "accuracy"},
    ]
    assert result.coverage == "full"


def test_end_to_end_faithful_repo_passes(tmp_path):
    repo = write_repo(tmp_path / "faithful", TRAIN)
    (verdict,) = run_repo(repo, use_cache=False).verdicts
    assert (verdict.status.value, verdict.score) == ("pass", 1.0)
    lines = {(e.file, e.line) for e in verdict.evidence}
    assert ("train.py", 25) in lines  # class DeepNetB: found through the alias the compiler added
    assert ("train.py", 40) in lines  # datasets.MNIST(...) loads the dataset


def test_end_to_end_baseline_never_run_is_flagged(tmp_path):
    drifted = TRAIN.replace("for model in (TinyNet(), WideMLP(), DeepNetB()):", "for model in (TinyNet(), WideMLP()):")
    repo = write_repo(tmp_path / "drifted", drifted)
    (verdict,) = run_repo(repo, use_cache=False).verdicts
    assert (verdict.status.value, verdict.score) == ("partial", 0.75)
    assert "DeepNet-B is implemented (train.py:25) but no experiment runs it" in verdict.message
    (baseline,) = [r for r in verdict.checks if "DeepNet-B" in r.message]
    assert (baseline.status.value, baseline.score) == ("partial", 0.5)
    assert [(e.file, e.line) for e in baseline.evidence] == [("train.py", 25)]


def test_end_to_end_other_dataset_is_a_mismatch(tmp_path):
    repo = write_repo(tmp_path / "swapped", TRAIN.replace("datasets.MNIST(", "datasets.FashionMNIST("))
    (verdict,) = run_repo(repo, use_cache=False).verdicts
    assert (verdict.status.value, verdict.score) == ("partial", 0.75)
    (dataset,) = [r for r in verdict.checks if "MNIST" in r.message]
    assert (dataset.status.value, dataset.score, dataset.message) == ("mismatch", 0.0, "loads FashionMNIST, not MNIST")
    assert [(e.file, e.line) for e in dataset.evidence] == [("train.py", 40)]


# ----- the dev set, when it is there -----------------------------------------------------------------------
@pytest.mark.skipif(not SABENCH.is_dir(), reason="SA-Bench dev data not present")
def test_dev_set_baseline_names_are_names():
    """No comparison list item of the dev set becomes a baseline that is a quantity, a title or a library."""
    for path in sorted(SABENCH.glob("*.json")):
        for claim in json.loads(path.read_text())["claims"]:
            for name in find_baseline_lists(claim["claim"]).names:
                assert baseline_name(name) == name, (claim["id"], name)  # a name read again is the same name


# ----- data-volume ablations and study headings -------------------------------------------------------------
def test_training_set_fractions_are_one_sweep_and_the_heading_is_its_title():
    result = compiled(
        "Ablation: training set fraction. Reduce the training set to 0.25, 0.5 and 0.75 of the full 12000 samples. Metric: RMSE."
    )
    assert dumps(result) == [{"name": "train_size", "sweep": [0.25, 0.5, 0.75]}, {"rule": "metric", "expect": "RMSE"}]
    assert outcomes(result)[0] == ("Ablation: training set fraction", "context", "heading")
    assert result.coverage == "full"  # the size of the full set is the data's, not a second value


@pytest.mark.parametrize(
    "text, values",
    [
        ("Models are trained with decreasing sample sizes -- 4000, 2000, 800 samples.", [4000, 2000, 800]),
        ("We subsample the training data to 10%, 25% and 50%.", [0.1, 0.25, 0.5]),
        ("Each model uses 10%, 30% or 100% of the training data.", [0.1, 0.3, 1.0]),
    ],
)
def test_training_set_sizes_in_other_phrasings(text, values):
    (check,) = [c for c in dumps(compiled(text)) if c.get("name") == "train_size"]
    assert check == {"name": "train_size", "sweep": values}


@pytest.mark.parametrize(
    "text",
    [
        "Reduce the training set to 2,000 samples.",  # one size: a thousands separator, not a list
        "Reduce the training set to 0.5, 2 and 10 of the data.",  # fractions and counts mixed
        "Reduce the learning rate to 0.1, 0.01 and 0.001.",  # not the training set
    ],
)
def test_no_training_size_sweep(text):
    assert not [c for c in dumps(compiled(text)) if c.get("name") == "train_size"]


def test_training_size_sweeps_only_in_protocol_claims():
    assert not [c for c in dumps(compiled("Reduce training set to 0.2, 0.4 of full 9000 samples.", "D1")) if c.get("name") == "train_size"]


def test_heading_whose_words_do_not_recur_stays_with_the_judge():
    result = compiled("Robustness test: label corruption. Evaluate on CIFAR-10 with 5 seeds.")
    assert outcomes(result)[0] == ("Robustness test: label corruption", "leftover", "no value, name, formula or sequence the compiler can type")
    assert result.coverage == "partial"


def test_heading_over_a_fragment_left_to_the_judge_stays_with_it():
    result = compiled("Sensitivity analysis: guidance weight. Guidance weight is annealed by a custom scheduler.")
    assert [o for _, o, _ in outcomes(result)] == ["leftover", "leftover"]


@pytest.mark.parametrize(
    "heading, title",
    [
        ("Ablation: initialization sample count", "initialization sample count"),
        ("Robustness test: variance across test samples.", "variance across test samples"),
        ("Sensitivity analysis: DDIM eta and guidance weight", "DDIM eta and guidance weight"),
        ("Ablation: we vary the depth", None),  # a sentence, not a title
        ("Ablation: depth 4 vs 8", None),  # values are facts, not a title
        ("Results: table of scores", None),  # not a study label
    ],
)
def test_study_heading(heading, title):
    assert study_heading(heading) == title


def test_rest_of_the_data_as_test_set_is_no_test_leakage():
    result = compiled("Train on 1000 trajectories; the remaining portion of the dataset serves as the test set.")
    assert {"rule": "no-test-leakage"} in dumps(result)


FRACTIONS_TRAIN = '''\
import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train_frac", type=float, default=1.0)
    args = parser.parse_args()
    data = np.random.default_rng(0).normal(size=(1000, 4))
    print(data[: int(len(data) * args.train_frac)].mean())


if __name__ == "__main__":
    main()
'''
SWEEP_SCRIPT = "#!/bin/bash\nfor f in 0.2 0.4 0.6; do\n  python train.py --train_frac $f\ndone\n"

FRACTIONS_SPEC = '''\
version: 1
paper: {id: frac, title: Fractions}
saus:
  - id: frac-D3-001
    dimension: D3
    claim: "Ablation: training sample size. Reduce training set to 0.2, 0.4, 0.6 of full 1000 samples."
'''


def _fractions_repo(root: Path, script: str) -> Path:
    root.mkdir(parents=True)
    (root / "train.py").write_text(FRACTIONS_TRAIN, encoding="utf-8")
    (root / "sweep.sh").write_text(script, encoding="utf-8")
    (root / "sau.yaml").write_text(FRACTIONS_SPEC, encoding="utf-8")
    return root


def test_end_to_end_training_size_sweep_passes_on_the_runs_it_names(tmp_path):
    (verdict,) = run_repo(_fractions_repo(tmp_path / "faithful", SWEEP_SCRIPT), use_cache=False).verdicts
    assert (verdict.status.value, verdict.score) == ("pass", 1.0)
    assert {(e.file, e.line) for e in verdict.evidence} == {("sweep.sh", 3)}  # each size is a launch of train.py


def test_end_to_end_training_size_sweep_with_a_size_missing_is_partial(tmp_path):
    (verdict,) = run_repo(_fractions_repo(tmp_path / "drifted", SWEEP_SCRIPT.replace(" 0.6;", ";")), use_cache=False).verdicts
    assert (verdict.status.value, verdict.score) == ("partial", 0.5)
    assert "0.6" in verdict.message


def test_heading_names_the_parameter_of_a_swept_value():
    result = compiled("Sensitivity analysis: DDIM sampling steps. Test steps in {20, 50, 100} on CIFAR-10.")
    assert dumps(result) == [
        {"target": "DDIMScheduler | DDIMSampler | ddim_sample_loop | ddim_sample"},
        {"name": "sampling_steps", "sweep": [20, 50, 100]},
        {"rule": "dataset", "expect": "CIFAR10"},
    ]
    assert heading_label("Sensitivity analysis: DDIM sampling steps. Test steps in {20, 50, 100}.") == (
        "Sensitivity analysis: DDIM sampling steps"
    )
    assert heading_label("Compare A against B. Steps in {1, 2}.") is None
    # without the heading, "steps" says nothing of which steps: left to the judge
    assert not [c for c in dumps(compiled("Test steps in {20, 50, 100} on CIFAR-10.")) if "sweep" in c]


def test_one_letter_metric_is_left_to_the_judge():
    result = compiled("Compare WDNO vs PID and SAC. Metric: J (mean +/- std).")
    assert {"rule": "metric", "expect": "J"} not in dumps(result)
    assert outcomes(result)[-1][1] == "leftover"
    assert checkable_metric("J") is False and checkable_metric("MSE") is True and checkable_metric("R^2") is True


def test_max_error_metric_and_versioned_baseline():
    result = compiled("Metrics: MSE, MAE, L_inf. Compare to Conformer and wav2vec 2.0.")
    assert dumps(result) == [
        {"rule": "baseline", "name": "Conformer"},
        {"rule": "baseline", "name": "wav2vec 2.0", "aliases": ["wav2vec_2_0", "Wav2vec20"]},
        {"rule": "metric", "expect": "MSE"},
        {"rule": "metric", "expect": "MAE"},
        {"rule": "metric", "expect": "max error"},
    ]
    assert result.coverage == "full"
    assert baseline_name("batch 1.0") is None and baseline_name("ResNet 50") is None


def test_heading_that_states_more_than_the_claim_stays_with_the_judge():
    """"frozen" is said only in the heading: the study's variant is not a title of facts that follow."""
    result = compiled("Ablation: frozen backbone. The backbone is trained on CIFAR-10 for 100 epochs.")
    assert outcomes(result)[0][1] == "leftover"
    assert baseline_name("x1e4") is None and baseline_name("c3p128") is None and baseline_name("word2vec") == "word2vec"


@pytest.mark.parametrize(
    ("claim", "datasets"),
    [
        ("Few-shot evaluation on miniImageNet and tieredImageNet, 5-way", ["miniImageNet", "tieredImageNet"]),
        ("Scene-text recognition trained on MJSynth and SynthText, tested on IIIT5K, IC13 and IC15", ["MJSynth", "SynthText", "IIIT5K", "IC13", "IC15"]),
        ("Property prediction on the MoleculeNet tasks BBBP, Tox21 and ClinTox", ["MoleculeNet", "BBBP", "Tox21", "ClinTox"]),
        ("Federated learning on FEMNIST and Sent140", ["FEMNIST", "Sent140"]),
        ("Multi-agent evaluation on SMAC maps", ["SMAC"]),
    ],
)
def test_benchmarks_of_other_areas_are_dataset_checks(claim, datasets):
    checks = compile_claim(SAU(id="d-D3-001", dimension="D3", claim=claim)).checks
    assert [c.expect for c in checks if getattr(c, "rule", None) == "dataset"] == datasets


def test_a_common_word_is_not_read_as_a_benchmark():
    checks = compile_claim(SAU(id="d-D3-001", dimension="D3", claim="Leaf nodes are split while the fever score drops")).checks
    assert not [c for c in checks if getattr(c, "rule", None) == "dataset"]


def test_metrics_at_k_are_names_not_numbers():
    result = compile_claim(SAU(id="m-D3-001", dimension="D3", claim="Recall@1, Recall@5, Recall@10 and median rank"))
    assert [c.expect for c in result.checks] == ["Recall@1", "Recall@5", "Recall@10", "median rank"]
    assert result.coverage == "full"


RETRIEVAL_EVAL = """import numpy as np


def retrieval_metrics(sim):
    pos = np.where(np.argsort(-sim, axis=1) == np.arange(sim.shape[0])[:, None])[1]
    metrics = {{}}
    metrics["R@1"] = float((pos < 1).mean())
    {r5}
    metrics["MedR"] = float(np.median(pos) + 1)
    print(metrics)
    return metrics
"""


@pytest.mark.parametrize(
    ("r5", "status", "score"),
    [('metrics["R@5"] = float((pos < 5).mean())', "pass", 1.0), ("pass", "partial", 0.5)],
)
def test_recall_at_k_is_found_under_its_logged_key(tmp_path, r5, status, score):
    import yaml

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "eval.py").write_text(RETRIEVAL_EVAL.format(r5=r5))
    spec = {"version": 1, "paper": {"id": "r"}, "saus": [{"id": "r-D3-001", "dimension": "protocol", "claim": "Recall@1, Recall@5 and median rank"}]}
    (repo / "sau.yaml").write_text(yaml.safe_dump(spec))
    (verdict,) = run_repo(repo, use_cache=False).verdicts
    assert (verdict.status.value, verdict.score) == (status, score), verdict.message
    assert ("eval.py", 7) in [(e.file, e.line) for e in verdict.evidence]


def test_a_corrupted_imagenet_is_its_own_benchmark():
    checks = compile_claim(SAU(id="c-D3-001", dimension="D3", claim="Robustness: mCE on ImageNet-C, top-1 on ImageNet")).checks
    assert sorted((c.rule, c.expect) for c in checks) == [("dataset", "ImageNet"), ("dataset", "ImageNet-C"), ("metric", "accuracy"), ("metric", "mCE")]


@pytest.mark.parametrize(("claim", "metric"), [("report sFID", "sFID"), ("validation bits-per-byte", "bits-per-byte"), ("the M4 OWA", "OWA")])
def test_metrics_of_generation_lm_and_forecasting_papers(claim, metric):
    checks = compile_claim(SAU(id="m-D3-001", dimension="D3", claim=claim)).checks
    assert [c.expect for c in checks if c.rule == "metric"] == [metric]


@pytest.mark.parametrize(
    "claim, want",
    [
        # a known dataset beside an unlisted one makes a verb's list one of datasets
        ("We evaluate on VQAv2 test-dev and GQA (accuracy).", [("dataset", "GQA"), ("dataset", "VQAv2"), ("metric", "accuracy")]),
        ("Pose estimation on MPII, reported as PCKh@0.5.", [("dataset", "MPII"), ("metric", "PCKh@0.5")]),
        ("Robustness: clean accuracy and robust accuracy under AutoAttack on CIFAR-10.",
         [("dataset", "CIFAR10"), ("metric", "clean accuracy"), ("metric", "robust accuracy")]),
        ("Translation quality on FLORES-200 devtest: SacreBLEU, chrF++ and COMET-22.",
         [("dataset", "FLORES-200"), ("metric", "BLEU"), ("metric", "COMET"), ("metric", "chrF++")]),
        ("Motor-imagery decoding on BCI Competition IV-2a, reported as Cohen's kappa.",
         [("dataset", "BCI Competition IV-2a"), ("metric", "Cohen's kappa")]),
        ("GQA with 8 key-value groups and RoPE.", []),  # grouped-query attention, not the VQA dataset
        ("the seed is fixed to SEED=42 for every run", []),
        ("R^2 measures the explained variance of the fit.", [("metric", "R2")]),
    ],
)
def test_vocabulary_of_datasets_and_metrics_across_areas(claim, want):
    got = sorted((c.rule, c.expect) for c in compiled(claim).checks if c.kind == "protocol" and c.rule in ("dataset", "metric"))
    assert got == sorted(want)


def test_a_pretrained_baseline_keeps_its_size_and_is_decided_by_the_model_it_loads(tmp_path):
    claim = "Baselines: Pythia-1.4B and OPT-1.3B at matched token counts."
    checks = [c for c in compiled(claim).checks if c.kind == "protocol" and c.rule == "baseline"]
    assert [c.name for c in checks] == ["Pythia-1.4B", "OPT-1.3B"]
    (tmp_path / "sau.yaml").write_text("version: 1\nsaus:\n  - id: b\n    dimension: D3\n    claim: " + json.dumps(claim) + "\n")
    (tmp_path / "eval.py").write_text(
        "from transformers import AutoModelForCausalLM\n"
        "\n"
        "BASELINES = {'pythia': 'EleutherAI/pythia-410m', 'opt': 'facebook/opt-1.3b'}\n"
        "\n"
        "if __name__ == '__main__':\n"
        "    for key, hub_id in BASELINES.items():\n"
        "        model = AutoModelForCausalLM.from_pretrained(hub_id)\n"
    )
    (verdict,) = run_repo(tmp_path, use_cache=False).verdicts
    pythia = next(r for r in verdict.checks if "Pythia" in r.message)
    opt = next(r for r in verdict.checks if "OPT" in r.message)
    assert (opt.status.value, opt.score) == ("pass", 1.0)
    assert (pythia.status.value, pythia.score) == ("mismatch", 0.0)  # the 410M model stands in for the 1.4B one
    assert "pythia-410m" in pythia.message
    assert [(e.file, e.line) for e in pythia.evidence] == [("eval.py", 3), ("eval.py", 7)]
    assert (verdict.status.value, verdict.score) == ("partial", 0.5)  # one of two baselines drifted


def _rules(claim: str) -> set[str]:
    result = compile_claim(SAU(id="p-D3-001", dimension="D3", claim=claim))
    return {c.rule for c in result.checks if c.kind == "protocol"}


@pytest.mark.parametrize(("claim", "rule"), [
    ("NER on CoNLL-2003: micro F1 on the test sets, the model chosen by dev-set F1", "select-on-validation"),
    ("test score @ best-val epoch, 10 runs", "select-on-validation"),
    ("the probe learning rate chosen on 10,000 images held out from the training set", "select-on-validation"),
    ("the 14K clean validation images are used only for model selection", "select-on-validation"),
    ("the 28 days before them are the validation window on which all hyperparameters are chosen", "select-on-validation"),
    ("preprocessing (quantile transform) fit on the train part only", "no-test-leakage"),
    ("all ablations on val only, single model", "no-test-leakage"),
    ("train on defect-free images only, no test images for tuning", "no-test-leakage"),
])
def test_selection_and_leakage_stated_in_free_words(claim, rule):
    assert rule in _rules(claim)


@pytest.mark.parametrize("claim", [
    "last-epoch model, no early stopping on the test session",  # negated: nothing is selected
    "hyperparameters are tuned on the test split",  # the opposite of selecting on validation data
    "the best result on ImageNet is reported",  # a result, no validation data
])
def test_a_negated_or_test_set_choice_is_no_selection_on_validation(claim):
    assert "select-on-validation" not in _rules(claim)


@pytest.mark.parametrize(("claim", "expect"), [
    ("results are from a single run", 1), ("1 run per config", 1), ("every model is trained once per setting", 1),
    ("with a single calibration seed", 1),
])
def test_a_single_run_is_one_seed(claim, expect):
    result = compile_claim(SAU(id="p-D3-001", dimension="D3", claim=claim))
    assert [c.params.get("expect") for c in result.checks if c.kind == "protocol" and c.rule == "seeds"] == [expect]


@pytest.mark.parametrize(("claim", "frozen"), [
    ("teacher Qwen2.5-7B-Instruct (frozen) → student Qwen2.5-0.5B", ["teacher"]),
    ("frozen SFT reference, frozen 1B reward model", ["ref_model", "reward_model"]),
    ("the text encoder frozen", ["text_encoder"]),  # not also an "encoder"
    ("the backbone is frozen for the first 5 epochs", []),  # frozen for a while, then trained
])
def test_frozen_parts_in_free_words(claim, frozen):
    result = compile_claim(SAU(id="p-D1-001", dimension="D1", claim=claim))
    assert [c.name for c in result.checks if c.kind == "protocol" and c.rule == "frozen"] == frozen


def test_the_checkpoint_with_the_best_validation_score_is_selection_on_validation():
    assert "select-on-validation" in _rules("each method's checkpoint is the one with the highest validation ROUGE-L")
