"""(parameter, value) pairs a careful reader would not extract: a number that is one term of an expression of
symbols, the first factor of a product, a step's label, a word that says how a symbol is set."""

from __future__ import annotations

import pytest
from compiler_helpers import compiled, dumps


@pytest.mark.parametrize("text", ["P_max = 1 + nl (maximum conditional frames)", "hidden = 4 * d", "width = 2 * C + 1"])
def test_an_expression_of_symbols_is_not_its_leading_number(text: str) -> None:
    result = compiled(text, "D1")
    assert dumps(result) == [] and "expression of symbols" in result.fragments[0].reason


def test_a_setting_beside_a_symbolic_expression_is_still_read() -> None:
    assert dumps(compiled("Derived from E[l] = 1 - lambda and alpha = 0.4", "D1")) == [{"name": "alpha", "expect": 0.4}]


@pytest.mark.parametrize(
    "text, check",
    [
        ("MLP hidden dim = 4 * 768", {"name": "ffn_hidden_size", "expect": 3072}),  # the MLP's width, not the model's
        ("lr = 3e-4 * 2", {"name": "learning_rate", "expect": 0.0006}),
        ("gamma = 5/3", {"name": "gamma", "expect": 5 / 3}),
    ],
)
def test_a_product_of_numbers_is_folded(text: str, check: dict) -> None:
    assert dumps(compiled(text, "D1")) == [check]


def test_a_word_saying_how_a_symbol_is_set_is_not_its_name() -> None:
    assert dumps(compiled("OS-Fix (fixed P=16)", "D3")) == [{"name": "P", "names": ["p"], "expect": 16}]
    assert dumps(compiled("Reynolds number Re=222", "D1"))[0]["name"] == "reynolds_number"


def test_numbered_item_labels_are_not_counts() -> None:
    from verifier.compiler import numbers

    assert [q.value for q in numbers.find_numbers("Steps 2A, 2B, 2C are mutually exclusive")] == []
    assert [q.value for q in numbers.find_numbers("Llama 2 7B, 13B and 70B")] == [2, 7_000_000_000, 13_000_000_000, 70_000_000_000]


def test_an_identifier_the_fragment_assigns_is_not_renamed_by_the_heading() -> None:
    checks = dumps(compiled("Many-Shot Evaluation: AdamW, batch_size=64, epochs=40", "D3"))
    assert {"name": "minibatch_size", "expect": 64} in checks
    assert {"name": "eval_batch_size", "expect": 1} in dumps(compiled("Evaluation: batch_size=1 for inference latency", "D3"))


def test_an_equation_is_not_a_setting_its_domain_belongs_to() -> None:
    checks = dumps(compiled("Heat equation on [0, 1] with Neumann boundary conditions, diffusivity kappa = 0.05", "D1"))
    assert {"name": "boundary_condition", "expect": "Neumann"} in checks
    assert not any("equation" in c.get("name", "") for c in checks)


@pytest.mark.parametrize(
    "text, check",
    [
        ("Alpha is energy weight (0.00002 for Burgers)", {"name": "alpha", "expect": 2e-05}),
        ("tau is the sharpening temperature (0.5)", {"name": "temperature", "expect": 0.5}),
        ("eta is the learning rate (0.001 for CIFAR)", {"name": "learning_rate", "expect": 0.001}),
    ],
)
def test_a_symbol_glossed_with_its_value_in_parentheses_is_a_value(text, check):
    from compiler_helpers import compiled, dumps

    assert dumps(compiled(text, "D2")) == [check]


def test_a_gloss_of_a_word_not_a_symbol_names_nothing():
    from compiler_helpers import compiled

    assert not compiled("x is the input (1 for all)", "D2").checks


@pytest.mark.parametrize(
    "text, value",
    [
        ("WGAN-GP critic penalty: L_GP = λ (||∇_x̂ D(x̂)||_2 − 1)^2 with λ = 10", {"name": "lambda_gp", "expect": 10}),
        ("FGSM adversarial examples: x_adv = x + ε · sign(∇_x L(θ, x, y)) with ε = 8/255",
         {"name": "attack_epsilon", "expect": 8 / 255}),
    ],
)
def test_a_constant_after_a_formula_is_a_value_where_the_claim_names_its_parameter(text, value):
    from compiler_helpers import compiled, dumps

    result = compiled(text, "D2")
    assert value in dumps(result) and any(c.kind == "formula" for c in result.checks)
    assert result.coverage == "full"


@pytest.mark.parametrize(
    "text",
    [
        "KL-regularised loss: L = L_rec + λ KL(q || p) with λ = 0.5",  # λ of what: not said
        "Adam update: theta = theta - lr * m / (sqrt(v) + eps) with eps = 1e-8",
    ],
)
def test_a_constant_no_words_name_stays_for_the_judge(text):
    from compiler_helpers import compiled

    result = compiled(text, "D2")
    assert [c.kind for c in result.checks] == ["formula"]
    assert "the formula is typed, not the value after it" in result.fragments[-1].reason


GP = '''import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--lambda_gp", type=float, default={weight})
args = parser.parse_args()
'''


@pytest.mark.parametrize("weight, status", [("10.0", "pass"), ("1.0", "partial")])  # 10x off: 0.25
def test_the_penalty_weight_is_read_where_the_repo_sets_it(tmp_path, weight, status):
    from compiler_helpers import compiled
    from values_helpers import indexed_repo

    from verifier.checks.base import Context
    from verifier.checks.value import check_value
    from verifier.spec.model import Spec

    text = "WGAN-GP critic penalty: L_GP = λ (||∇_x̂ D(x̂)||_2 − 1)^2 with λ = 10"
    (check,) = [c for c in compiled(text, "D2").checks if c.kind == "value"]
    result = check_value(check, Context(index=indexed_repo(tmp_path, {"train.py": GP.format(weight=weight)}), spec=Spec()))
    assert result.status.value == status and result.score == (1.0 if status == "pass" else 0.25), result.message
    assert [(e.file, e.line) for e in result.evidence][:1] == [("train.py", 4)]


def test_a_number_after_words_of_its_own_is_not_named_by_the_next_numbers_noun() -> None:
    # "500 and 100 samples": both are sample counts; "input size 784 and 2 hidden layers": 784 is no layer count
    assert dumps(compiled("with 500 and 100 samples", "D1")) == [
        {"name": "num_samples", "expect": 500}, {"name": "num_samples", "expect": 100}]
    result = compiled("MLP with input size 784 and 2 hidden layers", "D1")
    assert dumps(result) == [{"name": "num_hidden_layers", "expect": 2}]
    assert "784 with no parameter name" in result.leftover[0]


def test_a_final_epsilon_is_the_exploration_epsilon() -> None:
    assert dumps(compiled("epsilon-greedy exploration annealed to a final epsilon of 0.1", "D1")) == [
        {"name": "exploration_epsilon", "expect": 0.1}]
