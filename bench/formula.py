"""Formula-check benchmark on the formula fixtures: verdicts against expected, and time per check.

Run: python bench/formula.py
For every formula SAU of every fixture repo (faithful and drifted variants): is the verdict the expected
one (equivalent pairs judged equivalent, drifted pairs caught, no wrong verdict), and how long did the check
take -- "warm" as in a real run (one Context per repo, so the repo is translated once and shared) and
"cold" (a fresh Context per check, translation included).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from harness import expected_for, fixture_cases, materialize

from verifier.checks import Context, Options, load_all
from verifier.engine import load_for
from verifier.index.build import build_index


def formula_checks(spec):
    for sau in sorted(spec.saus, key=lambda s: s.id):
        for check in sau.all_checks():
            if check.kind == "formula":
                yield sau, check


def main() -> int:
    checker = load_all()["formula"]
    rows = []
    cases = [c for c in fixture_cases() if c[0].startswith("formula-")]
    with tempfile.TemporaryDirectory() as tmp:
        for i, (fixture, variant) in enumerate(cases):
            repo = materialize(fixture, variant, Path(tmp) / str(i))
            loaded = load_for(repo)
            expected = expected_for(fixture, variant)
            index = build_index(repo, include=list(loaded.spec.repo.include), exclude=list(loaded.spec.repo.exclude), use_cache=False)
            shared = Context(index=index, spec=loaded.spec, options=Options())
            for sau, check in formula_checks(loaded.spec):
                shared.sau = sau
                t0 = time.perf_counter()
                result = checker(check, shared)
                warm = time.perf_counter() - t0
                cold_ctx = Context(index=index, spec=loaded.spec, options=Options(), sau=sau)
                t0 = time.perf_counter()
                checker(check, cold_ctx)
                cold = time.perf_counter() - t0
                want = expected.get(sau.id, {}).get("status")
                rows.append((fixture, variant or "faithful", sau.id, want, result.status.value,
                             result.details.get("decision", ""), warm, cold))
    width = max(len(f"{r[0]}/{r[1]}") for r in rows)
    print(f"{'case':<{width}}  {'sau':<12} {'expected':<9} {'got':<9} {'decision':<23} {'warm ms':>8} {'cold ms':>8}")
    for fixture, variant, sid, want, got, decision, warm, cold in rows:
        flag = "" if want == got else "  <-- WRONG"
        print(f"{fixture + '/' + variant:<{width}}  {sid:<12} {want:<9} {got:<9} {decision:<23} {warm * 1000:8.1f} {cold * 1000:8.1f}{flag}")
    equivalent = [r for r in rows if r[3] == "pass"]
    drifted = [r for r in rows if r[3] in ("mismatch", "stub", "missing")]
    eq_ok = sum(1 for r in equivalent if r[4] == "pass")
    drift_ok = sum(1 for r in drifted if r[4] == r[3])
    wrong = sum(1 for r in rows if (r[3] == "pass" and r[4] in ("mismatch", "stub", "missing"))
                or (r[3] in ("mismatch", "stub", "missing") and r[4] == "pass"))
    warm_times = [r[6] for r in rows]
    cold_times = [r[7] for r in rows]
    print()
    print(f"equivalent pairs judged equivalent: {eq_ok}/{len(equivalent)}")
    print(f"drifted pairs caught:               {drift_ok}/{len(drifted)}")
    print(f"wrong verdicts (pass<->fail):       {wrong}")
    print(f"decided correctly overall:          {sum(1 for r in rows if r[3] == r[4])}/{len(rows)}")
    print(f"time per check, warm: median {statistics.median(warm_times) * 1000:.1f} ms, worst {max(warm_times) * 1000:.1f} ms")
    print(f"time per check, cold: median {statistics.median(cold_times) * 1000:.1f} ms, worst {max(cold_times) * 1000:.1f} ms")
    return 0 if wrong == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
