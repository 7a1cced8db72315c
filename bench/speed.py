"""Speed and memory of sau-verify against Python's own ``ast.parse`` floor (not part of pytest).

    python bench/speed.py                 # transformers (downloaded with pip) + every fixture
    python bench/speed.py --repo PATH     # any other checkout
    python bench/speed.py --no-fixtures

Each phase runs in a fresh interpreter (start-up included in its wall time, like a real CLI run):
  floor        ast.parse over the same .py files the index reads
  index-1 / -2 build_index(use_cache=False) with 1 and 2 worker processes (cold)
  index-fill   build_index cold, writing the per-file cache (2 workers)
  index-warm   build_index from that cache
  run-cold     run_repo on a 100-SAU value spec, no cache
  run-warm     run_repo with the cache filled
  run-claims   run_repo on every SA-Bench dev claim (../shared/sabench-dev, 8 papers, compiled as a user's
               `--spec sau.json` is), no cache; the time of each check kind is listed, since a real spec holds
               dozens of checks of one kind and a cost paid per check shows only here
Reported: wall seconds, ratio to the floor, CPU seconds (incl. workers), peak RSS (max over the process and
its workers). The machine load is printed too: wall ratios are only meaningful on an otherwise idle machine;
on a shared one compare the CPU column (workers' CPU / 2 approximates their wall time on 2 free cores).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
WORK = HERE / "_work"
TRANSFORMERS = "transformers==4.46.3"

# 100 hyperparameter names as they appear in real model/training code, with a plausible expected value.
HYPERPARAMETERS = [
    ("hidden_size", 768), ("num_attention_heads", 12), ("num_hidden_layers", 12), ("intermediate_size", 3072),
    ("hidden_dropout_prob", 0.1), ("attention_probs_dropout_prob", 0.1), ("max_position_embeddings", 512),
    ("vocab_size", 30522), ("layer_norm_eps", 1e-12), ("initializer_range", 0.02), ("learning_rate", 5e-5),
    ("weight_decay", 0.0), ("adam_beta1", 0.9), ("adam_beta2", 0.999), ("adam_epsilon", 1e-8),
    ("max_grad_norm", 1.0), ("num_train_epochs", 3), ("warmup_steps", 0), ("warmup_ratio", 0.0),
    ("per_device_train_batch_size", 8), ("gradient_accumulation_steps", 1), ("seed", 42), ("dropout", 0.1),
    ("attention_dropout", 0.0), ("activation_dropout", 0.0), ("hidden_act", "gelu"), ("type_vocab_size", 2),
    ("pad_token_id", 0), ("bos_token_id", 1), ("eos_token_id", 2), ("rope_theta", 10000.0),
    ("num_key_value_heads", 8), ("rms_norm_eps", 1e-6), ("d_model", 512), ("d_ff", 2048), ("d_kv", 64),
    ("num_heads", 8), ("num_layers", 6), ("num_decoder_layers", 6), ("relative_attention_num_buckets", 32),
    ("dropout_rate", 0.1), ("layer_norm_epsilon", 1e-6), ("initializer_factor", 1.0), ("n_embd", 768),
    ("n_layer", 12), ("n_head", 12), ("n_positions", 1024), ("resid_pdrop", 0.1), ("embd_pdrop", 0.1),
    ("attn_pdrop", 0.1), ("image_size", 224), ("patch_size", 16), ("num_channels", 3), ("qkv_bias", True),
    ("encoder_stride", 16), ("num_labels", 2), ("label_smoothing_factor", 0.0), ("lr", 1e-3), ("momentum", 0.9),
    ("eps", 1e-8), ("beta1", 0.9), ("beta2", 0.999), ("gamma", 0.99), ("temperature", 1.0), ("top_k", 50),
    ("top_p", 1.0), ("num_beams", 1), ("max_length", 20), ("min_length", 0), ("repetition_penalty", 1.0),
    ("length_penalty", 1.0), ("no_repeat_ngram_size", 0), ("kernel_size", 3), ("stride", 2), ("padding", 1),
    ("num_groups", 32), ("channels", 256), ("embed_dim", 768), ("depth", 12), ("mlp_ratio", 4.0),
    ("drop_path_rate", 0.1), ("window_size", 7), ("num_experts", 8), ("num_experts_per_tok", 2),
    ("router_aux_loss_coef", 0.001), ("sliding_window", 4096), ("max_seq_len", 2048), ("block_size", 1024),
    ("batch_size", 32), ("epochs", 10), ("warmup", 0.1), ("clip_grad_norm", 1.0), ("lr_scheduler_type", "linear"),
    ("logging_steps", 500), ("save_steps", 500), ("eval_steps", 500), ("max_steps", -1),
    ("mask_token_id", 103), ("projection_dim", 512), ("logit_scale_init_value", 2.6592),
]
assert len(HYPERPARAMETERS) == 100


def write_spec(path: Path) -> Path:
    lines = ["version: 1", "paper: {id: bench, title: speed bench}", "saus:"]
    for i, (name, value) in enumerate(HYPERPARAMETERS, 1):
        lines += [f"  - id: bench-D1-{i:03d}", "    dimension: numerical", f"    claim: {name} is {value}.",
                  f"    check: {{kind: value, name: {name}, expect: {json.dumps(value)}}}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


DEV_CLAIMS = PROJECT.parent / "shared" / "sabench-dev"


def write_claims_spec(path: Path) -> Path | None:
    """All dev claims as one SA-Bench-style claim file (written under bench/_work, never into the project)."""
    papers = sorted(DEV_CLAIMS.glob("*.json"))
    if not papers:
        return None
    claims = [c for p in papers for c in json.loads(p.read_text(encoding="utf-8"))["claims"]]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"paper_id": "sabench-dev", "claims": claims}, sort_keys=True), encoding="utf-8")
    return path


def fetch_transformers() -> Path:
    target = WORK / "src"
    if (target / "transformers").is_dir():
        return target / "transformers"
    WORK.mkdir(parents=True, exist_ok=True)
    wheels = sorted(WORK.glob("transformers-*.whl"))
    if not wheels:
        subprocess.run([sys.executable, "-m", "pip", "download", TRANSFORMERS, "--no-deps", "-q", "-d", str(WORK)],
                       check=True)
        wheels = sorted(WORK.glob("transformers-*.whl"))
    with zipfile.ZipFile(wheels[-1]) as zf:
        zf.extractall(target)
    return target / "transformers"


# ----- phases (run in a child interpreter) ----------------------------------------------------------------------
def phase(name: str, repo: Path, spec: Path | None, cache_dir: Path) -> dict:
    os.environ["SAU_VERIFY_CACHE_DIR"] = str(cache_dir)
    sys.path.insert(0, str(PROJECT))
    start = time.perf_counter()
    info: dict = {}
    if name == "floor":
        import ast

        from verifier.index.discover import discover

        candidates, _ = discover(repo.resolve())
        n = lines = 0
        for c in candidates:
            if c.path.endswith(".py"):
                data = (repo / c.path).read_bytes()
                lines += data.count(b"\n")
                n += 1
                try:
                    ast.parse(data)
                except (SyntaxError, ValueError):
                    pass
        info = {"py_files": n, "lines": lines}
    elif name.startswith("index"):
        from verifier.index.build import build_index

        jobs = 1 if name == "index-1" else 2
        index = build_index(repo, use_cache=name in ("index-fill", "index-warm"), jobs=jobs)
        info = dict(index.stats)
        info["bindings"] = sum(len(f.bindings) for f in index.files.values())
        info["calls"] = sum(len(f.calls) for f in index.files.values())
    elif name.startswith("run"):
        from verifier import engine
        from verifier.engine import run_repo
        from verifier.reports.json_report import report_to_json

        by_kind: dict[str, list[float]] = {}
        timed = engine.run_check

        def run_check(check, ctx):  # the time of every check, by kind (a spec's checks run one after another)
            t0 = time.perf_counter()
            try:
                return timed(check, ctx)
            finally:
                kind = check.kind if check.kind != "protocol" else f"protocol:{check.rule}"
                by_kind.setdefault(kind, []).append(time.perf_counter() - t0)

        engine.run_check = run_check
        report = run_repo(repo, spec, use_cache=(name == "run-warm"))
        json.dumps(report_to_json(report), sort_keys=True)
        statuses: dict[str, int] = {}
        for v in report.verdicts:
            key = getattr(v.status, "value", str(v.status))
            statuses[key] = statuses.get(key, 0) + 1
        info = {"saus": len(report.verdicts), "statuses": statuses}
        if name == "run-claims":
            info["checks"] = {k: [len(v), round(sum(v), 2)] for k, v in sorted(by_kind.items(), key=lambda kv: -sum(kv[1]))}
    inner = time.perf_counter() - start
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "inner_wall": inner,
        "cpu": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,
        "rss_mb": max(me.ru_maxrss, kids.ru_maxrss) / 1024,
        **info,
    }


def run_phase(name: str, repo: Path, spec: Path | None, cache_dir: Path) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--phase", name, "--repo", str(repo),
           "--cache", str(cache_dir)]
    if spec is not None:
        cmd += ["--spec", str(spec)]
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=str(PROJECT), check=False)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1], "wall": wall}
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["wall"] = wall
    return result


def bench_repo(label: str, repo: Path, spec: Path | None, phases: list[str]) -> list[tuple[str, dict]]:
    """Phases in order; index-fill writes the cache that index-warm and run-warm then read."""
    cache_dir = WORK / f"cache-{label}"
    shutil.rmtree(cache_dir, ignore_errors=True)
    rows = [(name, run_phase(name, repo, spec, cache_dir)) for name in phases]
    shutil.rmtree(cache_dir, ignore_errors=True)
    return rows


def print_table(label: str, rows: list[tuple[str, dict]]) -> None:
    floor = next((r["wall"] for n, r in rows if n == "floor" and "wall" in r), None)
    print(f"\n== {label}")
    print(f"{'phase':<12} {'wall s':>8} {'x floor':>8} {'cpu s':>8} {'peak MB':>8}  details")
    for name, r in rows:
        if "error" in r:
            print(f"{name:<12} {r['wall']:8.2f} {'':>8} {'':>8} {'':>8}  ERROR {r['error']}")
            continue
        ratio = f"{r['wall'] / floor:8.2f}" if floor else f"{'':>8}"
        details = {k: v for k, v in r.items() if k not in ("wall", "inner_wall", "cpu", "rss_mb")}
        print(f"{name:<12} {r['wall']:8.2f} {ratio} {r['cpu']:8.2f} {r['rss_mb']:8.0f}  {json.dumps(details)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--phase")
    ap.add_argument("--repo", type=Path)
    ap.add_argument("--spec", type=Path)
    ap.add_argument("--cache", type=Path)
    ap.add_argument("--no-fixtures", action="store_true")
    ap.add_argument("--no-large", action="store_true")
    ap.add_argument("--claims-only", action="store_true", help="only the floor and run-claims on the large repo")
    args = ap.parse_args()
    if args.phase:
        print(json.dumps(phase(args.phase, args.repo, args.spec, args.cache)))
        return
    sys.path.insert(0, str(PROJECT))
    try:
        import verifier.engine  # noqa: F401

        has_engine = True
    except ImportError:
        has_engine = False
    phases = ["floor", "index-1", "index-2", "index-fill", "index-warm"]
    if has_engine:
        phases += ["run-cold", "run-warm"]
    print(f"python {sys.version.split()[0]}, cpus {os.cpu_count()}, load average {os.getloadavg()}")
    claims = write_claims_spec(WORK / "sabench-dev-claims.json") if has_engine else None
    if not args.no_large or args.claims_only:
        repo = args.repo or fetch_transformers()
        if not args.claims_only:
            spec = write_spec(WORK / "spec-100.yaml")
            print_table(f"{repo} (100-SAU value spec)", bench_repo("large", repo, spec, phases))
        if claims is not None:
            rows = bench_repo("claims", repo, claims, ["floor", "run-claims"])
            print_table(f"{repo} (every SA-Bench dev claim, compiled; checks: kind -> [count, seconds])", rows)
        else:
            print("\nrun-claims skipped: no ../shared/sabench-dev")
    if args.claims_only:
        return
    if not args.no_fixtures:
        total: dict[str, float] = {}
        for fixture in sorted((PROJECT / "fixtures").glob("*/repo")):
            spec = fixture / "sau.yaml"
            rows = bench_repo(fixture.parent.name, fixture, spec if spec.exists() else None,
                              [p for p in phases if p not in ("index-1", "index-2")])
            for name, r in rows:
                total[name] = total.get(name, 0.0) + r.get("wall", 0.0)
            print_table(f"fixture {fixture.parent.name}", rows)
        print("\nfixtures total wall: " + ", ".join(f"{k} {v:.2f}s" for k, v in total.items()))


if __name__ == "__main__":
    main()
