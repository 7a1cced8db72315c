"""The protocol pass's per-run memos and indexes answer exactly what the walks they replaced answered.

Each shortcut (the list walk, the per-file node lists, the assignment tables, eval-mode's per-body sites and
per-name callers, the flow's per-node taint templates, the line table behind evidence snippets, trainable's name
forms, the GC freeze of large repos' views) is checked against the code it replaced, kept here as the reference.
"""

from __future__ import annotations

import ast
import gc
from pathlib import Path

import pytest

from verifier.analysis.protocol import common, dataset, eval_mode, frozen, trainable, values
from verifier.analysis.protocol.examples import ExampleContext, index_from_sources
from verifier.analysis.protocol.flow import Origin, _Analyzer, call_source_kind, name_kind, split_word

PROJECT = Path(__file__).resolve().parent.parent

CODE = '''
import torch
from torch import nn

LR = 1e-3
a, b = 1, 2
x_test: list = load(split="test")

@torch.no_grad()
def evaluate(model, loader, val_loader=None):
    model.eval()
    net.apply(x, train=False, deterministic=True)
    with torch.no_grad(), torch.set_grad_enabled(False):
        for batch in loader:
            if batch:
                y = model(batch["test"])
                y = y.cpu()
            while True:
                break
    def inner():
        model.train()
        loss.backward()
        return [m for m in val_loader if m]
    lr = LR
    lr, z = 2, 3
    results["acc"] = compute(y)
    return y, lambda t: t.eval()

class Trainer(nn.Module):
    def fit(self, train_ds, X_test):
        self.model.train(True)
        opt.step()
        scaled = scaler.fit_transform(X_test)
        for epoch in range(3):
            if val_loss < best_loss:
                best_loss = val_loss
                save_checkpoint(self.model)
        return evaluate(self.model, ds["validation"])

if __name__ == "__main__":
    evaluate(Trainer(), x_test)
'''


def _trees():
    yield ast.parse(CODE)
    for path in sorted((PROJECT / "verifier" / "analysis" / "protocol").glob("*.py"))[:6]:
        yield ast.parse(path.read_text())



def _reference_local_assign(body: list[ast.stmt], name: str, before: int) -> ast.expr | None:
    found = None
    for stmt in body:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Assign) and sub.lineno < before:
                for target in sub.targets:
                    if common.dotted(target) == name:
                        found = sub.value
                    elif isinstance(target, ast.Tuple) and isinstance(sub.value, ast.Tuple):
                        for t, v in zip(target.elts, sub.value.elts):
                            if common.dotted(t) == name:
                                found = v
            elif isinstance(sub, ast.AnnAssign) and sub.value is not None and sub.lineno < before:
                if common.dotted(sub.target) == name:
                    found = sub.value
    return found

def test_walk_list_is_ast_walk_without_the_nodes_that_have_no_fields():
    for tree in _trees():
        expected = [n for n in ast.walk(tree) if n._fields]
        assert common.walk_list(tree) == expected
        with_breaks = [n for n in ast.walk(tree) if n._fields or type(n) is ast.Break]
        assert common.walk_list(tree, common.NO_FIELDS_BUT_BREAK) == with_breaks
    fn = ast.parse(CODE).body[5]
    assert common.walk_list(fn) == [n for n in ast.walk(fn) if n._fields]


def test_tree_nodes_and_nodes_of_keep_walk_order_and_are_built_once():
    ctx = ExampleContext(index_from_sources({"m.py": CODE}))
    view = common.file_view(ctx, "m.py")
    assert common.tree_nodes(ctx, view) == tuple(n for n in ast.walk(view.tree) if n._fields)
    assert common.tree_nodes(ctx, view) is common.tree_nodes(ctx, view)
    types = (ast.For, ast.If, ast.Call)
    assert common.nodes_of(ctx, view, types) == tuple(n for n in ast.walk(view.tree) if isinstance(n, types))
    assert common.nodes_of(ctx, view, types) is common.nodes_of(ctx, view, types)
    assert [n.name for n in common.nodes_of(ctx, view, (ast.ClassDef,))] == ["Trainer"]


def test_assigned_before_agrees_with_the_walk_it_replaced():
    tree = ast.parse(CODE)
    ctx = ExampleContext(index_from_sources({"m.py": CODE}))
    bodies = [tree.body] + [n.body for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    names = {"LR", "a", "b", "x_test", "y", "lr", "z", "results", "best_loss", "scaled", "missing", "self.model"}
    for body in bodies:
        for name in sorted(names):
            for before in (0, 5, 14, 17, 26, 27, 40, 10**9):
                assert values.assigned_before(ctx, body, name, before) is _reference_local_assign(body, name, before)
    assert values.assigned_before(ctx, [], "LR", 10**9) is None
    # The later of two assignments in walk order wins: `y = y.cpu()` (line 18) over `y = model(...)`.
    evaluate = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    assert ast.unparse(values.assigned_before(ctx, evaluate.body, "y", 40)) == "y.cpu()"


# The per-kind walks eval_mode's BodySites replaced with one pass: the reference it must agree with.
def _eval_calls(node) -> list[ast.Call]:
    return [site for n in ast.walk(node) if isinstance(n, ast.Call) for site in eval_mode._eval_calls_at(n)]


def _train_calls(node) -> list[ast.Call]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call) and eval_mode._is_train_call(n)]


def _no_grad_withs(node) -> list[ast.AST]:
    return [site for n in ast.walk(node) if isinstance(n, (ast.With, ast.AsyncWith)) for site in eval_mode._no_grad_withs_at(n)]


def _has_backward(node) -> bool:
    return any(eval_mode._is_backward(n) for n in common.walk_list(node) if type(n) is ast.Call)


def test_eval_mode_body_sites_agree_with_the_walks_they_replaced():
    tree = ast.parse(CODE)
    for node in [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        sites = eval_mode._body_sites(common.walk_list(node))
        assert list(sites.eval_calls) == _eval_calls(node)
        assert list(sites.no_grad_withs) == _no_grad_withs(node)
        assert list(sites.train_calls) == _train_calls(node)
        assert sites.backward == _has_backward(node) == any(
            isinstance(n, ast.Call) and eval_mode._is_backward(n) for n in ast.walk(node))
    evaluate = tree.body[5]
    sites = eval_mode._body_sites(common.walk_list(evaluate))
    # `net.apply(x, train=False, deterministic=True)` counts once per keyword, the two-item `with` once per item.
    assert [c.lineno for c in sites.eval_calls].count(12) == 2
    assert len(sites.no_grad_withs) == 2 and sites.no_grad_withs[0] is sites.no_grad_withs[1]


def test_eval_mode_callers_by_name_match_the_text_prefilter():
    files = {
        "a.py": "import torch\n\ndef evaluate(m):\n    m.eval()\n\ndef run(m):\n    evaluate(m)\n    x.evaluate()\n",
        "b.py": "from a import evaluate\n\nevaluate(model)\n",
        "c.py": "def evaluated():\n    return 1\n",
        "d.py": "# evaluate is mentioned but never called\n",
    }
    ctx = ExampleContext(index_from_sources(files))
    common.file_view(ctx, "a.py")  # one file parsed already, the others not
    expected = [(view.path, call.node.lineno) for view in common.views_mentioning(ExampleContext(ctx.index), ("evaluate",))
                for call in view.calls if call.leaf == "evaluate"]
    found = [(c.view.path, c.call.node.lineno) for c in eval_mode._calls_named(ctx, "evaluate")]
    assert found == expected == [("a.py", 7), ("a.py", 8), ("b.py", 3)]
    assert eval_mode._calls_named(ctx, "evaluate") is eval_mode._calls_named(ctx, "evaluate")
    view = common.file_view(ctx, "a.py")
    fn = eval_mode.EvalFn(view, "evaluate", view.functions["evaluate"].node)
    assert [(c.view.path, c.owner.qualname if c.owner else None) for c in eval_mode._callers(ctx, fn)] == [
        ("a.py", "run"), ("a.py", "run"), ("b.py", None)]


def _reference_kinds_of(node, env, path):
    """flow's taint of an expression as it was computed before the per-node templates."""
    out = {}
    func_positions = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            kind = call_source_kind(sub)
            if kind:
                out.setdefault(kind, Origin(path, sub.lineno))
        elif isinstance(sub, ast.Subscript):
            key = sub.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                kind = split_word(key.value)
                if kind:
                    out.setdefault(kind, Origin(path, sub.lineno))
        elif isinstance(sub, (ast.Name, ast.Attribute)) and id(sub) not in func_positions:
            chain = common.dotted(sub)
            if not chain or "()" in chain:
                continue
            for k, o in env.get(chain, {}).items():
                out.setdefault(k, o)
            kind = name_kind(chain)
            if kind:
                out.setdefault(kind, Origin(path, sub.lineno))
    return out


def test_flow_taint_templates_agree_with_the_walk_they_replaced():
    ctx = ExampleContext(index_from_sources({"m.py": CODE}))
    view = common.file_view(ctx, "m.py")
    analyzer = _Analyzer(ctx, ["m.py"], 6)
    elsewhere = Origin("other.py", 1)
    envs = [{}, {"batch": {"test": elsewhere}}, {"y": {"val": elsewhere}, "model": {"train": elsewhere}},
            {"self.model": {"test": elsewhere, "train": Origin("other.py", 2)}, "loader": {}}]
    exprs = [n for n in ast.walk(view.tree) if isinstance(n, ast.expr)]
    for _ in range(2):  # the second round reads the memoised templates
        for node in exprs:
            for env in envs:
                got = analyzer.kinds_of(node, env, view)
                assert got == _reference_kinds_of(node, env, view.path)
                assert list(got) == list(_reference_kinds_of(node, env, view.path))  # the same first origins, in order
            assert analyzer._calls_in(node, view) == tuple(n for n in ast.walk(node) if isinstance(n, ast.Call))
    assert analyzer.kinds_of(None, {}, view) == {}


def test_snippets_come_from_the_index_lines():
    text = "a = 1\r\nb = 2\rc = 3\n\x0cd = 4\u2028e\n" + "x" * 200 + "\n"
    ctx = ExampleContext(index_from_sources({"m.py": text}))
    for line in range(-2, 9):
        raw = ctx.index.lines("m.py", line, line).strip()
        expected = raw if len(raw) <= common.SNIPPET_WIDTH else raw[: common.SNIPPET_WIDTH - 3] + "..."
        assert common.snippet(ctx, "m.py", line) == expected


def _reference_occurs(view, key):
    """trainable's occurrence test as the walk it replaced."""
    for node in ast.walk(view.tree):
        if isinstance(node, (ast.Name, ast.Attribute)) and frozen._same(node.id if isinstance(node, ast.Name) else node.attr, key):
            return True
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            words = frozen._strings(node.left)
            if words and any(frozen._part_of(w, key) for w in words):
                return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("startswith", "endswith") \
                and node.args and any(frozen._part_of(w, key) for w in frozen._strings(node.args[0]) or []):
            return True
    return False


@pytest.mark.parametrize("key", ["lorar", "lorars", "loraa", "bias", "biases", "head", "backbone", "x", "model", "qkv"])
def test_trainable_occurrence_agrees_with_the_walk(key):
    code = ("import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        self.lora_Rs = P()\n"
            "for n, p in model.named_parameters():\n    if 'backbone.' in n or n.endswith(('.bias', 'head')):\n"
            "        p.requires_grad = False\n")
    ctx = ExampleContext(index_from_sources({"m.py": code}))
    view = common.file_view(ctx, "m.py")
    assert trainable._occurs(ctx, view, key) == _reference_occurs(view, key)


def test_loader_kind_suffixes_agree_with_the_per_call_test():
    lex = {"file_loaders": frozenset({"np.load", "open", "xr.open_dataset"}), "string_loaders": frozenset({"load_dataset"})}

    def reference(qual, leaf):
        if qual in lex["file_loaders"] or any(qual.endswith("." + f) for f in lex["file_loaders"] if "." in f):
            return "file"
        if leaf in lex["string_loaders"] or qual.endswith(tuple("." + s for s in lex["string_loaders"])):
            return "string"
        return None

    for qual in ("numpy.np.load", "np.load", "open", "io.open", "datasets.load_dataset", "x.xr.open_dataset", "torch.load"):
        assert dataset._loader_kind(qual, qual.rsplit(".", 1)[-1], lex) == reference(qual, qual.rsplit(".", 1)[-1])


def test_views_of_a_large_repo_are_frozen_out_of_the_gc():
    body = "def f(x):\n    return x + 1\n"
    big = body * (common.FREEZE_VIEWS_FROM_CHARS // len(body) + 1)
    ctx = ExampleContext(index_from_sources({"big.py": big, "small.py": body}))
    before = gc.get_freeze_count()
    try:
        assert common.file_view(ctx, "small.py").functions["f"].params == ("x",)
        assert gc.get_freeze_count() == before  # a small repo: nothing frozen
        view = common.file_view(ctx, "big.py")
        assert view is not None and gc.get_freeze_count() > before and gc.isenabled()
        assert common.file_view(ctx, "big.py") is view
        assert common.built_view(ctx, "big.py") == (True, view)
        assert common.built_view(ctx, "missing.py") == (False, None)
    finally:
        gc.unfreeze()


LOOPS = '''
import torch
from sklearn.preprocessing import StandardScaler

def train(model, opt, train_loader, X_test):
    carried = None
    for epoch in range(3):
        for batch in train_loader:
            loss = model(batch).sum()
            loss.backward()
            opt.step()
        if carried is not None:
            model.fit(carried)  # the test data reaches the fit only on the second pass
        carried = X_test
        while epoch < 2:
            epoch += 1
    scaler = StandardScaler().fit(data)
    for fold in range(2):
        a, b = train_test_split(data)
    return model
'''


@pytest.mark.parametrize("bound", [10**9, 25, 12])
def test_flow_leaves_out_a_loop_pass_only_where_it_changes_nothing(monkeypatch, bound):
    """The same events, statement count, bound message and analysed count as walking every loop body twice."""
    from verifier.analysis.protocol import flow as flow_module

    def run(twice_always: bool):
        ctx = ExampleContext(index_from_sources({"train.py": LOOPS}))
        monkeypatch.setattr(flow_module, "MAX_STATEMENTS", bound)
        if twice_always:
            monkeypatch.setattr(flow_module._Analyzer, "loop_body", lambda self, body, *rest: [
                self.block(body, *rest) for _ in range(2)] and None)
        analyzer = flow_module._Analyzer(ctx, ["train.py"], 6)
        view = analyzer.view("train.py")
        analyzer.run_function(view, flow_module.MODULE_SCOPE, {}, 0)
        for qual in sorted(view.functions):
            analyzer.run_function(view, qual, {}, 0)
        monkeypatch.undo()
        r = analyzer.result
        return [(e.kind, e.line, e.scope, sorted(e.kinds), e.detail) for e in r.events], analyzer.statements, r.bounded, r.analysed

    assert run(twice_always=False) == run(twice_always=True)
    events, statements, bounded, _ = run(twice_always=False)
    if bound == 10**9:
        assert not bounded and ("train-sink", 13, "train", ["test"], "`model.fit` fits on it") in events
        # 4 + 2 * (for epoch: 2 * 3 inner + 1 if + 1 fit + 1 carried + 1 while + 2 * 1 epoch += 1) ... counted as walked
        assert statements == flow_module._statements_walked(ast.parse(LOOPS).body[2].body) + \
            flow_module._statements_walked([s for s in ast.parse(LOOPS).body if not isinstance(s, ast.FunctionDef)])
    else:
        assert bounded.startswith("data-flow walk stopped")
