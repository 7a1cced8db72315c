"""CPython's parser raises MemoryError (not SyntaxError) on a long line of bare words ("trained on a single
GPU trained on ..."), within milliseconds: claim text, patterns and repo files reach ``ast.parse``, so each
caller must treat it as unparseable input, never crash on it."""

from __future__ import annotations

import ast

import pytest

from verifier.analysis.pattern import PatternError, compile_where
from verifier.compiler import compile_claim
from verifier.compiler.pseudocode import statements
from verifier.index.repo import parse_tolerant
from verifier.spec.model import SAU

WORDS = "trained on a single GPU " * 400


def _raises_memory_error(text: str) -> bool:
    try:
        ast.parse(text)
    except MemoryError:
        return True
    except SyntaxError:
        return False
    return False


def test_the_interpreter_really_raises_memory_error_here():
    if not _raises_memory_error(WORDS):
        pytest.skip("this CPython reports the line as a SyntaxError")


def test_a_claim_of_repeated_prose_compiles_to_a_reason():
    result = compile_claim(SAU(id="p-D1-001", dimension="D1", claim=WORDS))
    assert result.checks == []
    assert [f.outcome for f in result.fragments] in (["context"], ["leftover"])


def test_pseudocode_reads_such_a_line_as_prose():
    assert [s.kind for s in statements(WORDS.strip())] == ["prose"]


def test_a_repo_file_with_such_a_line_is_unparseable_not_a_crash():
    source = "x = 1\n" + WORDS + "\ny = 2\n"
    tree = parse_tolerant(source)
    if _raises_memory_error(source):
        assert tree is None  # reported as unparseable by the caller
    else:  # the bad line is blanked like any syntax error
        assert tree is not None and len(tree.body) == 2


def test_a_where_clause_that_blows_the_parser_is_a_pattern_error():
    with pytest.raises(PatternError, match="not an expression"):
        compile_where(WORDS)
