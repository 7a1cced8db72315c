"""The stub taxonomy: placeholders, token mentions, unwired and unrunnable code, each with its score cap."""

from __future__ import annotations

import pytest

from verifier.analysis.protocol.examples import context_for
from verifier.analysis.taxonomy import CAPS, classify, classify_node, mentions
from verifier.index.facts import Definition, Span

DRIVER = 'if __name__ == "__main__":\n    run()\n'


def _classify(body: str, extra: dict[str, str] | None = None, name: str = "target", driver: str = DRIVER):
    files = {"pkg/__init__.py": "", "pkg/mod.py": body, "main.py": "from pkg.mod import target\n\ndef run():\n    target(1, 2)\n\n" + driver}
    files.update(extra or {})
    ctx = context_for(files)
    tree = ctx.index.tree("pkg/mod.py")
    node = next(n for n in tree.body if getattr(n, "name", None) == name)
    return classify_node(ctx, "pkg/mod.py", node, name)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("def target(x, y):\n    pass\n", "pass"),
        ("def target(x, y):\n    ...\n", "ellipsis"),
        ("def target(x, y):\n    raise NotImplementedError\n", "not-implemented"),
        ("def target(x, y):\n    # TODO: implement the loss\n    pass\n", "todo"),
        ("import torch\n\ndef target(x, y):\n    return torch.randn(4, 4)\n", "random"),
        ("import torch\n\ndef target(x, y):\n    return torch.zeros_like(x)\n", ""),
        ("def target_fid(real, fake):\n    mu = real.mean(0)\n    return 0.0\n", "constant-return"),
        ('def target(x, y):\n    """Uses `scipy.linalg.sqrtm` for the matrix root."""\n    return x + y\n', "comment-claim"),
    ],
)
def test_placeholder_bodies_are_stubs(body, reason):
    name = "target_fid" if "target_fid" in body else "target"
    result = _classify(body.replace("target_fid", name), name=name)
    assert result.category == "stub", result
    assert reason in result.reason
    assert result.cap == 0.0
    assert result.evidence and result.evidence[0].file == "pkg/mod.py" and result.evidence[0].role == "stub"


def test_real_code_is_implemented():
    result = _classify("import torch\n\ndef target(x, y):\n    return torch.relu(x) * y\n")
    assert result.category == "implemented" and result.cap == 1.0 and result.ok


def test_abstract_method_is_not_a_stub():
    body = "import abc\n\nclass target(abc.ABC):\n    @abc.abstractmethod\n    def forward(self, x):\n        ...\n\n    def other(self):\n        return 1\n"
    assert _classify(body).category != "stub"


def test_unwired_code_is_capped():
    body = "def target(x, y):\n    return x * y\n\ndef helper(x):\n    return x + 1\n"
    result = _classify(body, name="helper")
    assert result.category == "unwired" and result.cap == CAPS["unwired"] == 0.75
    assert result.evidence[0].line == 4


def test_import_of_a_missing_repo_module_is_unrunnable():
    body = "from pkg.losses import focal_loss\n\ndef target(x, y):\n    return focal_loss(x, y)\n"
    result = _classify(body)
    assert result.category == "unrunnable" and result.cap == 0.75
    assert "pkg.losses" in result.reason and result.evidence[0].line == 1


def test_undefined_name_is_unrunnable():
    body = "def target(x, y):\n    return x * scale_factor + y\n"
    result = _classify(body)
    assert result.category == "unrunnable" and "scale_factor" in result.reason
    assert result.evidence[0].line == 2


def test_names_from_enclosing_scopes_and_builtins_are_defined():
    body = "import math\nSCALE = 2\n\ndef target(x, y):\n    total = sum(range(3))\n    f = lambda z: z * SCALE\n    return [math.exp(v) for v in (x, y)] + [f(total)]\n"
    assert _classify(body).category == "implemented"


def test_truncated_file_is_unrunnable():
    body = "def target(x, y):\n    return x + y\n\ndef other(a):\n    return (a +\n"
    result = _classify(body)
    assert result.category == "unrunnable" and "parse" in result.reason


def test_classify_accepts_an_index_definition_and_its_stub_flag():
    ctx = context_for({"m.py": "def f(x):\n    return x * 2\n" + DRIVER.replace("run()", "f(1)")})
    real = Definition("function", "f", "f", "m", Span("m.py", 1, 2), ("x",))
    assert classify(real, ctx).category == "implemented"
    flagged = Definition("function", "f", "f", "m", Span("m.py", 1, 2), ("x",), stub="constant-return")
    result = classify(flagged, ctx)
    assert result.category == "stub" and result.reason == "constant-return"


def test_token_mentions_are_found_in_comments_and_docs():
    ctx = context_for({"README.md": "We report FID.\n", "train.py": "# FID is computed offline\nx = 1\n"})
    found = mentions(ctx, ["FID"])
    assert [(e.file, e.line, e.role) for e in found] == [("README.md", 1, "mention"), ("train.py", 1, "mention")]
