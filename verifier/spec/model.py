"""The spec-v1 data model: what a user writes, typed.

Every check kind of the contract is a pydantic model with ``extra="forbid"`` so a typo in a field is a spec
error naming the field, not a silently ignored key. ``protocol`` checks keep their rule parameters as extra
fields because each rule declares its own (validated against the rule library by the protocol check).
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class Dimension(str, Enum):
    numerical = "numerical"
    methodological = "methodological"
    protocol = "protocol"
    ordering = "ordering"

    @property
    def code(self) -> str:
        return DIMENSION_CODES[self]

    @classmethod
    def parse(cls, value: Any) -> "Dimension":
        if isinstance(value, Dimension):
            return value
        text = str(value).strip()
        upper = text.upper()
        for dim, code in DIMENSION_CODES.items():
            if upper == code:
                return dim
        return cls(text.lower())


DIMENSION_CODES = {
    Dimension.numerical: "D1",
    Dimension.methodological: "D2",
    Dimension.protocol: "D3",
    Dimension.ordering: "D4",
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class _CheckBase(_Strict):
    scope: str | None = Field(
        default=None,
        alias="in",
        description="A file glob (`ppo/*.py`) or a qualified scope (`PPO.train`) narrowing where the check looks.",
    )


class ValueCheck(_CheckBase):
    kind: Literal["value"] = "value"
    name: str | None = Field(default=None, description="Canonical parameter name, expanded through the lexicon.")
    names: list[str] | None = Field(default=None, description="Several names for the same parameter.")
    expect: Any = Field(
        default=None,
        description="Expected value: number, string, bool or list (a list is one tuple-valued setting: betas, "
        "a shape).",
    )
    sweep: list[Any] | None = Field(
        default=None,
        min_length=1,
        description="Values the parameter is swept over, one per run (r in {8, 16, 32}): each must be found among "
        "the runs the repo launches. Give `sweep` or `expect`, not both.",
    )
    within: list[int | float] | None = Field(
        default=None,
        min_length=2,
        max_length=2,
        description="A closed interval [low, high] the effective value lies in: a setting the paper states as a "
        "range for one run (\"AR steps: 6-7\"), not a sweep.",
    )
    same_as: str | None = Field(
        default=None,
        description="Another parameter (lexicon-expanded) whose effective value this one equals, or that it is "
        "bound to (alpha = r).",
    )
    tolerance: float | None = Field(default=None, ge=0, description="Relative tolerance; default exact.")
    call: str | None = Field(default=None, description="Only the value that reaches this call.")
    arg: str | int | None = Field(default=None, description="Keyword name or position of the argument of `call`.")

    @model_validator(mode="after")
    def _needs_a_name(self) -> "ValueCheck":
        if not self.name and not self.names and not (self.call and self.arg is not None):
            raise ValueError("a value check needs `name`, `names`, or `call` with `arg`")
        # `expect: null` is a claim (the value is None), so "given" is whether the field was written.
        given = [f for f in ("expect", "sweep", "within", "same_as") if f in self.model_fields_set and (f == "expect" or getattr(self, f) is not None)]
        if len(given) != 1:
            raise ValueError(
                f"a value check needs exactly one of `expect` (the value), `sweep` (the values swept over, one per run), "
                f"`within` ([low, high]) and `same_as` (another parameter); it has {' and '.join(f'`{f}`' for f in given)}"
                if given
                else "a value check needs `expect` (the value), `sweep` (the values swept over, one per run), "
                "`within` ([low, high]) or `same_as` (another parameter)"
            )
        if self.within is not None and not self.within[0] <= self.within[1]:
            raise ValueError(f"`within` needs [low, high] with low <= high, got {self.within}")
        if self.call and given[0] != "expect":
            raise ValueError(f"`{given[0]}` applies to a parameter's `name`/`names`, not to `call` with `arg`: use `expect`")
        return self

    def expected(self) -> Any:
        """The claimed value, the swept values as a list, the interval, or the other parameter's name (for reports
        and precision counts)."""
        if self.sweep is not None:
            return list(self.sweep)
        if self.within is not None:
            return list(self.within)
        if self.same_as is not None:
            return self.same_as
        return self.expect

    def all_names(self) -> list[str]:
        out: list[str] = []
        if self.name:
            out.append(self.name)
        out.extend(self.names or [])
        if not out and self.arg is not None and isinstance(self.arg, str):
            out.append(self.arg)
        return out


class CountRange(_Strict):
    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)


class CallCheck(_CheckBase):
    kind: Literal["call"] = "call"
    target: str = Field(description="Import-resolved qualified name or suffix, e.g. torch.optim.AdamW.")
    args: dict[str, Any] = Field(default_factory=dict)
    count: CountRange | None = None


class ExistsCheck(_CheckBase):
    kind: Literal["exists"] = "exists"
    symbol: str
    reachable: bool = False


InitScheme = Literal[
    "zeros",
    "ones",
    "constant",
    "normal",
    "trunc_normal",
    "uniform",
    "kaiming_uniform",
    "kaiming_normal",
    "xavier_uniform",
    "xavier_normal",
    "orthogonal",
    "identity",
]


class InitCheck(_CheckBase):
    kind: Literal["init"] = "init"
    name: str
    expect: InitScheme
    args: dict[str, Any] = Field(default_factory=dict)


class FormulaCheck(_CheckBase):
    kind: Literal["formula"] = "formula"
    expect: str | None = Field(default=None, description="The formula in SymPy syntax.")
    latex: str | None = Field(default=None, description="The formula as the paper writes it in LaTeX.")
    symbols: dict[str, str] = Field(default_factory=dict)
    functions: list[str] = Field(default_factory=list)
    matrices: list[str] = Field(
        default_factory=list,
        description="Paper symbols that are matrices, e.g. [B, R, A]: products of them are ordered matrix products "
        "(by default capitals written side by side and transposed symbols are).",
    )
    assume: dict[str, Literal["positive", "pos", "nonnegative", "standard_normal"]] = Field(default_factory=dict)
    pin: dict[str, Any] = Field(default_factory=dict)
    sign: Literal["exact", "either"] = "exact"
    reduction: Literal["strip", "keep"] = "strip"
    integral: list[str] = Field(
        default_factory=list,
        description="The differentials of the integrals the formula's means stand for, e.g. [dx] or [dt dx, dx]: "
        "a sum times the cell size (dx, dt, h, L/N) or a trapz/simpson call is then the same measure, one measure "
        "per differential.",
    )
    paths: Literal["any", "all"] = "any"

    @model_validator(mode="after")
    def _needs_a_formula(self) -> "FormulaCheck":
        if not self.expect and not self.latex:
            raise ValueError("a formula check needs `expect` (SymPy syntax) or `latex`")
        return self


class OrderCheck(_CheckBase):
    kind: Literal["order"] = "order"
    steps: list[str] = Field(min_length=2)
    relation: Literal["before", "per-iteration", "phases"] = "before"


class ProtocolCheck(_CheckBase):
    """Rule parameters (expect, name, tolerance, ...) are extra fields, validated by the rule library."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)
    kind: Literal["protocol"] = "protocol"
    rule: str

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class PatternCheck(_CheckBase):
    kind: Literal["pattern"] = "pattern"
    require: list[str] | str | None = None
    forbid: list[str] | str | None = None
    inside: str | None = None
    where: list[str] | str | None = None

    @model_validator(mode="after")
    def _needs_a_pattern(self) -> "PatternCheck":
        if not self.require and not self.forbid:
            raise ValueError("a pattern check needs `require` or `forbid`")
        return self


class JudgeCheck(_CheckBase):
    kind: Literal["judge"] = "judge"
    hints: list[str] = Field(default_factory=list)


Check = Annotated[
    Union[
        ValueCheck,
        CallCheck,
        ExistsCheck,
        InitCheck,
        FormulaCheck,
        OrderCheck,
        ProtocolCheck,
        PatternCheck,
        JudgeCheck,
    ],
    Field(discriminator="kind"),
]

CHECK_KINDS = ("value", "call", "exists", "init", "formula", "order", "protocol", "pattern", "judge")


class Deviation(_Strict):
    accepted: bool = False
    reason: str = ""


class SAU(_Strict):
    id: str = Field(min_length=1)
    dimension: Dimension
    claim: str = ""
    source: str | None = None
    weight: float = Field(default=1.0, ge=0, allow_inf_nan=False)
    check: Check | None = None
    checks: list[Check] | None = None
    deviation: Deviation | None = None

    @field_validator("dimension", mode="before")
    @classmethod
    def _dimension(cls, value: Any) -> Dimension:
        try:
            return Dimension.parse(value)
        except ValueError:
            raise ValueError(
                f"unknown dimension {value!r}: use numerical, methodological, protocol, ordering or D1-D4"
            ) from None

    @model_validator(mode="after")
    def _one_way(self) -> "SAU":
        if self.check is not None and self.checks:
            raise ValueError("give either `check` or `checks`, not both")
        return self

    def all_checks(self) -> list[Check]:
        if self.check is not None:
            return [self.check]
        return list(self.checks or [])


class Paper(_Strict):
    id: str = "unknown"
    title: str | None = None
    url: str | None = None


class RepoScope(_Strict):
    include: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)


class Spec(_Strict):
    version: Literal[1] = 1
    paper: Paper = Field(default_factory=Paper)
    repo: RepoScope = Field(default_factory=RepoScope)
    pin: dict[str, Any] = Field(default_factory=dict)
    aliases: dict[str, list[str]] = Field(default_factory=dict)
    saus: list[SAU] = Field(default_factory=list)


class LoadedSpec(BaseModel):
    """A validated spec plus where it came from (shape and file), for messages and the lock file."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)
    spec: Spec
    path: str
    shape: Literal["native", "sabench", "paperbench"]
