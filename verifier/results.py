"""Verdict types shared by checks, scoring and reports.

Plain frozen dataclasses so results pickle cheaply across worker processes and serialise deterministically.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from verifier.index.facts import Note


class Status(str, Enum):
    pass_ = "pass"
    partial = "partial"
    mismatch = "mismatch"
    stub = "stub"
    missing = "missing"
    judged = "judged"
    unverified = "unverified"
    error = "error"

    def __str__(self) -> str:  # pragma: no cover - convenience
        return self.value


# Worst first: a SAU with several checks takes the worst status among them.
STATUS_SEVERITY = {
    Status.error: 7,
    Status.missing: 6,
    Status.stub: 5,
    Status.mismatch: 4,
    Status.unverified: 3,
    Status.partial: 2,
    Status.judged: 1,
    Status.pass_: 0,
}

STATUS_ORDER = ["pass", "partial", "mismatch", "stub", "missing", "judged", "unverified", "error"]

# The five SA-Bench levels.
LEVELS = (1.0, 0.75, 0.5, 0.25, 0.0)


@dataclass(frozen=True, slots=True)
class Evidence:
    """A place in the repo that supports a verdict.

    role: effective (the binding that wins), overridden (a binding it overrides), call, definition, stub,
    missing-near (closest thing found), comment, dead, test, step (order), expression (formula), rule (protocol),
    entry (the function a run starts in, where a value no run uses is cut off).
    """

    file: str
    line: int
    end_line: int
    snippet: str = ""
    role: str = "evidence"
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "file": self.file,
            "lines": [self.line, self.end_line],
            "snippet": self.snippet,
            "role": self.role,
        }
        if self.note:
            out["note"] = self.note
        return out

    def sort_key(self) -> tuple:
        # The whole record: two checks citing one line with different notes must not race for the slot.
        return (self.file, self.line, self.end_line, self.role, self.snippet, self.note)


@dataclass(frozen=True, slots=True)
class CheckResult:
    """What one check of one SAU decided.

    ``score`` is None exactly when the status carries no score (unverified, error).
    ``details`` holds what `explain` shows (resolution chains, translated formulas, graph edges); it must be
    JSON-serialisable and deterministic.
    """

    status: Status
    score: float | None
    message: str
    kind: str
    evidence: tuple[Evidence, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    deterministic: bool = True

    @classmethod
    def passed(cls, kind: str, message: str, evidence=(), **details: Any) -> "CheckResult":
        return cls(Status.pass_, 1.0, message, kind, tuple(evidence), dict(details))

    @classmethod
    def partial(cls, kind: str, score: float, message: str, evidence=(), **details: Any) -> "CheckResult":
        return cls(Status.partial, score, message, kind, tuple(evidence), dict(details))

    @classmethod
    def failed(cls, kind: str, status: Status, message: str, evidence=(), **details: Any) -> "CheckResult":
        """mismatch / stub / missing: score 0."""
        return cls(status, 0.0, message, kind, tuple(evidence), dict(details))

    @classmethod
    def unverified(cls, kind: str, message: str, evidence=(), **details: Any) -> "CheckResult":
        return cls(Status.unverified, None, message, kind, tuple(evidence), dict(details))

    @classmethod
    def errored(cls, kind: str, message: str, **details: Any) -> "CheckResult":
        return cls(Status.error, None, message, kind, (), dict(details))


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of one SAU: its checks combined (score = mean, status = worst)."""

    id: str
    dimension: str
    status: Status
    score: float | None
    message: str
    check: str
    deterministic: bool
    evidence: tuple[Evidence, ...]
    checks: tuple[CheckResult, ...]
    weight: float = 1.0
    claim: str = ""
    accepted_deviation: str | None = None
    judge: dict[str, Any] | None = None


@dataclass
class Report:
    """A whole run: every SAU's verdict, the paper scores, and the files the index skipped."""

    repo: str
    spec_path: str
    spec_shape: str
    paper: dict[str, Any]
    verdicts: list[Verdict]
    scores: dict[str, Any]
    notes: list[Note] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)  # judge usage, compile coverage, ...
