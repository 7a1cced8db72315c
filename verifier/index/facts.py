"""Facts the repository index extracts from each file.

Every later analysis answers its claims from these flat records (one batched pass over the repo), and goes
deep (a full ``ast`` tree, libcst, a CFG) only for the few functions a check points at. Records are frozen,
slotted dataclasses of plain values so they pickle cheaply into the content-hash cache and across workers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Language(str, Enum):
    python = "python"
    notebook = "notebook"  # code cells, joined into one virtual Python source
    yaml = "yaml"
    json = "json"
    toml = "toml"
    shell = "shell"
    text = "text"  # prompt files (.txt, .jsonl, .csv, .tsv named for prompts): read as lines, no facts extracted
    other = "other"


class BindingKind(str, Enum):
    assign = "assign"  # x = 3, self.x = 3, cfg.x = 3 (module, class or function level)
    default = "default"  # def f(lr=3e-4)
    field = "field"  # dataclass / pydantic / attrs / NamedTuple field default
    argparse = "argparse"  # parser.add_argument("--lr", default=3e-4)
    click = "click"  # @click.option("--lr", default=3e-4)
    kwarg = "kwarg"  # Adam(params, lr=3e-4): a keyword argument at a call site
    dict = "dict"  # {"lr": 3e-4} or dict(lr=3e-4)
    config = "config"  # a YAML/JSON/TOML key (path is the dotted key path)
    launch = "launch"  # a flag in a shell launch script or notebook `!python` line: --lr 1e-4
    env = "env"  # LR=1e-4 in a shell script (export or inline)
    comment = "comment"  # "lr = 3e-4" written in a comment or docstring: never a pass on its own


class FileRole(str, Enum):
    code = "code"
    test = "test"  # under tests/ or named test_*.py / *_test.py
    doc = "doc"  # docs/, README-like
    example = "example"


@dataclass(frozen=True, slots=True)
class Span:
    file: str  # repo-relative POSIX path
    line: int  # 1-based
    end_line: int


@dataclass(frozen=True, slots=True)
class Binding:
    """One place where a name gets a value.

    ``name`` is the leaf as written with dashes turned into underscores ("lr", "learning_rate");
    ``path`` the full dotted target ("optim.lr" for a config key, "self.lr", "Config.lr", "args.lr").
    ``expr`` is the source text of the value; ``value`` the folded literal when the expression is a constant
    (int, float, str, bool, None, or a tuple of those), else None with ``constant`` False.
    ``owner`` names what the binding belongs to: the resolved callee for kwarg, the function qualname for
    default, the class for field, the target script for launch, the parser variable for argparse.
    """

    name: str
    path: str
    kind: BindingKind
    expr: str
    value: object
    constant: bool
    scope: str  # enclosing qualified scope: "<module>", "Trainer.__init__", ...
    span: Span
    owner: str = ""
    dest: str = ""  # argparse/click: the attribute the option lands in (args.<dest>)


@dataclass(frozen=True, slots=True)
class CallSite:
    callee: str  # dotted, as written: "nn.Conv2d", "self.opt.step", "F.relu", "loss.backward"
    qualname: str  # import-resolved: "torch.nn.Conv2d"; same as callee when not resolvable
    args: tuple[str, ...]  # positional argument source texts ("*x" for star args)
    kwargs: tuple[tuple[str, str], ...]  # (keyword, source text); ("**", src) for **kw
    scope: str
    span: Span


@dataclass(frozen=True, slots=True)
class Definition:
    kind: str  # "function" | "method" | "class"
    name: str
    qualname: str  # "Trainer.train", "train", "Outer.inner"
    module: str  # dotted module derived from the path: "ppo.train"
    span: Span
    params: tuple[str, ...] = ()
    bases: tuple[str, ...] = ()
    decorators: tuple[str, ...] = ()
    stub: str | None = None  # why the body is a placeholder: pass, ellipsis, not-implemented, todo, constant-return, ...


@dataclass(frozen=True, slots=True)
class Import:
    module: str  # "torch.nn" for `import torch.nn as nn`; "torch" for `from torch import optim`
    name: str | None  # "optim" for `from torch import optim`; None for plain imports
    alias: str  # the local name it binds
    span: Span
    relative_level: int = 0

    @property
    def qualified(self) -> str:
        return f"{self.module}.{self.name}" if self.name else self.module


@dataclass(frozen=True, slots=True)
class Launch:
    """A command in a shell launch script or a notebook `!` line that runs a Python program."""

    runner: str  # python | accelerate | torchrun | deepspeed | python -m
    target: str  # script path (repo-relative when it resolves) or module name
    flags: tuple[tuple[str, str], ...]  # (flag name without dashes, value text); "true" for bare switches
    span: Span
    env: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Note:
    """A file left out or only partly read, and why (shown in reports, never silently dropped)."""

    file: str
    reason: str
    line: int | None = None


@dataclass(slots=True)
class FileFacts:
    path: str
    sha: str
    language: Language
    role: FileRole
    lines: int
    bindings: list[Binding] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    definitions: list[Definition] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)
    reads: frozenset[str] = frozenset()  # identifiers and attribute names loaded anywhere in the file
    has_main_block: bool = False  # `if __name__ == "__main__":`
    parse_error: Note | None = None  # set when the file parsed only partly
