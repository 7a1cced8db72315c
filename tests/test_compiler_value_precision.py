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
        ("MLP hidden dim = 4 * 768", {"name": "hidden_size", "expect": 3072}),
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
