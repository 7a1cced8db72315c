"""``order`` checks: steps happen in the claimed order on the program's control flow, not in the text.

Where to look: the functions that (with their repo callees inlined) hold the most steps, found on the call
graph from the index; their callers too, since a loop around a ``train_step`` helper sits in its caller; a
Lightning module's implicit loop; for ``phases`` the repo's entry flows. Only code reached from the root
counts (not code after ``return``, under ``if False:``, or in functions nothing calls). Each candidate is
judged and the best-supported one is reported, so a faithful loop is never failed because another function
also mentions a step.

Score: every edge holds = pass; one broken edge (or one missing step) = 0.5; more = 0.25; every edge broken
= mismatch; fewer than two steps found = missing.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from verifier.analysis import lightning
from verifier.analysis.callgraph import (
    MODULE,
    CallGraph,
    FnKey,
    call_graph,
    function_nodes,
)
from verifier.analysis.callsite import snippet
from verifier.analysis.entry import call_graph as reach_graph
from verifier.analysis.flow import Event, Flow, FlowBuilder, Root
from verifier.analysis.ordering import (
    Edge,
    iteration_loop,
    judge_before,
    judge_per_iteration,
)
from verifier.analysis.phases import entry_flows, phase_matches
from verifier.analysis.steps import Step
from verifier.checks.base import Context, checker
from verifier.index.facts import FileRole
from verifier.index.repo import looks_like_glob
from verifier.results import CheckResult, Evidence, Status

KIND = "order"
MAX_ROOTS = 12
CALLER_LEVELS = 2
# A reset may close an iteration instead of opening it: zero_grad after step == zero_grad before the next backward.
RESET_STEPS = ("zero_grad", "clear_grad", "clear_gradients", "optimizer_zero_grad")


@dataclass
class Judged:
    label: str
    flow: Flow
    present: list[int]  # indexes of steps found
    sites: dict[int, set[int]]
    edges: list[Edge] = field(default_factory=list)
    score: float = 0.0
    status: Status = Status.missing

    def rank(self) -> tuple:
        # Among equals, prefer the root where steps sit inside a loop (a per-iteration verdict means something).
        return (len(self.present), self.score, -sum(e.how == "no-loop" for e in self.edges))


@checker(KIND)
def check_order(check, ctx: Context) -> CheckResult:
    steps = [Step(s.strip()) for s in check.steps if isinstance(s, str) and s.strip()]
    if len(steps) < 2:
        return CheckResult.errored(KIND, "an order check needs at least two non-empty steps")
    try:
        return _check(check, steps, ctx)
    except RecursionError:
        return CheckResult.unverified(KIND, "the code is nested too deeply to build its control flow")


def _check(check, steps: list[Step], ctx: Context) -> CheckResult:
    index = ctx.index
    cg = call_graph(ctx)
    scope = check.scope
    glob = scope if scope and looks_like_glob(scope) else None
    # For phases the glob picks the entry flows; what they run may live anywhere.
    containers = [_containers(ctx, cg, step, None if check.relation == "phases" else glob) for step in steps]
    relevant: set[FnKey] = set()
    cut: set[FnKey] = set()
    for found in containers:
        relevant.update(cg.ancestors(found, ctx.options.max_call_depth, cut))
    builder = FlowBuilder(index, cg, should_inline=relevant.__contains__, max_depth=ctx.options.max_call_depth,
                          max_nodes=ctx.options.max_cfg_nodes, cache=ctx.memo("order.flow-cache", dict))
    if check.relation == "phases":
        files = [p for p in index.files if index.in_scope(p, glob)] if glob else None
        entries = entry_flows(index, builder, files)
        candidates = [(e.label, e.flow, e.launches) for e in entries if not e.flow.truncated]
        if not candidates:
            too_big = sorted(e.flow.truncated for e in entries if e.flow.truncated)
            if too_big:
                return CheckResult.unverified(KIND, f"control flow too large to decide: {too_big[0]}",
                                              limit=ctx.options.max_cfg_nodes)
            return CheckResult.unverified(KIND, "no entry point (__main__ block or launch script) to order phases from")
    else:
        roots, problem = _roots(ctx, cg, builder, containers, scope if scope and not glob else None, glob)
        if problem:
            return problem
        candidates, too_big = [], []
        for root in roots:
            flow = builder.build(root)
            if flow.truncated:
                too_big.append(flow.truncated)
            else:
                candidates.append((root.label or root.key.label(), flow, set()))
    judged = [_judge(label, flow, launches, steps, check.relation) for label, flow, launches in candidates]
    best = max(judged, key=lambda j: j.rank()) if judged else None
    if check.relation != "phases" and too_big and (best is None or best.status != Status.pass_):
        return CheckResult.unverified(KIND, f"control flow too large to decide: {min(too_big)}",
                                      limit=ctx.options.max_cfg_nodes, too_large=sorted(too_big))
    if best is None or not best.present:
        return _nothing_found(ctx, steps, containers)
    damaged = _partly_parsed(ctx, best)
    if damaged:
        return CheckResult.unverified(KIND, damaged)
    # Only a missing step or a step outside any loop could change with callers beyond the depth limit.
    undecided = len(best.present) < len(steps) or any(e.how == "no-loop" for e in best.edges)
    if best.status != Status.pass_ and check.relation != "phases" and cut and undecided:
        where = ", ".join(sorted(k.label() for k in cut)[:3])
        return CheckResult.unverified(
            KIND, f"call chains longer than the depth limit {ctx.options.max_call_depth} (at {where}): "
                  f"the loop around the steps may be further up; best found: {best.status.value} in {best.label}",
            limit=ctx.options.max_call_depth, cut=sorted(k.label() for k in cut))
    return _result(ctx, steps, best, check.relation, judged, containers)


# ----- where to look --------------------------------------------------------------------------------------
def _containers(ctx: Context, cg: CallGraph, step: Step, glob: str | None) -> set[FnKey]:
    """Functions whose own calls may perform ``step`` (by leaf name; the flow decides exactly)."""
    places = []
    for leaf in step.leaves():
        for site in ctx.index.calls_to(leaf):
            facts = ctx.index.files.get(site.span.file)
            if facts is None or facts.role in (FileRole.test, FileRole.doc):
                continue
            if glob and not ctx.index.in_scope(site.span.file, glob):
                continue
            places.append((site.span.file, site.scope))
    return cg.containers(places)


def _roots(ctx: Context, cg: CallGraph, builder: FlowBuilder, containers: list[set[FnKey]], qualified: str | None,
           glob: str | None) -> tuple[list[Root], CheckResult | None]:
    index = ctx.index
    roots: list[Root] = []
    if qualified:
        for d in index.definitions_named(qualified):
            if d.kind == "class":
                roots.extend(_lightning_roots(ctx, builder, [d]))
                for m in index.files[d.span.file].definitions:
                    if m.kind == "method" and m.qualname.startswith(d.qualname + "."):
                        roots.extend(_root_of(ctx, builder, FnKey(d.span.file, m.qualname)))
            else:
                roots.extend(_root_of(ctx, builder, FnKey(d.span.file, d.qualname)))
        if not roots:
            return [], CheckResult.unverified(KIND, f"`in: {qualified}` names no function or class in the repo")
        return roots[:MAX_ROOTS], None
    reach: dict[FnKey, set[int]] = {}
    for i, found in enumerate(containers):
        for key in cg.ancestors(found, ctx.options.max_call_depth):
            reach.setdefault(key, set()).add(i)
    live = _live(ctx, cg)
    keys = [k for k in reach if live(k)] or list(reach)
    best = max((len(reach[k]) for k in keys), default=0)
    top = [k for k in keys if len(reach[k]) == best]
    # The lowest functions holding those steps, then their callers (a loop around a helper is in its caller).
    minimal = [k for k in top if not any(c in top and reach[c] == reach[k] for c in cg.callees.get(k, ()))]
    chosen: list[FnKey] = []
    frontier = sorted(minimal, key=lambda k: (k.file, k.qualname))
    for _ in range(CALLER_LEVELS + 1):
        chosen.extend(k for k in frontier if k not in chosen)
        frontier = sorted({c for k in frontier for c in cg.callers.get(k, ()) if live(c)} - set(chosen),
                          key=lambda k: (k.file, k.qualname))
    for key in chosen[:MAX_ROOTS]:
        roots.extend(_root_of(ctx, builder, key))
    # A Lightning module's implicit loop always "has" zero_grad/backward/step; it is a candidate only when the
    # module's own code holds a step, or when no function of the repo holds two steps.
    classes = [d for p in index.python_files() for d in index.files[p].definitions
               if lightning.is_lightning_module(d) and (not glob or index.in_scope(p, glob))]
    holders = {k for found in containers for k in found}
    own = [c for c in classes if any(k.file == c.span.file and k.qualname.startswith(c.qualname + ".") for k in holders)]
    roots.extend(_lightning_roots(ctx, builder, own if own or best >= 2 else classes))
    return roots, None


def _root_of(ctx: Context, builder: FlowBuilder, key: FnKey) -> list[Root]:
    tree = ctx.index.tree(key.file)
    if tree is None:
        return []
    if key.qualname == MODULE:
        return [Root(key, tree, label=f"{key.file} (top level)")]
    node = function_nodes(tree).get(key.qualname)
    return [Root(key, node, label=key.label())] if node is not None else []


def _lightning_roots(ctx: Context, builder: FlowBuilder, classes) -> list[Root]:
    out = []
    cg = builder.cg
    for cls in sorted(classes, key=lambda d: (d.span.file, d.span.line))[:MAX_ROOTS]:
        defined = {m.name for m in ctx.index.files[cls.span.file].definitions
                   if m.kind == "method" and m.qualname.startswith(cls.qualname + ".")}
        for base in cls.bases:
            parent = cg.resolver.class_named(cls.span.file, base)
            if parent is not None:
                defined |= {m.name for m in ctx.index.files[parent.span.file].definitions
                            if m.kind == "method" and m.qualname.startswith(parent.qualname + ".")}
        text = ctx.index.lines(cls.span.file, cls.span.line, cls.span.end_line)
        fn = lightning.driver(cls, defined, text)
        key = FnKey(cls.span.file, f"{cls.qualname}.{lightning.DRIVER_NAME}")
        out.append(Root(key, fn, synthetic=True, label=f"{cls.span.file}:{cls.qualname} (Lightning fit loop)"))
    return out


def _live(ctx: Context, cg: CallGraph):
    """Can a function run? Reachable from an entry point (directly or through a caller this call graph knows,
    such as a closure returned by a factory), or referenced by name somewhere (a library's methods are run by
    its users, callbacks by frameworks). Everything counts when the repo has no entry point."""
    graph = reach_graph(ctx)
    if not graph.entries:
        return lambda key: True
    referenced = ctx.memo("order.referenced-names", lambda: frozenset().union(
        *(f.reads for f in ctx.index.files.values() if f.role not in (FileRole.test, FileRole.doc))))
    cache: dict[FnKey, bool] = {}

    def reached(key: FnKey) -> bool:
        if key not in cache:
            cache[key] = graph.scope_reachable(key.file, key.qualname) is not None
        return cache[key]

    def live(key: FnKey) -> bool:
        if key.qualname != MODULE and key.qualname.rsplit(".", 1)[-1] in referenced:
            return True
        return any(reached(k) for k in cg.ancestors({key}, ctx.options.max_call_depth))

    return live


# ----- judging one flow -----------------------------------------------------------------------------------
def _judge(label: str, flow: Flow, launches: set[int], steps: list[Step], relation: str) -> Judged:
    reachable = flow.reachable()
    sites: dict[int, set[int]] = {}
    for i, step in enumerate(steps):
        found = {n for n, ev in flow.events.items() if n in reachable and _matches(step, ev)}
        if relation == "phases":
            phased = {n for n, ev in flow.events.items() if n in reachable and (n in launches or ev.definition)
                      and phase_matches(step.text, ev.call.leaf if n in launches else ev.definition.rsplit(".", 1)[-1])}
            found = phased or found
        elif not found and not step.head:
            # Compiled claims name steps loosely (`fine_tune`, `evaluation`): fall back to repo functions.
            found = {n for n, ev in flow.events.items() if n in reachable and ev.definition
                     and phase_matches(step.text, ev.definition.rsplit(".", 1)[-1])}
        if found:
            sites[i] = found
    present = sorted(sites)
    judged = Judged(label, flow, present, sites)
    for x, y in itertools.pairwise(present):
        judged.edges.append(_edge(flow, steps, relation, x, y, sites))
    if (relation == "per-iteration" and len(steps) >= 3 and judged.edges and present[0] == 0
            and present[-1] == len(steps) - 1 and steps[0].leaf in RESET_STEPS):
        first = judged.edges[0]
        if not first.holds and first.how == "reversed":
            # zero_grad at the end of one iteration is before backward of the next: a rotation is faithful.
            looped = {n for n in sites[0] if iteration_loop(flow, n) is not None}
            closing = (judge_per_iteration(flow, steps[-1].text, steps[0].text, sites[len(steps) - 1], looped)
                       if looped else None)
            if closing is not None and closing.holds:
                judged.edges[0] = Edge(first.a, first.b, True, "rotated", closing.b_node, first.b_node,
                                       reason=f"{first.a} closes each iteration after {closing.a}")
    _score(judged, len(steps))
    return judged


def _matches(step: Step, ev: Event) -> bool:
    return step.matches(name=ev.name, receiver=ev.receiver, leaf=ev.call.leaf, qualname=ev.qualname,
                        receiver_type=ev.receiver_type, definition=ev.definition,
                        nargs=len(getattr(ev.call.node, "args", ())) + len(getattr(ev.call.node, "keywords", ())))


def _edge(flow: Flow, steps: list[Step], relation: str, x: int, y: int, sites) -> Edge:
    judge = judge_per_iteration if relation == "per-iteration" else judge_before
    return judge(flow, steps[x].text, steps[y].text, sites[x], sites[y])


def _score(judged: Judged, n_steps: int) -> None:
    if len(judged.present) < 2:
        judged.status, judged.score = Status.missing, 0.0
        return
    broken = sum(not e.holds for e in judged.edges)
    shortfall = broken + (n_steps - len(judged.present))
    if shortfall == 0:
        judged.status, judged.score = Status.pass_, 1.0
    elif broken == len(judged.edges):
        judged.status, judged.score = Status.mismatch, 0.0
    else:
        judged.status, judged.score = Status.partial, 0.5 if shortfall == 1 else 0.25


# ----- reporting --------------------------------------------------------------------------------------
def _site_evidence(ctx: Context, flow: Flow, node: int | None, step: str, position: int) -> Evidence | None:
    if node is None or node not in flow.events:
        return None
    ev = flow.events[node]
    note = f"step {position + 1}: {step}"
    if ev.synthetic:
        note += " (implicit in the Lightning training loop)"
    return Evidence(ev.file, ev.line, ev.end_line, snippet(ctx.index, ev.file, ev.line, ev.end_line), "step", note)


def _result(ctx: Context, steps: list[Step], best: Judged, relation: str, judged: list[Judged],
            containers: list[set[FnKey]]) -> CheckResult:
    flow = best.flow
    names = [s.text for s in steps]
    evidence: set[Evidence] = set()
    edges_out = []
    for edge, (ia, ib) in zip(best.edges, itertools.pairwise(best.present)):
        for node, step, pos in ((edge.a_node, edge.a, ia), (edge.b_node, edge.b, ib)):
            item = _site_evidence(ctx, flow, node, step, pos)
            if item is not None:
                evidence.add(item)
        edges_out.append({
            "a": edge.a, "b": edge.b, "holds": edge.holds, "how": edge.how,
            "a_site": flow.events[edge.a_node].label() if edge.a_node in flow.events else None,
            "b_site": flow.events[edge.b_node].label() if edge.b_node in flow.events else None,
            "path": edge.path, "reason": edge.reason,
        })
    if len(best.present) == 1:
        only = best.present[0]
        node = min(best.sites[only], key=lambda n: (flow.events[n].file, flow.events[n].line, n))
        item = _site_evidence(ctx, flow, node, names[only], only)
        if item is not None:
            evidence.add(item)
    missing = [names[i] for i in range(len(steps)) if i not in best.sites]
    dead = _dead_sites(ctx, steps, best, containers)
    evidence.update(dead)
    details = {
        "relation": relation,
        "root": best.label,
        "steps": names,
        "edges": edges_out,
        "missing": missing,
        "notes": sorted(set(best.flow.notes)),
        "candidates": sorted({f"{j.label}: {j.status.value} {j.score}" for j in judged}),
    }
    message = _message(names, best, missing, relation)
    ordered = tuple(sorted(evidence, key=lambda e: e.sort_key()))
    if best.status == Status.pass_:
        return CheckResult.passed(KIND, message, ordered, **details)
    if best.status == Status.partial:
        return CheckResult.partial(KIND, best.score, message, ordered, **details)
    return CheckResult.failed(KIND, best.status, message, ordered, **details)


def _dead_sites(ctx: Context, steps: list[Step], best: Judged, containers: list[set[FnKey]]) -> list[Evidence]:
    """Calls of a missing step that exist but never run from the root (dead code), cited as such."""
    out = []
    for i, step in enumerate(steps):
        if i in best.sites:
            continue
        for leaf in step.leaves():
            for site in ctx.index.calls_to(leaf)[:3]:
                if ctx.index.files[site.span.file].role in (FileRole.test, FileRole.doc):
                    continue
                out.append(Evidence(site.span.file, site.span.line, site.span.end_line,
                                    snippet(ctx.index, site.span.file, site.span.line), "dead",
                                    f"{step.text}: not run from {best.label}"))
    return out


def _message(names: list[str], best: Judged, missing: list[str], relation: str) -> str:
    chain = " -> ".join(names)
    where = f" in {best.label}"
    if best.status == Status.missing:
        found = [names[i] for i in best.present]
        return f"{chain}: only {', '.join(found) or 'none'} found{where}; missing {', '.join(missing)}"
    held = [e for e in best.edges if e.holds]
    broken = [e for e in best.edges if not e.holds]
    parts = [f"{len(held)}/{len(best.edges)} edges hold ({relation}){where}"]
    for e in broken:
        parts.append(f"{e.a} -> {e.b} breaks: {e.reason}")
    if missing:
        parts.append(f"missing: {', '.join(missing)}")
    return f"{chain}: " + "; ".join(parts)


def _nothing_found(ctx: Context, steps: list[Step], containers: list[set[FnKey]]) -> CheckResult:
    damaged = sorted(f.parse_error.file for f in ctx.index.files.values() if f.parse_error is not None)
    names = ", ".join(s.text for s in steps)
    if damaged:
        return CheckResult.unverified(KIND, f"none of {names} found, and {len(damaged)} file(s) did not parse fully "
                                            f"({', '.join(damaged[:3])})")
    return CheckResult.failed(KIND, Status.missing, f"none of {names} is called anywhere the repo runs",
                              steps=[s.text for s in steps])


def _partly_parsed(ctx: Context, best: Judged) -> str:
    """A reason when a file the verdict rests on failed to parse within the span of code it reads."""
    for path in sorted({ev.file for ev in best.flow.events.values()}):
        facts = ctx.index.files.get(path)
        note = facts.parse_error if facts is not None else None
        if note is None:
            continue
        lines = [ev.line for ev in best.flow.events.values() if ev.file == path]
        if note.line is None or min(lines) <= note.line <= max(lines):
            return f"{path}:{note.line or '?'} did not parse ({note.reason}); the order there is not decidable"
    return ""
