"""Python text the tool did not write parses without the interpreter's warnings reaching the user's terminal."""

from __future__ import annotations

import ast
import warnings

from verifier import pysource
from verifier.compiler import compile_claim
from verifier.spec.model import SAU

ODD_BUT_VALID = 'x = 1if True else 2\npattern = "\\d+"\n'


def _warnings_of(parse) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parse()
    return [type(w.message).__name__ for w in caught]


def test_the_interpreter_warns_on_this_text():
    assert "SyntaxWarning" in _warnings_of(lambda: ast.parse(ODD_BUT_VALID))  # the case the wrapper is for


def test_pysource_parses_it_silently_and_the_same():
    assert _warnings_of(lambda: pysource.parse(ODD_BUT_VALID)) == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = ast.parse(ODD_BUT_VALID)
    assert ast.dump(pysource.parse(ODD_BUT_VALID)) == ast.dump(plain)


def test_a_claim_whose_fragment_looks_like_odd_python_compiles_silently():
    claim = "lr 1e-4 for 1if ablations, loss = 2x + 1"
    assert _warnings_of(lambda: compile_claim(SAU(id="w-D1-001", dimension="D1", claim=claim))) == []
