"""SA-Bench ``sau.json`` -> native v1: free-text claims, no checks (the claim compiler takes them later).

Accepted: ``D1``..``D4`` lists; ``claims`` (the sabench-dev release: ``{id, dimension, claim, source}``);
``requirements`` as a list, or a dict keyed by dimension or by claim id. A claim may spell its id
``claim_id``, its text ``text`` and its dimension ``type``; a bare string is a claim whose id is generated
as ``<paper>-D<N>-<NNN>``. Keys SA-Bench adds for its own use (``judge_scores``, ``split``) are ignored.
"""

from __future__ import annotations

import difflib
from typing import Any

from verifier.spec.converted import Converted
from verifier.spec.model import Dimension
from verifier.spec.parse import PathKey

DIMENSION_KEYS = ("D1", "D2", "D3", "D4")
LIST_KEYS = (*DIMENSION_KEYS, "claims", "requirements")
_ID_KEYS = ("id", "claim_id")
_TEXT_KEYS = ("claim", "text")
_DIMENSION_FIELDS = ("dimension", "type")
_KNOWN_CLAIM_KEYS = (*_ID_KEYS, *_TEXT_KEYS, *_DIMENSION_FIELDS, "source", "weight")


def looks_like(data: dict[str, Any]) -> bool:
    requirements = data.get("requirements")
    return (
        "paper_id" in data
        or any(key in data for key in DIMENSION_KEYS)
        or isinstance(data.get("claims"), list)
        or isinstance(requirements, list | dict)
    )


def convert(data: dict[str, Any]) -> Converted:
    paper_id = data.get("paper_id")
    out = Converted(data={"version": 1, "paper": {}, "saus": []}, origin={(): ()})
    out.data["paper"]["id"] = str(paper_id) if paper_id is not None else "unknown"
    out.origin[("paper", "id")] = ("paper_id",)
    if "paper_title" in data:
        out.data["paper"]["title"] = data["paper_title"]
        out.origin[("paper", "title")] = ("paper_title",)
    counters: dict[str, int] = {}
    found_list = False
    for key, value in data.items():
        if key not in LIST_KEYS:
            continue
        found_list = True
        for path, item, listed in _entries(key, value, out):
            _add_claim(out, path, item, listed, out.data["paper"]["id"], counters)
    if not found_list:
        out.problems.append(((), "SA-Bench spec without claims: expected D1..D4 lists, `claims` or `requirements`"))
    return out


def _entries(key: str, value: Any, out: Converted) -> list[tuple[PathKey, Any, str | None]]:
    """(source path, claim, dimension given by the enclosing list or dict key) for one top-level key."""
    listed = key if key in DIMENSION_KEYS else None
    if isinstance(value, list):
        return [((key, index), item, listed) for index, item in enumerate(value)]
    if key == "requirements" and isinstance(value, dict):
        entries: list[tuple[PathKey, Any, str | None]] = []
        for sub_key, sub_value in value.items():
            dimension = _dimension_or_none(sub_key)
            if dimension is not None and isinstance(sub_value, list):
                entries.extend(((key, sub_key, i), item, sub_key) for i, item in enumerate(sub_value))
            elif isinstance(sub_value, dict):
                entries.append(((key, sub_key), {"id": sub_key, **sub_value}, None))
            else:
                entries.append(((key, sub_key), {"id": sub_key, "claim": sub_value}, None))
        return entries
    if value is None and listed:
        return []
    out.problems.append(((key,), f"expected a list of claims, got {type(value).__name__}"))
    return []


def _dimension_or_none(value: Any) -> Dimension | None:
    try:
        return Dimension.parse(value)
    except ValueError:
        return None


def _add_claim(
    out: Converted, path: PathKey, item: Any, listed: str | None, paper_id: str, counters: dict[str, int]
) -> None:
    if isinstance(item, str):
        item = {"claim": item}
    if not isinstance(item, dict):
        out.problems.append((path, f"a claim must be a mapping or a string, got {type(item).__name__}"))
        return
    text_key = next((k for k in _TEXT_KEYS if k in item), None)
    if text_key is None:
        out.problems.append((path + ("claim",), _missing("claim", "text", item)))
        return
    dim_key = next((k for k in _DIMENSION_FIELDS if k in item), None)
    dimension: Any = item[dim_key] if dim_key else listed
    dim_origin = path + (dim_key,) if dim_key else path[:-1]
    if dimension is None:
        out.problems.append((path + ("dimension",), _missing("dimension", "type", item)))
        return
    if dim_key and listed:
        stated = _dimension_or_none(item[dim_key])
        if stated is not None and stated != Dimension.parse(listed):
            out.problems.append((path + (dim_key,), f"dimension {item[dim_key]!r} contradicts its list {listed!r}"))
            return
    index = len(out.data["saus"])
    sau: dict[str, Any] = {"dimension": dimension, "claim": item[text_key]}
    id_key = next((k for k in _ID_KEYS if k in item), None)
    if id_key is not None:
        sau["id"] = item[id_key]
        out.origin[("saus", index, "id")] = path + (id_key,)
    else:
        code = _code(dimension)
        counters[code] = counters.get(code, 0) + 1
        sau["id"] = f"{paper_id}-{code}-{counters[code]:03d}"
    for extra in ("source", "weight"):
        if extra in item:
            sau[extra] = item[extra]
    out.data["saus"].append(sau)
    out.origin[("saus", index)] = path
    out.origin[("saus", index, "claim")] = path + (text_key,)
    out.origin[("saus", index, "dimension")] = dim_origin


def _code(dimension: Any) -> str:
    parsed = _dimension_or_none(dimension)
    return parsed.code if parsed is not None else "D0"


def _missing(name: str, alias: str, item: dict[str, Any]) -> str:
    strays = [k for k in item if k not in _KNOWN_CLAIM_KEYS and isinstance(k, str)]
    close = difflib.get_close_matches(name, strays, n=1, cutoff=0.6)
    hint = f"; is {close[0]!r} a typo?" if close else ""
    return f"missing required field {name!r} (or {alias!r}){hint}"
