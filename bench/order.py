"""Order-check benchmark: fixture accuracy, and the cost of the call graph on a large real codebase.

1. Every ``order-*`` fixture case (faithful and drifted) through the engine: verdicts against expected.yaml,
   with false breaks on faithful repos and missed drifts counted apart. Goal: 100 %, no false breaks.
2. A large codebase (the ``transformers`` wheel by default, unpacked into bench/_work): the ``ast.parse``
   floor over its files, the index build, the call graph build (goal: under 1x the floor), and the time of
   a few order checks answered from that index.

    python bench/order.py [--repo PATH] [--skip-large]
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from harness import expected_for, fixture_cases, materialize, mismatches

from verifier.analysis.callgraph import CallGraph
from verifier.analysis.imports import ModuleMap
from verifier.checks import Context, Options, load_all
from verifier.checks.order import check_order
from verifier.engine import run_repo
from verifier.index.build import build_index
from verifier.spec.model import OrderCheck, Spec

WORK = ROOT / "bench" / "_work"
WHEEL_SPEC = "transformers==4.46.3"
LARGE_CLAIMS = [
    (["zero_grad", "backward", "step"], "per-iteration"),
    (["backward", "clip_grad_norm_", "optimizer.step"], "per-iteration"),
    (["optimizer.step", "lr_scheduler.step"], "before"),
    (["training_step", "evaluate"], "before"),
]


def table(headers: list[str], rows: list[list]) -> str:
    cells = [headers, *[[str(c) for c in r] for r in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths))
    return "\n".join([line(cells[0]), line(["-" * w for w in widths]), *(line(r) for r in cells[1:])])


def fixture_accuracy() -> bool:
    rows, total, right, false_breaks, missed = [], 0, 0, 0, 0
    for fixture, variant in fixture_cases():
        if not fixture.startswith("order-"):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            repo = materialize(fixture, variant, Path(tmp))
            start = time.perf_counter()
            report = run_repo(repo, use_cache=False)
            seconds = time.perf_counter() - start
        expected = expected_for(fixture, variant)
        problems = mismatches(report, expected)
        got = {v.id: v for v in report.verdicts}
        for sau_id, exp in expected.items():
            total += 1
            v = got.get(sau_id)
            ok = v is not None and not any(p.startswith(sau_id + ":") for p in problems)
            right += ok
            if v is not None and exp["status"] == "pass" and v.status.value != "pass":
                false_breaks += 1
            if v is not None and exp["status"] != "pass" and v.status.value == "pass":
                missed += 1
        summary = ", ".join(f"{v.id.split('-', 1)[1]}={v.status.value}" for v in report.verdicts)
        rows.append([fixture, variant or "faithful", "ok" if not problems else "WRONG", f"{seconds:.2f}", summary])
    print(table(["fixture", "case", "result", "s", "verdicts"], rows))
    accuracy = right / total if total else 0.0
    print(f"\nSAU verdicts right: {right}/{total} = {accuracy:.0%}; false breaks on faithful: {false_breaks}; "
          f"missed drifts: {missed}\n")
    return right == total and total > 0


def large_repo(path: Path | None) -> Path | None:
    if path is not None:
        return path
    unpacked = WORK / "src" / "transformers"
    if unpacked.is_dir():
        return unpacked
    WORK.mkdir(parents=True, exist_ok=True)
    wheels = sorted(WORK.glob("transformers-*.whl"))
    if not wheels:
        done = subprocess.run([sys.executable, "-m", "pip", "download", WHEEL_SPEC, "--no-deps", "-d", str(WORK)],
                              capture_output=True, text=True, check=False)
        wheels = sorted(WORK.glob("transformers-*.whl"))
        if done.returncode != 0 or not wheels:
            print(f"could not download {WHEEL_SPEC}: {done.stderr.strip()[-300:]}")
            return None
    with zipfile.ZipFile(wheels[-1]) as archive:
        archive.extractall(WORK / "src")
    return unpacked


def large_codebase(repo: Path) -> None:
    files = sorted(p for p in repo.rglob("*.py") if p.is_file())
    start = time.perf_counter()
    for p in files:
        try:
            ast.parse(p.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            pass
    floor = time.perf_counter() - start
    start = time.perf_counter()
    index = build_index(repo, use_cache=False)
    index_s = time.perf_counter() - start
    start = time.perf_counter()
    graph = CallGraph(index, ModuleMap(index))
    graph_s = time.perf_counter() - start
    edges = sum(len(v) for v in graph.callees.values())
    rows = [
        ["ast.parse floor", f"{floor:.2f}", "1.00x", f"{len(files)} files"],
        ["index build (cold)", f"{index_s:.2f}", f"{index_s / floor:.2f}x", f"{len(index.files)} files indexed"],
        ["call graph build", f"{graph_s:.2f}", f"{graph_s / floor:.2f}x",
         f"{len(graph.definitions)} functions, {edges} edges (goal < 1x)"],
    ]
    load_all()
    ctx = Context(index=index, spec=Spec(), options=Options())
    for steps, relation in LARGE_CLAIMS:
        check = OrderCheck(kind="order", steps=steps, relation=relation)
        start = time.perf_counter()
        result = check_order(check, ctx)
        seconds = time.perf_counter() - start
        verdict = f"{result.status.value} {result.score if result.score is not None else '-'}"
        root = result.details.get("root", result.message[:60])
        rows.append([f"order {' -> '.join(steps)} ({relation})", f"{seconds:.2f}", f"{seconds / floor:.2f}x",
                     f"{verdict} in {root}"])
    print(f"Large codebase: {repo}")
    print(table(["what", "s", "vs floor", "notes"], rows))
    print("\n(the first order check includes building the call graph and the reachability graph once per run)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=None, help="a large Python codebase (default: transformers)")
    parser.add_argument("--skip-large", action="store_true")
    args = parser.parse_args()
    ok = fixture_accuracy()
    if not args.skip_large:
        repo = large_repo(args.repo)
        if repo is not None:
            large_codebase(repo)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
