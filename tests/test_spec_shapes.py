"""SA-Bench sau.json and PaperBench rubric.json load as free-text SAUs, with errors on the lines written."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from verifier.spec.errors import SpecError
from verifier.spec.load import load_spec
from verifier.spec.model import Dimension
from verifier.spec.paperbench import infer_dimension

SABENCH_DEV = Path("/work/shared/sabench-dev")
DATA = Path(__file__).resolve().parent / "data" / "spec"

# Claims per dimension in the released dev split (counted once from the files; a loader change that drops,
# duplicates or re-files a claim shows up here).
DEV_COUNTS = {
    "ca2-vdm": {"D1": 22, "D2": 10, "D3": 8, "D4": 8},
    "conformal-bayesian-quadrature": {"D1": 25, "D2": 6, "D3": 3, "D4": 4},
    "lora-sb": {"D1": 12, "D2": 14, "D3": 8, "D4": 3},
    "neural-operator-flow-matching-pde": {"D1": 13, "D2": 15, "D3": 6, "D4": 4},
    "petl-visual-recognition": {"D1": 26, "D2": 27, "D3": 9, "D4": 3},
    "sc-fno": {"D1": 12, "D2": 13, "D3": 14, "D4": 3},
    "voting-leaderboards": {"D1": 13, "D2": 10, "D3": 9, "D4": 12},
    "wdno": {"D1": 30, "D2": 32, "D3": 26, "D4": 6},
}


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def failure(path: Path) -> SpecError:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return info.value


# ---------------------------------------------------------------- SA-Bench


@pytest.mark.parametrize("paper", sorted(DEV_COUNTS))
def test_sabench_dev_files_load_with_their_claim_counts(paper: str) -> None:
    path = SABENCH_DEV / f"{paper}.json"
    if not path.is_file():
        pytest.skip("SA-Bench dev split not available")
    loaded = load_spec(path)
    assert loaded.shape == "sabench" and loaded.spec.paper.id == paper
    got = Counter(sau.dimension.code for sau in loaded.spec.saus)
    assert dict(sorted(got.items())) == DEV_COUNTS[paper]
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert [s.id for s in loaded.spec.saus] == [c["id"] for c in raw["claims"]]
    assert [s.claim for s in loaded.spec.saus] == [c["claim"] for c in raw["claims"]]
    assert all(sau.all_checks() == [] for sau in loaded.spec.saus)


def test_sabench_dimension_lists(tmp_path: Path) -> None:
    text = json.dumps(
        {
            "paper_id": "toy",
            "paper_title": "A Toy Paper",
            "D1": [{"id": "toy-D1-001", "claim": "lr = 3e-4", "source": "Table 2"}],
            "D2": [{"id": "toy-D2-001", "claim": "loss = mse(x, y)"}],
            "D3": [],
            "D4": [{"id": "toy-D4-001", "claim": "pretrain -> finetune", "dimension": "D4"}],
        },
        indent=1,
    )
    spec = load_spec(write(tmp_path, "sau.json", text)).spec
    assert (spec.paper.id, spec.paper.title) == ("toy", "A Toy Paper")
    assert [(s.id, s.dimension.code, s.source) for s in spec.saus] == [
        ("toy-D1-001", "D1", "Table 2"),
        ("toy-D2-001", "D2", None),
        ("toy-D4-001", "D4", None),
    ]


def test_sabench_requirements_list_with_aliases(tmp_path: Path) -> None:
    text = json.dumps(
        {
            "paper_id": "toy",
            "requirements": [
                {"claim_id": "r1", "text": "batch size 256", "type": "numerical"},
                {"claim_id": "r2", "text": "uses AdamW", "type": "D2"},
                {"text": "evaluated on CIFAR-10", "type": "protocol"},
            ],
        }
    )
    spec = load_spec(write(tmp_path, "sau.json", text)).spec
    assert [(s.id, s.dimension, s.claim) for s in spec.saus] == [
        ("r1", Dimension.numerical, "batch size 256"),
        ("r2", Dimension.methodological, "uses AdamW"),
        ("toy-D3-001", Dimension.protocol, "evaluated on CIFAR-10"),
    ]


def test_sabench_requirements_dict_by_dimension_and_by_id(tmp_path: Path) -> None:
    by_dimension = {"paper_id": "p", "requirements": {"D1": ["lr 0.1", "batch 64"], "ordering": ["warmup then decay"]}}
    spec = load_spec(write(tmp_path, "a.json", json.dumps(by_dimension))).spec
    assert [(s.id, s.dimension.code, s.claim) for s in spec.saus] == [
        ("p-D1-001", "D1", "lr 0.1"),
        ("p-D1-002", "D1", "batch 64"),
        ("p-D4-001", "D4", "warmup then decay"),
    ]
    by_id = {"paper_id": "p", "requirements": {"c1": {"claim": "x", "type": "D3"}, "c2": {"text": "y", "dimension": "D2"}}}
    spec = load_spec(write(tmp_path, "b.json", json.dumps(by_id))).spec
    assert [(s.id, s.dimension.code, s.claim) for s in spec.saus] == [("c1", "D3", "x"), ("c2", "D2", "y")]


def test_sabench_yaml_is_accepted_too(tmp_path: Path) -> None:
    text = "paper_id: toy\nD1:\n  - {id: toy-D1-001, claim: lr is 0.1}\nD2: []\n"
    assert load_spec(write(tmp_path, "sau.yaml", text)).shape == "sabench"


def test_sabench_missing_claim_text(tmp_path: Path) -> None:
    text = '{"paper_id": "toy",\n "D1": [\n  {"id": "a", "claim": "x"},\n  {"id": "b", "clam": "y"}\n ]}'
    error = failure(write(tmp_path, "sau.json", text))
    assert (error.line, error.field) == (4, "D1[1].claim")
    assert error.message == "missing required field 'claim' (or 'text'); is 'clam' a typo?"


def test_sabench_unknown_dimension_names_the_type_field(tmp_path: Path) -> None:
    text = '{"paper_id": "toy",\n "requirements": [\n  {"id": "a", "text": "x",\n   "type": "numbers"}\n ]}'
    error = failure(write(tmp_path, "sau.json", text))
    assert (error.line, error.field) == (4, "requirements[0].type")
    assert error.message.startswith("unknown dimension 'numbers'")


def test_sabench_dimension_contradicting_its_list(tmp_path: Path) -> None:
    text = '{"paper_id": "toy",\n "D1": [\n  {"id": "a", "claim": "x", "dimension": "D2"}\n ]}'
    error = failure(write(tmp_path, "sau.json", text))
    assert (error.line, error.field) == (3, "D1[0].dimension")
    assert error.message == "dimension 'D2' contradicts its list 'D1'"


def test_sabench_duplicate_ids_across_lists(tmp_path: Path) -> None:
    text = '{"paper_id": "toy",\n "D1": [{"id": "x", "claim": "a"}],\n "D2": [\n  {"id": "x", "claim": "b"}\n ]}'
    error = failure(write(tmp_path, "sau.json", text))
    assert (error.line, error.field) == (4, "D2[0].id") and error.message == "duplicate SAU id 'x' (first at line 2)"


def test_sabench_list_of_wrong_type(tmp_path: Path) -> None:
    error = failure(write(tmp_path, "sau.json", '{"paper_id": "toy",\n "D3": "none"}'))
    assert (error.line, error.field) == (2, "D3") and error.message == "expected a list of claims, got str"


def test_sabench_without_claims(tmp_path: Path) -> None:
    error = failure(write(tmp_path, "sau.json", '{"paper_id": "toy", "paper_title": "t"}'))
    assert error.line == 1 and "without claims" in error.message


# ---------------------------------------------------------------- PaperBench


def test_paperbench_rubric_code_development_leaves() -> None:
    loaded = load_spec(DATA / "rubric.json")
    assert loaded.shape == "paperbench"
    spec = loaded.spec
    assert spec.paper.id == "spec" and spec.paper.title.startswith("The paper 'Clipped Surrogate")
    got = [(s.id[-3:], s.dimension.code, s.weight) for s in spec.saus]
    assert got == [
        ("111", "D2", pytest.approx(3 / 4 * 2 / 4 * 1 / 2)),
        ("112", "D1", pytest.approx(3 / 4 * 2 / 4 * 1 / 2)),
        ("012", "D1", pytest.approx(3 / 4 * 1 / 4)),
        ("013", "D4", pytest.approx(3 / 4 * 1 / 4)),
        ("021", "D3", pytest.approx(1 / 4 * 1 / 4)),
        ("031", "D2", 0.0),
    ]
    assert spec.saus[1].source == "The PPO loss has been implemented."
    assert spec.saus[1].claim == "The value loss coefficient c1 is set to 0.5."
    assert all(s.all_checks() == [] for s in spec.saus)


def test_paperbench_leaf_weights_sum_to_one(tmp_path: Path) -> None:
    def leaf(i: int, w: float) -> dict:
        return {"id": f"l{i}", "requirements": f"step {i}", "weight": w, "task_category": "Code Development"}

    tree = {
        "id": "root",
        "requirements": "r",
        "weight": 1,
        "sub_tasks": [
            {"id": "a", "requirements": "a", "weight": 5, "sub_tasks": [leaf(1, 1), leaf(2, 3)]},
            {"id": "b", "requirements": "b", "weight": 2, "sub_tasks": [leaf(3, 7)]},
        ],
    }
    spec = load_spec(write(tmp_path, "rubric.json", json.dumps(tree))).spec
    assert [s.weight for s in spec.saus] == pytest.approx([5 / 7 / 4, 5 / 7 * 3 / 4, 2 / 7])
    assert sum(s.weight for s in spec.saus) == pytest.approx(1.0)


def test_paperbench_node_errors_name_the_line(tmp_path: Path) -> None:
    text = """{
  "id": "root",
  "requirements": "r",
  "weight": 1,
  "sub_tasks": [
    {"id": "a", "requirements": "ok", "weight": 1, "task_category": "Code Development", "sub_tasks": []},
    {
      "id": "b",
      "requirements": "bad weight",
      "weight": "heavy",
      "task_category": "Code Development"
    },
    {"id": "c", "weight": 1, "task_category": "Code Development"}
  ]
}
"""
    error = failure(write(tmp_path, "rubric.json", text))
    assert (error.line, error.field) == (10, "sub_tasks[1].weight")
    assert [(e.line, e.field) for e in error.errors] == [(10, "sub_tasks[1].weight"), (13, "sub_tasks[2].requirements")]


def test_paperbench_duplicate_leaf_ids(tmp_path: Path) -> None:
    text = (
        '{"id": "root", "requirements": "r", "weight": 1, "sub_tasks": [\n'
        ' {"id": "x", "requirements": "a", "weight": 1, "task_category": "Code Development"},\n'
        ' {"id": "x", "requirements": "b", "weight": 1, "task_category": "Code Development"}\n]}'
    )
    error = failure(write(tmp_path, "rubric.json", text))
    assert (error.line, error.field) == (3, "sub_tasks[1].id") and error.message == "duplicate SAU id 'x' (first at line 2)"


@pytest.mark.parametrize(
    ("requirement", "dimension"),
    [
        ("The learning rate is set to 3e-4.", Dimension.numerical),
        ("The model uses 12 attention heads.", Dimension.numerical),
        ("Gradients are clipped before the optimizer step is taken.", Dimension.ordering),
        ("The model is evaluated on the ImageNet validation set using top-1 accuracy.", Dimension.protocol),
        ("The attention uses rotary position embeddings.", Dimension.methodological),
        ("The number of layers is described in the appendix.", Dimension.methodological),
    ],
)
def test_dimension_inference(requirement: str, dimension: Dimension) -> None:
    assert infer_dimension(requirement) is dimension


def test_sabench_claim_without_any_dimension(tmp_path: Path) -> None:
    text = '{"paper_id": "toy",\n "claims": [\n  {"id": "a", "claim": "x"}\n ]}'
    error = failure(write(tmp_path, "sau.json", text))
    assert (error.line, error.field) == (3, "claims[0].dimension")
    assert error.message == "missing required field 'dimension' (or 'type')"


def test_paperbench_rubric_without_code_development_leaves(tmp_path: Path) -> None:
    tree = {"id": "r", "requirements": "root", "weight": 1, "sub_tasks": [
        {"id": "x", "requirements": "runs", "weight": 1, "task_category": "Code Execution", "sub_tasks": []}]}
    loaded = load_spec(write(tmp_path, "rubric.json", json.dumps(tree)))
    assert loaded.shape == "paperbench" and loaded.spec.saus == []
