"""Shell launch scripts and notebook `!` lines: runners, targets, flags, env values, loops."""

from __future__ import annotations

import json
from pathlib import Path

from verifier.index.build import build_index
from verifier.index.facts import BindingKind
from verifier.index.notebooks import cell_of

SCRIPT = """\
#!/bin/bash
set -e
LR=1e-4
export BS=64
CUDA_VISIBLE_DEVICES=0 python train.py --lr $LR --batch_size=${BS} \\
    --fp16 optim.lr=2e-4 --betas 0.9 0.98 \\
    --name "run one"
for seed in 0 1 2 3 4; do
  accelerate launch --num_processes 8 --mixed_precision bf16 train.py --seed $seed
done
torchrun --nproc_per_node=8 -m pkg.train --epochs 3
deepspeed --num_gpus 4 train.py --deepspeed ds.json
python -m torch.distributed.launch --nproc_per_node 2 train.py --lr ${UNSET:-5e-5}
echo python train.py --lr 9
"""


def build(tmp_path: Path, files: dict[str, str]):
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return build_index(tmp_path, use_cache=False)


def test_launches(tmp_path):
    index = build(tmp_path, {"scripts/run.sh": SCRIPT, "train.py": "x = 1\n", "pkg/train.py": "", "pkg/__init__.py": ""})
    launches = index.files["scripts/run.sh"].launches
    assert [(la.runner, la.target, la.span.line, la.span.end_line) for la in launches] == [
        ("python", "train.py", 5, 7),
        ("accelerate", "train.py", 9, 9),
        ("torchrun", "pkg/train.py", 11, 11),  # -m pkg.train resolved to the repo file
        ("deepspeed", "train.py", 12, 12),
        ("torchrun", "train.py", 13, 13),
    ]
    first = dict(launches[0].flags)
    assert first == {"lr": "1e-4", "batch_size": "64", "fp16": "true", "optim.lr": "2e-4", "betas": "0.9 0.98",
                     "name": "run one"}
    assert launches[0].env == (("CUDA_VISIBLE_DEVICES", "0"),)
    assert dict(launches[1].flags) == {"seed": "$seed"}
    assert dict(launches[4].flags) == {"lr": "5e-5"}


def test_launch_and_env_bindings(tmp_path):
    index = build(tmp_path, {"scripts/run.sh": SCRIPT, "train.py": "x = 1\n"})
    facts = index.files["scripts/run.sh"]
    launch = {(b.path, b.span.line): b for b in facts.bindings if b.kind is BindingKind.launch}
    lr = launch[("lr", 5)]
    assert (lr.name, lr.value, lr.owner) == ("lr", 1e-4, "train.py")
    hydra = launch[("optim.lr", 6)]
    assert (hydra.name, hydra.value) == ("lr", 2e-4)
    assert launch[("betas", 6)].value == (0.9, 0.98)
    assert launch[("fp16", 6)].value is True
    # the loop runs the launch once per seed: one constant binding per value, all at the launch line
    seeds = [b for b in facts.bindings if b.kind is BindingKind.launch and b.path == "seed"]
    assert sorted((b.value, b.span.line, b.constant) for b in seeds) == [(s, 9, True) for s in range(5)]
    env = {b.name: b for b in facts.bindings if b.kind is BindingKind.env}
    assert (env["LR"].value, env["LR"].span.line) == (1e-4, 3)
    assert env["BS"].value == 64
    assert (env["seed"].value, env["seed"].span.line) == ((0, 1, 2, 3, 4), 8)
    assert not any(b.owner == "train.py" and b.value == 9 for b in facts.bindings)  # echo is not a launch


def test_brace_and_seq_loops_and_arrays(tmp_path):
    script = ("SEEDS=(1 2 3)\nfor s in {0..2}; do python a.py --seed=$s; done\n"
              "for t in $(seq 1 3); do python a.py --t $t; done\n"
              'for u in "${SEEDS[@]}"; do python a.py --u $u; done\n')
    facts = build(tmp_path, {"go.sh": script, "a.py": ""}).files["go.sh"]
    env = {b.name: b.value for b in facts.bindings if b.kind is BindingKind.env}
    assert env == {"SEEDS": (1, 2, 3), "s": (0, 1, 2), "t": (1, 2, 3), "u": (1, 2, 3)}
    assert [la.target for la in facts.launches] == ["a.py", "a.py", "a.py"]


def test_broken_script_is_noted(tmp_path):
    index = build(tmp_path, {"bad.sh": "python train.py --lr 1 \nif then fi (((\n"})
    facts = index.files["bad.sh"]
    assert facts.parse_error is not None
    assert facts.launches and facts.launches[0].flags == (("lr", "1"),)


def test_notebook_virtual_source_and_launches(tmp_path):
    nb = {"cells": [
        {"cell_type": "markdown", "source": ["# Train\n", "We use a learning rate of 3e-4.\n"]},
        {"cell_type": "code", "source": ["import torch\n", "lr = 3e-4\n", "%matplotlib inline\n",
                                         "!python train.py --lr 1e-3\n"]},
        {"cell_type": "code", "source": "%%bash\nLR=5e-4\npython train.py --lr $LR\n"},
        {"cell_type": "code", "source": ["%run train.py --batch_size 32\n",
                                         "opt = torch.optim.Adam(params, lr=lr)"]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    index = build(tmp_path, {"nb/train.ipynb": json.dumps(nb), "train.py": ""})
    facts = index.files["nb/train.ipynb"]
    source = index.source("nb/train.ipynb")
    assert index.lines("nb/train.ipynb", 6) == "lr = 3e-4"
    assigned = [b for b in facts.bindings if b.kind is BindingKind.assign and b.name == "lr"][0]
    assert (assigned.span.line, cell_of(source, assigned.span.line)) == (6, 2)
    assert index.cell_of("nb/train.ipynb", 6) == 2 and index.cell_of("train.py", 1) is None
    launches = [(la.target, la.flags, la.span.line, cell_of(source, la.span.line)) for la in facts.launches]
    assert launches == [
        ("train.py", (("lr", "1e-3"),), 8, 2),
        ("train.py", (("lr", "5e-4"),), 12, 3),
        ("train.py", (("batch_size", "32"),), 14, 4),
    ]
    adam = [c for c in facts.calls if c.qualname == "torch.optim.Adam"][0]
    assert adam.span.line == 15 and cell_of(source, 15) == 4
    comments = {(b.name, b.span.line) for b in facts.bindings if b.kind is BindingKind.comment}
    assert ("learning_rate", 3) in comments and not any(line in (7, 8, 11, 12) for _, line in comments)
    assert facts.parse_error is None


def test_bad_notebook_is_noted(tmp_path):
    index = build(tmp_path, {"a.ipynb": "{not json", "b.ipynb": "[1, 2]"})
    assert "not valid JSON" in index.files["a.ipynb"].parse_error.reason
    assert index.files["b.ipynb"].parse_error is not None
    assert index.source("a.ipynb") == ""


def test_resolve_target():
    from verifier.index.build import resolve_target

    paths = {"train.py", "src/pkg/train.py", "tools/eval.py", "nb/helper.py"}
    by_suffix = {"train.py": ["src/pkg/train.py", "train.py"], "eval.py": ["tools/eval.py"],
                 "helper.py": ["nb/helper.py"]}
    assert resolve_target("python", "./train.py", "scripts/run.sh", paths, by_suffix) == "train.py"
    assert resolve_target("python", "../nb/helper.py", "nb/a.ipynb", paths, by_suffix) == "nb/helper.py"
    assert resolve_target("python", "helper.py", "nb/a.ipynb", paths, by_suffix) == "nb/helper.py"
    assert resolve_target("python", "eval.py", "run.sh", paths, by_suffix) == "tools/eval.py"  # unique leaf
    assert resolve_target("python -m", "pkg.train", "run.sh", paths, by_suffix) == "src/pkg/train.py"
    assert resolve_target("python", "missing.py", "run.sh", paths, by_suffix) == "missing.py"
    assert resolve_target("python", "$SCRIPT", "run.sh", paths, by_suffix) == "$SCRIPT"
