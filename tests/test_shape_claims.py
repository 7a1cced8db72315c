"""Shape statements in free-text claims -> ``shape`` protocol checks: learnable tensors only, anchored symbols,
the rest of the fragment still read; and, on the SA-Bench dev claims when present, that every compiled shape
check is one the rule can decide."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler_helpers import compiled, dumps
from verifier.analysis.protocol import validate_protocol_params
from verifier.symbolic.tensor_shapes import mappable, paper_dim

DEV = Path("/work/shared/sabench-dev")
RD = {"r": "lora_rank", "D": "hidden_size"}


def shape_checks(result) -> list[dict]:
    return [{k: v for k, v in c.items() if k != "kind"} for c in dumps(result) if c.get("rule") == "shape"]


def test_adapter_projections_become_two_checks_and_the_claim_is_full():
    result = compiled("Adapter weights: W_down ∈ ℝ^{r×D} (down-projection), W_up ∈ ℝ^{D×r} (up-projection)")
    assert shape_checks(result) == [
        {"rule": "shape", "expect": {"W_down": ["r", "D"]}, "symbols": RD},
        {"rule": "shape", "expect": {"W_up": ["D", "r"]}, "symbols": RD},
    ]
    assert result.coverage == "full"
    assert [f.outcome for f in result.fragments] == ["typed", "typed"]


def test_ascii_latex_and_set_forms():
    assert shape_checks(compiled("The feed-forward bias b_1 in R^{4D} is tuned")) == [
        {"rule": "shape", "expect": {"b_1": ["4*D"]}, "symbols": {"D": "hidden_size"}}]
    assert shape_checks(compiled("Each norm has trainable parameters {W_LN, b_LN} in R^D")) == [
        {"rule": "shape", "expect": {"W_LN": ["D"], "b_LN": ["D"]}, "symbols": {"D": "hidden_size"}}]
    assert shape_checks(compiled(r"The MLP weight W_2 \in \mathbb{R}^{4D \times D}")) == [
        {"rule": "shape", "expect": {"W_2": ["4*D", "D"]}, "symbols": {"D": "hidden_size"}}]


@pytest.mark.parametrize("claim", [
    "Attention inputs Q, K, V ∈ R^{L×C} are projected from the tokens",  # activations
    "Hidden states h in R^{L x D} pass through the block",
    "Each model produces logits f(x) in R^{C}",
    "Group projections W_{gi} in R^{D/G x r/G}",  # an index subscript: no code name to map
    "U in R^{D x r}",  # a bare letter, nothing says it is a parameter
    "Position embeddings E_pos in R^{(1+N) x D} are added",  # N never stands alone: it could not be bound
    "Core tensor Sigma in R^{12M x r x r}",
    "The mask M ∈ R^{L×L} is lower triangular",
    "Scale factor gamma ∈ R^{D} multiplies the attention output",
])
def test_runtime_shapes_and_undecidable_ones_are_not_compiled(claim):
    assert shape_checks(compiled(claim)) == []


def test_prompts_get_the_prompt_name_and_their_length_anchor():
    result = compiled("Learnable prompts P in R^{l x D} are prepended to the tokens")
    assert shape_checks(result) == [{"rule": "shape", "expect": {"P": ["l", "D"]},
                                     "symbols": {"D": "hidden_size", "l": "prompt_length"}, "names": {"P": ["prompt"]}}]
    # "learnable ... are prepended": the prompts are a learned part the method adds, which the trainable rule decides
    assert [c for c in dumps(result) if c.get("rule") == "trainable"] == [{"rule": "trainable", "name": "prompt"}]
    assert result.coverage == "full"


def test_factor_cue_from_earlier_in_the_sentence_and_a_prose_list():
    result = compiled("Tucker update with factor matrices B in R^{r x r}, U in R^{D x r}")
    assert {"rule": "shape", "expect": {"U": ["D", "r"]}, "symbols": RD} in shape_checks(result)
    listed = compiled("Structure (W_down in R^{r x D}, sigma, W_up in R^{D x r})")
    assert [list(c["expect"]) for c in shape_checks(listed)] == [["W_down"], ["W_up"]]  # sigma is the activation


def test_frozen_remark_and_formula_condition_are_read_with_the_rest():
    frozen = compiled("LoRA-SB matrix dimensions: B ∈ ℝ^{m×r} (frozen)", "D1")
    assert {"rule": "frozen", "name": "B"} in dumps(frozen)
    assert {"rule": "shape", "expect": {"B": ["m", "r"]}, "symbols": {"r": "lora_rank"}} in shape_checks(frozen)
    assert frozen.coverage == "full"
    formula = compiled("Update: ΔW = W_down W_up with W_down ∈ R^{r×D}")
    assert sorted(c.kind for c in formula.checks) == ["formula", "protocol"] and shape_checks(formula)
    assert formula.coverage == "full"


def test_paper_dimensions_parse():
    assert str(paper_dim("4*D")) == "4*paper_D"
    assert str(paper_dim("D/G")) == "paper_D/paper_G"
    assert paper_dim("12M") is not None and paper_dim("C'") is None


@pytest.mark.skipif(not DEV.is_dir(), reason="SA-Bench dev data not present")
def test_every_shape_check_compiled_from_the_dev_claims_is_decidable():
    seen = 0
    for path in sorted(DEV.glob("*.json")):
        for claim in json.loads(path.read_text())["claims"]:
            result = compiled(claim["claim"], claim["dimension"])
            for check in shape_checks(result):
                params = {k: v for k, v in check.items() if k != "rule"}
                assert validate_protocol_params("shape", params) is None, claim["id"]
                if params.get("tensors") == "runtime":
                    continue  # a runtime tensor is named by the lexicon, sized in numbers: tests/test_tensor_shapes.py
                seen += 1
                for name, dims in params["expect"].items():
                    assert mappable(name, params.get("names", {}).get(name)), (claim["id"], name)
                    assert any(s in params["symbols"] for d in dims for s in str(paper_dim(d)).replace("paper_", " ").split()
                               ), (claim["id"], name)
    assert seen >= 15


def test_a_classification_head_is_sized_with_its_class_count(tmp_path):
    from pathlib import Path

    from values_helpers import indexed_repo as repo

    from verifier.checks.base import Context
    from verifier.checks.protocol import check_protocol
    from verifier.compiler import compile_claim
    from verifier.results import Status
    from verifier.spec.model import SAU, Spec

    claim = "Linear classification head W_head ∈ R^{D x C} on the CLS token, C = 100 classes."
    shape, count = compile_claim(SAU(id="h-D1-001", dimension="D1", claim=claim)).checks
    assert shape.params == {"expect": {"W_head": ["D", "C"]}, "symbols": {"C": "num_classes", "D": "hidden_size"}}
    assert (count.name, count.expect) == ("num_classes", 100)
    code = (
        "from torch import nn\n\n\n"
        "class Classifier(nn.Module):\n"
        "    def __init__(self, embed_dim=768, num_classes=100):\n"
        "        super().__init__()\n"
        "        self.head = nn.Linear(embed_dim, {out})\n"
    )
    faithful = check_protocol(shape, Context(index=repo(Path(tmp_path) / "f", {"model.py": code.replace("{out}", "num_classes")}), spec=Spec()))
    assert (faithful.status, faithful.score) == (Status.pass_, 1.0)
    assert [(e.file, e.line) for e in faithful.evidence] == [("model.py", 7)]
    drifted = check_protocol(shape, Context(index=repo(Path(tmp_path) / "d", {"model.py": code.replace("{out}", "embed_dim")}), spec=Spec()))
    assert drifted.status is Status.mismatch and drifted.score == 0.0


def test_a_shape_in_an_aside_leaves_the_formula_around_it_as_it_was():
    from verifier.compiler import compile_claim
    from verifier.spec.model import SAU

    claim = ("Definition: Adapter(h) = s * f_up(f_down(h)) + h where f_down(h) = W_down * h (W_down in R^{r x D}) and "
             "f_up(u) = [W_{g1} * u_{g1}, ..., W_{gG} * u_{gG}] with G groups")
    checks = [c.model_dump(exclude_none=True, exclude_defaults=True) for c in
              compile_claim(SAU(id="a-D2-001", dimension="D2", claim=claim)).checks]
    assert {"expect": "s * f_up(f_down(h)) + h"} in checks
    assert {"rule": "shape", "expect": {"W_down": ["r", "D"]}, "symbols": {"D": "hidden_size", "r": "lora_rank"}} in checks
    assert not any("(W_down)" in str(c.get("expect", "")) for c in checks)


def test_a_prompt_shapes_length_symbol_is_the_prompt_length_a_repo_sets(tmp_path):
    from values_helpers import indexed_repo as repo

    from verifier.checks.base import Context
    from verifier.checks.value import check_value
    from verifier.results import Status
    from verifier.spec.model import Spec, ValueCheck

    result = compiled("Visual prompts P ∈ R^{p×D} with p = 10 tokens are prepended to the patch embeddings.")
    (length,) = [c for c in result.checks if isinstance(c, ValueCheck)]
    assert (length.name, length.names, length.expect) == ("prompt_length", None, 10)
    # r and D are the lexicon's weak names of the rank and the width already: they keep their own names
    assert [c["name"] for c in dumps(compiled("Adapters W_down ∈ R^{r×D} with r = 8 and D = 768.")) if "name" in c] == ["r", "D"]
    code = "from dataclasses import dataclass\n\n\n@dataclass\nclass PromptConfig:\n    num_prompt_tokens: int = {n}\n    deep: bool = True\n"
    faithful = check_value(length, Context(index=repo(tmp_path / "f", {"config.py": code.replace("{n}", "10")}), spec=Spec()))
    assert (faithful.status, faithful.score) == (Status.pass_, 1.0)
    assert [(e.file, e.line) for e in faithful.evidence] == [("config.py", 6)]
    drifted = check_value(length, Context(index=repo(tmp_path / "d", {"config.py": code.replace("{n}", "50")}), spec=Spec()))
    assert (drifted.status, drifted.score) == (Status.partial, 0.5)  # 5x the paper's: docs/values.md's grading
    assert [(e.file, e.line) for e in drifted.evidence] == [("config.py", 6)]


@pytest.mark.parametrize("claim, expect", [
    ("VPT-Deep: 50 prompt tokens per layer, lr 0.01.", [("prompt_length", 50), ("learning_rate", 0.01)]),
    ("Visual prompts with 10 prompt tokens are prepended to the patch embeddings.", [("prompt_length", 10)]),
    ("Inputs are truncated to a maximum of 512 prompt tokens.", [("max_prompt_length", 512)]),
    ("Each query uses 300 prompt tokens on average.", []),  # an LLM prompt's length, no setting
])
def test_prompt_tokens_are_the_prompt_length_only_in_prompt_tuning(claim, expect):
    assert [(c["name"], c["expect"]) for c in dumps(compiled(claim, "D1")) if "name" in c] == expect
