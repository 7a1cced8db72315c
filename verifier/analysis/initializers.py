"""Reading initialisation code: which tensor an expression names, and which scheme an initialiser creates.

``scheme_of_expr("nn.Parameter(torch.randn(d, k) * 0.02)")`` is ``("normal", {"mean": "0.0", "std": "(1.0) * (0.02)"})``:
the scheme plus the argument *texts*, left for the caller to fold where they are written. Scheme names, API
signatures and namespaces are data in rules/init_schemes.yaml; nothing is evaluated.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from verifier import rules
from verifier.analysis.imports import ModuleMap
from verifier.index.names import attribute_chain
from verifier import pysource

SLOTS = ("weight", "bias", "kernel", "scale", "embedding")
PRIMARY_SLOTS = ("weight", "kernel", "embedding")
_PASSTHROUGH_METHODS = ("to", "float", "half", "double", "cuda", "contiguous", "detach", "clone", "requires_grad_")
_SUBSCRIPT = re.compile(r"\[[^\]]*\]")


def schemes() -> dict:
    return rules.load("init_schemes.yaml")


@dataclass(frozen=True)
class Target:
    """The tensor a claim names: ``lora_B`` -> base (lora_B,), any primary slot; ``head.bias`` -> slot bias."""

    base: tuple[str, ...]
    slot: str | None

    @classmethod
    def parse(cls, name: str) -> Target:
        parts = tensor_parts(name)
        if len(parts) > 1 and parts[-1] in SLOTS:
            return cls(tuple(parts[:-1]), parts[-1])
        return cls(tuple(parts), None)

    def matches(self, parts: list[str]) -> bool:
        """Does a tensor expression (split into parts, see :func:`tensor_parts`) name this target?"""
        slot = None
        if len(parts) > 1 and parts[-1] in SLOTS:
            parts, slot = parts[:-1], parts[-1]
        n = len(self.base)
        if not n or tuple(parts[-n:]) != self.base:
            return False
        return self.slot_ok(slot)

    def slot_ok(self, slot: str | None) -> bool:
        if self.slot is None:
            return slot is None or slot in PRIMARY_SLOTS
        return slot == self.slot or (self.slot in PRIMARY_SLOTS and slot in PRIMARY_SLOTS)

    @property
    def wanted_slot(self) -> str:
        return self.slot or "weight"


def tensor_parts(text: str) -> list[str]:
    """``self.blocks[0].lora_B.weight.data`` -> [blocks, lora_B, weight]."""
    cleaned = _SUBSCRIPT.sub("", text.replace(" ", ""))
    parts = [p for p in cleaned.split(".") if p]
    if parts and parts[0] in ("self", "cls"):
        parts = parts[1:]
    while parts and parts[-1] == "data":
        parts = parts[:-1]
    return parts


def scheme_of_expr(modules: ModuleMap, path: str, text: str) -> tuple[str, dict[str, Any]] | None:
    """The scheme an expression creates a tensor with, and its raw (unfolded) argument texts."""
    try:
        node = pysource.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return _scheme_of_node(modules, path, node, 0)


def _scheme_of_node(modules: ModuleMap, path: str, node: ast.AST, depth: int):
    if depth > 8:
        return None
    data = schemes()
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        for tensor, factor in ((node.left, node.right), (node.right, node.left)):
            inner = _scheme_of_node(modules, path, tensor, depth + 1)
            if inner is None:
                continue
            scheme, raw = inner
            spec = data["constructors"].get(_leaf(tensor)) or {}
            scale_key = spec.get("scale")
            if not scale_key or (isinstance(node.op, ast.Div) and tensor is node.right):
                return None
            base = raw.get(scale_key, repr(spec.get("defaults", {}).get(scale_key, 1.0)))
            op = "*" if isinstance(node.op, ast.Mult) else "/"
            raw = {**raw, scale_key: f"({base}) {op} ({ast.unparse(factor)})"}
            return scheme, raw
        return None
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _PASSTHROUGH_METHODS and isinstance(func.value, ast.Call):
            return _scheme_of_node(modules, path, func.value, depth + 1)
        name = attribute_chain(func)
        if name is None:
            return None
        resolved = modules.qualify(path, name)
        leaf = resolved.rsplit(".", 1)[-1]
        prefix = resolved.rpartition(".")[0]
        if leaf == "Parameter" and node.args:
            return _scheme_of_node(modules, path, node.args[0], depth + 1)
        if leaf in data["flax"] and _in_namespaces(prefix, data.get("flax_namespaces")):
            spec = data["flax"][leaf]
            args = [ast.unparse(a) for a in node.args]
            kwargs = tuple((k.arg or "**", ast.unparse(k.value)) for k in node.keywords)
            return spec["scheme"], bind_init_args(spec, args, kwargs)
        if leaf in data["constructors"] and (not prefix or _in_namespaces(prefix, data.get("constructor_namespaces"))):
            spec = data["constructors"][leaf]
            raw = {k: repr(v) for k, v in (spec.get("defaults") or {}).items()}
            if "value_arg" in spec and len(node.args) > spec["value_arg"]:
                raw["val"] = ast.unparse(node.args[spec["value_arg"]])
            for kw in node.keywords:
                if kw.arg in ("mean", "std") and leaf == "normal":
                    raw[kw.arg] = ast.unparse(kw.value)
                if kw.arg == "fill_value":
                    raw["val"] = ast.unparse(kw.value)
            return spec["scheme"], raw
        return None
    if isinstance(node, (ast.Attribute, ast.Name)):
        name = attribute_chain(node)
        resolved = modules.qualify(path, name) if name else ""
        leaf, prefix = resolved.rsplit(".", 1)[-1], resolved.rpartition(".")[0]
        if leaf in data["flax"] and _in_namespaces(prefix, data.get("flax_namespaces")):
            spec = data["flax"][leaf]
            return spec["scheme"], {k: repr(v) for k, v in (spec.get("defaults") or {}).items()}
    return None


def _in_namespaces(prefix: str, namespaces) -> bool:
    return any(prefix == ns or prefix.endswith("." + ns) for ns in namespaces or ())


def bind_init_args(spec: dict, args: list[str], kwargs, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Argument texts by canonical name, over the API's documented defaults."""
    aliases = schemes().get("arg_aliases") or {}
    kw_map = spec.get("kw") or {}
    raw: dict[str, Any] = {k: repr(v) for k, v in (spec.get("defaults") or {}).items()}
    for name, text in zip(spec.get("params") or (), args):
        if not text.startswith("*"):
            raw[name] = text
    for key, text in kwargs:
        if key == "**" or key in skip:
            continue
        raw[kw_map.get(key) or aliases.get(key) or key] = text
    return raw


def string_literal(text: str) -> str | None:
    t = (text or "").strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        return t[1:-1]
    return None




def _leaf(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    name = attribute_chain(node)
    return name.rsplit(".", 1)[-1] if name else ""
