"""Native v1 specs load in YAML, JSON and TOML, and every example of the contract loads as written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.spec.errors import SpecError
from verifier.spec.load import find_spec, load_spec
from verifier.spec.model import (
    CallCheck,
    Dimension,
    ExistsCheck,
    FormulaCheck,
    InitCheck,
    JudgeCheck,
    OrderCheck,
    PatternCheck,
    ProtocolCheck,
    ValueCheck,
)

# The native example of spec-v1.md, verbatim.
CONTRACT_EXAMPLE = """\
version: 1
paper: {id: ppo, title: Proximal Policy Optimization Algorithms, url: https://arxiv.org/abs/1707.06347}
repo:                       # optional scope; defaults leave out tests/, docs/, .git, venvs, build output
  include: ["**/*.py", "configs/**"]
  exclude: ["examples/**"]
pin: {loss_type: sigmoid}   # optional: config values assumed when a branch depends on them
aliases:                    # optional: more names for a canonical parameter (added to the built-in lexicon)
  clip_range: [clip_coef, clip_param, eps_clip]
saus:
  - id: ppo-D1-001
    dimension: numerical    # numerical | methodological | protocol | ordering  (or D1 | D2 | D3 | D4)
    claim: The clipping parameter epsilon is 0.2.
    source: Table 3         # optional
    weight: 1               # optional
    check: {kind: value, name: clip_range, expect: 0.2}
"""

# One SAU per check kind, written the way the contract's table shows each kind's fields.
EVERY_KIND = """\
version: 1
paper: {id: demo}
saus:
  - id: d-D1-001
    dimension: D1
    claim: Adam learning rate 3e-4.
    check: {kind: value, names: [lr, learning_rate], expect: 3e-4, tolerance: 0.01, call: torch.optim.Adam, arg: lr}
  - id: d-D1-002
    dimension: d1
    check: {kind: value, call: torch.optim.Adam, arg: 1, expect: [0.9, 0.999], in: "ppo/*.py"}
  - id: d-D2-001
    dimension: methodological
    check: {kind: call, target: torch.nn.Conv2d, args: {kernel_size: 3}, count: {min: 1, max: 4}}
  - id: d-D2-002
    dimension: D2
    check: {kind: exists, symbol: PPO.compute_gae, reachable: true}
  - id: d-D2-003
    dimension: D2
    check: {kind: init, name: lora_B, expect: zeros}
  - id: d-D2-004
    dimension: D2
    check: {kind: init, name: embed, expect: normal, args: {std: 0.02}}
  - id: d-D2-005
    dimension: D2
    claim: The clipped surrogate objective.
    check:
      kind: formula
      expect: "min(r*A, clip(r, 1 - eps, 1 + eps)*A)"
      symbols: {r: probability_ratio, A: advantages, eps: clip_range}
      functions: [LN, MSA]
      assume: {eps: positive}
      pin: {loss_type: clipped}
      sign: either
      reduction: keep
      paths: all
      in: PPO.train
  - id: d-D2-006
    dimension: D2
    check: {kind: formula, latex: "\\\\frac{1}{n}\\\\sum_i x_i"}
  - id: d-D4-001
    dimension: ordering
    check: {kind: order, steps: [optimizer.zero_grad, loss.backward, optimizer.step], relation: per-iteration}
  - id: d-D4-002
    dimension: D4
    check: {kind: order, steps: [pretrain, finetune], relation: phases}
  - id: d-D3-001
    dimension: protocol
    check: {kind: protocol, rule: split-ratio, expect: {train: 0.8, val: 0.1, test: 0.1}}
  - id: d-D3-002
    dimension: D3
    checks:
      - {kind: protocol, rule: no-test-leakage}
      - {kind: protocol, rule: eval-mode}
      - {kind: protocol, rule: seeded}
      - {kind: protocol, rule: seeds, expect: 5}
      - {kind: protocol, rule: dataset, expect: CIFAR10}
      - {kind: protocol, rule: metric, expect: FID}
      - {kind: protocol, rule: select-on-validation}
      - {kind: protocol, rule: frozen, name: base_weights}
  - id: d-D2-007
    dimension: D2
    check: {kind: pattern, require: ["torch.clamp($R, 1 - $E, 1 + $E)"], inside: "def $F(...): ...", where: ["$E == 0.2"]}
  - id: d-D2-008
    dimension: D2
    check: {kind: pattern, forbid: "$X.detach()"}
  - id: d-D3-003
    dimension: D3
    claim: Results are averaged over 5 seeds.
    check: {kind: judge, hints: [scripts/run_all.sh, evaluate]}
  - id: d-D3-004
    dimension: D3
    claim: A claim left to the compiler.
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_contract_example_loads_as_written(tmp_path: Path) -> None:
    loaded = load_spec(write(tmp_path, "sau.yaml", CONTRACT_EXAMPLE))
    assert loaded.shape == "native"
    spec = loaded.spec
    assert (spec.paper.id, spec.paper.url) == ("ppo", "https://arxiv.org/abs/1707.06347")
    assert spec.repo.include == ["**/*.py", "configs/**"] and spec.repo.exclude == ["examples/**"]
    assert spec.pin == {"loss_type": "sigmoid"}
    assert spec.aliases == {"clip_range": ["clip_coef", "clip_param", "eps_clip"]}
    (sau,) = spec.saus
    assert (sau.id, sau.dimension, sau.source, sau.weight) == ("ppo-D1-001", Dimension.numerical, "Table 3", 1.0)
    assert sau.check == ValueCheck(kind="value", name="clip_range", expect=0.2)


def test_every_check_kind_of_the_contract_loads(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, "sau.yaml", EVERY_KIND)).spec
    by_id = {sau.id: sau for sau in spec.saus}
    value = by_id["d-D1-001"].check
    assert isinstance(value, ValueCheck) and value.expect == 3e-4 and value.all_names() == ["lr", "learning_rate"]
    positional = by_id["d-D1-002"].check
    assert positional.arg == 1 and positional.scope == "ppo/*.py" and by_id["d-D1-002"].dimension is Dimension.numerical
    call = by_id["d-D2-001"].check
    assert isinstance(call, CallCheck) and call.args == {"kernel_size": 3} and call.count.max == 4
    assert isinstance(by_id["d-D2-002"].check, ExistsCheck) and by_id["d-D2-002"].check.reachable
    assert isinstance(by_id["d-D2-004"].check, InitCheck) and by_id["d-D2-004"].check.args == {"std": 0.02}
    formula = by_id["d-D2-005"].check
    assert isinstance(formula, FormulaCheck) and formula.scope == "PPO.train" and formula.paths == "all"
    assert by_id["d-D2-006"].check.latex == "\\frac{1}{n}\\sum_i x_i"
    assert isinstance(by_id["d-D4-001"].check, OrderCheck) and by_id["d-D4-002"].check.relation == "phases"
    split = by_id["d-D3-001"].check
    assert isinstance(split, ProtocolCheck) and split.params == {"expect": {"train": 0.8, "val": 0.1, "test": 0.1}}
    rules = [c.rule for c in by_id["d-D3-002"].all_checks()]
    assert rules[-1] == "frozen" and by_id["d-D3-002"].all_checks()[-1].params == {"name": "base_weights"}
    assert isinstance(by_id["d-D2-007"].check, PatternCheck) and by_id["d-D2-008"].check.forbid == "$X.detach()"
    assert isinstance(by_id["d-D3-003"].check, JudgeCheck)
    assert by_id["d-D3-004"].all_checks() == []
    assert [s.id for s in spec.saus] == [line.split(": ")[1] for line in EVERY_KIND.splitlines() if "- id: " in line]


def test_json_and_toml_give_the_same_spec_as_yaml(tmp_path: Path) -> None:
    from_yaml = load_spec(write(tmp_path, "sau.yaml", CONTRACT_EXAMPLE)).spec
    from_json = load_spec(write(tmp_path, "sau.json", json.dumps(from_yaml.model_dump(by_alias=True)))).spec
    toml = """\
version = 1
pin = {loss_type = "sigmoid"}

[paper]
id = "ppo"
title = "Proximal Policy Optimization Algorithms"
url = "https://arxiv.org/abs/1707.06347"

[repo]
include = ["**/*.py", "configs/**"]
exclude = ["examples/**"]

[aliases]
clip_range = ["clip_coef", "clip_param", "eps_clip"]

[[saus]]
id = "ppo-D1-001"
dimension = "numerical"
claim = "The clipping parameter epsilon is 0.2."
source = "Table 3"
weight = 1

[saus.check]
kind = "value"
name = "clip_range"
expect = 0.2
"""
    from_toml = load_spec(write(tmp_path, "sau.toml", toml)).spec
    assert from_json == from_yaml
    assert from_toml == from_yaml


def test_yaml_anchors_and_merge_keys_are_allowed(tmp_path: Path) -> None:
    text = """\
version: 1
saus:
  - id: a
    dimension: D1
    check: &lr {kind: value, name: lr, expect: 0.001}
  - id: b
    dimension: D1
    check:
      <<: *lr
      expect: 0.002
"""
    spec = load_spec(write(tmp_path, "sau.yaml", text)).spec
    assert [s.check.expect for s in spec.saus] == [0.001, 0.002]


def test_utf8_bom_and_unknown_extension(tmp_path: Path) -> None:
    path = tmp_path / "spec.txt"
    path.write_bytes("\ufeff".encode() + CONTRACT_EXAMPLE.encode())
    assert load_spec(path).spec.saus[0].id == "ppo-D1-001"
    as_json = write(tmp_path, "spec", '{"version": 1, "saus": []}')
    assert load_spec(as_json).spec.saus == []


def test_find_spec_order(tmp_path: Path) -> None:
    assert find_spec(tmp_path) is None
    write(tmp_path, "sau.toml", "version = 1\n")
    assert find_spec(tmp_path) == tmp_path / "sau.toml"
    write(tmp_path, "sau.json", "{}")
    assert find_spec(tmp_path) == tmp_path / "sau.json"
    write(tmp_path, "sau.yml", "version: 1\n")
    assert find_spec(tmp_path) == tmp_path / "sau.yml"
    write(tmp_path, "sau.yaml", "version: 1\n")
    assert find_spec(tmp_path) == tmp_path / "sau.yaml"
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "sau.yaml").mkdir()  # a directory is not a spec
    assert find_spec(tmp_path / "sub") is None


def test_find_spec_refuses_a_symlink_out_of_the_repo(tmp_path: Path) -> None:
    outside = write(tmp_path, "outside.yaml", CONTRACT_EXAMPLE)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "sau.yaml").symlink_to(outside)
    with pytest.raises(SpecError) as info:
        find_spec(repo)
    assert info.value.file == str(repo / "sau.yaml") and "outside the repository" in info.value.message
    (repo / "sau.yaml").unlink()
    inside = write(repo, "real.yaml", CONTRACT_EXAMPLE)
    (repo / "sau.yaml").symlink_to(inside)
    assert find_spec(repo) == repo / "sau.yaml"


ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("doc", ["docs/spec.md", "README.md"])
def test_spec_examples_in_the_docs_load(doc: str, tmp_path: Path) -> None:
    import re

    path = ROOT / doc
    if not path.is_file():
        pytest.skip(f"{doc} not written yet")
    blocks = re.findall(r"```(yaml|json|toml)\n(.*?)```", path.read_text(encoding="utf-8"), re.S)
    specs = [(lang, text) for lang, text in blocks if re.search(r"^\s*(\[\[)?saus|\"D1\"", text, re.M)]
    assert specs, f"{doc} shows no spec example"
    for number, (lang, text) in enumerate(specs):
        loaded = load_spec(write(tmp_path, f"example{number}.{lang}", text.replace("\n  ", "\n") if lang == "toml" else text))
        assert loaded.spec.saus, f"{doc} example {number} has no SAU"
