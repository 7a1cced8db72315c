"""YAML/JSON/TOML config keys with dotted paths and exact lines; which files count as configs."""

from __future__ import annotations

from pathlib import Path

from verifier.index.build import build_index
from verifier.index.facts import BindingKind

YAML = """\
defaults:
  - optimizer: adam
  - _self_
optim:
  lr: 3e-4
  betas: [0.9, 0.999]
  weight_decay: 0.01
trainer:
  max_epochs: 10
  precision: "16"
  warmup: ${optim.lr}
schedule:
  - {name: cosine, steps: 100}
description: |
  multi
  line
---
second_doc: 5
"""

JSON = """{
  "optim": {
    "lr": 1e-4,
    "betas": [0.9, 0.98]
  },
  "layers": [1, {"dropout": 0.1}, "x"],
  "use_amp": true,
  "note": null
}
"""

TOML = """\
[tool.train]
lr = 3e-4
betas = [0.9, 0.999]

[tool.train.sched]
warmup = 100

[[runs]]
seed = 1

[[runs]]
seed = 2
"""


def build(tmp_path: Path, files: dict[str, str]):
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return build_index(tmp_path, use_cache=False)


def by_path(facts):
    return {b.path: b for b in facts.bindings}


def test_yaml_paths_lines_values(tmp_path):
    index = build(tmp_path, {"conf/config.yaml": YAML})
    b = by_path(index.files["conf/config.yaml"])
    assert all(x.kind is BindingKind.config for x in b.values())
    assert (b["optim.lr"].name, b["optim.lr"].span.line, b["optim.lr"].value) == ("lr", 5, "3e-4")
    assert b["optim.betas"].value == (0.9, 0.999) and b["optim.betas"].span.line == 6
    assert b["optim.weight_decay"].value == 0.01
    assert b["trainer.max_epochs"].value == 10 and b["trainer.max_epochs"].span.line == 9
    assert b["trainer.precision"].value == "16"  # quoted: stays a string
    assert b["trainer.warmup"].value == "${optim.lr}"
    assert b["defaults.0.optimizer"].value == "adam" and b["defaults.0.optimizer"].span.line == 2
    assert b["defaults.1"].value == "_self_"
    assert b["schedule.0.steps"].value == 100 and b["schedule.0.steps"].span.line == 13
    assert (b["description"].span.line, b["description"].span.end_line) == (14, 16)
    assert b["second_doc"].span.line == 18


def test_json_lines(tmp_path):
    index = build(tmp_path, {"cfg/train.json": JSON})
    b = by_path(index.files["cfg/train.json"])
    assert (b["optim.lr"].span.line, b["optim.lr"].value) == (3, 1e-4)
    assert b["optim.betas"].value == (0.9, 0.98) and b["optim.betas"].span.line == 4
    assert b["layers.1.dropout"].value == 0.1
    assert b["layers.0"].value == 1 and b["layers.2"].value == "x"
    assert (b["use_amp"].value, b["use_amp"].span.line) == (True, 7)
    assert b["note"].value is None and b["note"].constant


def test_toml_lines(tmp_path):
    index = build(tmp_path, {"pyproject.toml": TOML})
    b = by_path(index.files["pyproject.toml"])
    assert (b["tool.train.lr"].span.line, b["tool.train.lr"].value) == (2, 3e-4)
    assert b["tool.train.betas"].value == (0.9, 0.999)
    assert b["tool.train.sched.warmup"].span.line == 6
    assert (b["runs.0.seed"].span.line, b["runs.1.seed"].span.line) == (9, 12)


def test_spec_and_lock_files_are_not_configs(tmp_path):
    index = build(tmp_path, {
        "sau.yaml": "version: 1\nsaus: []\n", "sau.lock.json": "{}", "package.json": '{"lr": 1}',
        "package-lock.json": "{}", "pnpm-lock.yaml": "a: 1", "real.yml": "lr: 1\n",
    })
    assert list(index.files) == ["real.yml"]


def test_malformed_configs_are_noted_not_fatal(tmp_path):
    index = build(tmp_path, {"a.yaml": "a: 1\nb: [1, 2\n", "b.json": '{"a": 1,\n "b": }', "c.toml": "x = = 1\n",
                             "d.yaml": "a: &x [*x]\n"})
    assert index.files["a.yaml"].parse_error.line is not None
    assert index.files["b.json"].parse_error.line == 2
    assert "TOML" in index.files["c.toml"].parse_error.reason
    assert {n.file for n in index.notes} >= {"a.yaml", "b.json", "c.toml"}


def test_yaml_python_tags_are_never_constructed(tmp_path):
    marker = tmp_path / "MARKER"
    index = build(tmp_path, {"evil.yaml": f'x: !!python/object/apply:os.system ["touch {marker}"]\n'})
    assert not marker.exists()
    assert by_path(index.files["evil.yaml"])["x"].value == (f"touch {marker}",)


def test_comments_in_configs_and_scripts_are_comment_bindings(tmp_path):
    index = build(tmp_path, {"c.yaml": "# paper: lr = 3e-4\nlr: 1e-3  # warmup: 500\n",
                             "run.sh": "#!/bin/bash\n# batch_size = 256 in the paper\npython t.py\n"})
    got = {(p, b.name, b.value, b.span.line) for p, f in index.files.items() for b in f.bindings
           if b.kind is BindingKind.comment}
    assert got == {("c.yaml", "lr", 3e-4, 1), ("c.yaml", "warmup", 500, 2), ("run.sh", "batch_size", 256, 2)}
