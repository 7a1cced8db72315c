"""A right value that no run uses is a minor deviation (0.75), decided on the call graph and erring towards "runs".

Each case is a small repo written to disk, indexed and checked for real: a constant read only by a function the
stubbed ``main`` no longer calls, a default of an unreached builder, and the ways code runs that a call graph does
not see (a registry decorator, a by-name ``getattr``, a Hydra ``_target_``, no entry point at all), which must stay
live. A README or the sau spec naming a function does not call it; an ``isinstance`` test does not build a class.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml
from harness import materialize
from minirepo import make_repo

from verifier.engine import run_repo
from verifier.results import Status

SAMPLE = """\
    import argparse

    MAX_TOKENS = 512


    def collect(client, prompt):
        return client.complete(prompt, max_tokens=MAX_TOKENS)


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--prompt", default="hello")
        args = parser.parse_args()
        {body}


    if __name__ == "__main__":
        main()
    """


def verdict(tmp_path: Path, files: dict[str, str], check: str, claim: str = "the claim"):
    repo = make_repo(tmp_path, files, [{"id": "t-D1-001", "dimension": "D1", "claim": claim,
                                        "check": yaml.safe_load(check)}])
    (result,) = run_repo(repo).verdicts
    return result


def roles(result) -> list[tuple[str, int, str]]:
    return sorted((e.file, e.line, e.role) for e in result.evidence)


MAX_TOKENS_CHECK = "{kind: value, name: max_tokens, expect: 512}"


def test_a_constant_read_only_by_a_function_main_no_longer_calls_is_partial(tmp_path):
    files = ({"sample.py": SAMPLE.format(body="print(open('cached.txt').read())")})
    result = verdict(tmp_path, files, MAX_TOKENS_CHECK)
    assert (result.status, result.score) == (Status.partial, 0.75)
    assert "no run uses it: it applies in `collect`, which no entry point reaches" in result.message
    assert "runs start in `main`, sample.py:10" in result.message
    assert ("sample.py", 7, "dead") in roles(result) and ("sample.py", 10, "entry") in roles(result)


def test_the_same_constant_is_faithful_when_main_calls_its_reader(tmp_path):
    files = ({"sample.py": SAMPLE.format(body="print(collect(None, args.prompt))")})
    result = verdict(tmp_path, files, MAX_TOKENS_CHECK)
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert "no run uses it" not in result.message
    assert all(e.role not in ("dead", "entry") for e in result.evidence)


def test_a_readme_or_the_spec_naming_the_reader_does_not_make_it_run(tmp_path):
    files = ({
        "sample.py": SAMPLE.format(body="print(open('cached.txt').read())"),
        "README.md": "Call `collect` to sample replies.\n",
    })
    result = verdict(tmp_path, files, MAX_TOKENS_CHECK, claim="collect uses at most 512 new tokens")
    assert (result.status, result.score) == (Status.partial, 0.75)


def test_a_config_naming_the_reader_keeps_it_live(tmp_path):
    files = ({
        "sample.py": SAMPLE.format(body="print(open('cached.txt').read())"),
        "conf/sampler.yaml": "sampler:\n  _target_: sample.collect\n",
    })
    result = verdict(tmp_path, files, MAX_TOKENS_CHECK)
    assert (result.status, result.score) == (Status.pass_, 1.0)


def test_a_reader_looked_up_by_name_keeps_the_constant_live(tmp_path):
    body = "print(getattr(__import__('sample'), 'collect')(None, args.prompt))"
    files = ({"sample.py": SAMPLE.format(body=body)})
    result = verdict(tmp_path, files, MAX_TOKENS_CHECK)
    assert (result.status, result.score) == (Status.pass_, 1.0)


def test_a_repo_without_an_entry_point_counts_everything_as_live(tmp_path):
    source = SAMPLE.format(body="pass").split("    if __name__")[0]
    files = ({"sample.py": source})
    result = verdict(tmp_path, files, MAX_TOKENS_CHECK)
    assert (result.status, result.score) == (Status.pass_, 1.0)


BUILDERS = """\
    import torch

    REGISTRY = {{}}


    def register(name):
        def wrap(fn):
            REGISTRY[name] = fn
            return fn
        return wrap


    {decorator}
    def build_adam(params):
        return torch.optim.Adam(params, lr=1e-3)


    def main():
        model = torch.nn.Linear(4, 2)
        {body}


    if __name__ == "__main__":
        main()
    """

ADAM_CALL = "{kind: call, target: torch.optim.Adam, args: {lr: 0.001}}"


def test_a_registry_decorated_builder_is_not_called_dead_code(tmp_path):
    body = "optimizer = REGISTRY['adam'](model.parameters())"
    files = ({"train.py": BUILDERS.format(decorator='@register("adam")', body=body)})
    result = verdict(tmp_path, files, ADAM_CALL)
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert "never run" not in result.message


def test_an_undecorated_builder_nothing_calls_is_never_run(tmp_path):
    files = ({"train.py": BUILDERS.format(decorator="", body="optimizer = None")})
    result = verdict(tmp_path, files, ADAM_CALL)
    assert (result.status, result.score) == (Status.partial, 0.75)
    assert "train.py" in {e.file for e in result.evidence}
    assert any(e.line == 15 for e in result.evidence)


LAYERS = """\
    import torch.nn as nn


    class Adapter(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.drop = nn.Dropout(p=0.1)


    def count_adapters(model):
        return sum(isinstance(m, Adapter) for m in model.modules())


    def main():
        model = nn.Sequential(nn.Linear(4, 4))
        {body}
        print(count_adapters(model))


    if __name__ == "__main__":
        main()
    """

DROPOUT_CALL = "{kind: call, target: torch.nn.Dropout, args: {p: 0.1}}"


def test_an_isinstance_test_in_a_running_function_does_not_build_the_class(tmp_path):
    files = ({"layers.py": LAYERS.format(body="pass")})
    result = verdict(tmp_path, files, DROPOUT_CALL)
    assert (result.status, result.score) == (Status.partial, 0.75)
    assert ("layers.py", 7) in {(e.file, e.line) for e in result.evidence}


def test_a_class_the_run_builds_runs_its_constructor(tmp_path):
    files = ({"layers.py": LAYERS.format(body="model.append(Adapter(4))")})
    result = verdict(tmp_path, files, DROPOUT_CALL)
    assert (result.status, result.score) == (Status.pass_, 1.0)


def test_a_module_constant_whose_only_reader_is_unreached_names_that_reader(tmp_path):
    source = SAMPLE.format(body="print(open('cached.txt').read())").replace(
        "client.complete(prompt, max_tokens=MAX_TOKENS)", "client.complete(prompt)[:MAX_TOKENS]")
    files = ({"sample.py": source})
    result = verdict(tmp_path, files, MAX_TOKENS_CHECK)
    assert (result.status, result.score) == (Status.partial, 0.75)
    assert "only `collect` reads it (sample.py:7), and no entry point reaches that" in result.message
    assert ("sample.py", 7, "dead") in roles(result) and ("sample.py", 10, "entry") in roles(result)


def test_a_same_named_class_in_a_copy_no_one_imports_is_not_built_by_the_run(tmp_path):
    """``legacy/layers_v1.py`` keeps the old ``Adapter`` with the paper's dropout; the run builds its own."""
    new = LAYERS.format(body="model.append(Adapter(4))").replace("self.drop = nn.Dropout(p=0.1)", "self.drop = nn.Identity()")
    files = ({"legacy/layers_v1.py": LAYERS.format(body="pass").split("    def count_adapters")[0],
                            "layers.py": new})
    result = verdict(tmp_path, files, DROPOUT_CALL)
    assert (result.status, result.score) == (Status.partial, 0.75)
    assert ("legacy/layers_v1.py", 7) in {(e.file, e.line) for e in result.evidence}


def test_the_copy_is_built_once_the_run_imports_it(tmp_path):
    new = LAYERS.format(body="model.append(Adapter(4))").split("    class Adapter")[0] + (
        "    from legacy.layers_v1 import Adapter\n\n\n    def count_adapters" + LAYERS.split("    def count_adapters")[1]
    ).format(body="model.append(Adapter(4))")
    files = ({"legacy/__init__.py": "", "legacy/layers_v1.py": LAYERS.format(body="pass").split(
        "    def count_adapters")[0], "layers.py": new})
    result = verdict(tmp_path, files, DROPOUT_CALL)
    assert (result.status, result.score) == (Status.pass_, 1.0), result.message


def test_a_faithful_formula_no_run_computes_is_partial_and_cites_where_runs_start(tmp_path):
    """fixtures/formula-focal-wired/variants/unwired end to end: the loss is written, the run trains on BCE."""
    repo = materialize("formula-focal-wired", "unwired", tmp_path / "focal")
    verdicts = {v.id: v for v in run_repo(repo).verdicts}
    loss = verdicts["focal-D2-001"]
    assert (loss.status, loss.score) == (Status.partial, 0.75)
    assert "implements the formula: proven; but no run uses it: `focal_loss` is reached from no entry point" in loss.message
    assert "(runs start in `train`, train.py:20)" in loss.message
    assert roles(loss) == [("detect/losses.py", 6, "dead"), ("detect/losses.py", 11, "expression"),
                           ("train.py", 20, "entry")]
    faithful = {v.id: v for v in run_repo(materialize("formula-focal-wired", None, tmp_path / "ok")).verdicts}
    assert (faithful["focal-D2-001"].status, faithful["focal-D2-001"].score) == (Status.pass_, 1.0)


OPTIONS = """\
    import argparse

    import torch


    def parse_args():
        parser = argparse.ArgumentParser()
        parser.add_argument("--lr", type=float, default=0.01)
        parser.add_argument("--warmup-steps", type=int, default=500)
        return parser.parse_args()


    def train(args):
        optimizer = torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=args.lr)
        {body}


    if __name__ == "__main__":
        train(parse_args())
    """

WARMUP_CHECK = "{kind: value, name: warmup_steps, expect: 500}"


def test_an_option_parsed_and_never_read_is_partial(tmp_path):
    files = ({"train.py": OPTIONS.format(body="print('training', args)")})
    result = verdict(tmp_path, files, WARMUP_CHECK)
    assert (result.status, result.score) == (Status.partial, 0.75)
    assert "but no run uses it: the option is parsed, but nothing reads `args.warmup_steps`" in result.message
    assert ("train.py", 9, "dead") in roles(result) and ("train.py", 13, "entry") in roles(result)


def test_an_option_read_only_where_no_run_goes_names_the_reader(tmp_path):
    body = "return optimizer\n\n\n    def schedule(opt, args):\n        return args.warmup_steps"
    result = verdict(tmp_path, {"train.py": OPTIONS.format(body=body)}, WARMUP_CHECK)
    assert (result.status, result.score) == (Status.partial, 0.75)
    assert "only `schedule` reads `.warmup_steps` (train.py:19), which no entry point reaches" in result.message


@pytest.mark.parametrize(
    "body",
    [
        "scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, total_iters=args.warmup_steps)",
        "hp = vars(args)",
        "wandb.init(config=args)",
        "steps = {k: getattr(args, k) for k in ('lr', 'warmup_steps')}",
        "steps = getattr(args, 'warmup' + '_steps')",
        "cfg = dict(args.__dict__)",
    ],
    ids=["read", "vars", "library-gets-namespace", "getattr-by-string", "computed-getattr", "dunder-dict"],
)
def test_an_option_read_or_handed_on_with_the_namespace_is_used(tmp_path, body):
    result = verdict(tmp_path, {"train.py": OPTIONS.format(body=body)}, WARMUP_CHECK)
    assert (result.status, result.score) == (Status.pass_, 1.0), result.message


CONFIG = """\
    from dataclasses import dataclass

    import torch


    @dataclass
    class TrainConfig:
        lr: float = 0.01
        warmup_steps: int = 500


    def train(cfg: TrainConfig):
        optimizer = torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=cfg.lr)
        {body}


    if __name__ == "__main__":
        train(TrainConfig())
    """


def test_a_dataclass_field_nothing_reads_is_partial(tmp_path):
    result = verdict(tmp_path, {"train.py": CONFIG.format(body="print(cfg)")}, WARMUP_CHECK)
    assert (result.status, result.score) == (Status.partial, 0.75)
    assert "but no run uses it: the field is set, but nothing reads `.warmup_steps`" in result.message
    assert ("train.py", 9, "dead") in roles(result) and ("train.py", 12, "entry") in roles(result)


@pytest.mark.parametrize(
    ("body", "extra"),
    [
        ("scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, total_iters=cfg.warmup_steps)", ""),
        ("wandb.config.update(asdict(cfg))", ""),
        ("run = tyro.cli(TrainConfig)", ""),
        ("trainer = Trainer(optimizer, config=cfg)", "from transformers import Trainer\n"),
        ("steps = getattr(cfg, 'warmup' + '_steps')", ""),
    ],
    ids=["read", "asdict", "library-gets-class", "library-gets-instance", "computed-getattr"],
)
def test_a_field_read_or_handed_on_whole_is_used(tmp_path, body, extra):
    source = CONFIG.format(body=body).replace("    import torch\n", "    import torch\n" + textwrap.indent(extra, "    "), 1)
    result = verdict(tmp_path, {"train.py": source}, WARMUP_CHECK)
    assert (result.status, result.score) == (Status.pass_, 1.0), result.message


def test_a_config_class_with_a_library_base_is_read_by_the_library(tmp_path):
    source = CONFIG.format(body="print(cfg)").replace(
        "    @dataclass\n    class TrainConfig:", "    from transformers import TrainingArguments\n\n\n    @dataclass\n"
        "    class TrainConfig(TrainingArguments):")
    result = verdict(tmp_path, {"train.py": source}, WARMUP_CHECK)
    assert (result.status, result.score) == (Status.pass_, 1.0), result.message


EXISTS_CHECK = "{kind: exists, symbol: build_adam, reachable: true}"


def test_a_registry_decorated_component_exists_and_may_run(tmp_path):
    body = "optimizer = REGISTRY['adam'](model.parameters())"
    result = verdict(tmp_path, {"train.py": BUILDERS.format(decorator='@register("adam")', body=body)}, EXISTS_CHECK)
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert "may run: no call path from an entry point reaches it, but it is decorated" in result.message
    assert ("train.py", 14, "definition") in roles(result)


def test_a_component_nothing_calls_is_implemented_but_never_called(tmp_path):
    result = verdict(tmp_path, {"train.py": BUILDERS.format(decorator="", body="optimizer = None")}, EXISTS_CHECK)
    assert (result.status, result.score) == (Status.partial, 0.75)
    assert "never called from an entry point (train.py:14)" in result.message


def test_a_class_naming_itself_in_its_own_methods_is_not_built_by_that(tmp_path):
    source = LAYERS.format(body="pass").replace("super().__init__()", "super(Adapter, self).__init__()")
    result = verdict(tmp_path, {"layers.py": source}, "{kind: exists, symbol: Adapter, reachable: true}")
    assert (result.status, result.score) == (Status.partial, 0.75)
    assert "never called from an entry point (layers.py:4)" in result.message
    built = LAYERS.format(body="model.append(Adapter(4))").replace("super().__init__()", "super(Adapter, self).__init__()")
    result = verdict(tmp_path / "built", {"layers.py": built}, "{kind: exists, symbol: Adapter, reachable: true}")
    assert (result.status, result.score) == (Status.pass_, 1.0)


def test_two_classes_building_each_other_end_and_err_towards_runs(tmp_path):
    """A and B name each other only in methods of classes nothing builds: the search is bounded (MAX_DEPTH), and
    a question it cannot settle within the bound counts as "runs", never as a recursion error."""
    source = """\
        class A:
            def make(self):
                return B().make()


        class B:
            def make(self):
                return A().make()


        def main():
            print("nothing built")


        if __name__ == "__main__":
            main()
        """
    result = verdict(tmp_path, {"loop.py": source}, "{kind: exists, symbol: A.make, reachable: true}")
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert "may run" in result.message
