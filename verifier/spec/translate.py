"""Turn pydantic's validation errors into one-line spec issues that name the field the user wrote.

Pydantic reports discriminated-union tags (``check.value.expect``) and plain-union member names
(``arg.str``, ``arg.int``) inside its locations; those are not fields in the file, so they are walked
against the data and dropped, and the several errors of one plain union become one "expected X or Y".
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from verifier.spec.errors import SpecIssue
from verifier.spec.model import CHECK_KINDS, Spec
from verifier.spec.parse import PathKey

# (source path, line) of a path in the validated data, as the shape converters map it back to the file.
Locator = Callable[[PathKey], tuple[PathKey, int | None]]
FieldFormatter = Callable[[PathKey], str]

_EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "none_required": "null",
}
_UNION_MEMBERS = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "list[str]": "a list of strings",
    "none": "null",
}


def translate(error: ValidationError, data: Any, file: str, locate: Locator, fmt: FieldFormatter) -> list[SpecIssue]:
    errors = error.errors(include_url=False, include_context=True, include_input=True)
    walked = [(err, *_walk(err["loc"], data, err["type"])) for err in errors]
    unions: dict[PathKey, list[dict[str, Any]]] = {}
    for err, _path, _missing, union_base in walked:
        if union_base is not None:
            unions.setdefault(union_base, []).append(err)
    issues: list[SpecIssue] = []
    for err, path, missing, union_base in walked:
        if union_base is not None:
            members = unions.pop(union_base, None)
            if members is None:  # this union was already reported by its first member
                continue
            path, message = union_base, _union_message(members, _value_at(data, union_base))
        else:
            message, path = _message(err, path, missing, data)
        source_path, line = locate(path)
        issues.append(SpecIssue(file, line, fmt(source_path) or None, message))
    return issues


def _walk(loc: tuple[Any, ...], data: Any, kind: str) -> tuple[PathKey, str | None, PathKey | None]:
    """The real path of an error, the missing field name if any, and the path of a plain union, if any."""
    path: list[Any] = []
    current = data
    union_base: PathKey | None = None
    for position, part in enumerate(loc):
        if isinstance(current, dict) and part in CHECK_KINDS and current.get("kind") == part:
            continue  # discriminated-union tag
        if isinstance(current, dict) and part in current:
            path.append(part)
            current = current[part]
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            path.append(part)
            current = current[part]
        elif part == "[key]":
            continue
        elif kind == "missing" and position == len(loc) - 1 and isinstance(part, str):
            return tuple(path), part, union_base
        elif union_base is None:
            union_base = tuple(path)
    return tuple(path), None, union_base


def _value_at(data: Any, path: PathKey) -> Any:
    for part in path:
        data = data[part]
    return data


def _message(err: dict[str, Any], path: PathKey, missing: str | None, data: Any) -> tuple[str, PathKey]:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    value = err.get("input")
    if kind == "missing" and missing is not None:
        return f"missing required field {missing!r}", path + (missing,)
    if kind == "extra_forbidden":
        name = path[-1] if path else "?"
        valid = valid_fields(path[:-1], data)
        return f"unknown field {name!r}{_suggest(str(name), valid)}", path
    if kind == "union_tag_invalid":
        tag = ctx.get("tag")
        kinds = ", ".join(CHECK_KINDS)
        return f"unknown check kind {tag!r} (expected one of {kinds}){_suggest(str(tag), CHECK_KINDS)}", path + ("kind",)
    if kind == "union_tag_not_found":
        return f"missing required field 'kind' (one of {', '.join(CHECK_KINDS)})", path + ("kind",)
    if kind == "literal_error":
        if path == ("version",):
            return f"unsupported spec version {value!r} (this sau-verify reads version 1)", path
        choices = [c.strip().strip("'") for c in str(ctx.get("expected", "")).replace(" or ", ", ").split(",")]
        shown = ", ".join(c for c in choices if c)
        return f"unknown value {_short(value)} (expected one of {shown}){_suggest(str(value), choices)}", path
    if kind == "value_error":
        return str(ctx.get("error") or err["msg"]), path
    if kind in _EXPECTED:
        return f"wrong type: expected {_EXPECTED[kind]}, got {describe(value)}", path
    if kind in ("greater_than_equal", "greater_than"):
        bound = ctx.get("ge", ctx.get("gt"))
        if isinstance(bound, float) and bound.is_integer():
            bound = int(bound)
        relation = "at least" if kind == "greater_than_equal" else "more than"
        return f"must be {relation} {bound}, got {_short(value)}", path
    if kind == "too_short":
        return f"needs at least {ctx.get('min_length')} item(s), got {ctx.get('actual_length')}", path
    if kind == "string_too_short":
        return "must not be empty", path
    msg = str(err["msg"])
    return f"{msg[:1].lower()}{msg[1:]} (got {_short(value)})", path


def _union_message(members: list[dict[str, Any]], value: Any) -> str:
    wanted: list[str] = []
    for err in members:
        loc = [part for part in err["loc"] if isinstance(part, str)]
        label = next((_UNION_MEMBERS[p] for p in reversed(loc) if p in _UNION_MEMBERS), None)
        label = label or _EXPECTED.get(err["type"], err["type"])
        if label not in wanted:
            wanted.append(label)
    got = describe(value)
    if isinstance(value, list) and "a list of strings" in wanted:  # else "got a list" would say nothing
        odd = next((i for i, item in enumerate(value) if not isinstance(item, str)), None)
        got = got if odd is None else f"a list holding {describe(value[odd])} at [{odd}]"
    return f"wrong type: expected {' or '.join(wanted)}, got {got}"


def describe(value: Any) -> str:
    """A value's type in the words of a YAML user."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return f"the string {_short(value)}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value) if not isinstance(value, (dict, list)) else describe(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _suggest(name: str, valid: list[str] | tuple[str, ...]) -> str:
    close = difflib.get_close_matches(name, list(valid), n=1, cutoff=0.6)
    if close:
        return f"; did you mean {close[0]!r}?"
    if valid:
        return f"; valid fields: {', '.join(sorted(valid))}" if len(valid) <= 12 else ""
    return ""


# ---------------------------------------------------------------- model introspection


def valid_fields(path: PathKey, data: Any) -> list[str]:
    """The field names (as written in a spec, aliases first) of the model found at ``path`` in ``data``."""
    model: Any = Spec
    current = data
    for part in path:
        model = _resolve(model, current)
        if isinstance(model, type) and issubclass(model, BaseModel):
            info = _field_by_name(model, part)
            if info is None:
                return []
            model = info.annotation
        else:
            args = typing.get_args(model)
            origin = typing.get_origin(model)
            if origin is list and args:
                model = args[0]
            elif origin is dict and len(args) == 2:
                model = args[1]
            else:
                return []
        current = current[part] if _has(current, part) else None
    model = _resolve(model, current)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return []
    return sorted(info.alias or name for name, info in model.model_fields.items())


def _has(container: Any, part: Any) -> bool:
    if isinstance(container, dict):
        return part in container
    return isinstance(container, list) and isinstance(part, int) and 0 <= part < len(container)


def _field_by_name(model: type[BaseModel], part: Any) -> Any:
    for name, info in model.model_fields.items():
        if part in (name, info.alias):
            return info
    return None


def _resolve(annotation: Any, value: Any) -> Any:
    """Strip Annotated/Optional; pick the member of a check union whose ``kind`` the value names."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
            continue
        if origin in (typing.Union, types.UnionType):
            members = [m for m in typing.get_args(annotation) if m is not type(None)]
            kind = value.get("kind") if isinstance(value, dict) else None
            chosen = None
            for member in members:
                inner = _resolve(member, value)
                if isinstance(inner, type) and issubclass(inner, BaseModel):
                    field = inner.model_fields.get("kind")
                    if field is not None and field.default == kind:
                        chosen = inner
                        break
            if chosen is None and len(members) == 1:
                chosen = members[0]
            if chosen is None:
                return annotation
            annotation = chosen
            continue
        return annotation
