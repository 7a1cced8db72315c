"""The protocol pass's shortcuts answer exactly what the slow paths answered.

Each shortcut (the explicit-stack file walk, the case-folded regex scan, the per-name readers look-up, the shared
seeding calls, frozen memoised trees) is checked against the code it replaced or the result it must keep.
"""

from __future__ import annotations

import ast
import gc
import re
from pathlib import Path

import pytest

from verifier.analysis.protocol import load_rule
from verifier.analysis.protocol import common
from verifier.analysis.protocol.examples import ExampleContext, index_from_sources
from verifier.analysis.protocol.seeding import seed_calls
from verifier.index import repo as repo_module

PROJECT = Path(__file__).resolve().parent.parent


def _walked_by_visitor(path: str, tree: ast.Module):
    walker = common._Walker(path, common._imports(tree))
    walker.visit(tree)
    return walker.calls, walker.functions, walker.has_main, walker.imports


def _walked_by_stack(path: str, tree: ast.Module):
    imports = common._imports(tree)
    calls, functions, has_main, _ = common._walk_file(path, tree, imports)
    return calls, functions, has_main, imports


def _signature(calls, functions, has_main, imports):
    return (
        [(c.name, c.qual, c.leaf, c.scope, c.node.lineno, c.node.col_offset) for c in calls],
        [(q, f.name, f.params, f.decorators, [(c.name, c.node.lineno) for c in f.calls]) for q, f in functions.items()],
        has_main,
        list(imports.items()),
    )


TRICKY = '''
import numpy as np
from torch import nn as tnn

@register("model")
class Net(tnn.Module):
    scale = make_scale()

    @staticmethod
    def build(width=default_width(), *, depth=get_depth(), **kw):
        import torch.optim as optim
        layer = tnn.Linear(width, width)
        return optim.Adam(layer.parameters(), lr=lr_for(width))

    def forward(self, x):
        f = lambda y: np.tanh(self.act(y))
        class Inner:
            def run(self):
                return helper()
        return f(x)

def forward():
    return first()

def forward():
    return second()

async def fetch(url):
    async with session().get(url) as r:
        return await r.json()

match command():
    case {"k": value}:
        handle(value)

if __name__ == "__main__":
    Net.build().step()
'''


def test_stack_walk_matches_the_visitor_on_tricky_code():
    tree = ast.parse(TRICKY)
    fast = _signature(*_walked_by_stack("m.py", ast.parse(TRICKY)))
    assert fast == _signature(*_walked_by_visitor("m.py", tree))
    calls, functions, has_main, imports = _walked_by_stack("m.py", ast.parse(TRICKY))
    assert has_main is True
    assert imports["optim"] == "torch.optim"  # a function-level import, added as the walk meets it
    by_name = {c.name: c for c in calls}
    assert by_name["optim.Adam"].qual == "torch.optim.Adam" and by_name["optim.Adam"].scope == "Net.build"
    assert by_name["default_width"].scope == common.MODULE_SCOPE  # a default runs where the function is defined
    assert by_name["np.tanh"].scope == "Net.forward"  # inside a lambda: the enclosing function's call
    assert by_name["helper"].scope == "Net.forward.Inner.run"
    # the second `forward` keeps the first's entry; its calls still count
    assert [c.name for c in functions["forward"].calls] == ["first"]
    assert "second" in by_name


def test_stack_walk_matches_the_visitor_on_the_project_sources():
    files = sorted((PROJECT / "verifier").rglob("*.py"))
    assert len(files) > 50
    for path in files:
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(PROJECT).as_posix()
        assert _signature(*_walked_by_stack(rel, ast.parse(text))) == _signature(*_walked_by_visitor(rel, ast.parse(text))), rel


def test_a_tree_too_deep_for_the_visitor_still_gets_no_view():
    deep = "x = " + " + ".join(["a"] * 500) + "\n"  # parses, but is 500 levels deep
    tree = ast.parse(deep)
    with pytest.raises(RecursionError):
        _walked_by_visitor("deep.py", tree)
    with pytest.raises(RecursionError):
        common.build_view("deep.py", tree)  # the recursive walk decides deep files, as before
    shallow = common.build_view("ok.py", ast.parse(TRICKY))
    assert [c.name for c in shallow.module_calls][:2] == ["register", "make_scale"]


@pytest.mark.parametrize("pattern", [
    r"train_test_split|random_split|(train|test|val|valid|dev)\w*\s*=\s*[\w.]+\[[^\]\n]*:",
    r"for\s+[\w, ]*\b(\w*seed\w*|runs?|trials?)\s+in\b|for\s+[\w, ]+\s+in\s+[^\n:]*seed",
    r"[0-9a-z_]+ = \d",
])
@pytest.mark.parametrize("text", [
    "X_Train = data[:800]\n", "FOR Seed IN range(5):\n", "for run in RUNS:", "TRAIN_TEST_SPLIT(x)", "nothing here",
    "Valid_set =\n  rows[10:]", "for i in range(3): SEED", "A_1 = 3",
])
def test_case_folded_search_agrees_with_ignorecase(pattern, text):
    compiled = re.compile(pattern, re.IGNORECASE)
    assert common._case_sensitive_twin(compiled) is not None
    ctx = ExampleContext(index_from_sources({"train.py": text}))
    assert common.search_text(ctx, "train.py", compiled) == bool(compiled.search(text))


@pytest.mark.parametrize("pattern", ["Seed", "[!-_]", "(?-i:seed)", r"\x53eed", r"(s)\1", "\u017feed", "seed"])
def test_patterns_whose_match_depends_on_case_keep_the_plain_search(pattern):
    flags = 0 if pattern == "seed" else re.IGNORECASE
    assert common._case_sensitive_twin(re.compile(pattern, flags)) is None


def test_non_ascii_text_keeps_the_plain_search():
    pattern = re.compile("seed", re.IGNORECASE)
    text = "\u017feed = 1\n"  # the long s folds to s under IGNORECASE, but lower() leaves it alone
    ctx = ExampleContext(index_from_sources({"train.py": text}))
    assert common.search_text(ctx, "train.py", pattern) is True


def test_files_reading_answers_per_name_and_remembers():
    index = index_from_sources({
        "a.py": "import torch\nmodel = build(torch.nn)\n",
        "b.py": "def build(x):\n    return x\n",
        "c.py": "print(build)\n",
    })
    assert index.files_reading("build") == frozenset({"a.py", "c.py"})  # called or passed, not where defined
    assert index.files_reading("torch") == frozenset({"a.py"})
    assert index.files_reading("nowhere") == frozenset()
    assert index.files_reading("build") is index.files_reading("build")


def test_seeded_and_seeds_share_one_search_for_seeding_calls():
    code = "import random\nimport numpy as np\n\ndef main(seed=0):\n    random.seed(seed)\n    np.random.seed(seed)\n"
    ctx = ExampleContext(index_from_sources({"train.py": code}))
    seeded = load_rule("seeded")["lexicon"]
    merged = {**seeded, **(load_rule("seeds").get("lexicon") or {})}
    calls, views = seed_calls(ctx, None, seeded)
    assert [(c.call.name, c.call.line, c.uses_flag) for c in calls] == [("random.seed", 5, True), ("np.random.seed", 6, True)]
    assert seed_calls(ctx, None, merged) == (calls, views)
    assert seed_calls(ctx, None, merged)[0] is calls
    narrower = {**seeded, "seeding_calls": ["random.seed"]}
    assert seed_calls(ctx, None, narrower)[0] is not calls  # a lexicon that could change the answer asks again


def test_memoised_trees_of_a_large_repo_are_frozen_out_of_the_gc():
    files = {f"pkg/m{i:03d}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(repo_module.FREEZE_TREES_FROM)}
    index = index_from_sources(files)
    before = gc.get_freeze_count()
    try:
        tree = index.tree("pkg/m007.py")
        assert isinstance(tree, ast.Module) and tree.body[0].name == "f7"
        assert gc.get_freeze_count() > before
        assert gc.isenabled()
        assert index.tree("pkg/m007.py") is tree
    finally:
        gc.unfreeze()
    small = index_from_sources({"a.py": "x = 1\n"})
    before = gc.get_freeze_count()
    assert small.tree("a.py").body[0].targets[0].id == "x"
    assert gc.get_freeze_count() == before


def test_eval_mode_answers_each_function_once_and_keeps_a_function_out_of_its_own_callees():
    """The per-name and per-body memos of eval-mode give what walking every callee each time gave: a function
    trains when it or a callee of that name back-propagates, never because it calls itself."""
    from verifier.analysis.protocol import eval_mode

    code = (
        "import torch\n\n"
        "def step(model, opt, x):\n"
        "    model(x).sum().backward()\n"
        "    opt.step()\n\n"
        "def fit(model, opt, x):\n"
        "    step(model, opt, x)\n\n"
        "def recurse(model, x, n):\n"
        "    return recurse(model, x, n - 1) if n else model(x)\n"
    )
    ctx = ExampleContext(index_from_sources({"train.py": code}))
    view = common.file_view(ctx, "train.py")
    trains = {name: eval_mode._trains(ctx, view, view.functions[name]) for name in ("step", "fit", "recurse")}
    assert trains == {"step": True, "fit": True, "recurse": False}
    again = {name: eval_mode._trains(ctx, view, view.functions[name]) for name in ("step", "fit", "recurse")}
    assert again == trains and len(ctx.memo("protocol.eval_mode.trains", dict)) == 3
