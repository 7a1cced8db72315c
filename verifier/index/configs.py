"""YAML/JSON/TOML config files: every scalar leaf becomes a ``config`` binding with its line.

Binding.name is the leaf key, Binding.path the dotted key path (``optim.lr``; list items ``key.0``); a list
of scalars is one binding whose value is a tuple. YAML is only *composed* (node graph with marks), never
constructed, so tags such as ``!!python/object/apply`` cannot run anything; plain scalars are typed by the
YAML 1.1 core resolver (``3e-4`` without a dot stays the string ``"3e-4"``; value resolution normalises it).
Hydra ``defaults:`` lists and ``${...}`` interpolations stay strings.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator

import yaml

from verifier.index.facts import Binding, BindingKind, FileFacts, Note, Span

try:  # the libyaml composer is ~10x faster; both are safe (no construction happens here)
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

MAX_LEAVES = 20_000
MAX_DEPTH = 64
SPEC_FILES = frozenset({"sau.yaml", "sau.yml", "sau.json", "sau.toml", "sau.lock.json"})
NOT_CONFIG = frozenset(
    {"package.json", "package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock", "composer.json",
     "composer.lock", "Pipfile.lock", "poetry.lock", "tsconfig.json", "jsconfig.json", ".eslintrc.json",
     "renovate.json", "lerna.json", "bower.json", "manifest.json"}
)
_SCALAR_TYPES = {
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
}


def is_config_name(name: str) -> bool:
    """Is a file with this basename a repo config (not a lock file, manifest or sau spec)?"""
    if name in SPEC_FILES or name in NOT_CONFIG:
        return False
    return not name.endswith((".lock.json", "-lock.json", "-lock.yaml", ".lock.yaml"))


class _Leaves:
    """Collects bindings with a cap, so a 1 MB data file cannot flood the index."""

    def __init__(self, path: str):
        self.path = path
        self.out: list[Binding] = []
        self.truncated = False

    def add(self, key: str, dotted: str, expr: str, value: object, line: int, end_line: int) -> None:
        if len(self.out) >= MAX_LEAVES:
            self.truncated = True
            return
        name = key.replace("-", "_")
        self.out.append(
            Binding(name, dotted, BindingKind.config, expr, value, True, "<config>",
                    Span(self.path, line, max(end_line, line)))
        )

    @property
    def full(self) -> bool:
        return len(self.out) >= MAX_LEAVES


def extract(path: str, text: str, facts: FileFacts, language: str) -> FileFacts:
    leaves = _Leaves(path)
    if language == "yaml":
        facts.parse_error = _yaml(text, leaves)
    elif language == "json":
        facts.parse_error = _json(text, leaves)
    elif language == "toml":
        facts.parse_error = _toml(text, leaves)
    if facts.parse_error is not None:
        facts.parse_error = Note(path, facts.parse_error.reason, facts.parse_error.line)
    elif leaves.truncated or leaves.full:
        facts.parse_error = Note(path, f"more than {MAX_LEAVES} config keys: only the first ones indexed")
    facts.bindings = sorted(leaves.out, key=lambda b: (b.span.line, b.path))
    return facts


# ----- YAML -------------------------------------------------------------------------------------------------
def _yaml(text: str, leaves: _Leaves) -> Note | None:
    try:
        for doc in yaml.compose_all(text, Loader=_Loader):
            if doc is not None:
                _yaml_node(doc, "", "", leaves, 0, set())
            if leaves.full:
                break
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return Note(leaves.path, f"YAML error: {problem}", mark.line + 1 if mark else None)
    except (RecursionError, MemoryError, ValueError, TypeError):
        return Note(leaves.path, "YAML too deeply nested or malformed")
    return None


def _end_line(node: yaml.Node) -> int:
    start, end = node.start_mark, node.end_mark
    if end.line > start.line and end.column == 0:
        return end.line  # block scalars end at the start of the next line
    return end.line + 1


def _yaml_node(node: yaml.Node, key: str, dotted: str, leaves: _Leaves, depth: int, active: set[int]) -> None:
    if depth > MAX_DEPTH or id(node) in active or leaves.full:
        return  # recursion through aliases, or absurd nesting
    active.add(id(node))
    try:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if not isinstance(k, yaml.ScalarNode) or k.value in ("<<",):
                    if k.value == "<<" and isinstance(v, yaml.MappingNode):
                        _yaml_node(v, key, dotted, leaves, depth + 1, active)  # merge key: fields inline
                    continue
                child = f"{dotted}.{k.value}" if dotted else str(k.value)
                if isinstance(v, yaml.ScalarNode):
                    leaves.add(str(k.value), child, v.value, _yaml_scalar(v), k.start_mark.line + 1, _end_line(v))
                else:
                    _yaml_node(v, str(k.value), child, leaves, depth + 1, active)
        elif isinstance(node, yaml.SequenceNode):
            items = node.value
            if key and items and all(isinstance(i, yaml.ScalarNode) for i in items):
                value = tuple(_yaml_scalar(i) for i in items)
                expr = "[" + ", ".join(i.value for i in items) + "]"
                leaves.add(key, dotted, expr, value, node.start_mark.line + 1, _end_line(node))
                return
            for i, item in enumerate(items):
                child = f"{dotted}.{i}" if dotted else str(i)
                if isinstance(item, yaml.ScalarNode):
                    if key:
                        leaves.add(key, child, item.value, _yaml_scalar(item), item.start_mark.line + 1,
                                   _end_line(item))
                else:
                    _yaml_node(item, key, child, leaves, depth + 1, active)
        elif isinstance(node, yaml.ScalarNode) and key:
            leaves.add(key, dotted, node.value, _yaml_scalar(node), node.start_mark.line + 1, _end_line(node))
    finally:
        active.discard(id(node))


def _yaml_scalar(node: yaml.ScalarNode) -> object:
    """Type a plain scalar like safe_load would (int, float, bool, None); everything else stays a string."""
    if not node.style and node.tag in _SCALAR_TYPES:  # plain style is None (Python) or "" (libyaml)
        text = node.value
        tag = node.tag
        if tag.endswith(":null"):
            return None
        if tag.endswith(":bool"):
            return text.lower() in ("yes", "true", "on", "y")
        try:
            if tag.endswith(":int"):
                return _yaml_int(text)
            return _yaml_float(text)
        except ValueError:
            return text
    return node.value


def _yaml_int(text: str) -> int:
    t = text.replace("_", "")
    sign = -1 if t.startswith("-") else 1
    t = t.lstrip("+-")
    if t.startswith("0b"):
        return sign * int(t[2:], 2)
    if t.startswith("0x"):
        return sign * int(t[2:], 16)
    if t.startswith("0") and len(t) > 1 and ":" not in t:
        return sign * int(t, 8)
    if ":" in t:
        total = 0
        for part in t.split(":"):
            total = total * 60 + int(part)
        return sign * total
    return sign * int(t)


def _yaml_float(text: str) -> float:
    t = text.replace("_", "").lower()
    if t in (".inf", "+.inf"):
        return float("inf")
    if t == "-.inf":
        return float("-inf")
    if t == ".nan":
        return float("nan")
    return float(t)


# ----- JSON -------------------------------------------------------------------------------------------------
_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_LITERALS = (("true", True), ("false", False), ("null", None), ("NaN", float("nan")),
             ("Infinity", float("inf")), ("-Infinity", float("-inf")))


class _JsonError(Exception):
    def __init__(self, message: str, pos: int):
        super().__init__(message)
        self.pos = pos


class _JsonScanner:
    """A small JSON reader that keeps the position of every value (the stdlib one does not expose them)."""

    def __init__(self, text: str, leaves: _Leaves):
        self.text = text
        self.leaves = leaves
        self.newlines = [m.start() for m in re.finditer("\n", text)]

    def line(self, pos: int) -> int:
        return bisect.bisect_right(self.newlines, pos - 1) + 1 if pos > 0 else 1

    def ws(self, pos: int) -> int:
        return _WS.match(self.text, pos).end()  # type: ignore[union-attr]

    def value(self, pos: int, key: str, dotted: str, key_pos: int, depth: int) -> int:
        """Parse the value at ``pos`` (whitespace skipped), emit leaves, return the position after it."""
        text = self.text
        if depth > MAX_DEPTH:
            raise _JsonError("nested too deeply", pos)
        if pos >= len(text):
            raise _JsonError("unexpected end of input", pos)
        ch = text[pos]
        if ch == "{":
            return self.obj(pos, dotted, depth)
        if ch == "[":
            return self.array(pos, key, dotted, key_pos, depth)
        end, value, expr = self.scalar(pos)
        if key and not self.leaves.full:
            self.leaves.add(key, dotted, expr, value, self.line(key_pos), self.line(end - 1))
        return end

    def scalar(self, pos: int) -> tuple[int, object, str]:
        text = self.text
        if text[pos] == '"':
            m = _STRING.match(text, pos)
            if not m:
                raise _JsonError("bad string", pos)
            return m.end(), json.loads(m.group()), m.group()[1:-1]
        m = _NUMBER.match(text, pos)
        if m and m.end() > pos:
            raw = m.group()
            value: object = float(raw) if any(c in raw for c in ".eE") else int(raw)
            return m.end(), value, raw
        for word, value in _LITERALS:
            if text.startswith(word, pos):
                return pos + len(word), value, word
        raise _JsonError(f"unexpected character {text[pos]!r}", pos)

    def obj(self, pos: int, dotted: str, depth: int) -> int:
        text = self.text
        pos = self.ws(pos + 1)
        if pos < len(text) and text[pos] == "}":
            return pos + 1
        while True:
            m = _STRING.match(text, pos)
            if not m:
                raise _JsonError("expected a string key", pos)
            key = json.loads(m.group())
            key_pos = pos
            pos = self.ws(m.end())
            if pos >= len(text) or text[pos] != ":":
                raise _JsonError("expected ':'", pos)
            pos = self.ws(pos + 1)
            child = f"{dotted}.{key}" if dotted else key
            pos = self.ws(self.value(pos, key, child, key_pos, depth + 1))
            if pos < len(text) and text[pos] == ",":
                pos = self.ws(pos + 1)
                continue
            if pos < len(text) and text[pos] == "}":
                return pos + 1
            raise _JsonError("expected ',' or '}'", pos)

    def array(self, pos: int, key: str, dotted: str, key_pos: int, depth: int) -> int:
        text = self.text
        start = pos
        pos = self.ws(pos + 1)
        items: list[tuple[int, int, object, str]] = []  # scalar items: (start, end, value, text)
        nested = False
        index = 0
        if pos < len(text) and text[pos] == "]":
            return pos + 1
        while True:
            child = f"{dotted}.{index}" if dotted else str(index)
            if pos < len(text) and text[pos] in "{[":
                nested = True
                pos = self.value(pos, key, child, pos, depth + 1)
            else:
                if pos >= len(text):
                    raise _JsonError("unexpected end of input", pos)
                end, value, expr = self.scalar(pos)
                items.append((pos, end, value, expr))
                pos = end
            index += 1
            pos = self.ws(pos)
            if pos < len(text) and text[pos] == ",":
                pos = self.ws(pos + 1)
                continue
            if pos < len(text) and text[pos] == "]":
                pos += 1
                break
            raise _JsonError("expected ',' or ']'", pos)
        if key and not self.leaves.full:
            if not nested and items:
                expr = "[" + ", ".join(i[3] for i in items) + "]"
                self.leaves.add(key, dotted, expr, tuple(i[2] for i in items), self.line(key_pos), self.line(pos - 1))
            else:
                for i, (s, e, value, expr) in enumerate(items):
                    del i
                    self.leaves.add(key, f"{dotted}.{self._index_of(s, start)}", expr, value, self.line(s),
                                    self.line(e - 1))
        return pos

    def _index_of(self, item_pos: int, array_start: int) -> int:
        """Index of a scalar item inside a mixed array, counted by top-level commas before it."""
        depth, index, in_string, escaped = 0, 0, False, False
        for ch in self.text[array_start + 1 : item_pos]:
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch in "[{":
                depth += 1
            elif ch in "]}":
                depth -= 1
            elif ch == "," and depth == 0:
                index += 1
        return index


def _json(text: str, leaves: _Leaves) -> Note | None:
    scanner = _JsonScanner(text, leaves)
    try:
        pos = scanner.ws(0)
        if pos >= len(text):
            return None
        pos = scanner.ws(scanner.value(pos, "", "", pos, 0))
        if pos < len(text):
            raise _JsonError("extra data after the document", pos)
    except _JsonError as exc:
        return Note(leaves.path, f"JSON error: {exc}", scanner.line(exc.pos))
    except (RecursionError, ValueError):
        return Note(leaves.path, "JSON too deeply nested or malformed")
    return None


# ----- TOML -------------------------------------------------------------------------------------------------
_TOML_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?")
_TOML_KEY = re.compile(r'^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|\'[^\']*\')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|\'[^\']*\'))*)\s*=')


def _toml_key_parts(raw: str) -> list[str]:
    parts = re.findall(r'"([^"]*)"|\'([^\']*)\'|([A-Za-z0-9_-]+)', raw)
    return [a or b or c for a, b, c in parts]


def _toml_lines(text: str) -> dict[str, int]:
    """Dotted key path -> line, by scanning table headers and ``key =`` lines (tomllib keeps no positions)."""
    where: dict[str, int] = {}
    table: list[str] = []
    array_counts: dict[str, int] = {}
    in_multiline: str | None = None
    for i, line in enumerate(text.splitlines(), 1):
        if in_multiline:
            if in_multiline in line:
                in_multiline = None
            continue
        m = _TOML_HEADER.match(line)
        if m:
            parts = _toml_key_parts(m.group(2))
            if m.group(1) == "[[":
                base = ".".join(parts)
                n = array_counts.get(base, -1) + 1
                array_counts[base] = n
                parts = [*parts, str(n)]
            table = parts
            where.setdefault(".".join(table), i)
            continue
        m = _TOML_KEY.match(line)
        if m:
            dotted = ".".join([*table, *_toml_key_parts(m.group(1))])
            where.setdefault(dotted, i)
            rest = line[m.end():]
            for quote in ('"""', "'''"):
                if rest.count(quote) == 1:
                    in_multiline = quote
    return where


def _toml(text: str, leaves: _Leaves) -> Note | None:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        return Note(leaves.path, f"TOML error: {str(exc).split(' (at')[0]}", int(m.group(1)) if m else None)
    except (RecursionError, ValueError, TypeError):
        return Note(leaves.path, "TOML malformed")
    where = _toml_lines(text)
    for key, dotted, value in _toml_leaves(data, "", "", 0):
        line = _toml_line_for(dotted, where)
        expr = value if isinstance(value, str) else json.dumps(_plain(value), default=str)
        leaves.add(key, dotted, expr, value, line, line)
        if leaves.full:
            break
    return None


def _plain(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


def _toml_line_for(dotted: str, where: dict[str, int]) -> int:
    probe = dotted
    while probe:
        if probe in where:
            return where[probe]
        probe = probe.rpartition(".")[0]
    return 1


def _toml_leaves(data: object, key: str, dotted: str, depth: int) -> Iterator[tuple[str, str, object]]:
    if depth > MAX_DEPTH:
        return
    if isinstance(data, dict):
        for k in data:
            child = f"{dotted}.{k}" if dotted else str(k)
            yield from _toml_leaves(data[k], str(k), child, depth + 1)
    elif isinstance(data, list):
        if key and data and not any(isinstance(x, (dict, list)) for x in data):
            yield key, dotted, tuple(_toml_scalar(x) for x in data)
            return
        for i, item in enumerate(data):
            yield from _toml_leaves(item, key, f"{dotted}.{i}", depth + 1)
    elif key:
        yield key, dotted, _toml_scalar(data)


def _toml_scalar(value: object) -> object:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)  # dates and times
