"""Quality benchmark: verdict accuracy on every fixture, and mutation kill rates on the faithful repos.

Prints a confusion matrix per dimension (pass vs not-pass, tool against expected.yaml), the kill rate per
drift operator, the false-alarm rate and the time per `mutate` run; exits 1 loudly when any expected-verdict
file disagrees with the tool.

    python bench/quality.py [--max-mutants 100] [--seed 0] [--jobs 2] [--markdown]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from harness import expected_for, fixture_cases, materialize, mismatches  # noqa: E402

from verifier.engine import run_repo  # noqa: E402
from verifier.mutate.runner import mutate_repo  # noqa: E402

DIMS = ("numerical", "methodological", "protocol", "ordering")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-mutants", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--markdown", action="store_true", help="Print the README summary table.")
    parser.add_argument("--no-mutate", action="store_true")
    args = parser.parse_args()

    confusion = {d: {"tp": 0, "fp": 0, "fn": 0, "tn": 0} for d in DIMS}
    disagreements: list[str] = []
    verdicts = correct = 0
    fixtures = sorted({f for f, _ in fixture_cases()})
    with tempfile.TemporaryDirectory() as tmp:
        for i, (fixture, variant) in enumerate(fixture_cases()):
            repo = materialize(fixture, variant, Path(tmp) / str(i))
            report = run_repo(repo)
            expected = expected_for(fixture, variant)
            problems = mismatches(report, expected)
            disagreements += [f"{fixture}/{variant or 'faithful'}: {p}" for p in problems]
            for v in report.verdicts:
                exp = expected.get(v.id)
                if exp is None:
                    continue
                verdicts += 1
                correct += v.status.value == exp["status"] and v.score == exp.get("score", v.score)
                tool_pass, exp_pass = v.status.value == "pass", exp["status"] == "pass"
                cell = ("tp" if exp_pass else "fp") if tool_pass else ("fn" if exp_pass else "tn")
                confusion[v.dimension][cell] += 1

        print(f"Verdict accuracy: {correct}/{verdicts} = {correct / max(verdicts, 1) * 100:.1f}%"
              f" over {len(fixture_cases())} fixture repos ({len(fixtures)} faithful)")
        print("\nConfusion per dimension (positive = pass; rows: tool vs expected)")
        print(f"  {'dimension':15} {'tp':>4} {'fp':>4} {'fn':>4} {'tn':>4}")
        for d in DIMS:
            c = confusion[d]
            print(f"  {d:15} {c['tp']:4} {c['fp']:4} {c['fn']:4} {c['tn']:4}")

        if not args.no_mutate:
            per_op: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # mutants, caught, relevant, caught
            relevant = relevant_killed = alarms = pairs = 0
            times = []
            for i, fixture in enumerate(fixtures):
                repo = materialize(fixture, None, Path(tmp) / f"m{i}")
                start = time.perf_counter()
                result = mutate_repo(repo, seed=args.seed, max_mutants=args.max_mutants, jobs=args.jobs)
                times.append((fixture, time.perf_counter() - start, len(result.outcomes)))
                s = result.summary()
                relevant += s["relevant_mutants"]
                relevant_killed += s["relevant_killed"]
                alarms += s["false_alarms"]
                pairs += s["mutants"] * len(result.saus)
                for o in result.outcomes:
                    row = per_op[o.mutant.operator]
                    row[0] += 1
                    row[1] += bool(o.caught_by)
                    row[2] += bool(o.touched)
                    row[3] += bool(o.touched and o.caught_by)
            print("\nKill rate per operator: all mutants, and those that change code a SAU claims (relevant)")
            rows = []
            for op in sorted(per_op):
                n, k, rn, rk = per_op[op]
                rows.append((op, n, k, rn, rk))
                rel = f"{rk:4}/{rn:<4}" + (f" {rk / rn * 100:5.1f}%" if rn else "     -")
                print(f"  {op:18} {k:4}/{n:<4} {k / n * 100 if n else 0:5.1f}%   relevant {rel}")
            print(f"\nMutants touching a SAU's evidence: {relevant}, caught {relevant_killed}"
                  f" ({relevant_killed / max(relevant, 1) * 100:.1f}%)")
            print(f"False alarms: {alarms} of {pairs} mutant x SAU pairs ({alarms / max(pairs, 1) * 100:.2f}%)")
            print("\nTime per mutate run")
            for fixture, secs, n in times:
                print(f"  {fixture:32} {n:4} mutants {secs:7.2f} s")
            if args.markdown:
                print("\n| operator | mutants | caught | relevant | relevant caught |\n|---|---|---|---|---|")
                for op, n, k, rn, rk in rows:
                    rel = f"{rk} ({rk / rn * 100:.0f}%)" if rn else "-"
                    print(f"| {op} | {n} | {k} | {rn} | {rel} |")

    if disagreements:
        print(f"\nFAIL: {len(disagreements)} expected verdict(s) disagree with the tool:", file=sys.stderr)
        for line in disagreements:
            print(f"  {line}", file=sys.stderr)
        return 1
    print("\nAll expected-verdict files agree with the tool.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
