"""`value` checks over a sweep (`sweep: [32, 64, 96]`): every swept value must be among the runs' values.

Each way a repo launches a sweep is a small repo written to disk and indexed for real (launch-script loops,
repeated launch lines, Hydra multirun, a list the code iterates, one config per run, a run without the flag);
grading follows the share found; a tuple-valued `expect` list still needs the exact list.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from values_helpers import indexed_repo, run_value

from verifier.checks.value import sweep_score
from verifier.compiler import compile_claim
from verifier.index.facts import BindingKind
from verifier.index.shell import MAX_SWEEP_VALUES
from verifier.results import Status
from verifier.spec import schema
from verifier.spec.errors import SpecError
from verifier.spec.load import load_spec
from verifier.spec.model import SAU, ValueCheck

TRAIN = """\
import argparse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()
    print(args.rank, args.lr)


if __name__ == "__main__":
    main()
"""


repo, run = indexed_repo, run_value


def located(result) -> list[tuple[str, int, str]]:
    return [(e.file, e.line, e.note) for e in result.evidence]


# ----- spec ---------------------------------------------------------------------------------------------------
def write_spec(tmp_path: Path, check: str) -> Path:
    path = tmp_path / "sau.yaml"
    path.write_text(f"version: 1\nsaus:\n  - id: a-D1-001\n    dimension: D1\n    check: {check}\n", encoding="utf-8")
    return path


def test_a_sweep_loads_and_needs_exactly_one_of_expect_and_sweep(tmp_path):
    loaded = load_spec(write_spec(tmp_path, "{kind: value, name: lora_rank, sweep: [8, 16]}"))
    check = loaded.spec.saus[0].check
    assert (check.sweep, check.expect, check.expected()) == ([8, 16], None, [8, 16])
    for text, says in [
        ("{kind: value, name: lora_rank, expect: 8, sweep: [8, 16]}", "exactly one of `expect`"),
        ("{kind: value, name: lora_rank}", "needs `expect` (the value), `sweep`"),
        ("{kind: value, name: lora_rank, sweep: []}", "at least 1 item"),
        ("{kind: value, call: torch.optim.Adam, arg: lr, sweep: [1, 2]}", "not to `call` with `arg`"),
    ]:
        with pytest.raises(SpecError) as err:
            load_spec(write_spec(tmp_path, text))
        assert says in str(err.value) and "sau.yaml:5" in str(err.value)
    # `expect: null` is a claim of its own (the value is None), not a missing field
    assert ValueCheck(name="scheduler", expect=None).expected() is None


def test_the_schema_knows_sweep_and_rejects_both_fields():
    validator = jsonschema.Draft202012Validator(schema.generate())

    def errors(check):
        return list(validator.iter_errors({"version": 1, "saus": [{"id": "a", "dimension": "D1", "check": check}]}))

    assert errors({"kind": "value", "name": "r", "sweep": [8, 16]}) == []
    assert errors({"kind": "value", "name": "r", "expect": 8, "sweep": [8, 16]})
    assert errors({"kind": "value", "name": "r"})
    assert errors({"kind": "value", "name": "r", "sweep": []})


# ----- where the runs' values come from ---------------------------------------------------------------------
def test_a_launch_script_loop_runs_each_value(tmp_path):
    script = "#!/bin/bash\nfor r in 32 64 96; do\n  python train.py --rank $r\ndone\n"
    index = repo(tmp_path, {"train.py": TRAIN, "scripts/sweep.sh": script})
    result = run(index, name="lora_rank", sweep=[32, 64, 96])
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert located(result) == [("scripts/sweep.sh", 3, "rank = 32"), ("scripts/sweep.sh", 3, "rank = 64"),
                               ("scripts/sweep.sh", 3, "rank = 96")]
    assert result.message == (
        "lora_rank swept over {32, 64, 96}: runs take 32 (launch flag, scripts/sweep.sh:3), "
        "64 (launch flag, scripts/sweep.sh:3), 96 (launch flag, scripts/sweep.sh:3)"
    )
    assert [f["value"] for f in result.details["found"]] == [32, 64, 96] and result.details["missing"] == []
    json.dumps(result.details)


def test_repeated_launch_lines_and_a_run_without_the_flag(tmp_path):
    script = "python train.py --rank 16\npython train.py --rank 32\npython train.py --lr 3e-4\n"
    index = repo(tmp_path, {"train.py": TRAIN, "run.sh": script})
    result = run(index, name="lora_rank", sweep=[8, 16, 32])
    assert (result.status, result.score) == (Status.pass_, 1.0)
    # the third line leaves --rank at train.py's default 8: that run takes 8
    assert located(result) == [("run.sh", 1, "rank = 16"), ("run.sh", 2, "rank = 32"), ("train.py", 6, "rank = 8")]
    assert "8 (train.py:6, default (run.sh:3 runs train.py without the flag))" in result.message


def test_hydra_multirun_lists_range_and_choice(tmp_path):
    script = "python train.py -m model.rank=32,64,96 'optim.lr=choice(1e-4,3e-4)' 'seed=range(0,3)'\n"
    index = repo(tmp_path, {"train.py": "print(1)\n", "multirun.sh": script})
    rank = run(index, name="lora_rank", sweep=[32, 64, 96])
    assert (rank.status, rank.score) == (Status.pass_, 1.0)
    assert [line for _, line, _ in located(rank)] == [1, 1, 1]
    assert run(index, name="learning_rate", sweep=[1e-4, 3e-4]).status is Status.pass_
    assert run(index, name="seed", sweep=[0, 1, 2]).status is Status.pass_  # range's stop is excluded
    # without -m the comma list is one (Hydra-invalid) value, not three runs
    single = repo(tmp_path / "single", {"train.py": "print(1)\n", "run.sh": "python train.py model.rank=32,64\n"})
    assert run(single, name="lora_rank", sweep=[32, 64]).status is Status.missing


def test_a_config_list_counts_only_where_the_code_iterates_it(tmp_path):
    config = "noise_scales: [0.01, 0.001, 0.0001]\nepochs: 3\n"
    iterating = ("import yaml\ncfg = yaml.safe_load(open('configs/base.yaml'))\n"
                 "for sigma in cfg['noise_scales']:\n    print(sigma)\n")
    index = repo(tmp_path, {"configs/base.yaml": config, "train.py": iterating})
    result = run(index, name="noise", names=["sigma"], sweep=[1e-2, 1e-3, 1e-4])
    assert (result.status, result.score) == (Status.pass_, 1.0)
    # one location per value, and the loop that makes the list a sweep
    assert [(f, line) for f, line, _ in located(result)] == [("configs/base.yaml", 1)] * 3 + [("train.py", 3)]
    assert [e.role for e in result.evidence] == ["effective"] * 3 + ["source"]
    assert "list iterated at train.py:3" in result.message
    indexing = "import yaml\ncfg = yaml.safe_load(open('configs/base.yaml'))\nsigma = cfg['noise_scales'][0]\n"
    unused = repo(tmp_path / "unused", {"configs/base.yaml": config, "train.py": indexing})
    result = run(unused, name="noise", names=["sigma"], sweep=[1e-2, 1e-3, 1e-4])
    assert (result.status, result.score) == (Status.missing, 0.0)
    assert "no loop in the code iterates it" in result.message
    assert [(e.file, e.line) for e in result.evidence if e.role == "missing-near"] == [("configs/base.yaml", 1)]


def test_an_iterated_plural_setting_and_enumerate(tmp_path):
    code = ("import argparse\np = argparse.ArgumentParser()\np.add_argument('--ranks', type=int, nargs='+', "
            "default=[4, 8])\nargs = p.parse_args()\nfor i, r in enumerate(args.ranks):\n    print(i, r)\n")
    index = repo(tmp_path, {"train.py": code})
    result = run(index, name="lora_rank", sweep=[4, 8])
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert located(result) == [("train.py", 3, "ranks = 4"), ("train.py", 3, "ranks = 8"),
                               ("train.py", 5, "iterates the list")]


def test_one_config_file_per_run(tmp_path):
    files = {f"configs/r{r}.yaml": f"lora:\n  rank: {r}\n  alpha: 16\n" for r in (32, 64)}
    index = repo(tmp_path, {**files, "train.py": "print(1)\n"})
    result = run(index, name="lora_rank", sweep=[32, 64])
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert [(f, line) for f, line, _ in located(result)] == [("configs/r32.yaml", 2), ("configs/r64.yaml", 2)]


# ----- grading ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("found", "claimed", "score"),
    [(4, 4, 1.0), (3, 4, 0.75), (2, 3, 0.5), (2, 4, 0.5), (1, 2, 0.5), (1, 3, 0.25), (1, 7, 0.25), (0, 3, 0.0)],
)
def test_the_share_found_is_floored_to_a_level(found, claimed, score):
    assert sweep_score(found, claimed) == score


def test_partial_and_missing_sweeps_name_found_and_missing_values(tmp_path):
    index = repo(tmp_path, {"train.py": TRAIN, "sweep.sh": "for r in 32 64; do python train.py --rank $r; done\n"})
    half = run(index, name="lora_rank", sweep=[32, 64, 96, 128])
    assert (half.status, half.score) == (Status.partial, 0.5)
    assert half.message == (
        "lora_rank swept over {32, 64, 96, 128}: runs take 32 (launch flag, sweep.sh:1), "
        "64 (launch flag, sweep.sh:1); no run takes {96, 128}"
    )
    assert located(half) == [("sweep.sh", 1, "rank = 32"), ("sweep.sh", 1, "rank = 64")]
    assert half.details["missing"] == [96, 128]
    one = run(index, name="lora_rank", sweep=[32, 96, 128])
    assert (one.status, one.score) == (Status.partial, 0.25)
    none = run(index, name="lora_rank", sweep=[8, 16])
    assert (none.status, none.score) == (Status.missing, 0.0)
    assert none.message == "lora_rank swept over {8, 16}: no run takes {8, 16}; other values: {32, 64}"
    assert run(index, name="dropout", sweep=[0.1, 0.2]).status is Status.missing  # bound nowhere
    first = run(index, name="lora_rank", sweep=[32, 64, 96, 128])
    assert (first.message, first.evidence) == (half.message, half.evidence)  # deterministic


def test_a_tuple_valued_list_still_needs_the_exact_list(tmp_path):
    config = "optim:\n  betas: [0.9, 0.999]\n"
    index = repo(tmp_path, {"configs/optim.yaml": config, "train.py": "print(1)\n"})
    assert run(index, name="betas", expect=[0.9, 0.999]).status is Status.pass_
    assert run(index, name="betas", expect=[0.9, 0.99]).status is not Status.pass_
    loop = "for b in 0.9 0.999; do python train.py --betas $b; done\n"
    looped = repo(tmp_path / "looped", {"train.py": TRAIN, "go.sh": loop})
    # runs at beta 0.9 and at beta 0.999 are not one run at betas (0.9, 0.999)
    assert run(looped, name="betas", expect=[0.9, 0.999]).status is Status.mismatch
    assert run(looped, name="betas", sweep=[0.9, 0.999]).status is Status.pass_


# ----- the shell index ----------------------------------------------------------------------------------------
def test_loop_bindings_are_bounded_and_nested_loops_keep_their_own_values(tmp_path):
    many = " ".join(str(i) for i in range(MAX_SWEEP_VALUES + 1))
    script = (f"for s in {many}; do python a.py --seed $s; done\n"
              "for lr in 1e-3 1e-4; do\n  for r in 8 16; do\n    python a.py --lr=$lr --rank \"$r\"\n  done\ndone\n")
    facts = repo(tmp_path, {"go.sh": script, "a.py": ""}).files["go.sh"]
    launch = [(b.path, b.value, b.constant, b.span.line) for b in facts.bindings if b.kind is BindingKind.launch]
    assert ("seed", None, False, 1) in launch  # too long a sweep stays as written
    assert sorted(x for x in launch if x[0] in ("lr", "rank")) == [
        ("lr", 0.0001, True, 4), ("lr", 0.001, True, 4), ("rank", 8, True, 4), ("rank", 16, True, 4)
    ]
    assert [dict(la.flags) for la in facts.launches][1] == {"lr": "$lr", "rank": "$r"}


# ----- the compiler -------------------------------------------------------------------------------------------
def compiled(claim: str) -> list[dict]:
    result = compile_claim(SAU(id="p-D1-001", dimension="D1", claim=claim))
    return [c.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True) for c in result.checks]


@pytest.mark.parametrize(
    ("claim", "checks"),
    [
        ("Batch size ∈ {16, 32}", [{"name": "minibatch_size", "sweep": [16, 32]}]),
        ("We train with Mixup α ∈ {0.2, 0.8} on all runs", [{"name": "mixup_alpha", "sweep": [0.2, 0.8]}]),
        ("weight decay in [0.0, 0.01, 0.1]", [{"name": "weight_decay", "sweep": [0, 0.01, 0.1]}]),
        ("learning rate searched over [1e-4, 3e-4, 1e-3]", [{"name": "learning_rate", "sweep": [1e-4, 3e-4, 1e-3]}]),
        ("Ablation: depth: 2, 4, 8", [{"name": "num_layers", "sweep": [2, 4, 8]}]),
        ("Dropout grid [1, 2, 4] x1e-2 on the small model", [{"name": "dropout", "sweep": [0.01, 0.02, 0.04]}]),
        # one setting with a tuple, shape or interval value keeps a list `expect`
        ("betas=(0.9, 0.999)", [{"name": "betas", "expect": [0.9, 0.999]}]),
        ("video latent space: resolution=256×256", [{"name": "image_size", "expect": [256, 256]}]),
        # ... but a one-number setting's range bounds its value (a scalar lr is never the list)
        ("learning_rate range [0.001, 0.01]", [{"name": "learning_rate", "within": [0.001, 0.01]}]),
        ("milestones = [30, 60, 90]", [{"name": "milestones", "expect": [30, 60, 90]}]),
    ],
)
def test_sets_grids_and_ablations_compile_to_sweeps(claim, checks):
    # names come from the lexicon (edited elsewhere); what this test pins is sweep versus list `expect`
    assert [{k: v for k, v in c.items() if k not in ("name", "names")} for c in compiled(claim)] == [
        {k: v for k, v in c.items() if k != "name"} for c in checks
    ]


def test_a_drafted_sweep_is_written_as_sweep():
    from verifier.draft import draft

    text = draft("# Setup\nThe batch size ∈ {16, 32} and the learning rate grid is [1e-4, 3e-4, 1e-3].\n", "p.md")
    assert 'check: {"kind": "value", "name": "minibatch_size", "sweep": [16, 32]}' in text
    assert '"expect"' not in text
