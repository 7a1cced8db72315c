"""Mutation testing: drifts applied to a copy (never the repo), caught or surviving, deterministic per seed."""

from __future__ import annotations

import hashlib
import json

from click.testing import CliRunner

from minirepo import write_repo
from verifier.cli import main
from verifier.mutate.mutants import build_mutants
from verifier.mutate.operators import OPERATORS
from verifier.mutate.runner import mutate_repo


def digest(root):
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(root).as_posix().encode() + p.read_bytes())
    return h.hexdigest()


def test_operators_cover_every_dimension_and_parse(tmp_path):
    repo = write_repo(tmp_path / "mini")
    mutants, discarded = build_mutants(repo, ["train.py"], sorted(OPERATORS), 500, 0)
    ops = {m.operator for m, _ in mutants}
    assert {"const-scale", "const-neighbour", "sign-flip", "drop-factor", "stub-body", "swap-steps"} <= ops
    scaled = [m for m, _ in mutants if m.operator == "const-scale" and "0.0003 -> " in m.description]
    assert scaled and scaled[0].file == "train.py" and scaled[0].line == 10


def test_constant_drift_is_caught_and_repo_untouched(tmp_path):
    repo = write_repo(tmp_path / "mini")
    before = digest(repo)
    report = mutate_repo(repo, seed=1, max_mutants=40, operators=["const-scale", "const-neighbour", "stub-body"])
    assert digest(repo) == before
    lr = [o for o in report.outcomes if o.mutant.line == 10 and o.mutant.operator == "const-scale"]
    assert lr and all("mini-D1-001" in o.caught_by for o in lr)
    gamma = [o for o in report.outcomes if o.mutant.line == 12 and o.mutant.operator == "const-neighbour"]
    assert gamma and gamma[0].caught_by == ["mini-D1-003"]
    summary = report.summary()
    assert summary["false_alarms"] == 0
    # Every mutant that changes a line a SAU claims (a default, the optimizer call, a stubbed body) is caught.
    assert summary["relevant_mutants"] >= 10 and summary["relevant_kill_rate"] == 1.0
    assert summary["per_operator"]["const-scale"]["kill_rate"] > 0.3


def test_same_seed_same_mutants_and_json_cli(tmp_path):
    repo = write_repo(tmp_path / "mini")
    a = mutate_repo(repo, seed=7, max_mutants=15)
    b = mutate_repo(repo, seed=7, max_mutants=15)
    assert [o.mutant.diff for o in a.outcomes] == [o.mutant.diff for o in b.outcomes]
    result = CliRunner().invoke(main, ["mutate", str(repo), "--seed", "7", "--max-mutants", "15", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["summary"]["mutants"] == len(a.outcomes)
    assert all(m["diff"].startswith("--- a/") for m in data["mutants"])


# ----- relevance: what a verdict rests on (issue 8) ---------------------------------------------------------------
import textwrap  # noqa: E402
from pathlib import Path  # noqa: E402

import libcst as cst  # noqa: E402

from harness import materialize  # noqa: E402
from verifier.engine import run_repo  # noqa: E402
from verifier.mutate.operators import Applier, variants_for  # noqa: E402


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def _outcome(report, file, line, operator):
    found = [o for o in report.outcomes if o.mutant.file == file and o.mutant.line == line and o.mutant.operator == operator]
    assert len(found) == 1, [(o.mutant.file, o.mutant.line, o.mutant.operator) for o in report.outcomes]
    return found[0]


def test_assigned_seeding_loses_its_seed_not_its_line():
    module = cst.parse_module(
        "g = torch.Generator().manual_seed(args.seed)\nobs, _ = env.reset(seed=args.seed)\n"
        "rng = np.random.default_rng(seed)\ntorch.manual_seed(1)\n"
    )
    out = []
    for stmt in module.body:
        for v in variants_for(stmt):
            if v.operator == "remove-seeding":
                out.append(module.visit(Applier(stmt, v)).code.splitlines()[module.body.index(stmt)])
    # No mutant leaves a name undefined: the value stays, only the seed goes.
    assert out == ["g = torch.Generator()", "obs, _ = env.reset()", "rng = np.random.default_rng()", "pass"]


SEEDED_REPO = {
    "utils.py": '''\
        import random

        import torch


        def set_seed(seed):
            random.seed(seed)
            torch.manual_seed(seed)
            torch.cuda.manual_seed_all(seed)
        ''',
    "train.py": '''\
        import argparse

        import torch
        from torch import nn

        from utils import set_seed


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--seed", type=int, default=0)
            args = parser.parse_args()
            set_seed(args.seed)
            model = nn.Linear(4, 2)
            g = torch.Generator().manual_seed(args.seed)
            idx = torch.randperm(8, generator=g)
            print(model, idx)


        if __name__ == "__main__":
            main()
        ''',
    "sau.yaml": '''\
        version: 1
        paper: {id: seeded-mini, title: Seeded mini}
        saus:
          - id: sm-D3-001
            dimension: protocol
            claim: Every RNG is seeded from the run's seed.
            check: {kind: protocol, rule: seeded}
        ''',
}


def test_seeded_pass_cites_what_it_rests_on(tmp_path):
    repo = _write(tmp_path / "seeded", SEEDED_REPO)
    (verdict,) = run_repo(repo).verdicts
    assert verdict.status.value == "pass" and verdict.score == 1.0
    roles = {(e.file, e.line): e.role for e in verdict.evidence}
    assert roles[("utils.py", 7)] == "redundant"  # random.seed: nothing draws from Python's random
    assert roles[("utils.py", 9)] == "redundant"  # torch.cuda.manual_seed_all: torch.manual_seed seeds CUDA
    assert roles[("utils.py", 8)] == "presence"  # torch.manual_seed: nn.Linear draws its weights
    assert roles[("train.py", 13)] == "presence"  # set_seed(args.seed) wires the helper to the run
    assert roles[("train.py", 15)] == "presence"  # the generator the permutation draws from


def test_seeding_drifts_caught_and_equivalent_ones_not_relevant(tmp_path):
    repo = _write(tmp_path / "seeded", SEEDED_REPO)
    report = mutate_repo(repo, seed=0, max_mutants=50, operators=["remove-seeding"])
    for line in (7, 9):  # equivalent: the verdict, and the run, are the same without them
        o = _outcome(report, "utils.py", line, "remove-seeding")
        assert o.touched == [] and o.caught_by == []
    for file, line in (("utils.py", 8), ("train.py", 13), ("train.py", 15)):
        o = _outcome(report, file, line, "remove-seeding")
        assert o.touched == ["sm-D3-001"] and o.caught_by == ["sm-D3-001"], (file, line)
    assert "without its seed" in _outcome(report, "train.py", 15, "remove-seeding").mutant.description
    summary = report.summary()
    assert summary["relevant_kill_rate"] == 1.0 and summary["false_alarms"] == 0


PROTOCOL_REPO = {
    "train.py": '''\
        import argparse

        import torch
        from torch.utils.data import DataLoader, random_split
        from torchvision import datasets


        def train_epoch(model, loader, optimizer):
            for images, labels in loader:
                optimizer.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(images), labels)
                loss.backward()
                optimizer.step()


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--val-fraction", type=float, default=0.1)
            args = parser.parse_args()
            full = datasets.CelebA("data", split="train", download=True)
            test_set = datasets.CelebA("data", split="test", download=True)
            n_val = int(args.val_fraction * len(full))
            train_set, val_set = random_split(full, [len(full) - n_val, n_val])
            model = torch.nn.Linear(8, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            train_epoch(model, DataLoader(train_set, batch_size=64), optimizer)
            print(len(val_set), len(test_set))


        if __name__ == "__main__":
            main()
        ''',
    "sau.yaml": '''\
        version: 1
        paper: {id: proto-mini, title: Protocol mini}
        saus:
          - id: pm-D3-001
            dimension: protocol
            claim: Models are trained on CelebA.
            check: {kind: protocol, rule: dataset, expect: CelebA}
          - id: pm-D3-002
            dimension: protocol
            claim: The test split never reaches training.
            check: {kind: protocol, rule: no-test-leakage}
          - id: pm-D3-003
            dimension: protocol
            claim: 90% of the training images are used for training and 10% for validation.
            check: {kind: protocol, rule: split-ratio, expect: {train: 0.9, val: 0.1}}
        ''',
}


def test_protocol_rules_relevance_follows_what_they_judge(tmp_path):
    repo = _write(tmp_path / "proto", PROTOCOL_REPO)
    assert {v.id: v.status.value for v in run_repo(repo).verdicts} == {
        "pm-D3-001": "pass", "pm-D3-002": "pass", "pm-D3-003": "pass"}
    report = mutate_repo(repo, seed=0, max_mutants=200, operators=["swap-split", "stub-body", "const-neighbour"])
    # The dataset rule judges which dataset is loaded, never which split: a renamed split is not its business.
    renamed = _outcome(report, "train.py", 20, "swap-split")
    assert "pm-D3-001" not in renamed.touched and "pm-D3-001" not in renamed.caught_by
    # ... but it is no-test-leakage's: training now runs on the test split, and the pass cited that load.
    assert renamed.touched == ["pm-D3-002"] and renamed.caught_by == ["pm-D3-002"]
    # A stubbed training loop cannot make test data reach training: not relevant to an absence rule.
    stub = [o for o in report.outcomes if o.mutant.operator == "stub-body" and o.mutant.line == 8]
    assert stub and all("pm-D3-002" not in o.touched for o in stub)
    # The split sizes rest on the --val-fraction default: changing it is relevant, caught, and no false alarm.
    fraction = _outcome(report, "train.py", 18, "const-neighbour")
    assert fraction.touched == ["pm-D3-003"] and fraction.caught_by == ["pm-D3-003"]
    assert fraction.false_alarms == []


def test_compiled_claims_pair_checks_with_their_results(tmp_path):
    """A free-text claim's relevance uses what it compiles to: a `phases` order survives a step moved after its
    loop, and a constant beside a claimed call (which names no argument) is not what the claim resolved."""
    repo = materialize("claims-lora-torch", None, tmp_path)
    report = mutate_repo(repo, seed=0, max_mutants=200, operators=["out-of-loop", "const-neighbour"])
    moved = _outcome(report, "train.py", 81, "out-of-loop")
    assert moved.touched == [] and moved.caught_by == []
    start_factor = [o for o in report.outcomes if o.mutant.line == 46 and o.mutant.description == "0.01 -> 0.001"]
    assert start_factor and start_factor[0].touched == [] and start_factor[0].caught_by == []
    assert report.summary()["relevant_kill_rate"] == 1.0


PATTERN_REPO = {
    "sample.py": '''\
        import torch
        from torch import nn


        def main(sampler):
            conv = nn.Conv2d(4, 8, kernel_size=3, padding=1)
            with torch.no_grad():
                fake = sampler.sample((16, 4, 8, 8))
            print(conv, fake)


        if __name__ == "__main__":
            main(None)
        ''',
    "sau.yaml": '''\
        version: 1
        paper: {id: pattern-mini, title: Pattern mini}
        saus:
          - id: pt-D3-001
            dimension: protocol
            claim: Sampling runs without gradient tracking.
            check: {kind: pattern, require: "$S.sample(...)", inside: "with torch.no_grad(): ..."}
          - id: pt-D2-001
            dimension: methodological
            claim: 3x3 convolutions.
            check: {kind: pattern, require: "nn.Conv2d($A, $B, kernel_size=3, ...)"}
        ''',
}


def test_pattern_relevance_is_the_constants_the_pattern_spells_out(tmp_path):
    repo = _write(tmp_path / "pattern", PATTERN_REPO)
    assert {v.id: v.status.value for v in run_repo(repo).verdicts} == {"pt-D2-001": "pass", "pt-D3-001": "pass"}
    report = mutate_repo(repo, seed=0, max_mutants=200, operators=["const-plus-one"])
    shape = [o for o in report.outcomes if o.mutant.line == 8]
    assert shape and all(o.touched == [] and o.caught_by == [] for o in shape)  # `...` matches any shape
    kernel = [o for o in report.outcomes if o.mutant.line == 6 and o.mutant.description == "3 -> 4"]
    assert kernel and kernel[0].touched == ["pt-D2-001"] and kernel[0].caught_by == ["pt-D2-001"]


def test_augmentation_rule_rests_on_which_transforms_run_not_their_constants(tmp_path):
    repo = materialize("protocol-augment-cifar-svhn", None, tmp_path / "aug")
    report = mutate_repo(repo, seed=0, max_mutants=200, operators=["const-plus-one", "stub-body"])
    # padding=4 -> 5 leaves "crops and flips are applied" true; the claimed padding is the value check's
    size, padding = sorted((o for o in report.outcomes if o.mutant.file == "data.py" and o.mutant.line == 16
                            and o.mutant.operator == "const-plus-one"), key=lambda o: o.mutant.description)
    assert padding.mutant.description == "4 -> 5"
    assert padding.touched == ["aug-D1-001"] and padding.caught_by == ["aug-D1-001"]
    # the crop size beside it is neither the padding value check's nor the rule's business
    assert size.mutant.description == "32 -> 33" and size.touched == [] and size.false_alarms == []
    # removing the pipeline's body is relevant to the rule, and caught
    stubbed = [o for o in report.outcomes if o.mutant.operator == "stub-body" and o.mutant.line == 10]
    assert stubbed and all("aug-D3-001" in o.touched and "aug-D3-001" in o.caught_by for o in stubbed)


def test_a_prompt_drift_is_caught_and_messages_are_never_mutated(tmp_path):
    """`text-edit` drops the last word of a quoted text a run uses; the `strings` rule catches it. Docstrings,
    help texts and printed or raised messages are not a run's text and are never mutated."""
    repo = tmp_path / "probe"
    repo.mkdir()
    (repo / "probe.py").write_text(
        '"""Ask each model who it is."""\n'
        "import argparse\n\n"
        'PROMPTS = ["Who made you?", "What is your name?"]\n\n\n'
        "def ask(client, model):\n"
        '    """Query the model with every identity prompt."""\n'
        '    print("asking the model now")\n'
        "    return [client.chat(model=model, prompt=p) for p in PROMPTS]\n\n\n"
        'if __name__ == "__main__":\n'
        "    p = argparse.ArgumentParser()\n"
        '    p.add_argument("--model", default="gpt-4o", help="the model to probe for its identity")\n'
        "    ask(None, p.parse_args().model)\n",
        encoding="utf-8",
    )
    (repo / "sau.yaml").write_text(
        "version: 1\nsaus:\n  - id: probe-D1-001\n    dimension: D1\n    claim: identity prompts\n"
        "    check: {kind: protocol, rule: strings, expect: ['Who made you?', 'What is your name?']}\n",
        encoding="utf-8",
    )
    mutants, _ = build_mutants(repo, ["probe.py"], ["text-edit"], 50, 0)
    assert sorted((m.line, m.description) for m, _ in mutants) == [
        (4, "drop 'name' from 'What is your name?'"),
        (4, "drop 'you' from 'Who made you?'"),
    ]
    report = mutate_repo(repo, seed=0, max_mutants=50, operators=["text-edit"])
    assert [o.caught_by for o in report.outcomes] == [["probe-D1-001"], ["probe-D1-001"]]
    assert report.summary()["relevant_kill_rate"] == 1.0


def test_a_caption_template_loses_its_last_word_and_keeps_its_slots():
    import libcst as cst

    from verifier.mutate.operators import variants_for

    def edited(src: str) -> list[str]:
        node = cst.parse_expression(src)
        return [cst.Module([]).code_for_node(v.build(node)) for v in variants_for(node) if v.operator == "text-edit"]

    assert edited('f"a photo of a {name}."') == ['f"a photo of {name}."']
    assert edited('f"a photo of a {name} in the wild"') == ['f"a photo of a {name} in the"']
    assert edited('"Who made you?"') == ['"Who made?"']
    assert edited('f"{a} {b}"') == [] and edited('"two words"') == [] and edited('r"raw a b c"') == []
