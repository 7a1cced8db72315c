"""Fuzzing: whatever the bytes, the loader returns a LoadedSpec or raises a one-line SpecError, quickly."""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_spec_load import CONTRACT_EXAMPLE, EVERY_KIND
from verifier.spec.errors import SpecError
from verifier.spec.load import load_spec
from verifier.spec.model import LoadedSpec

SECONDS_PER_LOAD = 2.0
FUZZ = settings(
    max_examples=int(os.environ.get("SAU_FUZZ_EXAMPLES", "150")),  # raise it for a long fuzzing session
    deadline=None,  # timed explicitly below, so a slow CI machine's first call does not flake
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
WORDS = [
    "version", "paper", "repo", "pin", "aliases", "saus", "id", "dimension", "claim", "source", "weight",
    "check", "checks", "kind", "name", "names", "expect", "tolerance", "call", "arg", "target", "args", "count",
    "min", "max", "symbol", "reachable", "steps", "relation", "rule", "require", "forbid", "in", "hints",
    "value", "init", "formula", "order", "protocol", "pattern", "judge", "exists", "D1", "D2", "D3", "D4",
    "numerical", "paper_id", "claims", "requirements", "sub_tasks", "task_category", "Code Development",
    "claim_id", "text", "type", "include", "exclude", "deviation", "latex", "symbols",
]


def outcome(path: Path) -> LoadedSpec | SpecError:
    started = time.process_time()  # CPU time: other processes on a busy machine do not count
    try:
        result: LoadedSpec | SpecError = load_spec(path)
    except SpecError as error:
        result = error
    elapsed = time.process_time() - started
    assert elapsed < SECONDS_PER_LOAD, f"load took {elapsed:.2f}s of CPU"
    if isinstance(result, SpecError):
        text = str(result)
        assert "\n" not in text and text.startswith(str(path))
        assert result.errors and all(e.file == str(path) for e in result.errors)
        assert result.line is None or result.line >= 1
        json.dumps(result.as_dict())
    else:
        assert result.shape in ("native", "sabench", "paperbench")
        json.dumps(result.spec.model_dump(mode="json", by_alias=True), allow_nan=True)
    return result


def load_text(suffix: str, content: str | bytes) -> LoadedSpec | SpecError:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"sau{suffix}"
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", errors="surrogatepass")
        return outcome(path)


SUFFIXES = st.sampled_from([".yaml", ".json", ".toml", ""])
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(WORDS),
    st.text(max_size=12),
)
keys = st.one_of(st.sampled_from(WORDS), st.text(max_size=8))
structures = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(keys, inner, max_size=6)),
    max_leaves=40,
)
spec_like = st.fixed_dictionaries(
    {},
    optional={
        "version": st.one_of(st.just(1), scalars),
        "saus": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "id": st.one_of(st.sampled_from(["a", "b", "c"]), scalars),
                    "dimension": st.one_of(st.sampled_from(["D1", "D2", "numerical", "D7"]), scalars),
                    "claim": scalars,
                    "check": st.one_of(
                        structures,
                        st.fixed_dictionaries({"kind": st.sampled_from(WORDS[24:45])}, optional={"name": scalars, "expect": structures}),
                    ),
                    "checks": st.lists(structures, max_size=3),
                    "weight": scalars,
                },
            ),
            max_size=4,
        ),
        "paper_id": scalars,
        "D1": st.one_of(structures, st.lists(st.dictionaries(keys, scalars, max_size=4), max_size=3)),
        "sub_tasks": st.lists(structures, max_size=3),
        "requirements": structures,
        "id": scalars,
        "pin": structures,
        "aliases": structures,
    },
)


def to_toml(data: Any) -> str:
    """A small TOML writer for fuzzing: inline tables and arrays; values TOML cannot hold become strings."""

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, float):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v if x is not None) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{json.dumps(str(k))} = {value(x)}" for k, x in v.items() if x is not None) + "}"
        return json.dumps(str(v))

    if not isinstance(data, dict):
        return f"value = {value(data)}\n"
    return "".join(f"{json.dumps(str(k))} = {value(v)}\n" for k, v in data.items() if v is not None)


@FUZZ
@given(SUFFIXES, st.binary(max_size=400))
def test_random_bytes(suffix: str, content: bytes) -> None:
    load_text(suffix, content)


@FUZZ
@given(st.one_of(structures, spec_like), st.sampled_from(["yaml", "json", "toml"]))
def test_random_structures(data: Any, fmt: str) -> None:
    if fmt == "yaml":
        load_text(".yaml", yaml.safe_dump(data, allow_unicode=True))
    elif fmt == "json":
        load_text(".json", json.dumps(data))
    else:
        load_text(".toml", to_toml(data))


@FUZZ
@given(
    st.sampled_from([CONTRACT_EXAMPLE, EVERY_KIND]),
    st.lists(
        st.tuples(st.sampled_from(["delete", "insert", "duplicate", "swap"]), st.integers(0, 10**6), st.text(max_size=6)),
        min_size=1,
        max_size=4,
    ),
)
def test_mutated_valid_specs(base: str, mutations: list[tuple[str, int, str]]) -> None:
    lines = base.splitlines(keepends=True)
    for op, where, text in mutations:
        index = where % len(lines)
        if op == "delete":
            line = lines[index]
            cut = where % (len(line) + 1)
            lines[index] = line[:cut] + line[cut + len(text) + 1 :]
        elif op == "insert":
            line = lines[index]
            cut = where % (len(line) + 1)
            lines[index] = line[:cut] + text + line[cut:]
        elif op == "duplicate":
            lines.insert(index, lines[index])
        else:
            other = (where // 7) % len(lines)
            lines[index], lines[other] = lines[other], lines[index]
    load_text(".yaml", "".join(lines))


@FUZZ
@given(st.sampled_from([CONTRACT_EXAMPLE, EVERY_KIND]), st.lists(st.tuples(st.integers(0, 10**6), structures), max_size=3))
def test_mutated_valid_spec_values(base: str, replacements: list[tuple[int, Any]]) -> None:
    data = yaml.safe_load(base)
    for where, new in replacements:
        targets = list(_containers(data))
        container, key = targets[where % len(targets)]
        container[key] = new
    load_text(".json", json.dumps(data))
    load_text(".yaml", yaml.safe_dump(data))


def _containers(data: Any):
    if isinstance(data, dict):
        for key, value in data.items():
            yield data, key
            yield from _containers(value)
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield data, index
            yield from _containers(value)


def test_unmutated_bases_load() -> None:
    assert isinstance(load_text(".yaml", CONTRACT_EXAMPLE), LoadedSpec)
    assert isinstance(load_text(".yaml", EVERY_KIND), LoadedSpec)
