"""The package's layers import only downward (like import-linter's "layers" contract), and rules/ ships."""

from __future__ import annotations

import ast
from pathlib import Path

import verifier
from verifier import rules

PACKAGE = Path(verifier.__file__).resolve().parent
# Lowest first. results/rules, the warning-free parse of foreign Python (pysource) and the index's plain fact
# records sit at the bottom and are importable everywhere.
LAYERS = [
    {"results", "rules", "pysource", "index.facts", "index.names"},
    {"spec"},
    {"symbolic"},  # the paper-formula parser: the compiler reads formulas back with the check's own parser
    {"compiler"},
    {"index"},
    {"analysis"},
    {"checks"},
    {"scoring"},
    {"judge"},
    {"engine"},
    {"reports"},
    {"batch", "baseline", "mutate", "draft"},
    {"cli"},
]


def layer_of(module: str) -> int | None:
    parts = module.split(".")[1:]
    if not parts:
        return 0
    for depth in (2, 1):
        name = ".".join(parts[:depth])
        for i, members in enumerate(LAYERS):
            if name in members:
                return i
    return None


def test_every_module_belongs_to_a_layer():
    unknown = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("")
        if rel.name == "__init__" and len(rel.parts) == 1:
            continue
        module = "verifier." + ".".join(p for p in rel.parts if p != "__init__")
        if layer_of(module) is None:
            unknown.append(module)
    assert not unknown


def test_layers_import_only_downward():
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("")
        module = "verifier." + ".".join(p for p in rel.parts if p != "__init__")
        mine = layer_of(module) if module != "verifier." else 0
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("verifier"):
                targets = [node.module]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.startswith("verifier")]
            for target in targets:
                theirs = layer_of(target)
                if mine is not None and theirs is not None and theirs > mine:
                    upward.append(f"{module}:{node.lineno} imports {target}")
    assert not upward, "\n".join(upward)


def test_rules_data_is_found_and_loads():
    assert (rules.rules_dir() / "lexicon.yaml").is_file()
    assert len(rules.list_dir("protocol")) == 18  # 13 + target-modules + strings + shape + placement + hardware
    assert rules.load("lexicon.yaml")
    assert (rules.schema_dir() / "sau-v1.schema.json").is_file()
