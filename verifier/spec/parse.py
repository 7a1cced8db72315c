"""Parse spec text (YAML, JSON or TOML) into plain data plus the line of every key and list item.

Validation errors arrive as paths (``saus[3].check.kind``); the line map turns them into ``file:line``.
YAML is composed with PyYAML's safe constructor (no tags beyond the safe set) and its node marks are kept; JSON
is re-scanned with the stdlib string scanner after ``json.loads`` accepted it; TOML lines come from a scan
of table headers and ``key =`` lines. Size and alias expansion are bounded so no input can hang the loader.
"""

from __future__ import annotations

import bisect
import json
import re
import tomllib
from dataclasses import dataclass, field
from json.decoder import scanstring
from json.scanner import NUMBER_RE
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from verifier.spec.errors import SpecError

PathKey = tuple[Any, ...]

# Beyond this many nodes (after expanding YAML aliases) a spec is rejected: a "billion laughs" document
# would otherwise expand to gigabytes in the validator.
MAX_NODES = 200_000

_YAML_MERGE_TAG = "tag:yaml.org,2002:merge"


try:
    from yaml._yaml import CParser
except ImportError:  # PyYAML built without libyaml
    CParser = None


if CParser is not None:

    class _SafeBase(Composer, CParser, SafeConstructor, Resolver):
        """libyaml makes the events (4-5x faster); composition stays in Python, whose recursion limit turns
        a deeply nested document into a RecursionError (libyaml's own composer overflows the C stack)."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)

else:
    _SafeBase = yaml.SafeLoader  # type: ignore[misc,assignment]


class SpecLoader(_SafeBase):
    """SafeLoader narrowed to JSON-like values, with YAML 1.2 number and date rules.

    ``3e-4`` is a float (YAML 1.1 reads a string); ``2021-01-01`` stays a string (no timestamps); tags that
    build sets, bytes, dates or ordered pairs are refused, so a spec holds only what JSON could hold. Any
    failure while building a value is re-raised with the mark of the node that caused it.
    """

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except yaml.YAMLError:
            raise
        except (ValueError, TypeError, KeyError, OverflowError) as exc:
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read {node.tag.rsplit(':', 1)[-1]} value: {exc}", node.start_mark
            ) from None


def _refuse_tag(loader: SpecLoader, node: Node) -> Any:
    raise yaml.constructor.ConstructorError(
        None, None, f"tag {node.tag.replace('tag:yaml.org,2002:', '!!')} is not allowed in a spec (plain values, lists and mappings only)", node.start_mark
    )


SpecLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in Resolver.yaml_implicit_resolvers.items()
}
SpecLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)
for _tag in ("timestamp", "binary", "set", "omap", "pairs"):
    SpecLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refuse_tag)


@dataclass(frozen=True)
class Document:
    """Parsed spec data and the 1-based line of each path in it."""

    data: Any
    lines: dict[PathKey, int] = field(default_factory=dict)

    def line_of(self, path: PathKey) -> int | None:
        """Line of ``path``, or of its nearest ancestor the map knows (inline tables, flow mappings)."""
        probe = tuple(path)
        while True:
            line = self.lines.get(probe)
            if line is not None:
                return line
            if not probe:
                return None
            probe = probe[:-1]


def format_path(path: PathKey) -> str:
    """``("saus", 3, "check", "kind")`` -> ``saus[3].check.kind``."""
    out = ""
    for part in path:
        if isinstance(part, int) and not isinstance(part, bool):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def parse_text(text: str, fmt: str, file: str) -> Document:
    if fmt == "json":
        return parse_json(text, file)
    if fmt == "toml":
        return parse_toml(text, file)
    return parse_yaml(text, file)


# ---------------------------------------------------------------- YAML


def parse_yaml(text: str, file: str) -> Document:
    loader: SpecLoader | None = None
    try:
        loader = SpecLoader(text)  # the reader rejects unprintable characters right here
        node = loader.get_single_node()
        if node is None:
            raise SpecError(file, None, None, "empty spec: the file holds no YAML content")
        _check_yaml_nodes(node, loader, file)
        data = loader.construct_document(node)
        lines: dict[PathKey, int] = {}
        _record_yaml_lines(node, (), lines, loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        context = f" ({exc.context})" if exc.context and exc.problem else ""
        what = "invalid YAML value" if isinstance(exc, yaml.constructor.ConstructorError) else "YAML syntax error"
        raise SpecError(file, mark.line + 1 if mark else None, None, f"{what}: {problem}{context}") from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, max(exc.position, 0)) + 1
        raise SpecError(file, line, None, f"YAML syntax error: {exc.reason} character {exc.character!r}") from None
    except yaml.YAMLError as exc:
        raise SpecError(file, None, None, f"YAML error: {exc}") from None
    except RecursionError:
        raise SpecError(file, None, None, "YAML nesting too deep") from None
    finally:
        if loader is not None:
            loader.dispose()
    return Document(data, lines)


def _key_value(key: Node, loader: SpecLoader) -> Any:
    if key.tag == _YAML_MERGE_TAG:
        return "<<"
    if isinstance(key, ScalarNode):
        return loader.construct_object(key)
    return None


def _check_yaml_nodes(root: Node, loader: SpecLoader, file: str) -> None:
    """Reject duplicate keys, self-referencing aliases and alias bombs before anything is constructed."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()

    def visit(node: Node, path: PathKey) -> int:
        ident = id(node)
        if ident in on_path:
            line = node.start_mark.line + 1
            raise SpecError(file, line, format_path(path) or None, "YAML alias refers to itself (recursive data)")
        if ident in sizes:
            return sizes[ident]
        on_path.add(ident)
        total = 1
        if isinstance(node, MappingNode):
            seen: dict[Any, int] = {}
            for key, value in node.value:
                name = _key_value(key, loader)
                if key.tag != _YAML_MERGE_TAG and isinstance(key, ScalarNode):
                    line = key.start_mark.line + 1
                    if name in seen:
                        raise SpecError(
                            file,
                            line,
                            format_path(path + (name,)),
                            f"duplicate key {name!r} (first at line {seen[name]})",
                        )
                    seen[name] = line
                total += visit(value, path + (name,))
        elif isinstance(node, SequenceNode):
            for index, item in enumerate(node.value):
                total += visit(item, path + (index,))
        on_path.discard(ident)
        sizes[ident] = total
        if total > MAX_NODES:
            raise SpecError(file, None, None, f"spec too large: more than {MAX_NODES} values once aliases expand")
        return total

    visit(root, ())


def _record_yaml_lines(node: Node, path: PathKey, lines: dict[PathKey, int], loader: SpecLoader) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, MappingNode):
        for key, value in node.value:
            name = _key_value(key, loader)
            # Plain assignment: after a merge (``<<: *base``) the explicit key comes last and wins.
            lines[path + (name,)] = key.start_mark.line + 1
            _record_yaml_lines(value, path + (name,), lines, loader)
    elif isinstance(node, SequenceNode):
        for index, item in enumerate(node.value):
            _record_yaml_lines(item, path + (index,), lines, loader)


# ---------------------------------------------------------------- JSON

_JSON_WS = re.compile(r"[ \t\n\r]*")
_JSON_LITERALS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")


def parse_json(text: str, file: str) -> Document:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError(file, exc.lineno, None, f"JSON syntax error: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise SpecError(file, None, None, "JSON nesting too deep") from None
    except ValueError as exc:  # e.g. an integer beyond Python's digit limit
        raise SpecError(file, _line_of_huge_number(text), None, f"JSON value cannot be read: {exc}") from None
    return Document(data, _json_lines(text, file))


def _line_of_huge_number(text: str) -> int | None:
    match = re.search(r"[0-9_]{4000,}", text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _json_lines(text: str, file: str) -> dict[PathKey, int]:
    """Walk text that ``json.loads`` already accepted, recording the line of every key and item.

    Iterative (no recursion limit) and also the place duplicate keys are caught, since ``json.loads``
    silently keeps the last one.
    """
    newlines = [m.start() for m in re.finditer("\n", text)]

    def line_at(pos: int) -> int:
        return bisect.bisect_left(newlines, pos) + 1

    lines: dict[PathKey, int] = {}
    # A frame is [path, keys seen (object) or None (array), next array index].
    stack: list[list[Any]] = []

    def start_value(pos: int, path: PathKey) -> int:
        lines.setdefault(path, line_at(pos))
        char = text[pos]
        if char in "{[":
            stack.append([path, {} if char == "{" else None, 0])
            return pos + 1
        if char == '"':
            return scanstring(text, pos + 1)[1]
        for literal in _JSON_LITERALS:
            if text.startswith(literal, pos):
                return pos + len(literal)
        match = NUMBER_RE.match(text, pos)
        if match is None:  # json.loads accepted the text, so this cannot happen; fail loudly and clearly.
            raise SpecError(file, line_at(pos), None, "JSON syntax error: unexpected character")
        return match.end()

    pos = start_value(_JSON_WS.match(text, 0).end(), ())
    while stack:
        pos = _JSON_WS.match(text, pos).end()
        char = text[pos]
        if char == ",":
            pos += 1
            continue
        if char in "}]":
            stack.pop()
            pos += 1
            continue
        frame = stack[-1]
        path, keys = frame[0], frame[1]
        if keys is None:
            item_path = path + (frame[2],)
            frame[2] += 1
            pos = start_value(pos, item_path)
            continue
        key_line = line_at(pos)
        key, pos = scanstring(text, pos + 1)
        if key in keys:
            raise SpecError(
                file, key_line, format_path(path + (key,)), f"duplicate key {key!r} (first at line {keys[key]})"
            )
        keys[key] = key_line
        lines[path + (key,)] = key_line
        pos = _JSON_WS.match(text, pos).end() + 1  # the colon
        pos = start_value(_JSON_WS.match(text, pos).end(), path + (key,))
    return lines


# ---------------------------------------------------------------- TOML

_TOML_KEY_PART = r'(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|\'[^\']*\')'
_TOML_DOTTED = rf"{_TOML_KEY_PART}(?:\s*\.\s*{_TOML_KEY_PART})*"
_TOML_ARRAY_TABLE = re.compile(rf"^\s*\[\[\s*({_TOML_DOTTED})\s*\]\]")
_TOML_TABLE = re.compile(rf"^\s*\[\s*({_TOML_DOTTED})\s*\]")
_TOML_KEY = re.compile(rf"^\s*({_TOML_DOTTED})\s*=")
_TOML_PART = re.compile(_TOML_KEY_PART)
_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)|\s*\(at end of document\)")


def parse_toml(text: str, file: str) -> Document:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = _TOML_POSITION.search(message)
        line = int(match.group(1)) if match and match.group(1) else None
        if line is None and match:
            line = text.count("\n") + 1
        detail = _TOML_POSITION.sub("", message).strip()
        raise SpecError(file, line, None, f"TOML syntax error: {detail}") from None
    except RecursionError:
        raise SpecError(file, None, None, "TOML nesting too deep") from None
    except ValueError as exc:  # e.g. an integer beyond Python's digit limit
        raise SpecError(file, _line_of_huge_number(text), None, f"TOML value cannot be read: {exc}") from None
    return Document(data, _toml_lines(text))


def _toml_key(dotted: str) -> PathKey:
    parts = []
    for match in _TOML_PART.finditer(dotted):
        part = match.group(0)
        parts.append(part[1:-1] if part[0] in "\"'" else part)
    return tuple(parts)


def _toml_lines(text: str) -> dict[PathKey, int]:
    """Best effort: a key's line, or its table's; values inside inline tables fall back to their key."""
    lines: dict[PathKey, int] = {(): 1}
    array_lengths: dict[PathKey, int] = {}
    table: PathKey = ()
    in_multiline = False

    def resolve(names: PathKey, append: bool) -> PathKey:
        path: PathKey = ()
        for position, name in enumerate(names):
            path = path + (name,)
            last = position == len(names) - 1
            if last and append:
                array_lengths[path] = array_lengths.get(path, 0) + 1
            if path in array_lengths:
                path = path + (array_lengths[path] - 1,)
        return path

    for number, raw in enumerate(text.splitlines(), start=1):
        quotes = raw.count('"""') + raw.count("'''")
        if in_multiline:
            in_multiline = quotes % 2 == 0
            continue
        if quotes % 2 == 1:
            in_multiline = True
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _TOML_ARRAY_TABLE.match(raw)
        if match:
            table = resolve(_toml_key(match.group(1)), append=True)
            lines.setdefault(table[:-1], number)
            lines[table] = number
            continue
        match = _TOML_TABLE.match(raw)
        if match:
            table = resolve(_toml_key(match.group(1)), append=False)
            lines.setdefault(table, number)
            continue
        match = _TOML_KEY.match(raw)
        if match:
            key_path = table + _toml_key(match.group(1))
            for depth in range(len(table) + 1, len(key_path) + 1):
                lines.setdefault(key_path[:depth], number)
    return lines
