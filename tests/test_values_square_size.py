"""A square size claimed as N×N is met by a scalar size setting (``image_size = 256``) and by the pair."""

from values_helpers import bind, make_index

from verifier.checks.base import Context
from verifier.checks.value import check_value
from verifier.results import Status
from verifier.spec.model import Spec, ValueCheck


def run(index, **check):
    return check_value(ValueCheck(kind="value", **check), Context(index=index, spec=Spec()))


def test_scalar_image_size_meets_a_square_claim():
    index = make_index([bind("assign", "image_size", "256", "configs/sample.py:4")], reads={"configs/sample.py": {"image_size"}})
    result = run(index, name="image_size", expect=[256, 256])
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert [(e.file, e.line) for e in result.evidence if e.role == "effective"] == [("configs/sample.py", 4)]


def test_scalar_of_another_size_is_graded_as_that_square():
    """224 is graded as 224×224 against 256×256: close, not met (as the pair (224, 224) would be)."""
    index = make_index([bind("assign", "image_size", "224", "configs/sample.py:4")], reads={"configs/sample.py": {"image_size"}})
    result = run(index, name="image_size", expect=[256, 256])
    pair = make_index([bind("assign", "image_size", "(224, 224)", "configs/sample.py:4")], reads={"configs/sample.py": {"image_size"}})
    assert (result.status, result.score) == (Status.partial, 0.75)
    assert (result.status, result.score) == (run(pair, name="image_size", expect=[256, 256]).status, run(pair, name="image_size", expect=[256, 256]).score)
    assert result.message.startswith("image_size = 224 (") and "claimed [256, 256]" in result.message


def test_non_square_claim_is_not_met_by_a_scalar():
    index = make_index([bind("assign", "image_size", "256", "configs/sample.py:4")], reads={"configs/sample.py": {"image_size"}})
    assert run(index, name="image_size", expect=[256, 512]).status is not Status.pass_


def test_scalar_of_a_name_that_is_not_a_size_is_not_a_square():
    index = make_index([bind("assign", "kernel", "3", "model.py:2")], reads={"model.py": {"kernel"}})
    assert run(index, name="kernel", expect=[3, 3]).status is not Status.pass_


def test_the_pair_itself_still_passes():
    index = make_index([bind("assign", "resolution", "(64, 64)", "grid.py:7")], reads={"grid.py": {"resolution"}})
    result = run(index, name="resolution", expect=[64, 64])
    assert (result.status, result.score) == (Status.pass_, 1.0)
