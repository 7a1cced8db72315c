"""PaperBench ``rubric.json`` -> native v1: its "Code Development" leaves become free-text SAUs.

A leaf's weight is its share of the whole rubric, as PaperBench scores it: at every node the children's
weights are normalised by their sum, and the shares multiply down the tree (all leaves sum to 1).
Rubric nodes carry no dimension, so one is inferred from keywords of the requirement (see
``infer_dimension``); anything without a clear signal is methodological, PaperBench's usual case.
"""

from __future__ import annotations

import math
import re
from typing import Any

from verifier.spec.converted import Converted
from verifier.spec.model import Dimension
from verifier.spec.parse import PathKey

CODE_DEVELOPMENT = "code development"

_NUMBER = re.compile(r"(?<![A-Za-z_])[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?(?![A-Za-z_])", re.IGNORECASE)
# Keyword lists per dimension; a requirement takes the dimension with the most hits (ties: this order).
_KEYWORDS: dict[Dimension, tuple[str, ...]] = {
    Dimension.numerical: (
        "learning rate", "batch size", "epochs", "steps", "hidden size", "hidden dimension", "dropout",
        "weight decay", "momentum", "beta", "temperature", "coefficient", "rank", "number of", "set to",
        "is set", "equal to", "iterations", "warmup", "layers", "heads", "=",
    ),
    Dimension.ordering: (
        "before", "after", "followed by", "prior to", "then", "first", "subsequently", "order", "phase",
        "stage", "sequence", "every iteration", "each iteration", "at the end of",
    ),
    Dimension.protocol: (
        "dataset", "evaluat", "metric", "baseline", "benchmark", "split", "seed", "validation set",
        "test set", "held-out", "accuracy", "report", "compare", "ablation",
    ),
}


def looks_like(data: dict[str, Any]) -> bool:
    return "sub_tasks" in data or (isinstance(data.get("requirements"), str) and "id" in data)


def infer_dimension(requirement: str) -> Dimension:
    """Numerical needs a number plus a hyperparameter word; otherwise most keyword hits wins."""
    text = requirement.lower()
    scores: dict[Dimension, int] = {}
    for dimension, words in _KEYWORDS.items():
        scores[dimension] = sum(1 for word in words if word in text)
    if not _NUMBER.search(text):
        scores[Dimension.numerical] = 0
    best = max(scores.values())
    if best == 0:
        return Dimension.methodological
    return next(dim for dim in _KEYWORDS if scores[dim] == best)


def convert(data: dict[str, Any], paper_id: str) -> Converted:
    out = Converted(data={"version": 1, "paper": {"id": paper_id}, "saus": []}, origin={(): ()})
    if isinstance(data.get("requirements"), str):
        out.data["paper"]["title"] = data["requirements"]
    # Depth-first in file order, iteratively: rubric trees can be deep.
    stack: list[tuple[Any, PathKey, float, str | None]] = [(data, (), 1.0, None)]
    while stack:
        node, path, share, parent_text = stack.pop()
        if not _valid_node(node, path, out):
            continue
        children = node.get("sub_tasks") or []
        if children:
            weights = [_weight_of(child) or 0.0 for child in children]  # bad weights are reported at the child
            total = sum(weights)
            pending = []
            for index, (child, weight) in enumerate(zip(children, weights)):
                child_share = share * weight / total if total > 0 else 0.0
                pending.append((child, path + ("sub_tasks", index), child_share, node["requirements"]))
            stack.extend(reversed(pending))
        elif str(node.get("task_category") or "").strip().lower() == CODE_DEVELOPMENT:
            _add_leaf(out, node, path, share, parent_text)
    return out


def _weight_of(node: Any) -> float | None:
    """The node's weight (1 when absent), or None when it is not a finite number >= 0."""
    weight = node.get("weight", 1) if isinstance(node, dict) else None
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight) or weight < 0:
        return None
    return float(weight)


def _valid_node(node: Any, path: PathKey, out: Converted) -> bool:
    if not isinstance(node, dict):
        out.problems.append((path, f"a rubric node must be a mapping, got {type(node).__name__}"))
        return False
    ok = True
    for name in ("id", "requirements"):
        if name not in node:
            out.problems.append((path + (name,), f"missing required field {name!r}"))
            ok = False
        elif not isinstance(node[name], str) or not node[name].strip():
            out.problems.append((path + (name,), f"wrong type: expected a non-empty string, got {node[name]!r:.60}"))
            ok = False
    if _weight_of(node) is None:
        out.problems.append((path + ("weight",), f"weight must be a number >= 0, got {node.get('weight')!r:.60}"))
        ok = False
    children = node.get("sub_tasks")
    if children is not None and not isinstance(children, list):
        out.problems.append((path + ("sub_tasks",), f"sub_tasks must be a list, got {type(children).__name__}"))
        ok = False
    category = node.get("task_category")
    if category is not None and not isinstance(category, str):
        out.problems.append((path + ("task_category",), f"task_category must be a string, got {category!r:.60}"))
        ok = False
    return ok


def _add_leaf(out: Converted, node: dict[str, Any], path: PathKey, share: float, parent_text: str | None) -> None:
    index = len(out.data["saus"])
    sau: dict[str, Any] = {
        "id": node["id"],
        "dimension": infer_dimension(node["requirements"]).value,
        "claim": node["requirements"],
        "weight": share,
    }
    if parent_text:
        sau["source"] = parent_text
    out.data["saus"].append(sau)
    out.origin[("saus", index)] = path
    out.origin[("saus", index, "claim")] = path + ("requirements",)
    out.origin[("saus", index, "dimension")] = path + ("requirements",)
