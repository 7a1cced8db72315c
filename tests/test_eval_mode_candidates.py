"""Which functions the eval-mode rule judges as evaluation routines: the one that runs the model on held-out
data it was handed by the code that made the data, not every function the data reaches further down (a metric
helper, a module's ``forward``, a constructor called through ``super().__init__``)."""

from __future__ import annotations

from pathlib import Path

from verifier.analysis.protocol.eval_mode import _may_evaluate, find_eval_functions
from verifier.analysis.protocol.examples import context_for

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
