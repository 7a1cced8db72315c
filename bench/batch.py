"""Batch benchmark: 300 generated-size repos (2,000-5,000 lines each, made from the fixtures) scored without a
judge, with ``--jobs 1`` and ``--jobs 2``, each from a cold cache. Goal: under 60 s with 2 jobs on 2 cores and a
speed-up of at least 1.7x.

    python bench/batch.py [--repos 300] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from harness import fixture_cases, materialize  # noqa: E402

from verifier.batch import Pair, run_batch  # noqa: E402
from verifier.spec.load import find_spec  # noqa: E402

FILLER = '''\
"""Utilities for experiment {n}: logging, metrics buffers and small tensor helpers."""
import math
import os
import json


class RunningMean{n}:
    def __init__(self, window={window}):
        self.window = window
        self.values = []

    def update(self, value):
        self.values.append(float(value))
        if len(self.values) > self.window:
            self.values.pop(0)
        return self.mean()

    def mean(self):
        return sum(self.values) / max(len(self.values), 1)


def cosine_schedule_{n}(step, total_steps, base={base}, floor=0.0):
    progress = min(step / max(total_steps, 1), 1.0)
    return floor + 0.5 * (base - floor) * (1 + math.cos(math.pi * progress))


def save_metrics_{n}(path, metrics):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as handle:
        json.dump(metrics, handle, indent=2, sort_keys=True)


def moving_average_{n}(xs, k={k}):
    out = []
    for i in range(len(xs)):
        lo = max(0, i - k + 1)
        out.append(sum(xs[lo:i + 1]) / (i - lo + 1))
    return out

'''


def make_repo(fixture: str, dest: Path, target_lines: int, rng: random.Random) -> Pair:
    repo = materialize(fixture, None, dest)
    lines = sum(len(p.read_text(errors="replace").splitlines()) for p in repo.rglob("*.py"))
    n = 0
    util = repo / "utils_generated"
    util.mkdir(exist_ok=True)
    while lines < target_lines:
        text = FILLER.format(n=n, window=rng.choice([10, 50, 100]), base=rng.choice([0.1, 0.01]), k=rng.choice([3, 5]))
        text = text * 4  # a realistic 150-200 line module
        (util / f"helpers_{n}.py").write_text(text, encoding="utf-8")
        lines += len(text.splitlines())
        n += 1
    return Pair("bench", f"{fixture}-{dest.name}", str(repo), str(find_spec(repo)))


def timed(pairs: list[Pair], out: Path, jobs: int) -> float:
    cache = tempfile.mkdtemp(prefix="sau-bench-cache-")
    os.environ["SAU_VERIFY_CACHE_DIR"] = cache
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    rows = run_batch(pairs, out, jobs=jobs, resume=False)
    elapsed = time.perf_counter() - start
    errors = [r for r in rows if r["status"] == "error"]
    if errors:
        print(f"  {len(errors)} pairs errored, e.g. {errors[0]['error']}")
    shutil.rmtree(cache, ignore_errors=True)
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    fixtures = sorted({f for f, _ in fixture_cases()})
    rng = random.Random(0)
    with tempfile.TemporaryDirectory(prefix="sau-bench-batch-") as tmp:
        work = Path(tmp)
        pairs = []
        total_lines = 0
        for i in range(args.repos):
            pair = make_repo(fixtures[i % len(fixtures)], work / "repos" / f"r{i:03d}", rng.randint(2000, 5000), rng)
            pairs.append(pair)
            total_lines += sum(len(p.read_text(errors="replace").splitlines()) for p in Path(pair.repo).rglob("*.py"))
        print(f"{len(pairs)} repos, {total_lines:,} Python lines, from {len(fixtures)} fixtures")
        t1 = timed(pairs, work / "out1", 1)
        print(f"--jobs 1: {t1:6.1f} s")
        t2 = timed(pairs, work / "out2", args.jobs)
        print(f"--jobs {args.jobs}: {t2:6.1f} s   speed-up {t1 / t2:.2f}x   (goal < 60 s, >= 1.7x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
