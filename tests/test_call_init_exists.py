"""call / init / exists checks and the entry-point call graph, on small in-memory repos.

Each test states a claim, a few lines of realistic code, and the exact verdict: status, score and where the
evidence points. The fixture repos (fixtures/cie-*) cover the same ground end to end via test_fixtures.py.
"""

from __future__ import annotations

import math

import pytest
from cie_index import context, make_index, run

from verifier.analysis.entry import call_graph
from verifier.results import Status
from verifier.spec.model import CallCheck, CountRange, ExistsCheck, InitCheck

MAIN = 'if __name__ == "__main__":\n    main()\n'


def call(files, target, args=None, **kw):
    return run("call", CallCheck(target=target, args=args or {}, **kw), make_index(files))


def init(files, name, expect, args=None, **kw):
    return run("init", InitCheck(name=name, expect=expect, args=args or {}, **kw), make_index(files))


def exists(files, symbol, reachable=False, launches=None):
    return run("exists", ExistsCheck(symbol=symbol, reachable=reachable), make_index(files, launches))


def at(result, role=None):
    """(file, line) of the first evidence entry (with ``role`` when given)."""
    for e in result.evidence:
        if role is None or e.role == role:
            return e.file, e.line
    return None


# ----- call: import resolution ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("imports", "written"),
    [
        ("import torch", "torch.optim.AdamW"),
        ("from torch import optim", "optim.AdamW"),
        ("import torch.optim as topt", "topt.AdamW"),
        ("from torch.optim import AdamW as Opt", "Opt"),
        ("import torch.optim", "torch.optim.AdamW"),
    ],
)
def test_call_target_resolves_through_imports(imports, written):
    src = f"{imports}\n\ndef main():\n    opt = {written}(params, lr=1e-3)\n\n{MAIN}"
    r = call({"train.py": src}, "torch.optim.AdamW", {"lr": 1e-3})
    assert (r.status, r.score) == (Status.pass_, 1.0)
    assert at(r, "call") == ("train.py", 4)


def test_call_suffix_target_and_alias_written_target():
    src = "import torch.nn as nn\n\ndef main():\n    c = nn.Conv2d(3, 8, 3)\n\n" + MAIN
    for target in ("Conv2d", "nn.Conv2d", "torch.nn.Conv2d"):
        r = call({"m.py": src}, target, {"kernel_size": 3})
        assert r.status is Status.pass_, (target, r.message)


def test_call_positional_argument_by_library_order_and_tuple_squeeze():
    src = "import torch.nn as nn\n\ndef main():\n    a = nn.Conv2d(3, 8, (3, 3), 1, 1)\n\n" + MAIN
    r = call({"m.py": src}, "torch.nn.Conv2d", {"kernel_size": 3, "padding": 1})
    assert (r.status, r.score) == (Status.pass_, 1.0)


def test_call_argument_mismatch_is_calibrated_and_cites_closest_site():
    src = (
        "import torch.nn as nn\n\n"
        "def main():\n"
        "    a = nn.Conv2d(3, 8, kernel_size=5, padding=2)\n"
        "    b = nn.Conv2d(8, 8, kernel_size=7, padding=3)\n\n" + MAIN
    )
    r = call({"m.py": src}, "torch.nn.Conv2d", {"kernel_size": 3})
    assert (r.status, r.score) == (Status.partial, 0.75)  # 5 vs 3: within 3x (the 7 would be 0.5)
    assert at(r, "call") == ("m.py", 4)
    assert "kernel_size" in r.message


def test_call_argument_folded_through_argparse_default():
    src = (
        "import argparse\nimport torch\n\n"
        "def main():\n"
        "    p = argparse.ArgumentParser()\n"
        "    p.add_argument('--lr', type=float, default=3e-4)\n"
        "    args = p.parse_args()\n"
        "    torch.optim.Adam(model.parameters(), lr=args.lr * 2)\n\n" + MAIN
    )
    r = call({"train.py": src}, "torch.optim.Adam", {"lr": 6e-4})
    assert (r.status, r.score) == (Status.pass_, 1.0)


def test_call_omitted_argument_left_at_differing_library_default_is_quarter():
    src = "import torch\n\ndef main():\n    torch.optim.AdamW(model.parameters(), lr=1e-4)\n\n" + MAIN
    r = call({"t.py": src}, "torch.optim.AdamW", {"weight_decay": 0.1})
    assert (r.status, r.score) == (Status.partial, 0.25)
    r = call({"t.py": src}, "torch.optim.AdamW", {"weight_decay": 0.01})
    assert (r.status, r.score) == (Status.pass_, 1.0)


def test_call_substitute_scores_three_quarters():
    src = "import torch\n\ndef main():\n    torch.optim.Adam(model.parameters(), lr=1e-4)\n\n" + MAIN
    r = call({"t.py": src}, "torch.optim.AdamW", {"lr": 1e-4})
    assert (r.status, r.score) == (Status.partial, 0.75)
    assert at(r, "call") == ("t.py", 4)


def test_call_only_in_tests_is_missing():
    files = {
        "model.py": "import torch\n",
        "tests/test_opt.py": "import torch\n\ndef test_it():\n    torch.optim.AdamW([], lr=1e-3)\n",
    }
    r = call(files, "torch.optim.AdamW")
    assert (r.status, r.score) == (Status.missing, 0.0)
    assert at(r, "test") == ("tests/test_opt.py", 4)


def test_call_only_in_dead_code_is_not_a_pass():
    src = (
        "import torch\n\n"
        "def unused():\n    torch.optim.AdamW([], lr=1e-3)\n\n"
        "def main():\n    torch.optim.SGD([], lr=0.1)\n\n" + MAIN
    )
    r = call({"t.py": src}, "torch.optim.AdamW")
    assert (r.status, r.score) == (Status.partial, 0.75)
    assert "never run" in r.message
    assert at(r, "call") == ("t.py", 4)


def test_call_unresolvable_argument_is_unverified():
    src = "import torch\n\ndef main(cfg):\n    torch.optim.AdamW([], lr=load_lr(cfg))\n\n" + MAIN
    r = call({"t.py": src}, "torch.optim.AdamW", {"lr": 1e-3})
    assert r.status is Status.unverified and r.score is None
    assert at(r, "call") == ("t.py", 4)


def test_call_count_range():
    src = (
        "import torch.nn as nn\n\nclass Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.a = nn.Conv2d(3, 8, 3)\n"
        "        self.b = nn.Conv2d(8, 8, 3)\n\n"
        "def main():\n    Net()\n\n" + MAIN
    )
    assert call({"n.py": src}, "nn.Conv2d", count=CountRange(min=2)).status is Status.pass_
    r = call({"n.py": src}, "nn.Conv2d", count=CountRange(min=4))
    assert (r.status, r.score) == (Status.mismatch, 0.0)
    assert {e.line for e in r.evidence} == {6, 7}


def test_call_scope_narrows_to_a_class():
    src = (
        "import torch.nn as nn\n\n"
        "class Block(nn.Module):\n    def __init__(self):\n        self.c = nn.Conv2d(3, 3, 5)\n\n"
        "class Stem(nn.Module):\n    def __init__(self):\n        self.c = nn.Conv2d(3, 3, 3)\n\n"
        "def main():\n    Block(); Stem()\n\n" + MAIN
    )
    assert call({"n.py": src}, "nn.Conv2d", {"kernel_size": 3}).status is Status.pass_
    r = call({"n.py": src}, "nn.Conv2d", {"kernel_size": 3}, **{"in": "Block"})
    assert (r.status, r.score, at(r)) == (Status.partial, 0.75, ("n.py", 5))


def test_call_missing_entirely():
    r = call({"t.py": "import torch\n"}, "torch.optim.AdamW")
    assert (r.status, r.score, r.evidence) == (Status.missing, 0.0, ())


# ----- init -------------------------------------------------------------------------------------------
LORA = '''import math
import torch
import torch.nn as nn


class LoRA(nn.Module):
    def __init__(self, d, r):
        super().__init__()
        self.lora_A = nn.Parameter(torch.empty(r, d))
        self.lora_B = nn.Parameter(torch.zeros(d, r))
        self.proj = nn.Linear(d, d)
        self.emb = nn.Parameter(torch.randn(1, d) * 0.02)
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
'''


def test_init_parameter_constructed_with_zeros():
    r = init({"l.py": LORA}, "lora_B", "zeros")
    assert (r.status, r.score, at(r, "init")) == (Status.pass_, 1.0, ("l.py", 10))
    r = init({"l.py": LORA}, "self.lora_B", "constant", {"val": 0})
    assert r.status is Status.pass_


def test_init_explicit_call_beats_empty_construction():
    r = init({"l.py": LORA}, "lora_A", "kaiming_uniform", {"a": "math.sqrt(5)"})
    assert (r.status, r.score, at(r, "init")) == (Status.pass_, 1.0, ("l.py", 16))
    r = init({"l.py": LORA}, "lora_A", "kaiming_uniform", {"a": 2.2360679775})
    assert r.status is Status.pass_


def test_init_scaled_randn_is_normal_with_std():
    assert init({"l.py": LORA}, "emb", "normal", {"std": 0.02}).status is Status.pass_
    r = init({"l.py": LORA}, "emb", "normal", {"std": 0.01})
    assert (r.status, r.score) == (Status.partial, 0.75)  # 2x off


def test_init_wrong_scheme_is_mismatch_and_near_scheme_is_minor():
    r = init({"l.py": LORA}, "lora_B", "normal")
    assert (r.status, r.score, at(r, "init")) == (Status.mismatch, 0.0, ("l.py", 10))
    r = init({"l.py": LORA}, "emb", "trunc_normal", {"std": 0.02})
    assert (r.status, r.score) == (Status.partial, 0.75)


def test_init_left_at_torch_library_default():
    r = init({"l.py": LORA}, "proj.weight", "zeros")
    assert (r.status, r.score, at(r, "init")) == (Status.partial, 0.25, ("l.py", 11))
    assert "library default" in r.message
    r = init({"l.py": LORA}, "proj", "kaiming_uniform", {"a": math.sqrt(5)})
    assert (r.status, r.score) == (Status.pass_, 1.0)


def test_init_uninitialised_empty_is_mismatch():
    src = "import torch\nimport torch.nn as nn\n\nclass M(nn.Module):\n    def __init__(self):\n        self.w = nn.Parameter(torch.empty(3, 3))\n"
    r = init({"m.py": src}, "w", "zeros")
    assert (r.status, r.score, at(r, "init")) == (Status.mismatch, 0.0, ("m.py", 6))


def test_init_in_place_methods():
    src = (
        "import torch.nn as nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
        "        self.head = nn.Linear(4, 2)\n"
        "        self.head.weight.data.normal_(mean=0.0, std=0.02)\n"
        "        self.head.bias.data.zero_()\n"
    )
    r = init({"m.py": src}, "head.weight", "normal", {"std": 0.02})
    assert (r.status, at(r, "init")) == (Status.pass_, ("m.py", 6))
    r = init({"m.py": src}, "head.bias", "zeros")
    assert (r.status, at(r, "init")) == (Status.pass_, ("m.py", 7))
    r = init({"m.py": src}, "head.bias", "ones")
    assert r.status is Status.mismatch


def test_init_weights_hook_with_isinstance_guard():
    src = (
        "import torch.nn as nn\n\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        self.fc = nn.Linear(4, 4)\n"
        "        self.norm = nn.LayerNorm(4)\n"
        "        self.apply(self._init_weights)\n\n"
        "    def _init_weights(self, m):\n"
        "        if isinstance(m, nn.Linear):\n"
        "            nn.init.trunc_normal_(m.weight, std=0.02)\n"
        "        elif isinstance(m, nn.LayerNorm):\n"
        "            nn.init.ones_(m.weight)\n"
    )
    r = init({"n.py": src}, "fc.weight", "trunc_normal", {"std": 0.02})
    assert (r.status, r.score, at(r, "init")) == (Status.pass_, 1.0, ("n.py", 11))
    assert at(r, "definition") == ("n.py", 5)
    r = init({"n.py": src}, "norm", "ones")
    assert (r.status, at(r, "init")) == (Status.pass_, ("n.py", 13))


FLAX = '''import flax.linen as nn


class MLP(nn.Module):
    def setup(self):
        self.hidden = nn.Dense(64, kernel_init=nn.initializers.normal(stddev=0.02))
        self.out = nn.Dense(10)

    @nn.compact
    def __call__(self, x):
        pos = self.param("pos_embed", nn.initializers.truncated_normal(0.02), (1, 16))
        x = nn.Dense(32, kernel_init=nn.initializers.glorot_uniform(), name="proj")(x)
        return self.out(self.hidden(x + pos))
'''


def test_init_flax_initializers():
    r = init({"f.py": FLAX}, "hidden.kernel", "normal", {"std": 0.02})
    assert (r.status, at(r, "init")) == (Status.pass_, ("f.py", 6))
    r = init({"f.py": FLAX}, "pos_embed", "trunc_normal", {"std": 0.02})
    assert (r.status, at(r, "init")) == (Status.pass_, ("f.py", 11))
    r = init({"f.py": FLAX}, "proj", "xavier_uniform")
    assert (r.status, at(r, "init")) == (Status.pass_, ("f.py", 12))
    r = init({"f.py": FLAX}, "out.kernel", "zeros")
    assert (r.status, r.score, at(r, "init")) == (Status.partial, 0.25, ("f.py", 7))
    r = init({"f.py": FLAX}, "out.bias", "zeros")
    assert (r.status, r.score) == (Status.pass_, 1.0)


def test_init_missing_and_tests_ignored():
    files = {"m.py": "x = 1\n", "tests/test_m.py": "import torch\nw = torch.nn.Parameter(torch.zeros(3))\n"}
    r = init(files, "w", "zeros")
    assert (r.status, r.score) == (Status.missing, 0.0)


# ----- exists ------------------------------------------------------------------------------------------
def test_exists_reachable_through_methods_attributes_and_callbacks():
    files = {
        "pkg/__init__.py": "from .model import Net\n",
        "pkg/model.py": (
            "import torch.nn as nn\n\n"
            "class Head(nn.Module):\n    def forward(self, x):\n        return x.mean(1)\n\n"
            "class Net(nn.Module):\n"
            "    def __init__(self):\n"
            "        self.head = Head()\n"
            "        self.apply(self._init)\n\n"
            "    def _init(self, m):\n        m.reset()\n\n"
            "    def features(self, x):\n        return x * 2\n\n"
            "    def forward(self, x):\n        return self.head(self.features(x))\n"
        ),
        "train.py": "from pkg import Net\n\ndef main():\n    net = Net()\n    net.fit()\n\n" + MAIN,
    }
    for symbol in ("Net", "Head", "Head.forward", "Net._init", "Net.features", "pkg.model.Net"):
        r = exists(files, symbol, reachable=True)
        assert (r.status, r.score) == (Status.pass_, 1.0), (symbol, r.message)
    r = exists(files, "Net", reachable=True)
    assert at(r, "definition") == ("pkg/model.py", 7)
    assert at(r, "entry") == ("train.py", 7)


def test_exists_unwired_is_three_quarters():
    files = {
        "ema.py": "class EMA:\n    def update(self, model):\n        self.shadow = model.state_dict()\n",
        "train.py": "def main():\n    print('no ema')\n\n" + MAIN,
    }
    r = exists(files, "EMA.update", reachable=True)
    assert (r.status, r.score, at(r, "definition")) == (Status.partial, 0.75, ("ema.py", 2))
    assert "never called from an entry point" in r.message
    assert exists(files, "EMA.update").status is Status.pass_


@pytest.mark.parametrize(
    ("body", "line"),
    [
        ("        raise NotImplementedError\n", 4),
        ("        pass  # TODO\n", 4),
        ("        return torch.zeros_like(x)\n", 4),
        ("        ...\n", 4),
    ],
)
def test_exists_stub_component(body, line):
    src = "import torch\n\nclass Attention:\n    def forward(self, x):\n" + body
    r = exists({"a.py": src}, "Attention")
    assert (r.status, r.score, at(r, "stub")) == (Status.stub, 0.0, ("a.py", line))


def test_exists_empty_class_and_missing_and_test_only():
    assert exists({"a.py": "class Gate:\n    pass\n"}, "Gate").status is Status.stub
    r = exists({"a.py": "x = 1\n"}, "Gate")
    assert (r.status, r.score) == (Status.missing, 0.0)
    r = exists({"a.py": "x = 1\n", "tests/test_a.py": "def helper():\n    return 1\n"}, "helper")
    assert (r.status, at(r, "test")) == (Status.missing, ("tests/test_a.py", 1))


def test_exists_real_implementation_beside_a_stub_wins():
    files = {
        "old.py": "def sinusoidal(t, dim):\n    raise NotImplementedError\n",
        "emb.py": "import math\n\ndef sinusoidal(t, dim):\n    return [math.sin(t / 10000 ** (i / dim)) for i in range(dim)]\n",
    }
    r = exists(files, "sinusoidal")
    assert (r.status, at(r, "definition")) == (Status.pass_, ("emb.py", 3))


def test_entry_points_console_script_launch_and_script():
    files = {
        "pyproject.toml": '[project]\nname = "x"\n[project.scripts]\nx-train = "pkg.cli:run"\n',
        "pkg/__init__.py": "",
        "pkg/cli.py": "from pkg.core import fit\n\ndef run():\n    fit()\n",
        "pkg/core.py": "def fit():\n    return 1\n\ndef sample():\n    return 2\n\ndef unused():\n    return 3\n",
        "scripts/sample.py": "from pkg.core import sample\nsample()\n",
        "run.sh": "python scripts/sample.py\n",
    }
    index = make_index(files, launches={"run.sh": [("scripts/sample.py", 1)]})
    graph = call_graph(context(index))
    kinds = {(e.kind, e.node.file) for e in graph.entries}
    assert ("console-script", "pkg/cli.py") in kinds
    assert ("launch", "scripts/sample.py") in kinds
    r = run("exists", ExistsCheck(symbol="fit", reachable=True), index)
    assert (r.status, at(r, "entry")) == (Status.pass_, ("pyproject.toml", 4))
    assert run("exists", ExistsCheck(symbol="sample", reachable=True), index).status is Status.pass_
    r = run("exists", ExistsCheck(symbol="unused", reachable=True), index)
    assert (r.status, r.score) == (Status.partial, 0.75)


def test_setup_cfg_console_script(tmp_path):
    (tmp_path / "setup.cfg").write_text("[options.entry_points]\nconsole_scripts =\n    go = tool.main:cli\n")
    files = {"tool/__init__.py": "", "tool/main.py": "def cli():\n    helper()\n\ndef helper():\n    return 0\n"}
    index = make_index(files)
    index.root = tmp_path
    r = run("exists", ExistsCheck(symbol="helper", reachable=True), index)
    assert (r.status, at(r, "entry")) == (Status.pass_, ("setup.cfg", 3))


def test_bad_input_never_raises():
    broken = {"b.py": "def f(:\n    return 1\nclass K:\n    def forward(self, x):\n        return x @ self.w\n"}
    r = exists(broken, "K")  # the unparsable line is blanked; the rest is still indexed
    assert (r.status, at(r, "definition")) == (Status.pass_, ("b.py", 3))
    assert call(broken, "").status is Status.error
    assert call(broken, "torch..x").status is Status.error
    r = run("init", InitCheck(name="...", expect="zeros"), make_index(broken))
    assert r.status is Status.error


def test_results_are_deterministic():
    files = {"l.py": LORA, "train.py": "from l import LoRA\n\ndef main():\n    LoRA(4, 2)\n\n" + MAIN}
    first = [run("init", InitCheck(name=n, expect="zeros"), make_index(files)) for n in ("lora_A", "lora_B", "proj")]
    second = [run("init", InitCheck(name=n, expect="zeros"), make_index(files)) for n in ("lora_A", "lora_B", "proj")]
    assert first == second


def test_exists_through_a_module_level_alias():
    files = {"m.py": "class DenseMatrix:\n    def det(self):\n        return self.rows[0][0]\n\nMatrix = DenseMatrix\n"}
    r = exists(files, "Matrix")
    assert (r.status, at(r, "definition")) == (Status.pass_, ("m.py", 1))


def test_call_positional_order_from_a_repo_constructor():
    src = (
        "class Block:\n    def __init__(self, dim, heads=8):\n        self.dim = dim\n\n"
        "def main():\n    Block(64, 4)\n\n" + MAIN
    )
    assert call({"b.py": src}, "Block", {"heads": 4}).status is Status.pass_
    r = call({"b.py": src}, "Block", {"heads": 8})
    assert (r.status, r.score, at(r, "call")) == (Status.partial, 0.75, ("b.py", 6))  # 4 vs 8: within 3x


def test_framework_hooks_and_module_launch_are_reachable():
    files = {
        "lit/__init__.py": "",
        "lit/model.py": (
            "import lightning as L\nimport torch\n\n"
            "class Classifier(L.LightningModule):\n"
            "    def training_step(self, batch, idx):\n        return self.loss(batch)\n\n"
            "    def loss(self, batch):\n        return batch.sum()\n\n"
            "    def configure_optimizers(self):\n        return torch.optim.AdamW(self.parameters(), lr=1e-3)\n"
        ),
        "lit/train.py": "import lightning as L\nfrom lit.model import Classifier\n\nL.Trainer().fit(Classifier())\n",
        "run.sh": "python -m lit.train\n",
    }
    index = make_index(files, launches={"run.sh": [("lit.train", 1)]})
    for symbol in ("Classifier.loss", "Classifier.configure_optimizers"):
        r = run("exists", ExistsCheck(symbol=symbol, reachable=True), index)
        assert (r.status, at(r, "entry")) == (Status.pass_, ("run.sh", 1)), symbol
    r = run("call", CallCheck(target="torch.optim.AdamW", args={"lr": 1e-3}), index)
    assert (r.status, at(r, "call")) == (Status.pass_, ("lit/model.py", 12))


def test_init_loop_over_modules_with_isinstance():
    src = (
        "import torch.nn as nn\n\n"
        "class ResNet(nn.Module):\n"
        "    def __init__(self):\n"
        "        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)\n"
        "        self.fc = nn.Linear(512, 10)\n"
        "        for m in self.modules():\n"
        "            if isinstance(m, nn.Conv2d):\n"
        "                nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')\n"
    )
    r = init({"r.py": src}, "conv1", "kaiming_normal", {"mode": "fan_out"})
    assert (r.status, r.score, at(r, "init"), at(r, "definition")) == (Status.pass_, 1.0, ("r.py", 9), ("r.py", 5))
    r = init({"r.py": src}, "fc.weight", "kaiming_normal")  # the guard excludes Linear: library default
    assert (r.status, r.score, at(r, "init")) == (Status.partial, 0.25, ("r.py", 6))


def test_notebook_is_an_entry_point_end_to_end(tmp_path):
    import json

    from verifier.index.build import build_index

    (tmp_path / "model.py").write_text(
        "import torch.nn as nn\n\nclass Net(nn.Module):\n    def forward(self, x):\n        return x.relu()\n\n"
        "class Unused(nn.Module):\n    def forward(self, x):\n        return x.tanh()\n"
    )
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Train"]},
        {"cell_type": "code", "metadata": {}, "execution_count": 1, "outputs": [],
         "source": ["from model import Net\n", "net = Net()\n"]},
    ]
    (tmp_path / "train.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    index = build_index(tmp_path, use_cache=False)
    r = run("exists", ExistsCheck(symbol="Net", reachable=True), index)
    assert (r.status, at(r, "definition")) == (Status.pass_, ("model.py", 3))
    assert at(r, "entry")[0] == "train.ipynb"
    r = run("exists", ExistsCheck(symbol="Unused", reachable=True), index)
    assert (r.status, r.score) == (Status.partial, 0.75)


def test_init_in_a_function_that_never_runs_does_not_count():
    src = (
        "import torch\nimport torch.nn as nn\n\n"
        "class Adapter(nn.Module):\n"
        "    def __init__(self, d):\n"
        "        self.up = nn.Parameter(torch.randn(d, d) * 0.02)\n\n"
        "    def zero_init(self):\n"
        "        nn.init.zeros_(self.up)\n\n"
        "def main():\n    Adapter(8)\n\n" + MAIN
    )
    r = init({"a.py": src}, "up", "zeros")
    assert (r.status, r.score, at(r, "init")) == (Status.mismatch, 0.0, ("a.py", 6))
    called = src.replace("    Adapter(8)\n", "    Adapter(8).zero_init()\n")
    r = init({"a.py": called}, "up", "zeros")
    assert (r.status, r.score, at(r, "init")) == (Status.pass_, 1.0, ("a.py", 9))


def test_library_called_init_weights_hook_counts():
    src = (
        "import torch.nn as nn\nfrom transformers import PreTrainedModel\n\n"
        "class Model(PreTrainedModel):\n"
        "    def __init__(self, config):\n"
        "        super().__init__(config)\n"
        "        self.head = nn.Linear(8, 2)\n"
        "        self.post_init()\n\n"
        "    def _init_weights(self, module):\n"
        "        if isinstance(module, nn.Linear):\n"
        "            module.weight.data.normal_(mean=0.0, std=0.02)\n\n"
        "def main():\n    Model(None)\n\n" + MAIN
    )
    r = init({"m.py": src}, "head.weight", "normal", {"std": 0.02})
    assert (r.status, r.score, at(r, "init")) == (Status.pass_, 1.0, ("m.py", 12))
