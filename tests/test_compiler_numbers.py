"""Numbers as papers write them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier.compiler.numbers import find_numbers, parse_number, parse_value


@pytest.mark.parametrize(
    "text, value",
    [
        ("150K", 150_000),
        ("32k", 32_000),
        ("1.2M", 1_200_000),
        ("1.5B", 1_500_000_000),
        ("1e-4", 0.0001),
        ("8e-5", 8e-5),
        ("3 × 10^-4", 0.0003),
        ("2x10^3", 2000),
        ("2×10³", 2000),
        ("2×10^{-3}", 0.002),
        ("10⁻²", 0.01),
        ("10^{-4}", 0.0001),
        ("1,000", 1000),
        ("1,670,250", 1670250),
        ("0.1%", 0.001),
        ("10 %", 0.1),
        ("5/3", 5 / 3),
        ("−2", -2),
        ("~38K", 38_000),
        ("0.25-degree", None),
        ("Mistral-7B", None),
        ("", None),
    ],
)
def test_parse_number(text, value):
    got = parse_number(text)
    if value is None:
        assert got is None
    else:
        assert got == pytest.approx(value)
        assert type(got) is type(value) or isinstance(value, float)


@pytest.mark.parametrize(
    "text, value",
    [
        ("{0.05, 0.1}", [0.05, 0.1]),
        ("{8, 16, 24}", [8, 16, 24]),
        ("[0.001, 0.01]", [0.001, 0.01]),
        ("1e-4 to 3e-4", [0.0001, 0.0003]),
        ("(1,1,1)", [1, 1, 1]),
        ("{10⁻², 10⁻³}", [0.01, 0.001]),
        ("true", True),
        ("off", False),
        ("{a, b}", None),
        ("3e-4 to 1e-4", None),
        ("[true, false]", [True, False]),  # a switch tried both ways
        ("{True, False}", [True, False]),
        ("[true, 0.5]", None),  # a flag and a number are not one setting's values
    ],
)
def test_parse_value_sets_ranges_bools(text, value):
    assert parse_value(text) == value


def test_find_numbers_reads_units_and_skips_exponents():
    found = find_numbers("batch_size=512, lr=8e-5 (Lion), 150K steps, 10% linear warmup, σ ∈ {10⁻², 10⁻³}")
    assert [q.value for q in found] == [512, 8e-5, 150_000, 0.1, 0.01, 0.001]
    assert found[2].unit == "steps" and found[3].percent


@pytest.mark.parametrize(("text", "values"), [
    ("a scale factor of 1/sqrt(d_k)", []),  # a factor of an expression in symbols, not a setting's value
    ("hidden width 4*d", []),
    ("temperature 1/τ and lr 3e-4", [3e-4]),
    ("batch size 32/device, 8*A100 GPUs", [32, 8]),  # a unit word and a GPU model are no symbols
    ("ratio 1/3", [1 / 3]),
    ("a 1× schedule of 90K iterations", [90_000]),  # the schedule's name, not a value
])
def test_a_number_times_a_symbol_is_not_a_value(text, values):
    assert [q.value for q in find_numbers(text)] == values


def test_a_value_written_in_symbols_is_left_with_its_reason():
    from verifier.compiler import compile_claim
    from verifier.spec.model import SAU

    result = compile_claim(SAU(id="p-D1-001", dimension="D1", claim="Attention temperature 1/sqrt(d_k)"))
    assert result.checks == []
    assert result.fragments[0].reason.startswith("the value is an expression of symbols")


@given(st.integers(min_value=0, max_value=10**9))
def test_integers_round_trip(n):
    assert parse_number(str(n)) == n
    assert parse_number(f"{n:,}") == n


@given(st.floats(min_value=1e-12, max_value=1e12, allow_nan=False, allow_infinity=False))
def test_scientific_notation_round_trip(x):
    assert parse_number(f"{x:e}") == pytest.approx(float(f"{x:e}"))
