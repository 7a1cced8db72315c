"""The protocol pass's prefilters and one-walk shortcuts answer exactly what the slower code they replaced answers.

Eval-mode's per-file sites (found by span, not by a walk of each body) and its callers' model calls, its judging in
file order up to the first mismatch, the flow's root-file test and inlined taint templates, split-ratio's split
mention test, ``search_text``'s literal and non-ASCII fast paths, the pruned field tables of the walks, and
seeding's callers by name: each is compared with the reference it replaced, on code written in every style it
must not miss (``model.eval()``, ``self.model.train(False)``, ``@torch.no_grad()``, ``with torch.inference_mode()``).
"""

from __future__ import annotations

import ast
import re

from verifier.analysis.protocol import common, eval_mode, flow, seeding, split_ratio
from verifier.analysis.protocol.examples import ExampleContext, index_from_sources

EVAL_STYLES = '''
import torch
import jax


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    return [model(x) for x in loader]


@torch.inference_mode()
def test_epoch(self, loader):
    self.model.train(False)
    for batch in loader:
        self.model(batch)


def validate(net, loader):
    with torch.set_grad_enabled(False), torch.no_grad():
        out = net.apply(params, loader, train=False,
                        deterministic=True)
    def inner(m):
        with torch.inference_mode():
            m.eval()
        return m
    return out, lambda t: t.eval()


@jax.jit
def train_step(state, batch):
    grads = jax.grad(loss_fn)(state.params, batch)
    value, g = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads)


class Trainer:
    def fit(self, loader):
        self.model.train()
        for x in loader:
            self.loss(x).backward()
            self.optimizer.step()
            if x:
                evaluate(self.model, loader)
        self.model.train(True)

    @property
    def model_name(self):
        return "m"

    @model_name.setter
    def model_name(self, value):
        self.model.eval()

model.eval(); torch.no_grad()
'''


def _ctx(files: dict[str, str]) -> ExampleContext:
    return ExampleContext(index_from_sources(files))


def _bodies(tree: ast.Module):
    return [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_file_sites_give_each_body_what_its_own_walk_gives():
    ctx = _ctx({"m.py": EVAL_STYLES})
    view = common.file_view(ctx, "m.py")
    for node in _bodies(view.tree):
        walked = eval_mode._body_sites(common.walk_list(node))
        found = eval_mode._sites(ctx, node, view)
        for field in ("eval_calls", "no_grad_withs", "train_calls"):
            assert [id(n) for n in getattr(found, field)] == [id(n) for n in getattr(walked, field)], (node, field)
        assert found.backward == walked.backward
    fns = {q: f.node for q, f in view.functions.items()}
    # No style is skipped by the call prefilter: each function's eval-mode and no-grad sites are there.
    assert [c.lineno for c in eval_mode._sites(ctx, fns["evaluate"], view).eval_calls] == [8]
    assert [c.lineno for c in eval_mode._sites(ctx, fns["test_epoch"], view).eval_calls] == [14]
    validate = eval_mode._sites(ctx, fns["validate"], view)
    assert sorted(c.lineno for c in validate.eval_calls) == [21, 21, 25, 27]
    assert len(validate.no_grad_withs) == 3
    assert eval_mode._decorated_no_grad(fns["evaluate"]) is not None
    assert eval_mode._sites(ctx, fns["train_step"], view).backward
    assert eval_mode._sites(ctx, fns["Trainer.fit"], view).backward
    assert len(eval_mode._sites(ctx, fns["Trainer.fit"], view).train_calls) == 2
    # Two functions share the qualname `Trainer.model_name`: each body has its own sites (by node, not by name).
    getter, setter = [n for n in ast.walk(view.tree) if isinstance(n, ast.FunctionDef) and n.name == "model_name"]
    assert not eval_mode._sites(ctx, getter, view).eval_calls
    assert [c.lineno for c in eval_mode._sites(ctx, setter, view).eval_calls] == [53]
    # Module-level sites: the one-line `model.eval(); torch.no_grad()` and everything inside the functions.
    assert 55 in [c.lineno for c in eval_mode._sites(ctx, view.tree, view).eval_calls]


def test_model_calls_found_by_position_match_the_walk():
    ctx = _ctx({"m.py": EVAL_STYLES, "n.py": "import torch\n\ndef evaluate(x):\n    return torch.cat([len(x)])\n"})
    for path in ("m.py", "n.py"):
        view = common.file_view(ctx, path)
        for node in _bodies(view.tree)[1:]:
            assert eval_mode._calls_a_model_in(ctx, view, node) is eval_mode._calls_a_model(view, node), node.name
    view = common.file_view(ctx, "n.py")
    assert eval_mode._calls_a_model_in(ctx, view, view.functions["evaluate"].node) is False


def _reference_evaluate(ctx):
    """eval-mode's verdict with every evaluation function judged (before judging stopped at the first mismatch)."""
    fns = eval_mode.find_eval_functions(ctx, None)
    verdicts = [(eval_mode.judge(ctx, fn), fn) for fn in fns]
    order = sorted(verdicts, key=lambda v: (v[0][0] if v[0][0] is not None else -1, v[1].view.path, v[1].node.lineno))
    return order[0][0][:2], [fn.qual for _, fn in verdicts]


def test_judging_in_file_order_keeps_the_worst_verdict():
    good = "import torch\n\n@torch.no_grad()\ndef evaluate(model, x):\n    model.eval()\n    return model(x)\n"
    partial = "import torch\n\ndef validate(model, x):\n    model.eval()\n    return model(x)\n"
    bad = "import torch\n\ndef test_loop(model, x):\n    return model(x)\n"
    bad_later = "import torch\n\n\n\ndef eval_epoch(model, x):\n    return model(x)\n"
    for files in ({"a.py": good, "b.py": partial}, {"a.py": good, "b.py": bad, "c.py": bad_later, "d.py": partial},
                  {"a.py": bad_later, "b.py": bad}, {"z.py": good, "a.py": good}):
        ctx = _ctx(files)
        (score, message), names = _reference_evaluate(_ctx(files))
        result = eval_mode.evaluate({}, ctx, None, {})
        expected_status = {None: "mismatch", 1.0: "pass"}.get(score, "partial")
        assert result.status.value == expected_status
        assert result.message == message + (f" (worst of {len(names)} evaluation functions)" if len(names) > 1 else "")
    ctx = _ctx({"a.py": good, "b.py": bad, "c.py": bad_later})
    result = eval_mode.evaluate({}, ctx, None, {})
    assert result.status.value == "mismatch" and "`test_loop`" in result.message
    assert {e.file for e in result.evidence} == {"b.py"}


def test_root_files_by_strings_match_the_root_regex():
    texts = ["loss.backward()", "model.fit(x)", "scaler.fit_transform(x)", "Trainer(args)", "torch.save(m)",
             "EarlyStopping", "lr_Scheduler", "scheduler", "opt.step()", "best_acc", "GridSearchCV", "cross_val_score",
             "random_split(ds)", "train_test_split(x)", "ModelCheckpoint", "stopper", "train_on_batch", "partial_fit",
             "save_pretrained", "save_checkpoint", "import torch\nmodel(x)\n", "fit(x)", "step ()", "Best", "Save",
             "SCHEDULER", "trainer(x)", ""]
    for text in texts:
        assert flow._is_root_text(text) is bool(flow.ROOT_WORDS.search(text)), text


def test_split_mentions_match_the_split_regex():
    texts = ["X_train = X[:800]", "train_x = data[: n]", "Valid_set = ds[:-10]", "dev = rows[100:]",
             "x = TRAIN_TEST_SPLIT(a)", "Random_Split(ds)", "test_loader = loader[0]", "validation=ds[:10]\n",
             "val = x[\n:3]", "trainer = a.b[1:2]", "naïve: train = d[:5]", "\u212a train = d[:5]",
             "ſplit = train_teſt_split(x)", "train_teſt_split(x)", "data = x[:3]", "İ test = a[:2]"]
    files = {f"f{i}.py": text for i, text in enumerate(texts)}
    ctx = _ctx(files)
    for path, text in files.items():
        assert split_ratio._mentions_split(ctx, path) is bool(split_ratio._SPLIT_RE.search(text)), text


def test_search_text_fast_paths_agree_with_the_regex():
    patterns = [re.compile(p, f) for p in (r"lora|adapter|adaptformer", r"seed", r"ab|cd", r"k", r"s|t", r"straße",
                                          r"\bval\w*\b", r"[a-z]+_test", r"i") for f in (0, re.IGNORECASE)]
    texts = ["LoRA adapter", "lorA", "Seed = 3", "\u212a", "ſ", "ı", "İ", "naïve café LORA", "Straße", "STRASSE",
             "Ⅻ val_x", "x_TEST", "résumé AB", "ΣΑΣ cd", "plain text"]
    files = {f"t{i}.py": text for i, text in enumerate(texts)}
    ctx = _ctx(files)
    for path, text in files.items():
        for pattern in patterns:
            assert common.search_text(ctx, path, pattern) is (pattern.search(text) is not None), (text, pattern)
    assert common._literal_branches(re.compile("lora|adapter")) == ("lora", "adapter")
    assert common._literal_branches(re.compile("lora|lo+ra")) is None


def _reference_walk(node: ast.AST, skip) -> list[ast.AST]:
    out = [node]
    for current in out:
        for name in current._fields:
            value = getattr(current, name, None)
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, ast.AST) and type(item) not in skip:
                    out.append(item)
    return out


def test_walks_read_only_the_fields_that_hold_nodes():
    code = EVAL_STYLES + "\nmatch p:\n    case Point(x=0, y=yy) if yy > 1:\n        global g\n        pass\n" \
        "    case {'k': v, **rest}:\n        nonlocal_ = [*a, f'{b!r:>{w}}']\n" \
        "try:\n    import os.path as osp\nexcept* ValueError as e:\n    del e\n"
    tree = ast.parse(code)
    for skip in (common._NO_FIELDS, common.NO_FIELDS_BUT_BREAK, frozenset()):
        assert [id(n) for n in common.walk_list(tree, skip)] == [id(n) for n in _reference_walk(tree, skip)]
    view = common.build_view("m.py", tree)
    expected = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and common.dotted(n.func)]
    assert sorted(id(c.node) for c in view.calls) == sorted(id(n) for n in expected)


def _reference_template_items(node: ast.AST, view, calls: list):
    """The taint walk as flow.py first wrote it, as items (env look-ups stand where the walk read ``env``): the
    reference the inlined ``_Analyzer._template`` must equal."""
    func_positions: set[int] = set()  # a call's function is visited after the call itself (breadth first)
    for sub in common.walk_list(node):
        kind_of_node = type(sub)
        if kind_of_node is ast.Call:
            calls.append(sub)
            func_positions.add(id(sub.func))
            kind = flow.call_source_kind(sub)
            if kind:
                yield None, kind, flow.Origin(view.path, sub.lineno)
        elif kind_of_node is ast.Subscript:
            key = sub.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                kind = flow.split_word(key.value)
                if kind:
                    yield None, kind, flow.Origin(view.path, sub.lineno)
        elif (kind_of_node is ast.Name or kind_of_node is ast.Attribute) and id(sub) not in func_positions:
            chain = common.dotted(sub)
            if not chain or "()" in chain:
                continue
            yield chain, None, None
            kind = flow.name_kind(chain)
            if kind:
                yield None, kind, flow.Origin(view.path, sub.lineno)


def test_inlined_taint_templates_match_their_reference():
    code = ("def f(ds, args):\n    x_test = ds['test'].map(g)[0].a.b\n    y = load(split='validation').x.train_dl\n"
            "    z = self.model.encoder.layer[3].out(val_loader.dataset, train=False)\n    return a().b.c, (q.r)[s].t\n")
    ctx = _ctx({"f.py": code})
    view = common.file_view(ctx, "f.py")
    analyzer = flow._Analyzer(ctx, ["f.py"], 3)
    for node in common.walk_list(view.tree):
        if not isinstance(node, ast.expr):
            continue
        calls: list = []
        items = list(_reference_template_items(node, view, calls))
        chains, static, got_items, got_calls = analyzer._template(node, view)
        if type(node) in (ast.Constant, ast.Name):
            continue  # (their own shortcut, checked in test_protocol_shortcuts.py)
        assert got_items == tuple(items) and list(got_calls) == calls
        assert chains == frozenset(c for c, _, _ in items if c is not None)
        expected_static: dict = {}
        for chain, kind, origin in items:
            if chain is None:
                expected_static.setdefault(kind, origin)
        assert static == expected_static


def test_seed_callers_by_name_match_a_scan_of_every_call():
    files = {"a.py": "def run(seed, n=1):\n    set_seed(seed)\n\nrun(42)\nrun(seed=7)\nx.run(3, 4)\n",
             "b.py": "from a import run\n\ndef main(args):\n    run(args.seed)\n    other(1)\n"}
    ctx = _ctx(files)
    views = [common.file_view(ctx, p) for p in sorted(files)]

    def scan(fname, params, param):
        positional = [p for p in params if p not in ("self", "cls")]
        idx = positional.index(param) if param in positional else None
        out = []
        for view in views:
            for call in view.calls:
                if call.leaf == fname:
                    node = call.kwarg(param)
                    if node is None and idx is not None and idx < len(call.node.args):
                        node = call.node.args[idx]
                    if node is not None:
                        out.append((node, view, call.scope))
        return out

    grouped = seeding._ViewList(views)  # the run's seeding views: calls grouped once, on the first trace
    for param in ("seed", "n"):
        for given in (views, grouped):
            assert seeding._argument_at_callers("run", ("seed", "n"), param, given) == scan("run", ("seed", "n"), param)
    assert [ast.unparse(n) for n, _, _ in seeding._argument_at_callers("run", ("seed", "n"), "seed", grouped)] == [
        "42", "7", "3", "args.seed"]
    assert grouped.calls_by_leaf() is grouped.calls_by_leaf()


def test_statistics_fitted_before_a_split_still_reach_it_through_assignments():
    """The chains a value reads are worked out only once a statistic has been fitted; a normalised copy of the
    data (read through those chains) split afterwards is still flagged, at the split, naming the first fit."""
    code = ("import numpy as np\nfrom sklearn.model_selection import train_test_split\n\n"
            "def prepare(path):\n    X = np.load(path)\n    for _ in range(2):\n        mu = X.mean()\n"
            "    Xn = (X - mu) / X.std()\n    X_train, X_test = train_test_split(Xn)\n    return X_train, X_test\n")
    ctx = _ctx({"prep.py": code})
    events = flow.flow(ctx).of("norm-before-split")
    assert [(e.file, e.line, e.detail) for e in events] == [
        ("prep.py", 9, "statistics fitted on `Xn` (line 7) before it is split")]
    clean = code.replace("    for _ in range(2):\n        mu = X.mean()\n", "    mu = 0.0\n").replace(" / X.std()", "")
    assert flow.flow(_ctx({"prep.py": clean})).of("norm-before-split") == []


def _reference_call_source_kind(node: ast.Call):
    """call_source_kind before it looked at the written leaf first."""
    for kw in node.keywords:
        if kw.arg in ("split", "subset", "mode", "phase", "stage", "partition", "which", "set", "split_name"):
            if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                kind = flow.split_word(kw.value.value)
                if kind:
                    return kind
        if kw.arg in ("train", "is_train", "training") and isinstance(kw.value, ast.Constant):
            if kw.value.value is False:
                return "test"
            if kw.value.value is True:
                return "train"
    name = common.dotted(node.func) or ""
    toks = common.tokens(common.leaf(name))
    if toks and any(t in flow._SOURCE_LEAF_TOKENS for t in toks):
        kind = flow.name_kind(common.leaf(name).replace("dataloader", "loader"))
        if kind:
            return kind
    return None


def test_split_of_a_loading_call_reads_the_written_leaf_as_before():
    code = ("get_test_loader()\nds.val_dataloader()\n(a + b).test_loader()\n''.join(x)\nx[0].train_data()\n"
            "make_loaders()[1]()\nload(split='validation')\nCIFAR10(train=False)\nself.test_set()\nf()()\n"
            "get_loader()\ntrain_dataset.map(f)\nload_testdata()\n")
    calls = [n for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Call)]
    assert [flow.call_source_kind(c) for c in calls] == [_reference_call_source_kind(c) for c in calls]
    assert {flow.call_source_kind(c) for c in calls} == {"test", "val", "train", None}


def test_eval_mode_parses_only_files_that_may_define_an_evaluation_function():
    files = {
        "nested.py": "import torch\n\ndef main(model, x):\n    def evaluate(m):\n        m.eval()\n        return m(x)\n"
                     "    return evaluate(model)\n",
        "method.py": "import torch\n\nclass Runner:\n    async def validate(self, x):\n        with torch.no_grad():\n"
                     "            return self.model(x)\n",
        "model.py": "import torch\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return self.fc(x)\n",
        "held_out.py": "import torch\n\ndef score(model, batch):\n    return model(batch)\n\ndef run(model, test_loader):\n"
                       "    for b in test_loader:\n        score(model, b)\n    loss.backward()\n",
    }
    ctx = _ctx(files)
    fns = eval_mode.find_eval_functions(ctx, None)
    assert [(f.view.path, f.qual) for f in fns] == [
        ("held_out.py", "score"), ("method.py", "Runner.validate"), ("nested.py", "main.evaluate")]
    assert "model.py" not in ctx.memo("protocol.views_built", dict)  # no function of it could be one: not parsed
    unfiltered = _ctx(files)
    unfiltered._memo["protocol.eval_mode.indexed"] = False  # as for an index without definitions: every file parsed
    assert [(f.view.path, f.qual) for f in eval_mode.find_eval_functions(unfiltered, None)] == [
        (f.view.path, f.qual) for f in fns]
    assert "model.py" in unfiltered.memo("protocol.views_built", dict)
    assert eval_mode.evaluate({}, _ctx(files), None, {}).message == eval_mode.evaluate({}, unfiltered, None, {}).message
