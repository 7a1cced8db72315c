"""Repo-level phase order: the flows a run starts from, and what runs in which order along them.

An entry flow is a Python file's top level (``if __name__ == "__main__": main()``, a driver calling
``pretrain()`` then ``finetune()`` then ``evaluate()``), with repo functions inlined, or a shell launch
script: its Python launches in file order, each followed by the launched script's own entry flow, so
``python pretrain.py && python finetune.py`` and a phase inside one of those scripts both count.
Phase names match launched scripts by file stem and repo functions by name, loosely (``eval`` ~
``evaluate``, ``fine_tune`` ~ ``finetune``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import networkx as nx

from verifier.analysis.callgraph import MODULE, FnKey
from verifier.analysis.cfg import CallRef
from verifier.analysis.flow import Event, Flow, FlowBuilder, Root
from verifier.index.facts import FileRole, Language

MAX_ENTRIES = 24


@dataclass
class EntryFlow:
    label: str  # "run.sh" or "main.py (__main__)"
    flow: Flow
    launches: set[int]  # event nodes that are launches (matched by script stem)


def phase_name(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def phase_matches(step: str, name: str) -> bool:
    """``evaluate`` ~ ``eval``/``evaluation``; ``fine_tune`` ~ ``finetune``; exact for short names."""
    a, b = phase_name(step), phase_name(name)
    if not a or not b:
        return False
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    if len(short) < 4:
        return False
    common = 0
    for x, y in zip(a, b):
        if x != y:
            break
        common += 1
    return long_.startswith(short) or common >= max(len(short) - 1, 5)


def script_stem(target: str) -> str:
    leaf = target.replace("\\", "/").rsplit("/", 1)[-1]
    leaf = leaf.removesuffix(".py")
    return leaf.rsplit(".", 1)[-1]  # `python -m pkg.evaluate` -> evaluate


def entry_flows(index, builder: FlowBuilder, files: list[str] | None = None) -> list[EntryFlow]:
    """Every entry flow of the repo (main blocks, scripts with top-level calls, launch scripts)."""
    out: list[EntryFlow] = []
    module_flows: dict[str, Flow | None] = {}

    def module_flow(path: str) -> Flow | None:
        if path not in module_flows:
            tree = index.tree(path)
            module_flows[path] = None if tree is None else builder.build(Root(FnKey(path, MODULE), tree))
        return module_flows[path]

    paths = sorted(files if files is not None else index.files)
    for path in paths:
        facts = index.files.get(path)
        if facts is None or facts.role in (FileRole.test, FileRole.doc):
            continue
        if facts.language == Language.python and facts.has_main_block:
            flow = module_flow(path)
            if flow is not None:
                out.append(EntryFlow(f"{path} (__main__)", flow, set()))
        if facts.launches:
            out.append(_launch_flow(index, path, facts.launches, module_flow))
        if len(out) >= MAX_ENTRIES:
            break
    return out


def _launch_flow(index, path: str, launches, module_flow) -> EntryFlow:
    """A launch script as one flow: each launch, then the launched script's own flow, in file order."""
    graph = nx.DiGraph()
    flow = Flow(graph, 0, 0)
    graph.add_node(0)
    flow.loops_of[0] = ()
    prev = 0
    launch_nodes: set[int] = set()
    for launch in sorted(launches, key=lambda l: (l.span.line, l.target)):
        node = graph.number_of_nodes()
        graph.add_node(node)
        flow.loops_of[node] = ()
        graph.add_edge(prev, node)
        stem = script_stem(launch.target)
        call = CallRef(stem, "", stem, launch.span.line, launch.span.end_line, 0, ast.Call())
        flow.events[node] = Event(call, path, MODULE, launch.target, "", launch.target, "", "", launch.span.line,
                                  launch.span.end_line)
        launch_nodes.add(node)
        prev = node
        target = _target_path(index, launch.target)
        sub = module_flow(target) if target else None
        if sub is not None:
            offset = graph.number_of_nodes()
            mapping = {n: n + offset for n in sub.graph.nodes}
            graph.add_nodes_from(mapping.values())
            graph.add_edges_from((mapping[u], mapping[v], d) for u, v, d in sub.graph.edges(data=True))
            for n, ev in sub.events.items():
                flow.events[mapping[n]] = ev
            for n in sub.loops_of:
                flow.loops_of[mapping[n]] = ()  # phases are judged with `before`: back edges are enough
            graph.add_edge(prev, mapping[sub.entry])
            prev = mapping[sub.exit]
            flow.notes.extend(sub.notes)
    end = graph.number_of_nodes()
    graph.add_node(end)
    flow.loops_of[end] = ()
    graph.add_edge(prev, end)
    flow.exit = end
    return EntryFlow(path, flow, launch_nodes)


def _target_path(index, target: str) -> str | None:
    target = target.strip().lstrip("./")
    if target in index.files:
        return target
    if target.endswith(".py"):
        for path in sorted(index.files):
            if path.endswith("/" + target):
                return path
        return None
    as_path = target.replace(".", "/") + ".py"
    for path in sorted(index.files):
        if path == as_path or path.endswith("/" + as_path):
            return path
    return None
