"""fold(): constants and arithmetic fold; anything unbounded or executable is refused, never run."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.analysis.fold import dotted, fold, parse_number_text, references


@pytest.mark.parametrize(
    ("expr", "env", "expected"),
    [
        ("3e-4", {}, 3e-4),
        ("0.0003", {}, 3e-4),
        ("3 * 10**-4", {}, 3e-4),
        ("'3e-4'", {}, "3e-4"),
        ("float('3e-4')", {}, 3e-4),
        ("int(1e6)", {}, 1_000_000),
        ("1_000_000", {}, 1_000_000),
        ("4 * hidden", {"hidden": 256}, 1024),
        ("n_envs * n_steps // n_minibatches", {"n_envs": 8, "n_steps": 128, "n_minibatches": 4}, 256),
        ("args.lr * 2", {"args.lr": 0.1}, 0.2),
        ("config['lr']", {"config.lr": 0.01}, 0.01),
        ("cfg.get('wd', 0.05)", {}, 0.05),
        ("cfg.get('wd', 0.05)", {"cfg.wd": 0.1}, 0.1),
        ("(0.9, 0.999)", {}, (0.9, 0.999)),
        ("[64, 64]", {}, [64, 64]),
        ("tuple(betas)", {"betas": [0.9, 0.95]}, (0.9, 0.95)),
        ("-0.5", {}, -0.5),
        ("math.sqrt(2)", {}, math.sqrt(2)),
        ("np.sqrt(2)", {}, math.sqrt(2)),
        ("2 * math.pi", {}, 2 * math.pi),
        ("1 / (1 - 0.99)", {}, 1 / (1 - 0.99)),
        ("0.1 if True else 0.2", {}, 0.1),
        ("min(4, 8)", {}, 4),
        ("'gelu' + '_new'", {}, "gelu_new"),
        ("None", {}, None),
        ("not False", {}, True),
    ],
)
def test_folds(expr, env, expected):
    result = fold(expr, env)
    assert result.ok, result.reason
    if isinstance(expected, float):
        assert math.isclose(result.value, expected, rel_tol=1e-12)
    else:
        assert result.value == expected and type(result.value) is type(expected)


@pytest.mark.parametrize(
    ("expr", "why"),
    [
        ("10 ** 10 ** 10", "exponent"),
        ("2 ** 100000", "exponent"),
        ("'x' * 10 ** 9", "too long"),
        ("[0] * 10 ** 9", "too long"),
        ("__import__('os').system('touch /tmp/pwned')", "call of a non-name"),
        ("__import__('os')", "not a whitelisted"),
        ("open('/etc/passwd')", "not a whitelisted"),
        ("eval('1')", "not a whitelisted"),
        ("unknown_name + 1", "unknown name"),
        ("lambda: 1", "not foldable"),
        ("1 / 0", "ZeroDivisionError"),
        ("math.sqrt(-1)", "negative"),
        ("f'{x}'", "not foldable"),
        ("x = 1", "not a Python expression"),
        ("(" * 500 + "1" + ")" * 500, ""),
        ("1 +" * 1000 + "1", "too long"),
    ],
)
def test_refuses(expr, why):
    result = fold(expr)
    assert not result.ok
    assert why in result.reason


def test_references_are_outermost_dotted_names():
    assert references("args.lr * cfg['optim']['lr'] + math.pi + sqrt(x) + cfg.get('wd', WD)") == (
        "WD",
        "args.lr",
        "cfg.optim.lr",
        "cfg.wd",
        "x",
    )
    assert references("3e-4") == ()
    assert references("not valid python (") == ()


def test_dotted_spellings_agree():
    import ast

    for text in ("cfg.optim.lr", "cfg['optim']['lr']", "cfg.optim.get('lr')", "getattr(cfg.optim, 'lr')"):
        assert dotted(ast.parse(text, mode="eval").body) == "cfg.optim.lr", text


@pytest.mark.parametrize(
    ("text", "value"),
    [("3e-4", 3e-4), ("1_000", 1000), ("64", 64), (".5", 0.5), ("true", True), ("False", False), ("null", None),
     ("'0.1'", 0.1), ("adamw", None), ("1e999", None), ("", None)],
)
def test_parse_number_text(text, value):
    assert parse_number_text(text) == value


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_never_raises_on_random_text(text):
    result = fold(text, {"x": 1})
    assert result.ok in (True, False)
    references(text)


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False), st.integers(min_value=-(10**6), max_value=10**6))
def test_numbers_round_trip(x, n):
    assert fold(repr(x)).value == x
    assert fold(f"{n} * 2").value == n * 2
