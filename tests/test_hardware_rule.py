"""Rule ``hardware``: the GPU count and type a claim names against the repo's launches, configs and docs."""

from __future__ import annotations

import pytest

from verifier.analysis.protocol import load_rule, validate_protocol_params, with_defaults
from verifier.analysis.protocol.examples import context_for, example_problems
from verifier.analysis.protocol.hardware import evaluate, gpu_statements
from verifier.results import Status

RULE = load_rule("hardware")


def run(files: dict[str, str], **params):
    return evaluate(with_defaults("hardware", params), context_for(files), None, RULE)


def where(result) -> list[tuple[str, int]]:
    return [(e.file, e.line) for e in result.evidence]


DDP = "import torch.distributed as dist\ndist.init_process_group('nccl')\n"


@pytest.mark.parametrize("kind", ["valid", "invalid"])
def test_rule_examples_hold(kind):
    for example in RULE["examples"][kind]:
        assert example_problems("hardware", example, kind == "valid") == [], example["name"]


def test_torchrun_and_readme_pass_with_both_places():
    result = run({"run.sh": "#!/bin/bash\ntorchrun --nnodes=1 --nproc_per_node=8 train.py --lr 1e-4\n",
                  "README.md": "# Repro\nWe trained on eight NVIDIA H100 GPUs.\n", "train.py": DDP}, gpus=8, gpu="H100")
    assert result.status is Status.pass_ and result.score == 1.0
    assert where(result) == [("README.md", 2), ("run.sh", 2)]


def test_every_launch_with_eight_processes_contradicts_a_single_gpu_claim():
    result = run({"scripts/train.sh": "NGPU=8\npython -m torch.distributed.launch --nproc_per_node=$NGPU train.py\n",
                  "README.md": "Everything runs on a single A100 GPU.\n", "train.py": DDP}, gpus=1, gpu="A100")
    assert result.status is Status.mismatch and result.score == 0.0
    assert where(result) == [("scripts/train.sh", 2)]  # the launch, not the README that agrees
    assert "configures 8" in result.message


def test_a_different_gpu_type_requested_by_the_job_is_a_mismatch():
    job = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gpus-per-node=v100:4\nsrun python train.py\n"
    result = run({"job.slurm": job, "README.md": "Trained on 4 A100 GPUs.\n", "train.py": DDP}, gpus=4, gpu="A100")
    assert result.status is Status.mismatch
    assert where(result) == [("job.slurm", 3)]


def test_nothing_stated_or_configured_is_missing():
    result = run({"train.py": "import torch\nmodel = torch.nn.Linear(2, 2)\n"}, gpus=8, gpu="A100")
    assert result.status is Status.missing and result.score == 0.0
    assert result.evidence == ()


def test_a_count_from_an_unset_variable_is_unverified():
    result = run({"launch.sh": "deepspeed --num_gpus $GPUS train.py --deepspeed ds.json\n", "train.py": DDP}, gpus=8)
    assert result.status is Status.unverified and result.score is None
    assert where(result) == [("launch.sh", 1)]


def test_conflicting_launches_are_unverified_unless_a_doc_says_which():
    files = {"a.sh": "torchrun --nproc_per_node=4 main.py\n", "b.sh": "torchrun --nproc_per_node=8 main.py\n", "main.py": DDP}
    assert run(files, gpus=8).status is Status.unverified
    files["README.md"] = "The paper's runs use 8 GPUs.\n"
    result = run(files, gpus=8)
    assert result.status is Status.pass_ and ("README.md", 1) in where(result)


def test_a_training_launch_decides_over_an_eval_launch():
    result = run({"scripts/train.sh": "accelerate launch --num_processes=4 train.py\n",
                  "scripts/eval.sh": "CUDA_VISIBLE_DEVICES=0 python evaluate.py\n", "train.py": "x = 1\n",
                  "evaluate.py": "x = 1\n"}, gpus=4)
    assert result.status is Status.pass_ and where(result) == [("scripts/train.sh", 1)]


def test_a_script_offered_both_plain_and_distributed_leaves_a_single_gpu_claim_open():
    readme = "```bash\npython train.py\n```\nor, on a node:\n```bash\ntorchrun --nproc_per_node=8 train.py\n```\n"
    result = run({"README.md": readme, "train.py": DDP}, gpus=1)
    assert result.status is Status.unverified and where(result) == [("README.md", 2), ("README.md", 6)]
    assert run({"README.md": readme, "train.py": DDP}, gpus=8).status is Status.pass_


def test_a_requirement_is_not_what_ran():
    files = {"README.md": "Requires a GPU with at least 24GB, e.g. an RTX 3090.\n", "train.py": "x = 'cuda'\n"}
    result = run(files, gpus=1, gpu="A100")
    assert result.status is Status.missing  # not a mismatch: nothing says the runs used an RTX 3090


def test_a_copy_of_the_paper_is_not_a_statement_of_the_repo():
    files = {"docs/paper.md": "We train on 8 NVIDIA A100 GPUs.\n", "train.py": "x = 1\n"}
    assert run(files, gpus=8, gpu="A100").status is Status.missing
    files["docs/setup.md"] = "We train on 8 NVIDIA A100 GPUs.\n"
    result = run(files, gpus=8, gpu="A100")
    assert result.status is Status.pass_ and where(result) == [("docs/setup.md", 1)]


def test_an_argparse_default_under_distributed_code_is_not_a_count():
    code = DDP + "import argparse\np = argparse.ArgumentParser()\np.add_argument('--gpus', type=int, default=1)\n"
    result = run({"train.py": code}, gpus=8)
    assert result.status is Status.unverified and ("train.py", 5) in where(result)
    single = "import argparse\np = argparse.ArgumentParser()\np.add_argument('--num_gpus', type=int, default=1)\n"
    assert run({"train.py": single}, gpus=4).status is Status.mismatch  # no launcher: the default is what runs


def test_lightning_trainer_devices_and_hydra_override():
    code = "import lightning as L\ntrainer = L.Trainer(accelerator='gpu', devices=[0, 1])\n"
    result = run({"train.py": code}, gpus=2)
    assert result.status is Status.pass_ and where(result) == [("train.py", 2)]
    result = run({"train.py": code, "run.sh": "python train.py trainer.devices=4\n"}, gpus=2)
    assert result.status is Status.mismatch and where(result) == [("run.sh", 1)]  # the launch overrides the code


def test_trainer_config_group_file_sets_devices():
    files = {"configs/trainer/gpu.yaml": "accelerator: gpu\ndevices: 8\n", "train.py": "import lightning as L\n"}
    result = run(files, gpus=8)
    assert result.status is Status.pass_ and where(result) == [("configs/trainer/gpu.yaml", 2)]


def test_implied_single_gpu_only_for_a_count_claim_of_one():
    files = {"train.py": "import torch\ndevice = 'cuda'\nx = torch.zeros(1).to(device)\n"}
    assert run(files, gpus=1).status is Status.pass_
    assert run(files, gpus=4).status is Status.missing
    assert run(files, gpus=1, gpu="A100").status is Status.missing  # the type is stated nowhere


def test_configured_count_without_the_type_is_half():
    result = run({"run.sh": "CUDA_VISIBLE_DEVICES=0,1 python train.py --epochs 3\n", "train.py": "x = 'cuda'\n"}, gpus=2, gpu="A6000")
    assert result.status is Status.partial and result.score == 0.5
    assert where(result) == [("run.sh", 1)]


def test_a_different_memory_size_is_a_minor_deviation():
    result = run({"README.md": "Experiments ran on one NVIDIA A100 (40GB).\n", "train.py": "x = 'cuda'\n"},
                 gpus=1, gpu="A100", gpu_memory_gb=80)
    assert result.status is Status.partial and result.score == 0.75


def test_any_run_accepts_one_of_several_experiment_counts():
    files = {"run_1d.sh": "python train.py --gpus 1\n", "run_2d.sh": "python train.py --gpus 2\n"}
    assert run(files, gpus=2).status is Status.unverified
    assert run(files, gpus=2, any_run=True).status is Status.pass_
    assert run(files, gpus=4, any_run=True).status is Status.mismatch


def test_sbatch_nodes_times_gpus_per_node():
    job = "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --gres=gpu:a100_80gb:8\nsrun python train.py\n"
    result = run({"job.sh": job, "train.py": DDP}, gpus=16, gpu="A100", gpu_memory_gb=80)
    assert result.status is Status.pass_ and where(result) == [("job.sh", 3)]


def test_real_index_skips_tests_and_reads_docs(tmp_path):
    """On a repo on disk: a launch under tests/ is not the run's, README numbers that are not GPUs are not
    counts, and the README's code block is a launch."""
    from verifier.checks.base import Context
    from verifier.index.build import build_index
    from verifier.spec.model import Spec

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "dist.sh").write_text("torchrun --nproc_per_node=2 train.py\n")
    (tmp_path / "train.py").write_text(DDP)
    readme = tmp_path / "README.md"
    readme.write_text("We train for 100 epochs on a 100 image subset with batch 64; see Table 8 A.\n")
    ctx = Context(build_index(tmp_path, use_cache=False), Spec())
    result = evaluate(with_defaults("hardware", {"gpus": 8}), ctx, None, RULE)
    assert result.status is Status.unverified  # distributed code, nothing sets its count
    assert where(result) == [("train.py", 2)]
    readme.write_text(readme.read_text() + "\n```bash\ntorchrun --nproc_per_node 8 train.py\n```\n")
    ctx = Context(build_index(tmp_path, use_cache=False), Spec())
    result = evaluate(with_defaults("hardware", {"gpus": 8}), ctx, None, RULE)
    assert result.status is Status.pass_ and where(result) == [("README.md", 4)]


@pytest.mark.parametrize("text,expected", [
    ("single NVIDIA A100 GPU (80GB)", [(1, "A100", 80)]),
    ("8x NVIDIA RTX 6000 Ada GPUs", [(8, "RTX 6000 Ada", None)]),
    ("a machine with a V100 GPU and two Xeon CPUs", [(1, "V100", None)]),
    ("2xA100", [(2, "A100", None)]),
    ("two nodes with 8 A100 GPUs each", [(16, "A100", None)]),
    ("on 4 GPUs", [(4, None, None)]),
    ("requires a GPU with 24GB of memory", []),
    ("a T4 template", []),
    ("the attention is fused into a single GPU kernel", []),
    ("an NVIDIA T4", [(1, "T4", None)]),
])
def test_gpu_statements(text, expected):
    assert [(s.count, s.family, s.memory_gb) for s in gpu_statements(text)] == expected


def test_a_gpu_budget_is_not_a_count():
    (stated,) = gpu_statements("training took 1200 A100 hours")
    assert stated.budget and stated.count is None and stated.family == "A100"


def test_parameters_are_validated():
    assert validate_protocol_params("hardware", {"gpus": 8, "gpu": "A100"}) is None
    assert "A1000" in validate_protocol_params("hardware", {"gpu": "A1000"})
    assert "integer" in validate_protocol_params("hardware", {"gpus": "eight"})
