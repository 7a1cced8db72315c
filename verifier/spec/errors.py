"""Spec errors: one line naming file, line and field, because users fix specs from the terminal."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SpecIssue:
    """One problem in a spec; a SpecError carries all of them in file order."""

    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        text = f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        return " ".join(text.split())

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "field": self.field, "message": " ".join(self.message.split())}


class SpecError(Exception):
    """The spec cannot be used. ``str()`` is the first issue; ``errors`` lists every issue found."""

    def __init__(
        self,
        file: str,
        line: int | None,
        field: str | None,
        message: str,
        errors: list[SpecIssue] | None = None,
    ) -> None:
        first = SpecIssue(str(file), line, field, message)
        super().__init__(str(first))
        self.file = first.file
        self.line = line
        self.field = field
        self.message = message
        self.errors: list[SpecIssue] = list(errors) if errors else [first]

    @classmethod
    def from_issues(cls, issues: list[SpecIssue]) -> "SpecError":
        """Report the issue that comes first in the file; keep the rest for machine-readable output."""
        ordered = sorted(issues, key=_file_order)
        first = ordered[0]
        return cls(first.file, first.line, first.field, first.message, ordered)

    def __str__(self) -> str:
        return str(self.errors[0])

    def as_dict(self) -> dict[str, Any]:
        return {"error": str(self), "errors": [issue.as_dict() for issue in self.errors]}


def _file_order(issue: SpecIssue) -> tuple[int, int]:
    # Issues without a line come last; the sort is stable so equal lines keep validation order.
    return (0, issue.line) if issue.line is not None else (1, 0)
