"""Python facts: every binding kind, calls, imports and definitions, with exact lines."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from verifier.index.build import build_index
from verifier.index.facts import BindingKind

TRAIN = '''\
"""PPO training. We use lr = 3e-4 and a learning rate of 1e-3."""
import argparse
import torch
import torch.nn as nn
from torch import optim
from dataclasses import dataclass, field
from .utils import helper
import click


@dataclass
class Config:
    lr: float = 3e-4
    betas: tuple = (0.9, 0.999)
    hidden: int = field(default=4 * 64)
    eps = 1e-8  # eps: 1e-8


class Net(nn.Module):
    def __init__(self, d_model=128, *, dropout=0.1):
        super().__init__()
        self.fc = nn.Linear(d_model, 4 * d_model)
        self.lr = 1 / 255
        self.w = nn.Parameter(torch.zeros(3)).normal_(std=0.02)

    def forward(self, x):
        return self.fc(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", "--learning-rate", type=float, default=3 * 10**-4)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--clip-range", dest="clip", default="0.2")
    args = parser.parse_args()
    opt = optim.Adam(Net().parameters(), lr=args.lr, betas=(0.9, 0.99))
    cfg = {"optim": {"lr": 1e-3, "wd": 0.0}, "bs": 64}
    cfg["warmup"] = 100
    a, b = 1, -1
    a += 2
    d = dict(gamma=0.99, sub=dict(lam=0.95))
    helper(x=cfg["bs"])
    conv = nn.Conv2d(3, 64, kernel_size=3)


@click.command()
@click.option("--seed", default=0)
def cli(seed):
    print(seed)


if __name__ == "__main__":
    main()
'''


def make_repo(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text) if text.startswith("\n") else text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def facts(tmp_path_factory):
    root = make_repo(tmp_path_factory.mktemp("py"), {"ppo/train.py": TRAIN, "ppo/__init__.py": ""})
    index = build_index(root, use_cache=False)
    return index.files["ppo/train.py"]


def one(facts, kind, path):
    found = [b for b in facts.bindings if b.kind is kind and b.path == path]
    assert len(found) == 1, (kind, path, found)
    return found[0]


def test_dataclass_fields(facts):
    b = one(facts, BindingKind.field, "Config.lr")
    assert (b.span.line, b.value, b.constant, b.owner, b.expr) == (13, 3e-4, True, "Config", "3e-4")
    assert one(facts, BindingKind.field, "Config.betas").value == (0.9, 0.999)
    hidden = one(facts, BindingKind.field, "Config.hidden")
    assert (hidden.span.line, hidden.value, hidden.expr) == (15, 256, "4 * 64")
    # an unannotated class attribute of a dataclass is a class variable, not a field
    assert one(facts, BindingKind.assign, "Config.eps").span.line == 16


def test_function_defaults(facts):
    b = one(facts, BindingKind.default, "Net.__init__.d_model")
    assert (b.name, b.value, b.owner, b.scope, b.span.line) == ("d_model", 128, "Net.__init__", "Net.__init__", 20)
    assert one(facts, BindingKind.default, "Net.__init__.dropout").value == 0.1


def test_assignments_fold_constants(facts):
    lr = one(facts, BindingKind.assign, "self.lr")
    assert (lr.name, lr.span.line, lr.value, lr.expr, lr.scope) == ("lr", 23, 1 / 255, "1 / 255", "Net.__init__")
    fc = one(facts, BindingKind.assign, "self.fc")
    assert not fc.constant and fc.value is None and fc.expr == "nn.Linear(d_model, 4 * d_model)"
    assert one(facts, BindingKind.assign, "cfg.warmup").value == 100  # cfg["warmup"] = 100
    tuple_targets = [b for b in facts.bindings if b.kind is BindingKind.assign and b.span.line == 39]
    assert {(b.name, b.value) for b in tuple_targets} == {("a", 1), ("b", -1)}
    aug = [b for b in facts.bindings if b.span.line == 40]
    assert len(aug) == 1 and aug[0].expr == "a + (2)" and not aug[0].constant


def test_argparse(facts):
    lr = one(facts, BindingKind.argparse, "args.lr")
    assert (lr.name, lr.span.line, lr.owner, lr.dest, lr.expr) == ("lr", 32, "parser", "lr", "3 * 10**-4")
    assert lr.value == pytest.approx(3e-4)
    fp16 = one(facts, BindingKind.argparse, "args.fp16")
    assert (fp16.value, fp16.constant, fp16.expr) == (False, True, "")
    clip = one(facts, BindingKind.argparse, "args.clip")
    assert (clip.name, clip.dest, clip.value) == ("clip_range", "clip", "0.2")


def test_click_option(facts):
    seed = one(facts, BindingKind.click, "args.seed")
    assert (seed.value, seed.owner, seed.span.line) == (0, "cli", 47)


def test_kwargs_resolved_through_imports(facts):
    betas = one(facts, BindingKind.kwarg, "torch.optim.Adam.betas")
    assert (betas.value, betas.owner, betas.span.line) == ((0.9, 0.99), "torch.optim.Adam", 36)
    lr = one(facts, BindingKind.kwarg, "torch.optim.Adam.lr")
    assert (lr.expr, lr.constant) == ("args.lr", False)
    assert one(facts, BindingKind.kwarg, "ppo.utils.helper.x").expr == 'cfg["bs"]'


def test_dict_bindings(facts):
    assert one(facts, BindingKind.dict, "cfg.optim.lr").value == 1e-3
    assert one(facts, BindingKind.dict, "cfg.bs").span.line == 37
    assert one(facts, BindingKind.dict, "d.sub.lam").value == 0.95
    assert one(facts, BindingKind.dict, "d.gamma").value == 0.99


def test_comment_and_docstring_bindings(facts):
    comments = {(b.name, b.value, b.span.line) for b in facts.bindings if b.kind is BindingKind.comment}
    assert ("lr", 3e-4, 1) in comments
    assert ("learning_rate", 1e-3, 1) in comments
    assert ("eps", 1e-8, 16) in comments


def test_calls(facts):
    by_line = {(c.span.line, c.qualname): c for c in facts.calls}
    conv = by_line[(43, "torch.nn.Conv2d")]
    assert conv.callee == "nn.Conv2d" and conv.args == ("3", "64") and conv.kwargs == (("kernel_size", "3"),)
    adam = by_line[(36, "torch.optim.Adam")]
    assert adam.args == ("Net().parameters()",) and adam.scope == "main"
    init = by_line[(24, "torch.nn.Parameter().normal_")]
    assert init.kwargs == (("std", "0.02"),)
    assert (27, "self.fc") in by_line  # self.x() stays as written
    assert (53, "ppo.train.main") in by_line  # a module-level definition of the same file


def test_definitions_imports_reads(facts):
    defs = {d.qualname: d for d in facts.definitions}
    assert defs["Net.__init__"].params == ("self", "d_model", "dropout")
    assert defs["Net.__init__"].kind == "method" and defs["Net"].bases == ("nn.Module",)
    assert defs["Config"].decorators == ("dataclass",)
    assert (defs["main"].span.line, defs["main"].span.end_line) == (30, 43)
    assert defs["Net"].module == "ppo.train"
    assert all(d.stub is None for d in facts.definitions)
    imports = {i.alias: i for i in facts.imports}
    assert imports["nn"].qualified == "torch.nn" and imports["optim"].qualified == "torch.optim"
    assert imports["helper"].qualified == "ppo.utils.helper" and imports["helper"].relative_level == 1
    assert facts.has_main_block
    assert {"lr", "bs", "fc", "Adam"} <= facts.reads
    assert "warmup" not in facts.reads  # only ever stored


def test_syntax_error_file_still_indexed(tmp_path):
    make_repo(tmp_path, {"broken.py": "import torch\ndef f(:\n    pass\nlr = 3e-4\nx = torch.zeros(3)\n"})
    index = build_index(tmp_path, use_cache=False)
    facts = index.files["broken.py"]
    assert facts.parse_error is not None and facts.parse_error.line == 2
    assert "syntax error" in facts.parse_error.reason
    assert [(b.name, b.span.line, b.value) for b in facts.bindings if b.kind is BindingKind.assign][0] == (
        "lr", 4, 3e-4)
    assert any(c.qualname == "torch.zeros" and c.span.line == 5 for c in facts.calls)
    assert facts.parse_error in index.notes


def test_pydantic_attrs_namedtuple_typer(tmp_path):
    make_repo(tmp_path, {"m.py": '''\
from pydantic import BaseModel, Field
from typing import NamedTuple
import attr
import typer


class Opt(BaseModel):
    lr: float = Field(3e-4, description="x")
    wd: float = Field(default=0.01)


class P(NamedTuple):
    gamma: float = 0.99


@attr.s
class A:
    lam = attr.ib(default=0.95)


def main(epochs: int = typer.Option(10, "--epochs")):
    return epochs
'''})
    facts = build_index(tmp_path, use_cache=False).files["m.py"]
    got = {(b.kind.value, b.path, b.value, b.span.line) for b in facts.bindings
           if b.kind in (BindingKind.field, BindingKind.click)}
    assert got == {
        ("field", "Opt.lr", 3e-4, 8), ("field", "Opt.wd", 0.01, 9), ("field", "P.gamma", 0.99, 13),
        ("field", "A.lam", 0.95, 18), ("click", "main.epochs", 10, 21),
    }


def test_non_ascii_columns(tmp_path):
    make_repo(tmp_path, {"u.py": 'x = f("é", lr=0.1)  # ü\nname = "β"\n'})
    facts = build_index(tmp_path, use_cache=False).files["u.py"]
    call = [c for c in facts.calls if c.callee == "f"][0]
    assert call.args == ('"é"',) and call.kwargs == (("lr", "0.1"),)
    assert [b.value for b in facts.bindings if b.path == "name"] == ["β"]


def test_a_call_through_a_chosen_reference_calls_each_choice(tmp_path):
    """`fn = self.a if c else self.b; fn(x)` (the DDPM/DDIM sampler switch) is a call of both; a rebound name is not."""
    root = make_repo(tmp_path, {"diffusion.py": textwrap.dedent('''\
        import torch.nn.functional as F


        class Diffusion:
            def sample(self, shape, ddim=True):
                sample_fn = self.p_sample_loop if not ddim else self.ddim_sample
                return sample_fn(shape, clip=True)

            def act(self, x):
                act = F.gelu
                act = make_act()
                return act(x)
    ''')})
    index = build_index(root, use_cache=False)
    calls = sorted((c.qualname, c.span.line) for c in index.files["diffusion.py"].calls)
    assert ("self.ddim_sample", 7) in calls and ("self.p_sample_loop", 7) in calls and ("sample_fn", 7) in calls
    assert not any(q == "torch.nn.functional.gelu" for q, _ in calls)  # `act` was rebound to a call's result
    clip = [b for b in index.files["diffusion.py"].bindings if b.name == "clip"]
    assert len(clip) == 1  # the keyword is bound once, under the call as written
