"""Value resolution: which value does a hyperparameter effectively take, and where does it come from?

A claim names a parameter ("clip_range"); the repo may bind it under other names (``clip_coef``), in several
places, and override one with another. The resolver expands the name through ``rules/lexicon.yaml`` (plus the
spec's aliases), collects every binding from the index, folds each to a value by following references
(``lr = args.lr`` -> the argparse option, ``self.lr = lr`` -> the constructor default or the caller's keyword,
``cfg.optim.lr`` -> the config key, ``4 * hidden``), and ranks them by precedence:

    launch-script flag > config file > argparse/click default > call keyword >
    dataclass/function default, dict entry > shell variable > plain assignment (module constant)

A call keyword also overrides the default of the function or class it is passed to. Bindings in tests,
docs and comments, and assignments never read anywhere (dead code), are kept as context but never win.
With ``call`` + ``arg`` the value that reaches that call is resolved, falling back to the library's
documented default (``rules/library_defaults.yaml``) when the argument is omitted.

A swept parameter (``r in {8, 16, 32}``) takes several values, one per run: :meth:`ValueResolver.resolve_sweep`
collects every value of the top precedence level (each launch line, each loop value and Hydra multirun value,
each per-run config file) and the members of a list-valued setting the code iterates (``ranks: [8, 16]`` read
by ``for r in cfg.ranks``); a list nothing iterates is a tuple-valued setting, not a sweep.

Nothing from the repo is executed: values come from the index's literals and :mod:`verifier.analysis.fold`.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from verifier import rules
from verifier.analysis.fold import FoldResult, fold, parse_number_text, references
from verifier.index.facts import (
    Binding,
    BindingKind,
    CallSite,
    FileRole,
    Language,
    Span,
)
from verifier.index.repo import RepoIndex, looks_like_glob

MAX_DEPTH = 8  # reference hops followed from one binding
MAX_IMPORTED = 50  # module constants of the same name in other files considered for one bare name
MAX_WORK = 20_000  # bindings evaluated per query: a pathological reference graph stops, it does not hang

TIER = {
    BindingKind.launch: 60,
    BindingKind.env: 15,  # a shell variable only matters through the flags it fills (already substituted)
    BindingKind.config: 40,
    BindingKind.argparse: 30,
    BindingKind.click: 30,
    BindingKind.kwarg: 25,
    BindingKind.field: 20,
    BindingKind.default: 20,
    BindingKind.dict: 20,
    BindingKind.assign: 10,
    BindingKind.comment: 0,
}

KIND_LABEL = {
    BindingKind.launch: "launch flag",
    BindingKind.env: "env var",
    BindingKind.config: "config key",
    BindingKind.argparse: "argparse default",
    BindingKind.click: "click default",
    BindingKind.kwarg: "call keyword",
    BindingKind.field: "dataclass default",
    BindingKind.default: "function default",
    BindingKind.dict: "dict entry",
    BindingKind.assign: "assignment",
    BindingKind.comment: "comment",
}

_ENV_REF = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")
_INTERPOLATION = re.compile(r"^\$\{([A-Za-z_][\w.]*)\}$")  # Hydra/OmegaConf ${model.hidden}
_SELF = ("self", "cls")
# Kinds that only pass a value along (`lr=args.lr`, `self.lr = lr`): the value's source is what they read.
_PASS_THROUGH = (BindingKind.assign, BindingKind.kwarg, BindingKind.dict)
# Where a parameter is declared as such; generic (weak) names count only there.
_DECLARED = (
    BindingKind.launch,
    BindingKind.config,
    BindingKind.argparse,
    BindingKind.click,
    BindingKind.field,
    BindingKind.dict,
)


# ----- records --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Link:
    """One step of a provenance chain, as `explain` shows it."""

    file: str
    line: int
    end_line: int
    kind: str  # a BindingKind value, "call" or "library-default"
    name: str
    expr: str
    value: Any
    role: str = ""  # effective, overridden, input, comment, test, dead, stub, library-default, call
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        out = {
            "file": self.file,
            "line": self.line,
            "kind": self.kind,
            "name": self.name,
            "expr": self.expr,
            "value": _jsonable(self.value),
        }
        if self.role:
            out["role"] = self.role
        if self.note:
            out["note"] = self.note
        return out

    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Candidate:
    """A live binding with the value it folds to and the chain of bindings that value came through."""

    binding: Binding
    value: Any
    resolved: bool
    tier: int
    source: Binding  # the binding whose text decides the value (a launch flag, a literal default, ...)
    chain: tuple[Link, ...]  # this binding first, then what it read
    reason: str = ""  # why it did not resolve

    @cached_property
    def key(self) -> tuple:
        return _binding_key(self.binding)

    @cached_property
    def source_key(self) -> tuple:
        return _binding_key(self.source)


@dataclass
class Resolution:
    """Everything known about one parameter: the winners, what they override, and the context."""

    names: tuple[str, ...]
    top: list[Candidate] = field(default_factory=list)  # the highest-precedence live candidates
    overridden: list[Candidate] = field(default_factory=list)
    unresolved: list[Candidate] = field(default_factory=list)
    excluded: list[Link] = field(default_factory=list)  # comment / test / doc / dead bindings
    stubs: list[Link] = field(default_factory=list)
    library_default: Link | None = None

    @property
    def found(self) -> bool:
        return bool(self.top or self.library_default)


@dataclass(frozen=True)
class SweepValue:
    """One value a swept parameter takes in some run, with the binding that sets it (the first in file order)."""

    value: Any
    candidate: Candidate
    how: str  # "launch flag", "config key", "list iterated at train.py:12", ...
    loop: str = ""  # file:line of the loop that iterates a list-valued setting

    @property
    def link(self) -> Link:
        """Where the value is written: the source binding's step of the chain."""
        src = self.candidate.source
        for link in self.candidate.chain:
            if (link.file, link.line, link.name) == (src.span.file, src.span.line, src.name):
                return replace(link, value=self.value)
        return Link(src.span.file, src.span.line, src.span.end_line, src.kind.value, src.name, src.expr, self.value)


@dataclass
class SweepResolution:
    """The values a parameter takes across the runs the repo launches, and what the plain resolution found."""

    resolution: Resolution
    values: list[SweepValue] = field(default_factory=list)  # distinct values, in file/line order of their source
    uniterated: list[Candidate] = field(default_factory=list)  # list-valued settings nothing iterates


@dataclass(frozen=True)
class CallArg:
    """The value of one argument at one call site."""

    site: CallSite
    arg: str
    status: str  # passed | default | unknown | stub | excluded
    value: Any = None
    candidate: Candidate | None = None
    default: Link | None = None
    reason: str = ""
    library: str = ""


# ----- the resolver ---------------------------------------------------------------------------------------
class ValueResolver:
    """Resolve parameter values over one RepoIndex; share one per run (``verifier.checks.value.resolver_for``)."""

    def __init__(
        self,
        index: RepoIndex,
        aliases: Mapping[str, Iterable[str]] | None = None,
        lexicon: Mapping[str, Any] | None = None,
        library: Mapping[str, Any] | None = None,
    ) -> None:
        self.index = index
        self.lexicon = Lexicon(lexicon if lexicon is not None else _safe_rules("lexicon.yaml"), aliases or {})
        self.library = LibraryDefaults(library if library is not None else _safe_rules("library_defaults.yaml"))
        self._memo: dict[tuple, Candidate | None] = {}
        self._visiting: set[tuple] = set()
        self._cuts = 0
        self._work = 0
        self._live_cache: dict[str, tuple[list[Binding], dict[str, list[Binding]]]] = {}
        self._structured_cache: dict[tuple, list[Binding]] = {}
        self._exclusions: dict[tuple, str | None] = {}
        self._exclusion_of: dict[int, tuple[Binding, str | None]] = {}
        self._bindings_cache: dict[tuple[str, ...], list[Binding]] = {}
        self._kwarg_groups: dict[str, dict[str, list[Binding]]] = {}
        self._module_assign_cache: dict[str, list[Binding]] = {}
        self._references: dict[str, tuple[str, ...]] = {}
        self._local_cache: dict[tuple[str, str], list[Binding]] = {}
        self._attribute_target_cache: dict[int, tuple[list[Binding], list]] = {}
        self._best_memo: dict[tuple[int, ...], tuple[tuple[Binding, ...], Candidate | None]] = {}
        self._reads_all: frozenset[str] = frozenset().union(
            *(f.reads for f in index.files.values() if f.language in (Language.python, Language.notebook))
        )
        self._stubs: dict[tuple[str, str], str] = {
            (f.path, d.qualname): d.stub for f in index.files.values() for d in f.definitions if d.stub
        }
        self._by_dest: dict[str, list[Binding]] = {}
        self._field_classes: dict[str, set[str]] = {}
        self._launch_extra: dict[str, list[Binding]] = {}
        self._iteration_memo: dict[str, str | None] = {}
        self._collect_extras()

    # ----- setup ------------------------------------------------------------------------------------------
    def _collect_extras(self) -> None:
        """argparse/click options by ``dest`` and launch flags the index only recorded as Launch records."""
        have_launch: set[tuple[str, int, str]] = set()
        for facts in self.index.files.values():
            for b in facts.bindings:
                if b.kind in (BindingKind.argparse, BindingKind.click) and b.dest:
                    self._by_dest.setdefault(b.dest.lower(), []).append(b)
                if b.kind is BindingKind.field and b.owner:
                    self._field_classes.setdefault(b.name.lower(), set()).add(_leaf(b.owner))
                if b.kind is BindingKind.launch:
                    have_launch.add((b.span.file, b.span.line, b.name.lower()))
        for launch in self.index.all_launches():
            for flag, text in launch.flags:
                path = flag.lstrip("-").replace("-", "_").lstrip("+~")
                leaf = path.rsplit(".", 1)[-1]
                if not leaf or (launch.span.file, launch.span.line, leaf.lower()) in have_launch:
                    continue
                b = Binding(
                    name=leaf,
                    path=path,
                    kind=BindingKind.launch,
                    expr=text,
                    value=None,
                    constant=False,
                    scope="<module>",
                    span=launch.span,
                    owner=launch.target,
                )
                self._launch_extra.setdefault(leaf.lower(), []).append(b)

    def bindings(self, names: Iterable[str]) -> list[Binding]:
        names = [n.lower().replace("-", "_") for n in names]
        key = tuple(names)
        cached = self._bindings_cache.get(key)
        if cached is not None:
            return cached
        out = list(self.index.bindings_named(names))
        extra = [b for n in names for b in self._launch_extra.get(n, ())]
        if extra:
            seen = {_binding_key(b) for b in out}
            for b in extra:
                if _binding_key(b) not in seen:
                    seen.add(_binding_key(b))
                    out.append(b)
            out.sort(key=_binding_key)
        self._bindings_cache[key] = out
        return out

    # ----- classification ---------------------------------------------------------------------------------
    def exclusion(self, b: Binding) -> str | None:
        """Why a binding can never be the effective value: comment, test, doc, dead, stub; else None."""
        known = self._exclusion_of.get(id(b))
        if known is not None and known[0] is b:  # same object as before (the entry keeps it alive)
            return known[1]
        key = _binding_key(b)
        if key not in self._exclusions:
            self._exclusions[key] = self._exclusion(b)
        why = self._exclusions[key]
        self._exclusion_of[id(b)] = (b, why)
        return why

    def _exclusion(self, b: Binding) -> str | None:
        if b.kind is BindingKind.comment:
            return "comment"
        facts = self.index.files.get(b.span.file)
        if facts is not None:
            if facts.role is FileRole.test:
                return "test"
            if facts.role is FileRole.doc:
                return "comment"
        if self._stub_reason(b.span.file, b.scope):
            return "stub"
        if self._is_dead(b):
            return "dead"
        return None

    def _stub_reason(self, file: str, scope: str) -> str | None:
        while scope and scope != "<module>":
            reason = self._stubs.get((file, scope))
            if reason:
                return reason
            scope = scope.rpartition(".")[0]
        return None

    def _is_dead(self, b: Binding) -> bool:
        """A plain assignment whose name is never read: in the repo (module level) or its file (locals)."""
        if b.kind is not BindingKind.assign or not self._reads_all:
            return False
        head = b.path.rpartition(".")[0]
        if head and head not in _SELF:
            return False
        if b.scope == "<module>" or head in _SELF:
            return b.name not in self._reads_all
        facts = self.index.files.get(b.span.file)
        return facts is not None and bool(facts.reads) and b.name not in facts.reads

    # ----- name queries -----------------------------------------------------------------------------------
    def resolve(self, names: Iterable[str], scope: str | None = None) -> Resolution:
        """The effective value(s) of a parameter known under ``names`` (lexicon-expanded)."""
        with _no_cyclic_gc():
            return self._resolve(names, scope)

    def _resolve(self, names: Iterable[str], scope: str | None) -> Resolution:
        self._work = 0
        given = [n for n in names if n]
        strong, weak = self.lexicon.expand(given)
        preferred = {n.lower().replace("-", "_") for n in given} | {self.lexicon.describe(n) for n in given}
        resolution = self._resolve_names(strong, scope, preferred)
        if not resolution.top and not resolution.unresolved and weak:
            apis = tuple(self.lexicon.apis(given))
            fallback = self._resolve_names(strong + weak, scope, preferred, frozenset(weak), apis)
            if fallback.top:  # a generic name (`alpha`, `t`) counts only when it folds to a value
                resolution = fallback
        apis = tuple(self.lexicon.apis(given))
        if apis and not resolution.unresolved and all(self._api_keyword(c.binding, apis) for c in resolution.top):
            # keywords at the API's calls and positions at others are the same kind of setting: read both
            resolution.top = resolution.top + self._positional_arguments(strong, scope, apis)
        if not resolution.top and not resolution.unresolved:
            resolution.library_default = self._library_default_for(
                resolution.names, scope, set(weak), tuple(self.lexicon.apis(given))
            )
        return resolution

    def library_default(self, names: Iterable[str], scope: str | None = None) -> Link | None:
        """The documented default of an omitted library argument named ``names``: what a run gets when every
        binding of the name is one it never reads (a config key no code reads)."""
        given = [n for n in names if n]
        strong, weak = self.lexicon.expand(given)
        return self._library_default_for(tuple(strong), scope, set(weak), tuple(self.lexicon.apis(given)))

    def _positional_arguments(self, names: Iterable[str], scope: str | None, apis: tuple[str, ...]) -> list[Candidate]:
        """A parameter passed by position to an API the lexicon lists for it (``nn.Conv2d(c, c, 3)`` sets
        ``kernel_size``): no binding is written under its name, so the library's parameter order says which it is.
        Keywords are bindings already; only positions are read here."""
        wanted = {n.lower() for n in names}
        out: list[Candidate] = []
        for api in apis:
            entry = self.library.lookup(api)
            if entry is None:
                continue
            for param in [p for p in entry.params if p.lower() in wanted]:
                position = entry.position_of(param)
                for site in self._sites(api, scope):
                    if position is None or position >= len(site.args) or self._site_excluded(site):
                        continue
                    if any(k == param for k, _ in site.kwargs) or any(a.startswith("*") for a in site.args[: position + 1]):
                        continue
                    expr = site.args[position]
                    cand = self.value_at(expr, site.span.file, site.scope, site.span.line)
                    if cand is None or not cand.resolved:
                        continue
                    binding = Binding(param, f"{site.qualname}.{param}", BindingKind.kwarg, expr, cand.value, True,
                                      site.scope, site.span, site.qualname)
                    link = Link(site.span.file, site.span.line, site.span.end_line, BindingKind.kwarg.value, param,
                                f"{site.callee}(... {expr} ...) (position {position})", cand.value)
                    source = cand.source if cand.chain else binding
                    out.append(Candidate(binding, cand.value, True, cand.tier, source, (link, *cand.chain)))
        return sorted(out, key=lambda c: (c.binding.span.file, c.binding.span.line, repr(c.value)))

    def _api_keyword(self, b: Binding, apis: tuple[str, ...]) -> bool:
        """Is ``b`` a keyword passed to one of ``apis`` (so a generic name like ``r`` is meant)?"""
        if b.kind is not BindingKind.kwarg or not apis or not b.owner:
            return False
        entry = self.library.lookup(b.owner)
        return any(entry is not None and entry is self.library.lookup(api) for api in apis) or any(
            _leaf(b.owner) == _leaf(api) for api in apis
        )

    def _resolve_names(
        self,
        names: list[str],
        scope: str | None,
        preferred: set[str],
        weak: frozenset[str] = frozenset(),
        apis: tuple[str, ...] = (),
    ) -> Resolution:
        resolution = Resolution(names=tuple(names))
        live: list[Candidate] = []
        for b in self.bindings(names):
            if not self._in_scope(b, scope):
                continue
            if b.name.lower() in weak and b.kind not in _DECLARED and not self._api_keyword(b, apis):
                continue  # `p = ...` in some function is not a dropout rate; `p: 0.1` in a config may be
            if b.kind is BindingKind.env and isinstance(b.value, tuple):
                continue  # a loop variable or shell array reaches a program only through the flags it fills
            why = self.exclusion(b)
            if why is not None:
                link = _link(b, b.value if b.constant else None, why)
                if why == "stub":
                    resolution.stubs.append(
                        Link(**{**link.__dict__, "note": self._stub_reason(b.span.file, b.scope) or ""})
                    )
                else:
                    resolution.excluded.append(link)
                continue
            cand = self.evaluate(b)
            if cand is None:
                continue
            (live if cand.resolved else resolution.unresolved).append(cand)
        live = _dedupe_by_source(live)
        overridden_by_kwarg = self._kwarg_overrides(live)
        ranked = sorted(live, key=lambda c: (-c.tier, c.source_key))
        if ranked:
            best = ranked[0].tier
            resolution.top = [c for c in ranked if c.tier == best and c.key not in overridden_by_kwarg]
            if not resolution.top:  # every top candidate overridden by a keyword of a lower tier: keep them
                resolution.top = [c for c in ranked if c.tier == best]
            resolution.top += self._other_programs(resolution.top, ranked)
            exact = [c for c in resolution.top if c.binding.name.lower() in preferred]
            if exact:
                resolution.top = exact
            top_keys = {c.key for c in resolution.top}
            resolution.overridden = [c for c in ranked if c.key not in top_keys]
        return resolution

    def _other_programs(self, top: list[Candidate], ranked: list[Candidate]) -> list[Candidate]:
        """A launch flag overrides only its own program's option: `eval.sh` running `eval.py --batch-size 256`
        leaves `train.py`'s `--batch-size` default in force for training, so that one stays effective too."""
        if not top or any(c.source.kind is not BindingKind.launch for c in top):
            return []
        targets = {c.source.owner for c in top}
        if not all(t in self.index.files for t in targets):
            return []  # a target we cannot see may parse anything: keep the global precedence
        top_keys = {c.key for c in top}
        return [
            c
            for c in ranked
            if c.key not in top_keys
            and c.source.kind in (BindingKind.argparse, BindingKind.click)
            and c.source.span.file not in targets
            and self.index.files[c.source.span.file].has_main_block
        ]

    def _kwarg_overrides(self, live: list[Candidate]) -> set[tuple]:
        """Defaults/fields of a function or class that some live call keyword passes explicitly."""
        callee_leaves = {
            _leaf(c.binding.owner).lower()
            for c in live
            if c.binding.kind is BindingKind.kwarg and c.binding.owner
        }
        out: set[tuple] = set()
        for c in live:
            b = c.binding
            if b.kind not in (BindingKind.default, BindingKind.field):
                continue
            owner = b.owner or b.scope
            parts = [p for p in owner.split(".") if p]
            if parts and parts[-1] == "__init__":
                parts = parts[:-1]
            if parts and parts[-1].lower() in callee_leaves:
                out.add(c.key)
        return out

    def _in_scope(self, b: Binding, scope: str | None) -> bool:
        if not scope:
            return True
        if looks_like_glob(scope):
            if self.index.in_scope(b.span.file, scope):
                return True
            return b.kind is BindingKind.launch and bool(b.owner) and self.index.in_scope(b.owner, scope)
        return b.scope == scope or b.scope.startswith(scope + ".") or _leaf_scope_match(b.scope, scope)

    def _library_default_for(
        self, names: Iterable[str], scope: str | None, weak: set[str], apis: tuple[str, ...]
    ) -> Link | None:
        """An omitted argument of a library call whose parameter is one of ``names`` (or, for the APIs the
        lexicon names for this parameter, one of its generic names: ``LoraConfig`` without ``r``)."""
        wanted = {n.lower() for n in names}
        api_keys = {e.key for e in (self.library.lookup(a) for a in apis) if e is not None}
        for key, entry in self.library.entries():
            accept = wanted | (weak if key in api_keys else set())
            params = [p for p in entry.defaults if p.lower() in accept]
            if not params:
                continue
            for site in self._sites(key, scope):
                if self._site_excluded(site):
                    continue
                for param in params:
                    found = self._arg_expr(site, param, entry)
                    if found is None:
                        return Link(
                            site.span.file,
                            site.span.line,
                            site.span.end_line,
                            "library-default",
                            param,
                            f"{site.callee}(...) without {param}",
                            entry.defaults[param],
                            "library-default",
                            f"{key} default",
                        )
        return None

    # ----- sweeps -----------------------------------------------------------------------------------------
    def resolve_sweep(self, names: Iterable[str], scope: str | None = None) -> SweepResolution:
        """Every value a parameter takes across the runs: each top-precedence binding (launch lines, loop and
        multirun values, per-run configs), and the members of a list-valued setting the code iterates, found
        under the name or its plural (``rank`` -> ``ranks``, ``lr_list``). Nothing is executed."""
        given = [n for n in names if n]
        singular = [s for s in _singular_forms(given) if s not in given]
        res = self.resolve(given + singular, scope)
        out = SweepResolution(res)
        collected: list[SweepValue] = []
        for cand in res.top:
            self._sweep_members(cand, KIND_LABEL.get(cand.source.kind, cand.source.kind.value), collected, out)
        collected += self._unflagged_defaults(res)
        strong, weak = self.lexicon.expand(given + singular)
        # a generic name's plural (`rank` -> `ranks`) is safe here: only a list the code iterates counts
        plurals = [p for p in _plural_forms(strong + [w for w in weak if len(w) >= 3]) if p not in strong]
        if plurals:
            lists = self.resolve(plurals, scope)
            for cand in lists.top:
                if isinstance(cand.value, (list, tuple)):
                    self._sweep_members(cand, "", collected, out)
        if not collected and res.library_default is not None:
            link = res.library_default
            pseudo = Binding(link.name, link.name, BindingKind.kwarg, link.expr, link.value, True, "<module>",
                             Span(link.file, link.line, link.end_line))
            collected.append(SweepValue(link.value, Candidate(pseudo, link.value, True, 0, pseudo, (link,)), link.note))
        collected.sort(key=lambda item: (_binding_key(item.candidate.source), _sort_text(item.value)))
        for item in collected:
            if not any(_equal_values(item.value, kept.value) for kept in out.values):
                out.values.append(item)
        return out

    def _sweep_members(
        self, cand: Candidate, label: str, collected: list[SweepValue], out: SweepResolution
    ) -> None:
        """A scalar is one run's value; a list is a sweep only where the code iterates it."""
        if not isinstance(cand.value, (list, tuple)) or not cand.value:
            collected.append(SweepValue(cand.value, cand, label))
            return
        leaves = {cand.binding.name, cand.source.name, _leaf(cand.binding.path), _leaf(cand.source.path)}
        site = next((s for s in (self.iteration_site(leaf) for leaf in sorted(leaves) if leaf) if s), None)
        if site is None:
            if cand not in out.uniterated:
                out.uniterated.append(cand)
            return
        for item in cand.value:
            collected.append(SweepValue(item, cand, f"list iterated at {site}", site))

    def _unflagged_defaults(self, res: Resolution) -> list[SweepValue]:
        """A launch line that runs a program without the flag runs it at the option's default: with
        `python train.py` and `python train.py --rank 64` the runs take the default and 64."""
        if not res.top or any(c.source.kind is not BindingKind.launch for c in res.top):
            return []
        out: list[SweepValue] = []
        for default in res.overridden:
            option = default.source
            if option.kind not in (BindingKind.argparse, BindingKind.click) or option.span.file not in self.index.files:
                continue
            names = {n.lower() for n in (option.name, option.dest) if n}
            for launch in sorted(self.index.all_launches(), key=lambda la: (la.span.file, la.span.line)):
                facts = self.index.files.get(launch.span.file)
                if launch.target != option.span.file or facts is None or facts.role is not FileRole.code:
                    continue
                passed = {_leaf(flag.lstrip("-+~").replace("-", "_")).lower() for flag, _ in launch.flags}
                if not passed & names:
                    out.append(SweepValue(default.value, default, f"default ({launch.span.file}:{launch.span.line} "
                                          f"runs {launch.target} without the flag)"))
                    break
        return out

    def iteration_site(self, leaf: str) -> str | None:
        """``file:line`` of the first loop or comprehension in the code that iterates ``leaf`` (``for r in
        cfg.ranks``, ``enumerate(args.ranks)``, ``config["ranks"]``); None if nothing does. Memoised per name."""
        memo = self._iteration_memo
        if leaf in memo:
            return memo[leaf]
        memo[leaf] = None
        for path, facts in self.index.files.items():
            if facts.language not in (Language.python, Language.notebook) or facts.role is not FileRole.code:
                continue
            try:
                if leaf not in self.index.source(path):
                    continue
            except OSError:
                continue
            tree = self.index.tree(path)
            if tree is None:
                continue
            lines = sorted(node.iter.lineno for node in ast.walk(tree) if _iterates(node, leaf))
            if lines:
                memo[leaf] = f"{path}:{lines[0]}"
                break
        return memo[leaf]

    # ----- evaluating one binding -------------------------------------------------------------------------
    def evaluate(self, b: Binding, depth: int = 0) -> Candidate | None:
        """Fold a binding to a value, following references; memoised, cycle- and depth-bounded."""
        key = _binding_key(b)
        if key in self._memo:
            return self._memo[key]
        self._work += 1
        if key in self._visiting or depth > MAX_DEPTH or self._work > MAX_WORK:
            self._cuts += 1
            return None
        self._visiting.add(key)
        cuts_before = self._cuts
        try:
            cand = self._evaluate(b, depth)
        finally:
            self._visiting.discard(key)
        if self._cuts == cuts_before:  # a result computed with a cycle or depth cut-off is not final
            self._memo[key] = cand
        return cand

    def _evaluate(self, b: Binding, depth: int) -> Candidate:
        tier = TIER.get(b.kind, 10)
        if b.kind in (BindingKind.launch, BindingKind.env):
            return self._evaluate_text(b, tier, depth)
        if b.constant:
            value = _normalise_literal(b.value) if b.kind is BindingKind.config else b.value
            if b.kind is BindingKind.config and isinstance(value, str):
                interp = _INTERPOLATION.match(value.strip())
                if interp:
                    return self._follow(b, interp.group(1), tier, depth, config_only=True)
            return Candidate(b, value, True, tier, b, (_link(b, value),))
        return self._evaluate_expr_binding(b, tier, depth)

    def _evaluate_text(self, b: Binding, tier: int, depth: int) -> Candidate:
        text = b.expr.strip()
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            text = text[1:-1].strip()
        env_ref = _ENV_REF.match(text)
        if env_ref:
            var = env_ref.group(1)
            for e in self._env_bindings(b.span.file, var, b.span.line):
                sub = self.evaluate(e, depth + 1)
                if sub is not None and sub.resolved:  # the flag is where the value is set; the variable feeds it
                    return Candidate(b, sub.value, True, tier, b, (_link(b, sub.value),) + sub.chain)
            return Candidate(b, None, False, tier, b, (_link(b, None),), f"${var} is not set in {b.span.file}")
        if b.constant and b.value is not None:
            value = _normalise_literal(b.value)
        else:
            parsed = parse_number_text(text)
            value = parsed if parsed is not None or text.lower() in ("none", "null") else text.strip("'\"")
        return Candidate(b, value, True, tier, b, (_link(b, value),))

    def _env_bindings(self, file: str, var: str, line: int) -> list[Binding]:
        found = [
            e
            for e in self.index.bindings_named([var])
            if e.kind is BindingKind.env and e.span.file == file and e.span.line <= line
        ]
        for launch in self.index.all_launches():
            if launch.span.file == file:
                for name, text in launch.env:
                    if name == var:
                        found.append(
                            Binding(name, name, BindingKind.env, text, None, False, "<module>", launch.span)
                        )
        found.sort(key=lambda e: -e.span.line)
        return found

    def _evaluate_expr_binding(self, b: Binding, tier: int, depth: int) -> Candidate:
        refs = self._refs(b.expr)
        if len(refs) == 1 and _is_plain_reference(b.expr, refs[0]):
            return self._follow(b, refs[0], tier, depth)
        result, inputs, missing = self.fold_at(b.expr, b.span.file, b.scope, b.span.line, depth + 1, exclude=b)
        if result.ok:
            chain = (_link(b, result.value),) + tuple(
                Link(**{**link.__dict__, "role": link.role or "input"}) for c in inputs for link in c.chain
            )
            # `tuple(cfg.betas)`, `int(args.n)`: one input decides the value, so it is the source.
            source, src_tier = b, tier
            if len(inputs) == 1 and b.kind in _PASS_THROUGH and _is_wrapped_reference(b.expr, refs[0]):
                source, src_tier = inputs[0].source, inputs[0].tier
            return Candidate(b, result.value, True, src_tier, source, chain)
        shown = b.expr if len(b.expr) <= 60 else b.expr[:57] + "..."
        reason = f"`{shown}`: " + (f"cannot resolve {', '.join(missing[:5])}" if missing else result.reason)
        return Candidate(b, None, False, tier, b, (_link(b, None),), reason)

    def _follow(self, b: Binding, ref: str, tier: int, depth: int, config_only: bool = False) -> Candidate:
        """A binding whose value is exactly another name: inherit that name's value and precedence."""
        sub = self.value_of(ref, b.span.file, b.scope, b.span.line, depth + 1, exclude=b, config_only=config_only)
        if sub is None or not sub.resolved:
            shown = b.expr if len(b.expr) <= 60 else b.expr[:57] + "..."
            reason = f"`{shown}`: cannot resolve {ref}" + (f" ({sub.reason})" if sub is not None and sub.reason else "")
            return Candidate(b, None, False, tier, b, (_link(b, None),), reason)
        source = sub.source if sub.tier > tier or b.kind in _PASS_THROUGH else b
        return Candidate(b, sub.value, True, max(tier, sub.tier), source, (_link(b, sub.value),) + sub.chain)

    def _refs(self, expr: str) -> tuple[str, ...]:
        """``references(expr)``, parsed once per distinct expression text."""
        found = self._references.get(expr)
        if found is None:
            found = self._references[expr] = references(expr)
        return found

    # ----- expressions at a site --------------------------------------------------------------------------
    def fold_at(
        self,
        expr: str,
        file: str,
        scope: str,
        line: int,
        depth: int = 0,
        exclude: Binding | None = None,
    ) -> tuple[FoldResult, list[Candidate], list[str]]:
        """Fold ``expr`` as written at file:line in ``scope``: (result, the candidates it read, unresolved names)."""
        env: dict[str, Any] = {}
        inputs: list[Candidate] = []
        missing: list[str] = []
        if depth <= MAX_DEPTH:
            for ref in self._refs(expr):
                sub = self.value_of(ref, file, scope, line, depth, exclude=exclude)
                if sub is not None and sub.resolved:
                    env[ref] = sub.value
                    inputs.append(sub)
                else:
                    missing.append(ref)
        return fold(expr, env), inputs, missing

    def value_at(self, expr: str, file: str, scope: str, line: int) -> Candidate | None:
        """The value an expression has at a site (for call/init checks), with its chain; None if unknown."""
        with _no_cyclic_gc():
            return self._value_at(expr, file, scope, line)

    def _value_at(self, expr: str, file: str, scope: str, line: int) -> Candidate | None:
        self._work = 0
        refs = references(expr)
        pseudo = Binding(
            name=_leaf(refs[0]) if len(refs) == 1 else "<expr>",
            path="<expr>",
            kind=BindingKind.kwarg,
            expr=expr,
            value=None,
            constant=False,
            scope=scope,
            span=Span(file, line, line),
        )
        if len(refs) == 1 and _is_plain_reference(expr, refs[0]):
            sub = self.value_of(refs[0], file, scope, line, 0, exclude=None)
            if sub is None or not sub.resolved:
                return sub
            return Candidate(pseudo, sub.value, True, sub.tier, sub.source, sub.chain)
        result, inputs, missing = self.fold_at(expr, file, scope, line)
        if not result.ok:
            reason = f"cannot resolve {', '.join(missing)}" if missing else result.reason
            return Candidate(pseudo, None, False, 0, pseudo, (), reason)
        chain = tuple(Link(**{**link.__dict__, "role": link.role or "input"}) for c in inputs for link in c.chain)
        source = inputs[0].source if len(inputs) == 1 and _is_wrapped_reference(expr, refs[0]) else pseudo
        return Candidate(pseudo, result.value, True, max((c.tier for c in inputs), default=0), source, chain)

    def value_of(
        self,
        ref: str,
        file: str,
        scope: str,
        line: int,
        depth: int = 0,
        exclude: Binding | None = None,
        config_only: bool = False,
    ) -> Candidate | None:
        """The value a dotted reference (``lr``, ``self.lr``, ``args.lr``, ``cfg.optim.lr``) has at a site."""
        if depth > MAX_DEPTH:
            return None
        parts = ref.split(".")
        leaf = parts[-1]
        skip = _binding_key(exclude) if exclude is not None else None
        live, by_file = self._named(leaf)
        local_pool = _without(self._live_in_file(leaf, by_file, file), skip)
        if config_only:
            return self._best(self._structured(live, parts, keep_root=True, skip=skip), depth)
        if len(parts) == 1:
            return self._local(local_pool, live, leaf, file, scope, line, depth)
        if parts[0] in _SELF:
            if len(parts) == 2:
                found = self._attribute(local_pool, leaf, file, scope, line, depth)
                if found is not None:
                    return found
            parts = parts[1:]
        return self._best(self._structured(live, parts, keep_root=False, skip=skip), depth)

    def _live_in_file(self, leaf: str, by_file: dict[str, list[Binding]], file: str) -> list[Binding]:
        """Non-excluded bindings named ``leaf`` in ``file``: filtered once per (name, file), not per read."""
        key = (leaf.lower(), file)
        found = self._local_cache.get(key)
        if found is None:
            found = self._local_cache[key] = [b for b in by_file.get(file, ()) if self.exclusion(b) is None]
        return found

    def _named(self, leaf: str) -> tuple[list[Binding], dict[str, list[Binding]]]:
        """Bindings named ``leaf``, and the same by file (callers filter exclusions on the few they use)."""
        key = leaf.lower()
        cached = self._live_cache.get(key)
        if cached is None:
            live = [b for b in self.bindings([leaf]) if b.kind is not BindingKind.comment]
            by_file: dict[str, list[Binding]] = {}
            for b in live:
                by_file.setdefault(b.span.file, []).append(b)
            cached = self._live_cache[key] = (live, by_file)
        return cached

    def _local(
        self, same_file: list[Binding], live: list[Binding], name: str, file: str, scope: str, line: int, depth: int
    ) -> Candidate | None:
        same_file = [b for b in same_file if b.name == name]
        local = [
            b
            for b in same_file
            if b.kind is BindingKind.assign and b.path == name and b.scope == scope and b.span.line < line
        ]
        if local and scope != "<module>":
            return self.evaluate(max(local, key=lambda b: b.span.line), depth + 1)
        params = [
            b
            for b in same_file
            if b.kind in (BindingKind.default, BindingKind.click) and (b.owner == scope or b.scope == scope)
        ]
        callers = self._caller_keywords(name, scope, depth)
        if callers is not None:
            return callers
        if params:
            return self.evaluate(params[0], depth + 1)
        module = [b for b in same_file if b.kind is BindingKind.assign and b.scope == "<module>" and b.path == name]
        before = [b for b in module if b.span.line < line] or module
        if before:
            return self.evaluate(max(before, key=lambda b: b.span.line), depth + 1)
        imported = [b for b in self._module_assigns(live, name) if b.span.file != file]
        return self._best(imported[:MAX_IMPORTED], depth)

    def _module_assigns(self, live: list[Binding], name: str) -> list[Binding]:
        """Live module-level ``name = ...`` anywhere in the repo: one scan per name, not one per read."""
        found = self._module_assign_cache.get(name)
        if found is None:
            found = self._module_assign_cache[name] = [
                b
                for b in live
                if b.kind is BindingKind.assign
                and b.scope == "<module>"
                and b.path == name
                and self.exclusion(b) is None
            ]
        return found

    def _caller_keywords(self, name: str, scope: str, depth: int) -> Candidate | None:
        """``def f(lr=...)`` / ``__init__(self, lr)``: the value a caller passes as ``lr=`` wins."""
        if not scope or scope == "<module>":
            return None
        parts = scope.split(".")
        callee = parts[-2] if parts[-1] == "__init__" and len(parts) >= 2 else parts[-1]
        kwargs = self._kwargs_by_callee(name).get(callee)
        return self._best(kwargs, depth) if kwargs else None

    def _kwargs_by_callee(self, name: str) -> dict[str, list[Binding]]:
        """Live call keywords named ``name``, grouped by the callee's leaf: built once per name, not per read."""
        key = name.lower().replace("-", "_")
        grouped = self._kwarg_groups.get(key)
        if grouped is None:
            grouped = {}
            for b in self.bindings([name]):
                if b.kind is BindingKind.kwarg and b.owner and self.exclusion(b) is None:
                    grouped.setdefault(_leaf(b.owner), []).append(b)
            self._kwarg_groups[key] = grouped
        return grouped

    def _attribute(
        self, pool: list[Binding], name: str, file: str, scope: str, line: int, depth: int
    ) -> Candidate | None:
        cls = scope.split(".")[0] if scope and scope != "<module>" else ""
        attrs = [
            b
            for b in pool
            if b.span.file == file
            and (
                (b.path in (f"self.{name}", f"cls.{name}") and (not cls or b.scope.split(".")[0] == cls))
                or (cls and b.scope == cls and b.kind in (BindingKind.assign, BindingKind.field))
            )
        ]
        if not attrs:
            return None
        attrs.sort(key=lambda b: (0 if b.scope.endswith("__init__") else 1, b.span.line))
        return self.evaluate(attrs[0], depth + 1)

    def _structured(
        self, pool: list[Binding], parts: list[str], keep_root: bool, skip: tuple | None = None
    ) -> list[Binding]:
        """Bindings an attribute/key read like ``args.lr`` or ``cfg.optim.lr`` can land on."""
        cache_key = (tuple(parts), keep_root)
        cached = self._structured_cache.get(cache_key)
        if cached is None:
            cached = self._structured_cache[cache_key] = self._structured_uncached(pool, parts, keep_root)
        return _without(cached, skip)

    def _attribute_targets(self, pool: list[Binding], leaf: str) -> list[tuple[Binding, BindingKind, str | None]]:
        """The part of ``_structured``'s filter that does not depend on the read's root, once per pool:
        (binding, kind, root of an assignment's target or None)."""
        cached = self._attribute_target_cache.get(id(pool))
        if cached is not None and cached[0] is pool:
            return cached[1]
        field_classes = self._field_classes.get(leaf.lower(), ())
        targets: list[tuple[Binding, BindingKind, str | None]] = []
        for b in pool:
            kind = b.kind
            head_root = None
            if kind is BindingKind.assign:
                head = b.path.rpartition(".")[0]
                if not head or head in _SELF:
                    continue  # a bare name or `self.x` is never `cfg.x`
                head_root = head.split(".")[0]
            elif kind is BindingKind.default or kind is BindingKind.comment:
                continue
            elif kind is BindingKind.kwarg and _leaf(b.owner) not in field_classes:
                continue  # only `Config(lr=...)` for a config class with an `lr` field sets `cfg.lr`
            targets.append((b, kind, head_root))
        self._attribute_target_cache[id(pool)] = (pool, targets)
        return targets

    def _structured_uncached(self, pool: list[Binding], parts: list[str], keep_root: bool) -> list[Binding]:
        tail = parts if keep_root else parts[1:]
        leaf = parts[-1]
        dotted_tail = ".".join(tail)
        out: list[Binding] = []
        root = parts[0]
        long_tail = len(tail) > 1
        for b, kind, head_root in self._attribute_targets(pool, leaf):
            if head_root is not None and head_root != root and not _path_suffix(b.path, dotted_tail):
                continue  # `lr = 3` or `self.lr = lr` elsewhere is not `cfg.lr`
            dotted_key = (kind is BindingKind.config or kind is BindingKind.launch) and long_tail and "." in b.path
            if dotted_key and not _path_suffix(b.path, dotted_tail):
                continue
            if self.exclusion(b) is None:
                out.append(b)
        for b in self._by_dest.get(leaf.lower(), ()):
            if b not in out and self.exclusion(b) is None:
                out.append(b)
        # A launch flag spelled like the argparse option (`--learning-rate`) overrides `args.lr` via dest.
        for b in list(out):
            if b.kind in (BindingKind.argparse, BindingKind.click) and b.name.lower() != leaf.lower():
                for extra in self.bindings([b.name]):
                    if extra.kind is BindingKind.launch and extra not in out:
                        out.append(extra)
        return out

    def _best(self, bindings: list[Binding], depth: int) -> Candidate | None:
        """The highest-precedence resolvable candidate; same precedence: the first in file order.

        Memoised on the exact bindings (by identity; the memo holds them, so ids are not reused) when no
        cycle/depth/work cut-off occurred: then every candidate is in ``_memo`` and a repeat gives the same."""
        memo_key = tuple(map(id, bindings))
        hit = self._best_memo.get(memo_key)
        if hit is not None:
            return hit[1]
        cuts_before = self._cuts
        best = self._best_uncached(bindings, depth)
        if self._cuts == cuts_before:
            self._best_memo[memo_key] = (tuple(bindings), best)
        return best

    def _best_uncached(self, bindings: list[Binding], depth: int) -> Candidate | None:
        cands = [c for c in (self.evaluate(b, depth + 1) for b in bindings) if c is not None]
        if not cands:
            return None
        resolved = [c for c in cands if c.resolved]
        pool = resolved or cands
        overridden = self._kwarg_overrides(pool)
        pool = [c for c in pool if c.key not in overridden] or pool
        return min(pool, key=lambda c: (-c.tier, c.source_key))

    # ----- call + arg -------------------------------------------------------------------------------------
    def resolve_call_arg(self, call: str, arg: str | int, scope: str | None = None) -> list[CallArg]:
        """The value of argument ``arg`` (keyword or position) at every call of ``call``."""
        with _no_cyclic_gc():
            return self._resolve_call_arg(call, arg, scope)

    def _resolve_call_arg(self, call: str, arg: str | int, scope: str | None) -> list[CallArg]:
        self._work = 0
        entry = self.library.lookup(call)
        out: list[CallArg] = []
        for site in self._sites(call, scope):
            own = self._repo_signature(site)
            lib = None if own is not None else (self.library.lookup(site.qualname) or entry)
            sig = lib or own
            name = arg if isinstance(arg, str) else (sig.param_at(arg) if sig else None) or f"#{arg}"
            excluded = self._site_excluded(site)
            if excluded:
                out.append(CallArg(site, name, "stub" if excluded == "stub" else "excluded", reason=excluded))
                continue
            expr = self._arg_expr(site, arg, sig)
            if expr is None:
                own_default = own.defaults.get(name) if own is not None else None
                if isinstance(own_default, Binding):
                    cand = self.evaluate(own_default)
                    if cand is not None and cand.resolved:
                        out.append(CallArg(site, name, "passed", cand.value, candidate=cand, library=own.key))
                    else:
                        out.append(CallArg(site, name, "unknown", candidate=cand, reason=f"default of {name} does not fold"))
                elif any(k == "**" for k, _ in site.kwargs):
                    out.append(CallArg(site, name, "unknown", reason="passed through **kwargs"))
                elif lib and name in lib.defaults:
                    value = lib.defaults[name]
                    link = Link(
                        site.span.file,
                        site.span.line,
                        site.span.end_line,
                        "library-default",
                        name,
                        f"{site.callee}(...) without {name}",
                        value,
                        "library-default",
                        f"{lib.key} default",
                    )
                    out.append(CallArg(site, name, "default", value, default=link, library=lib.key))
                else:
                    out.append(CallArg(site, name, "unknown", reason=f"{name} is not passed and has no known default"))
                continue
            cand = self.value_at(expr, site.span.file, site.scope, site.span.line)
            if cand is None or not cand.resolved:
                reason = cand.reason if cand is not None and cand.reason else f"cannot resolve `{expr}`"
                out.append(CallArg(site, name, "unknown", candidate=cand, reason=reason))
            else:
                out.append(CallArg(site, name, "passed", cand.value, candidate=cand, library=lib.key if lib else ""))
        return out

    def _repo_signature(self, site: CallSite) -> LibraryEntry | None:
        """The repo's own function or class a call reaches: its parameter order and default bindings."""
        for d in self.index.definitions_named(_leaf(site.qualname)):
            if f"{d.module}.{d.qualname}" == site.qualname or (
                d.span.file == site.span.file and d.qualname == site.callee
            ):
                target = d
                if d.kind == "class":
                    inits = [
                        i
                        for i in self.index.definitions_named(f"{d.qualname}.__init__")
                        if i.span.file == d.span.file
                    ]
                    if not inits:
                        continue
                    target = inits[0]
                params = tuple(p for p in target.params if p not in _SELF)
                facts = self.index.files.get(target.span.file)
                defaults = {
                    b.name: b
                    for b in (facts.bindings if facts is not None else ())
                    if b.kind in (BindingKind.default, BindingKind.click) and b.owner == target.qualname
                }
                return LibraryEntry(target.qualname, params, defaults)
        return None

    def _sites(self, call: str, scope: str | None) -> list[CallSite]:
        sites = list(self.index.calls_to(call))
        entry = self.library.lookup(call)
        if entry is not None:
            for alias in (entry.key, *entry.aliases):
                if alias != call:
                    sites.extend(self.index.calls_to(alias))
        unique = {(s.span.file, s.span.line, s.callee): s for s in sites}
        out = [s for s in unique.values() if _site_in_scope(self.index, s, scope)]
        out.sort(key=lambda s: (s.span.file, s.span.line, s.callee))
        return out

    def live_calls(self, targets: Iterable[str], scope: str | None = None) -> list[CallSite]:
        """Calls of any of ``targets`` in code that runs (not tests, docs or placeholder bodies), in ``scope``."""
        found = {(s.span.file, s.span.line, s.callee): s for t in targets for s in self._sites(t, scope) if not self._site_excluded(s)}
        return [found[k] for k in sorted(found)]

    def _site_excluded(self, site: CallSite) -> str | None:
        facts = self.index.files.get(site.span.file)
        if facts is not None and facts.role in (FileRole.test, FileRole.doc):
            return facts.role.value
        if self._stub_reason(site.span.file, site.scope):
            return "stub"
        return None

    @staticmethod
    def _arg_expr(site: CallSite, arg: str | int, lib: LibraryEntry | None) -> str | None:
        if isinstance(arg, int):
            position, keyword = arg, (lib.param_at(arg) if lib else None)
        else:
            keyword = arg
            position = lib.position_of(arg) if lib else None
        if keyword is not None:
            for k, v in site.kwargs:
                if k == keyword:
                    return v
        if position is not None and position < len(site.args):
            if any(a.startswith("*") for a in site.args[: position + 1]):
                return None
            return site.args[position]
        return None


# ----- lexicon and library data ---------------------------------------------------------------------------
class Lexicon:
    """Canonical names -> synonyms, from rules/lexicon.yaml plus the spec's aliases."""

    def __init__(self, data: Mapping[str, Any], aliases: Mapping[str, Iterable[str]]) -> None:
        self.groups: dict[str, tuple[list[str], list[str]]] = {}
        self.group_apis: dict[str, list[str]] = {}
        # canonical -> (value when absent, calls that apply it, identifier fragments that show the repo may apply it)
        self.group_off: dict[str, tuple[Any, list[str], list[str]]] = {}
        for canonical, entry in sorted((data or {}).items()):
            entry = entry if isinstance(entry, Mapping) else {}
            strong = [canonical, *[str(s) for s in entry.get("synonyms") or ()]]
            weak = [str(s) for s in entry.get("weak") or ()]
            self.groups[_norm(canonical)] = (_unique(strong), _unique(weak))
            self.group_apis[_norm(canonical)] = [str(a) for a in entry.get("apis") or ()]
            if "off_when_absent" in entry or "default" in entry:  # a default is the value where nothing sets it
                calls = [str(a) for a in [*(entry.get("apis") or ()), *(entry.get("uses") or ())]]
                absent = entry["off_when_absent"] if "off_when_absent" in entry else entry["default"]
                self.group_off[_norm(canonical)] = (absent, calls, [str(w) for w in entry.get("mentions") or ()])
        self.member_of: dict[str, list[str]] = {}
        for canonical, (strong, _weak) in self.groups.items():
            for name in strong:
                self.member_of.setdefault(_norm(name), []).append(canonical)
        self.aliases = {_norm(k): [str(a) for a in v] for k, v in (aliases or {}).items()}

    def expand(self, names: Iterable[str]) -> tuple[list[str], list[str]]:
        """(strong names, weak names) a query stands for; the given names always come first."""
        strong: list[str] = []
        weak: list[str] = []
        for name in names:
            n = _norm(name)
            strong.append(n)
            groups = [n] if n in self.groups else self.member_of.get(n, [])
            if len(groups) == 1:
                group_strong, group_weak = self.groups[groups[0]]
                strong.extend(_norm(s) for s in group_strong)
                weak.extend(_norm(w) for w in group_weak)
            for key in [n, *groups]:
                strong.extend(_norm(a) for a in self.aliases.get(key, ()))
            for key, alias_list in self.aliases.items():
                if n in {_norm(a) for a in alias_list}:
                    strong.append(key)
                    strong.extend(_norm(a) for a in alias_list)
        strong = _unique(strong)
        weak = [w for w in _unique(weak) if w not in strong]
        return strong, weak

    def apis(self, names: Iterable[str]) -> list[str]:
        """Library APIs whose arguments are this parameter even under a generic name (`LoraConfig(r=...)`)."""
        out: list[str] = []
        for name in names:
            n = _norm(name)
            for group in [n] if n in self.groups else self.member_of.get(n, []):
                out.extend(self.group_apis.get(group, ()))
        return _unique(out)

    def off_when_absent(self, name: str) -> tuple[Any, list[str], list[str]] | None:
        """(the value a setting has where the repo does not use it, the calls that would apply it, the identifier
        fragments that show it may be applied by hand), or None."""
        return self.group_off.get(self.describe(name))

    def describe(self, name: str) -> str:
        n = _norm(name)
        groups = [n] if n in self.groups else self.member_of.get(n, [])
        return groups[0] if len(groups) == 1 else n


@dataclass(frozen=True)
class LibraryEntry:
    key: str
    params: tuple[str, ...]
    defaults: dict[str, Any]
    aliases: tuple[str, ...] = ()

    def param_at(self, position: int) -> str | None:
        return self.params[position] if 0 <= position < len(self.params) else None

    def position_of(self, name: str) -> int | None:
        return self.params.index(name) if name in self.params else None


class LibraryDefaults:
    """rules/library_defaults.yaml, looked up by qualified name, alias, or unique suffix."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._entries: dict[str, LibraryEntry] = {}
        for key, raw in sorted((data or {}).items()):
            if not isinstance(raw, Mapping):
                continue
            defaults = {str(k): _normalise_literal(v) for k, v in (raw.get("defaults") or {}).items()}
            entry = LibraryEntry(
                str(key),
                tuple(str(p) for p in raw.get("params") or ()),
                defaults,
                tuple(str(a) for a in raw.get("aliases") or ()),
            )
            self._entries[str(key)] = entry
            for alias in entry.aliases:
                self._entries.setdefault(alias, entry)

    def entries(self) -> list[tuple[str, LibraryEntry]]:
        return [(k, e) for k, e in self._entries.items() if k == e.key]

    def lookup(self, name: str) -> LibraryEntry | None:
        if not name:
            return None
        if name in self._entries:
            return self._entries[name]
        matches = {e.key: e for k, e in self._entries.items() if k.endswith("." + name) or name.endswith("." + k)}
        if len(matches) == 1:
            return next(iter(matches.values()))
        # `nn.Dropout` / `optim.Adam` as written: match on the last two components.
        tail = ".".join(name.split(".")[-2:])
        matches = {e.key: e for k, e in self._entries.items() if k.endswith("." + tail) or k == tail}
        return next(iter(matches.values())) if len(matches) == 1 else None


# ----- helpers ----
_ITERATING_WRAPPERS = frozenset({"enumerate", "zip", "sorted", "reversed", "list", "tuple", "set", "iter", "tqdm",
                                 "trange", "product", "permutations", "combinations"})


def _iterates(node: ast.AST, leaf: str) -> bool:
    """Is ``node`` a for loop or comprehension over ``leaf`` (possibly through enumerate/zip/product/...)?"""
    if not isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        return False
    stack = [node.iter]
    while stack:
        expr = stack.pop()
        if isinstance(expr, ast.Name) and expr.id == leaf:
            return True
        if isinstance(expr, ast.Attribute) and expr.attr == leaf:
            return True
        if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and expr.slice.value == leaf:
            return True
        if isinstance(expr, ast.Call):
            func = expr.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name == "get" and expr.args and isinstance(expr.args[0], ast.Constant) and expr.args[0].value == leaf:
                return True
            if name in _ITERATING_WRAPPERS:
                stack.extend(expr.args)
    return False


def _plural_forms(names: Iterable[str]) -> list[str]:
    """Names a list of a parameter's values goes by: ``rank`` -> ``ranks``, ``rank_list``; ``lr`` -> ``lrs``."""
    out: list[str] = []
    for name in names:
        if not name or name.endswith("s"):
            continue
        if re.search(r"[^aeiou]y$", name):
            out.append(name[:-1] + "ies")
        elif name.endswith(("x", "ch", "sh")):
            out.append(name + "es")
        else:
            out.append(name + "s")
        out += [name + "_list", name + "_values", name + "_grid", name + "_sweep"]
    return _unique(out)


def _singular_forms(names: Iterable[str]) -> list[str]:
    """``ranks`` -> ``rank``, ``dropout_probabilities`` -> ``dropout_probability``: a claim may name the set."""
    out: list[str] = []
    for name in names:
        if len(name) < 4 or not name.endswith("s") or name.endswith("ss"):
            continue
        out.append(name[:-3] + "y" if name.endswith("ies") else name[:-1])
    return _unique(out)


def _equal_values(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (
            isinstance(a, (list, tuple))
            and isinstance(b, (list, tuple))
            and len(a) == len(b)
            and all(_equal_values(x, y) for x, y in zip(a, b))
        )
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0) or a == b
    return a == b


def _sort_text(value: Any) -> str:
    return f"{type(value).__name__}:{value!r}"


@contextlib.contextmanager
def _no_cyclic_gc():
    """A query allocates many small tuples over a large, long-lived index; a full cyclic collection scans that
    whole index each time (17x slower on sympy's 160k bindings). The resolver makes no reference cycles."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _safe_rules(name: str) -> Mapping[str, Any]:
    try:
        data = rules.load(name)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, Mapping) else {}


def _binding_key(b: Binding) -> tuple:
    # `b.kind` itself (a str enum) rather than `.value`: enum attribute access is slow in hot loops. The text
    # tells apart the runs of one launch line (`for r in 8 16; do ... --rank $r`: one binding per value).
    return (b.span.file, b.span.line, b.path, str.__str__(b.kind), b.name, b.expr)


def _without(bindings: Iterable[Binding], skip: tuple | None) -> list[Binding]:
    """``bindings`` minus the one whose key is ``skip`` (the line is compared first: most differ there)."""
    if skip is None:
        return list(bindings)
    line = skip[1]
    return [b for b in bindings if b.span.line != line or _binding_key(b) != skip]


def _link(b: Binding, value: Any, role: str = "") -> Link:
    return Link(b.span.file, b.span.line, b.span.end_line, b.kind.value, b.name, b.expr, value, role)


def _dedupe_by_source(cands: list[Candidate]) -> list[Candidate]:
    """Several bindings fed by one source (``lr=args.lr``, ``self.lr = lr``) count once: keep the source."""
    by_source: dict[tuple, Candidate] = {}
    for c in sorted(cands, key=lambda c: c.key):
        skey = _binding_key(c.source)
        kept = by_source.get(skey)
        if kept is None or c.tier > kept.tier or (c.tier == kept.tier and c.key == skey and kept.key != skey):
            by_source[skey] = c
    return list(by_source.values())


def _normalise_literal(value: Any) -> Any:
    """YAML reads `3e-4` as a string; the numbers people write in configs are numbers."""
    if isinstance(value, str):
        parsed = parse_number_text(value)
        if isinstance(parsed, (int, float)) and not isinstance(parsed, bool):
            return parsed
        return value
    if isinstance(value, list):
        return [_normalise_literal(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_normalise_literal(v) for v in value)
    return value


def _is_plain_reference(expr: str, ref: str) -> bool:
    text = re.sub(r"\s+", "", expr)
    if text == ref:
        return True
    parts = ref.split(".")
    subscripted = parts[0] + "".join(f'["{p}"]' for p in parts[1:])
    return text.replace("'", '"') in (subscripted, f'{".".join(parts[:-1])}.get("{parts[-1]}")')


_WRAPPER = re.compile(r"^(?:int|float|tuple|list|str|bool)\((.*)\)$", re.DOTALL)


def _is_wrapped_reference(expr: str, ref: str) -> bool:
    """`tuple(cfg.betas)`, `float(args.lr)`: a conversion of one reference, not arithmetic on it."""
    match = _WRAPPER.match(expr.strip())
    return bool(match) and _is_plain_reference(match.group(1), ref)


def _path_suffix(path: str, tail: str) -> bool:
    return path == tail or path.endswith("." + tail) or tail.endswith("." + path)


def _leaf(dotted: str) -> str:
    return dotted.rsplit(".", 1)[-1]


def _leaf_scope_match(binding_scope: str, scope: str) -> bool:
    """`in: train_step` admits `Trainer.train_step` and its nested scopes."""
    return "." not in scope and any(part == scope for part in binding_scope.split("."))


def _site_in_scope(index: RepoIndex, site: CallSite, scope: str | None) -> bool:
    if not scope:
        return True
    if looks_like_glob(scope):
        return index.in_scope(site.span.file, scope)
    return site.scope == scope or site.scope.startswith(scope + ".") or _leaf_scope_match(site.scope, scope)


def _norm(name: str) -> str:
    return str(name).strip().lower().replace("-", "_")


def _unique(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return str(value)
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    return repr(value)
