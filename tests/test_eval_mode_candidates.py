"""Which functions the eval-mode rule judges as evaluation routines: the one that runs the model on held-out
data it was handed by the code that made the data, not every function the data reaches further down (a metric
helper, a module's ``forward``, a constructor called through ``super().__init__``)."""

from __future__ import annotations

from pathlib import Path

from verifier.analysis.protocol.eval_mode import _may_evaluate, find_eval_functions
from verifier.analysis.protocol.examples import context_for
from verifier.analysis.protocol.flow import name_kind

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "protocol-cifar-resnet" / "repo"


def _candidates(files: dict[str, str]) -> list[tuple[str, str]]:
    return sorted((f.view.path, f.qual) for f in find_eval_functions(context_for(files), None))


def test_a_metric_helper_the_evaluation_calls_is_not_an_evaluation_routine():
    files = {str(p.relative_to(FIXTURE)): p.read_text() for p in FIXTURE.rglob("*.py")}
    # utils.accuracy receives held-out logits from train.evaluate: the data was made in main, not beside that call
    assert _candidates(files) == [("train.py", "evaluate")]


def test_a_held_out_call_in_the_function_that_made_the_data_is_an_evaluation():
    src = (
        "import torch\n"
        "from torch.utils.data import DataLoader, random_split\n"
        "def score(model, loader):\n"
        "    return [model(x) for x in loader]\n"
        "def main(ds, model):\n"
        "    train_ds, val_ds = random_split(ds, [80, 20])\n"
        "    print(score(model, DataLoader(val_ds)))\n"
    )
    assert _candidates({"train.py": src}) == [("train.py", "score")]


def test_constructors_and_module_methods_are_never_evaluation_routines():
    held_out = {"__init__", "forward", "__call__", "predict"}
    assert [n for n in sorted(held_out) if _may_evaluate(n, held_out)] == ["predict"]
    assert _may_evaluate("evaluate", set()) and not _may_evaluate("train_eval", set())


def test_names_that_fetch_or_check_are_not_evaluations():
    assert not _may_evaluate("get_test_examples", set()) and not _may_evaluate("load_val_split", set())
    assert not _may_evaluate("_validate_arguments", set()) and not _may_evaluate("validate_config", set())
    assert _may_evaluate("validate", set()) and _may_evaluate("test_epoch", set()) and _may_evaluate("run_validation", set())


def test_a_config_check_that_raises_runs_no_model():
    src = (
        "import torch\n"
        "class CacheConfig:\n"
        "    def validate(self):\n"
        "        if self.nbits not in (2, 4):\n"
        "            raise ValueError('nbits {}'.format(self.nbits))\n"
    )
    assert _candidates({"cache.py": src}) == []


def test_a_variable_named_val_is_a_value_not_validation_data():
    # `for val in batch["input_ids"]` in a collator made every function its tokens reached "run on held-out data"
    assert [name_kind(n) for n in ("val", "vals", "self.val", "x_val", "val_loader", "X_val", "valid_ds")] == [
        None, None, None, "val", "val", "val", "val"]
