"""The check interface: one module per check kind registers a function ``(check, ctx) -> CheckResult``.

Modules in this package are discovered automatically (see ``verifier.checks.load_all``); a kind with no
registered checker yields ``unverified`` with the reason, never a crash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from verifier.index.repo import RepoIndex
from verifier.results import CheckResult
from verifier.spec.model import SAU, Spec

CheckFn = Callable[[Any, "Context"], CheckResult]
CHECKERS: dict[str, CheckFn] = {}

T = TypeVar("T")


def checker(kind: str) -> Callable[[CheckFn], CheckFn]:
    def register(fn: CheckFn) -> CheckFn:
        if kind in CHECKERS and CHECKERS[kind] is not fn:
            raise RuntimeError(f"two checkers registered for kind {kind!r}")
        CHECKERS[kind] = fn
        return fn

    return register


@dataclass
class Options:
    """Run-wide settings every check may read."""

    formula_timeout: float = 5.0  # seconds per formula decision, enforced in a killable worker
    max_call_depth: int = 6
    max_cfg_nodes: int = 5000


@dataclass
class Context:
    index: RepoIndex
    spec: Spec
    options: Options = field(default_factory=Options)
    sau: SAU | None = None  # the SAU whose check is running (for messages)
    _memo: dict[str, Any] = field(default_factory=dict)

    def memo(self, key: str, factory: Callable[[], T]) -> T:
        """Share an expensive analysis (value resolver, call graph, ...) across all checks of a run."""
        if key not in self._memo:
            self._memo[key] = factory()
        return self._memo[key]

    @property
    def pin(self) -> dict[str, Any]:
        return dict(self.spec.pin)

    @property
    def aliases(self) -> dict[str, list[str]]:
        return {k: list(v) for k, v in self.spec.aliases.items()}
