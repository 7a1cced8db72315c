"""Run a rule on in-memory sources: the rules' own valid/invalid examples (Fixit/semgrep style) and tests.

An example is ``{code: ..., files: {path: text}, params: {...}, status, score}``; ``code`` becomes
``train.py``. A ``# ruleid: <rule>`` / ``# ok: <rule>`` comment marks the line after it as the place the
verdict's evidence must point to.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from verifier.index import python_facts
from verifier.index.discover import LANGUAGE_BY_SUFFIX
from verifier.index.facts import FileFacts, FileRole, Language
from verifier.index.repo import RepoIndex
from verifier.results import CheckResult
from verifier.spec.model import Spec

_ANNOTATION = re.compile(r"#\s*(ruleid|ok)\s*:\s*([\w-]+)")


def index_from_sources(files: dict[str, str], root: str = "/nonexistent") -> RepoIndex:
    """A RepoIndex over in-memory files, with the same Python facts the real index extracts."""
    facts: dict[str, FileFacts] = {}
    for path in sorted(files):
        text = files[path]
        suffix = PurePosixPath(path).suffix
        language = LANGUAGE_BY_SUFFIX.get(suffix, Language.other)
        parts = PurePosixPath(path).parts
        name = PurePosixPath(path).name
        role = FileRole.test if (parts[0] == "tests" or name.startswith("test_")) and suffix == ".py" else FileRole.code
        facts[path] = FileFacts(
            path=path,
            sha=hashlib.sha1(text.encode()).hexdigest(),
            language=language,
            role=role,
            lines=text.count("\n") + 1,
            has_main_block="__name__" in text and "__main__" in text,
        )
        if language == Language.python:
            python_facts.extract(path, text, facts[path])
    from pathlib import Path

    return RepoIndex(Path(root), facts, source_loader=lambda p: files[p])


@dataclass
class ExampleContext:
    """What a rule reads from a check Context (kept here: analysis must not import the checks layer)."""

    index: RepoIndex
    spec: Spec = field(default_factory=Spec)
    options: Any = None
    sau: Any = None
    _memo: dict[str, Any] = field(default_factory=dict)

    def memo(self, key: str, factory):
        if key not in self._memo:
            self._memo[key] = factory()
        return self._memo[key]


def context_for(files: dict[str, str]) -> ExampleContext:
    return ExampleContext(index_from_sources(files))


@dataclass(frozen=True)
class Target:
    file: str
    line: int  # the line after the annotation
    kind: str  # ruleid | ok


def annotations(files: dict[str, str], rule: str) -> list[Target]:
    out = []
    for path in sorted(files):
        for i, text in enumerate(files[path].splitlines(), 1):
            m = _ANNOTATION.search(text)
            if m and m.group(2) == rule:
                out.append(Target(path, i + 1, m.group(1)))
    return out


def example_files(example: dict[str, Any]) -> dict[str, str]:
    files = dict(example.get("files") or {})
    if example.get("code"):
        files.setdefault("train.py", example["code"])
    return files


def run_example(rule: str, example: dict[str, Any]) -> tuple[CheckResult, dict[str, str]]:
    from verifier.analysis.protocol import implementation, load_rule, with_defaults

    files = example_files(example)
    ctx = context_for(files)
    params = with_defaults(rule, dict(example.get("params") or {}))
    result = implementation(rule)(params, ctx, example.get("in"), load_rule(rule) or {})
    return result, files


def example_problems(rule: str, example: dict[str, Any], valid: bool) -> list[str]:
    """Why an example's verdict differs from what its annotations and fields promise (empty: it holds)."""
    result, files = run_example(rule, example)
    problems = []
    want_status = example.get("status", "pass" if valid else None)
    if valid and result.status.value != "pass":
        problems.append(f"valid example gave {result.status.value}: {result.message}")
    if not valid and result.status.value == "pass":
        problems.append(f"invalid example passed: {result.message}")
    if want_status and result.status.value != want_status:
        problems.append(f"status {result.status.value} != {want_status}: {result.message}")
    if "score" in example and result.score != example["score"]:
        problems.append(f"score {result.score} != {example['score']}: {result.message}")
    for target in annotations(files, rule):
        if not any(e.file == target.file and e.line <= target.line <= e.end_line for e in result.evidence):
            have = ", ".join(f"{e.file}:{e.line}-{e.end_line}" for e in result.evidence) or "none"
            problems.append(f"no evidence at {target.file}:{target.line} ({target.kind}); have {have}")
    return problems
