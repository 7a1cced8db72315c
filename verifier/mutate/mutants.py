"""Mutant generation: every drift site of the repo's code files, a seeded, operator-balanced sample."""

from __future__ import annotations

import ast
import difflib
import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

from verifier.mutate.operators import OPERATORS, Applier, Collector
from verifier import pysource


@dataclass(frozen=True)
class Mutant:
    id: int
    file: str
    line: int
    end_line: int
    operator: str
    dimension: str
    description: str
    diff: str
    parts: tuple[tuple[int, int], ...] = ()  # line spans of the changed statements (two for a swap)


def _enumerate_sites(root: Path, files: list[str], operators: list[str]):
    for rel in files:
        source = (root / rel).read_text(encoding="utf-8", errors="replace")
        try:
            module = cst.parse_module(source)
        except cst.ParserSyntaxError:
            continue
        wrapper = cst.metadata.MetadataWrapper(module, unsafe_skip_copy=True)
        collector = Collector(operators)
        wrapper.visit(collector)
        for node, variant, spans in collector.sites:
            yield rel, source, module, node, variant, spans


def _pick(sites: list, max_mutants: int, seed: int) -> list:
    """Round-robin over operators after a seeded shuffle, so every kind of drift is represented."""
    rng = random.Random(seed)
    by_op: dict[str, list] = defaultdict(list)
    for site in sites:
        by_op[site[4].operator].append(site)
    for op in sorted(by_op):
        rng.shuffle(by_op[op])
    picked: list = []
    queues = [by_op[op] for op in sorted(by_op)]
    while len(picked) < max_mutants and any(queues):
        for q in queues:
            if q and len(picked) < max_mutants:
                picked.append(q.pop())
    return picked


def build_mutants(root: Path, files: list[str], operators: list[str], max_mutants: int, seed: int):
    """(mutants with their new source, discard counts). Deterministic for a seed."""
    sites = list(_enumerate_sites(root, files, operators))
    discarded: dict[str, int] = defaultdict(int)
    out: list[tuple[Mutant, str]] = []
    for rel, source, module, node, variant, spans in _pick(sites, max_mutants, seed):
        line, end_line = min(a for a, _ in spans), max(b for _, b in spans)
        try:
            new_source = module.visit(Applier(node, variant)).code
        except Exception:  # libcst refuses a replacement that would be invalid code
            discarded["invalid"] += 1
            continue
        if new_source == source:
            discarded["no-op"] += 1
            continue
        try:
            pysource.parse(new_source)
        except (SyntaxError, ValueError):
            discarded["does-not-parse"] += 1
            continue
        diff = "".join(
            difflib.unified_diff(
                source.splitlines(keepends=True), new_source.splitlines(keepends=True), f"a/{rel}", f"b/{rel}", n=1
            )
        )
        mutant = Mutant(
            len(out), rel, line, end_line, variant.operator, OPERATORS[variant.operator][0], variant.description,
            diff, spans,
        )
        out.append((mutant, new_source))
    return out, dict(discarded)


