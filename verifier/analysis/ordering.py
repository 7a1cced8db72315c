"""Deciding one ordered pair of steps (A before B) on a flow graph.

``before``: A's call sites dominate every B site (no path from the entry reaches B without passing A).
When A is only conditional (``if clip: clip_grad_norm_(...)``, a step every k-th micro-batch) dominance
fails although the code never runs B before A; so the edge also holds when every B site is reached from an
A site and no B site can reach an A site without going round a loop. Anything else is a break, reported
with the path that shows it: from the entry to B avoiding A, or from B forward to A (reversed).
``per-iteration``: the same, inside one iteration of the innermost loop around each B site, entered at the
loop head; an A site outside that loop does not count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import networkx as nx

from verifier.analysis.flow import Flow

MAX_PATH_EVENTS = 10
# Loops over a model's pieces or a dict are inner bookkeeping, not the training iteration.
_LOCAL_LOOP = re.compile(r"parameters\(|param_groups|modules\(|children\(|\.items\(\)|\.keys\(\)|\.values\(\)|named_\w+\(")


@dataclass
class Edge:
    a: str
    b: str
    holds: bool
    how: str  # dominates | never-after | rotated | reversed | bypassed | outside-loop | no-loop
    a_node: int | None = None
    b_node: int | None = None
    path: list[str] = field(default_factory=list)
    reason: str = ""


def _path_labels(flow: Flow, nodes: list[int]) -> list[str]:
    labels = [flow.events[n].label() for n in nodes if n in flow.events]
    return labels[-MAX_PATH_EVENTS:]


def _flow_order(flow: Flow):
    """Sort key: how far from the entry a node runs first (then where it is written)."""
    if flow.distance is None:
        flow.distance = nx.single_source_shortest_path_length(flow.graph, flow.entry)
    far = len(flow.distance) + 1

    def key(n: int):
        ev = flow.events[n]
        return (flow.distance.get(n, far), ev.file, ev.line, ev.call.col, n)

    return key


def _first(nodes, flow: Flow) -> int | None:
    ordered = sorted(nodes, key=_flow_order(flow))
    return ordered[0] if ordered else None


def _judge_region(flow: Flow, graph, dag, entry: int, a_sites: set[int], b: int) -> tuple[bool, str, int | None, list[int]]:
    """Is ``b`` ordered after the A sites in this region? (holds, how, the A site to cite, witness path)."""
    # b can itself be an A site when both steps reach one call site through a call cycle: never hide it.
    avoiding = nx.restricted_view(graph, sorted(a_sites - {b}), [])
    if entry in a_sites or not nx.has_path(avoiding, entry, b):
        dominating = [a for a in a_sites if nx.has_path(dag, a, b)]
        return True, "dominates", _first(dominating or a_sites, flow), []
    later = [a for a in sorted(a_sites) if nx.has_path(dag, b, a)]
    if later:
        a = _first(later, flow)
        return False, "reversed", a, nx.shortest_path(dag, b, a)
    earlier = [a for a in a_sites if nx.has_path(dag, a, b)]
    if earlier:
        return True, "never-after", _first(earlier, flow), []
    return False, "bypassed", _first(a_sites, flow), nx.shortest_path(avoiding, entry, b)


def judge_before(flow: Flow, a: str, b: str, a_sites: set[int], b_sites: set[int]) -> Edge:
    """Every B site must come after A. A B site that breaks the order only under a condition (``if
    args.eval_on_start: evaluate()``) is tolerated when another B site runs in order: the claim is about the
    normal run, and an optional extra call is not a reordering."""
    dag = flow.dag()
    kept: Edge | None = None
    broken: list[Edge] = []
    for node in sorted(b_sites, key=_flow_order(flow)):
        holds, how, a_node, path = _judge_region(flow, flow.graph, dag, flow.entry, a_sites, node)
        if not holds:
            broken.append(Edge(a, b, False, how, a_node, node, _path_labels(flow, path),
                               _reason(flow, a, b, how, a_node, node)))
        elif kept is None or (kept.how == "dominates" and how != "dominates"):
            kept = Edge(a, b, True, how, a_node, node)
    if not broken:
        assert kept is not None
        return kept
    if kept is not None and all(_optional(flow, e.b_node) for e in broken):
        kept.reason = "; ".join(f"only when a condition holds: {e.reason}" for e in broken[:3])
        return kept
    return next((e for e in broken if not _optional(flow, e.b_node)), broken[0])


def _optional(flow: Flow, node: int | None) -> bool:
    """Can a run get from the entry to the exit without this call?"""
    if node is None:
        return False
    return nx.has_path(nx.restricted_view(flow.graph, [node], []), flow.entry, flow.exit)


def judge_per_iteration(flow: Flow, a: str, b: str, a_sites: set[int], b_sites: set[int]) -> Edge:
    kept: Edge | None = None
    for node in sorted(b_sites, key=_flow_order(flow)):
        loop = iteration_loop(flow, node)
        if loop is None:
            return Edge(a, b, False, "no-loop", _first(a_sites, flow), node,
                        reason=f"{b} at {flow.events[node].label()} is not inside a loop")
        members = {n for n, ls in flow.loops_of.items() if loop in ls}
        inside = {x for x in a_sites if iteration_loop(flow, x) == loop}
        if not inside:
            file, line, _ = flow.loop_lines[loop]
            deeper = a_sites & members
            a_node = _first(deeper or a_sites, flow)
            where = "in a nested loop, many times per iteration of" if deeper else "only outside"
            return Edge(a, b, False, "outside-loop", a_node, node,
                        reason=f"{a} runs {where} the loop at {file}:{line} that runs {b} once per iteration")
        head = flow.loop_heads[loop]
        region = flow.graph.subgraph(members)
        one_pass = nx.restricted_view(region, [], [(u, v) for u, v, d in region.edges(data=True) if d.get("back")])
        holds, how, a_node, path = _judge_region(flow, one_pass, one_pass, head, inside, node)
        if not holds:
            return Edge(a, b, False, how, a_node, node, _path_labels(flow, path), _reason(flow, a, b, how, a_node, node))
        if kept is None or (kept.how == "dominates" and how != "dominates"):
            kept = Edge(a, b, True, how, a_node, node)
    assert kept is not None
    return kept


def iteration_loop(flow: Flow, node: int):
    """The loop whose iterations a call belongs to: its innermost enclosing loop that is not a local loop over
    parameters, modules or dict entries."""
    for loop in reversed(flow.loops_of.get(node, ())):
        if not _LOCAL_LOOP.search(flow.loop_over.get(loop, "")):
            return loop
    return None


def _reason(flow: Flow, a: str, b: str, how: str, a_node: int | None, b_node: int) -> str:
    b_label = flow.events[b_node].label()
    a_label = flow.events[a_node].label() if a_node is not None else a
    if how == "reversed":
        return f"{b} at {b_label} runs before {a} at {a_label}"
    return f"a path reaches {b} at {b_label} without {a} ({a_label} is not on it)"
