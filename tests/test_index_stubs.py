"""Placeholder classification: each reason, and the look-alikes that must not be flagged."""

from __future__ import annotations

import ast

import pytest

from verifier.index import stubs


def classify(src: str, name: str):
    tree = ast.parse(src)
    lines = src.split("\n")
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            protocol = any(getattr(b, "id", "") == "Protocol" for b in node.bases)
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return stubs.classify(item, lines, node.name, protocol)
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return stubs.classify(node, lines)
    raise AssertionError(name)


@pytest.mark.parametrize(
    "src, reason",
    [
        ("def f(x):\n    pass\n", "pass"),
        ("def f(x):\n    ...\n", "ellipsis"),
        ('def f(x):\n    """Compute the loss."""\n', "docstring-only"),
        ("def f(x):\n    raise NotImplementedError\n", "not-implemented"),
        ("def f(x):\n    h = x + 1\n    raise NotImplementedError('later')\n", "not-implemented"),
        ("def f(x):\n    raise NotImplemented\n", "not-implemented"),
        ("def f(x):\n    # TODO: implement GAE\n    pass\n", "todo"),
        ('def f(x):\n    """FIXME"""\n', "todo"),
        ("def f(logits, labels):\n    return 0.0\n", "constant-return"),
        ("def f(x):\n    return None\n", "constant-return"),
        ("def f(x):\n    return torch.randn(x.shape[0], 10)\n", "random-return"),
        ("def f(x):\n    return np.random.rand(3)\n", "random-return"),
        ("def f(rewards, values):\n    return torch.zeros_like(rewards)\n", "zeros-return"),
        ("def f(x):\n    return torch.zeros(x.size(0), 4, device=x.device)\n", "zeros-return"),
    ],
)
def test_stub_reasons(src, reason):
    assert classify(src, "f") == reason


def test_identity_forward_in_a_real_layer_is_a_stub():
    src = "class LayerNorm(nn.Module):\n    def forward(self, x):\n        return x\n"
    assert classify(src, "forward") == "identity-return"
    assert classify("def normalize(x):\n    return x\n", "normalize") == "identity-return"


@pytest.mark.parametrize(
    "src, name",
    [
        ("class Identity(nn.Module):\n    def forward(self, x):\n        return x\n", "forward"),
        ("def passthrough(x):\n    return x\n", "passthrough"),
        ("import abc\nclass B:\n    @abc.abstractmethod\n    def f(self, x):\n        pass\n", "f"),
        ("class P(Protocol):\n    def f(self, x): ...\n", "f"),
        ("from typing import overload\n@overload\ndef f(x: int) -> int: ...\n", "f"),
        ("def f(batch_size):\n    return torch.zeros(batch_size, 128)\n", "f"),  # the input is a real value
        ("def f(shape):\n    return torch.randn(shape)\n", "f"),
        ("def f(self, step):\n    return False\n", "f"),  # predicates answer constants legitimately
        ("def f(kind, x):\n    if kind == 'a':\n        return x\n    raise NotImplementedError(kind)\n", "f"),
        ("def f(x):\n    return x * 2\n", "f"),
        ("def f():\n    return 3e-4\n", "f"),  # no inputs to ignore
        ("def __len__(self):\n    return 10\n", "__len__"),
        ("def f(x):\n    y = x + 1\n    return 0\n", "f"),  # reads its input
        ("def f(x):\n    for i in x:\n        pass\n    return 0\n", "f"),  # control flow: real work
    ],
)
def test_not_stubs(src, name):
    assert classify(src, name) is None
