"""Score many (repo, spec) pairs: a leaderboard like SA-Bench's, resumable, parallel, one failure never stops it.

Layout mode: ``runs/<config>/<paper>/repo`` (or ``runs/<config>/<paper>`` itself when it has no ``repo/``)
with specs in ``specs/<paper>/sau.*``. Manifest mode: a YAML/JSON/CSV list of {config, paper, repo, spec}.
Workers return small dicts (the JSON report and its scores), never index trees.
"""

from __future__ import annotations

import csv
import gc
import io
import json
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import yaml

from verifier.scoring import DIMENSIONS, r4

SPEC_NAMES = ("sau.yaml", "sau.yml", "sau.json", "sau.toml")


class BatchInputError(Exception):
    """A manifest or layout that cannot be read: exit 2."""


@dataclass(frozen=True, order=True)
class Pair:
    config: str
    paper: str
    repo: str
    spec: str

    @property
    def key(self) -> str:
        return f"{self.config}/{self.paper}"


def discover_layout(runs: Path, specs: Path) -> list[Pair]:
    if not runs.is_dir():
        raise BatchInputError(f"{runs}: no such directory (--runs)")
    if not specs.is_dir():
        raise BatchInputError(f"{specs}: no such directory (--specs)")
    pairs: list[Pair] = []
    for config in sorted(p for p in runs.iterdir() if p.is_dir()):
        for paper in sorted(p for p in config.iterdir() if p.is_dir()):
            repo = paper / "repo" if (paper / "repo").is_dir() else paper
            spec = next((specs / paper.name / n for n in SPEC_NAMES if (specs / paper.name / n).is_file()), None)
            pairs.append(Pair(config.name, paper.name, str(repo), str(spec) if spec else ""))
    return sorted(pairs)


def read_manifest(path: Path) -> list[Pair]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BatchInputError(f"{path}: cannot read manifest: {exc.strerror or exc}") from None
    base = path.parent
    rows: list[dict]
    try:
        if path.suffix == ".csv":
            rows = list(csv.DictReader(io.StringIO(text)))
        else:
            data = yaml.safe_load(text) if path.suffix in (".yaml", ".yml") else json.loads(text)
            rows = data.get("pairs", []) if isinstance(data, dict) else data
    except (yaml.YAMLError, json.JSONDecodeError, csv.Error) as exc:
        raise BatchInputError(f"{path}: manifest does not parse: {str(exc).splitlines()[0]}") from None
    if not isinstance(rows, list):
        raise BatchInputError(f"{path}: manifest must be a list of {{config, paper, repo, spec}}")
    pairs = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not row.get("repo"):
            raise BatchInputError(f"{path}: entry {i}: needs at least `repo`")
        repo = str((base / str(row["repo"])).resolve()) if not os.path.isabs(str(row["repo"])) else str(row["repo"])
        spec = row.get("spec") or ""
        if spec and not os.path.isabs(str(spec)):
            spec = str((base / str(spec)).resolve())
        pairs.append(Pair(str(row.get("config", "default")), str(row.get("paper", Path(repo).name)), repo, str(spec)))
    return sorted(pairs)


def report_path(out: Path, pair: Pair) -> Path:
    return out / pair.config / f"{pair.paper}.json"


def _newest_mtime(paths: Iterable[Path]) -> float:
    newest = 0.0
    for root in paths:
        if root.is_file():
            newest = max(newest, root.stat().st_mtime)
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in (".git", "__pycache__", "node_modules")]
            for name in filenames:
                try:
                    newest = max(newest, os.stat(os.path.join(dirpath, name), follow_symlinks=False).st_mtime)
                except OSError:
                    continue
    return newest


def is_fresh(out: Path, pair: Pair) -> bool:
    target = report_path(out, pair)
    if not target.is_file():
        return False
    inputs = [Path(pair.repo)] + ([Path(pair.spec)] if pair.spec else [])
    return target.stat().st_mtime >= _newest_mtime(inputs)


def score_pair(pair: Pair, use_cache: bool = True) -> dict:
    """Run one pair; never raises: failures come back as an error row."""
    from verifier.engine import InputError, run_repo
    from verifier.reports.json_report import report_to_json
    from verifier.spec.errors import SpecError

    try:
        report = run_repo(Path(pair.repo), Path(pair.spec) if pair.spec else None, use_cache=use_cache)
        return {"pair": pair, "report": report_to_json(report), "error": None}
    except (SpecError, InputError) as exc:
        return {"pair": pair, "report": None, "error": str(exc)}
    except Exception as exc:  # one broken repo must not stop the batch
        return {"pair": pair, "report": None, "error": f"{type(exc).__name__}: {exc}"}
    finally:
        # A large repo's index and trees are frozen out of the cyclic GC for the run (verifier/index); the
        # next pair in this process must not inherit that permanent generation, or cyclic garbage frozen with
        # it would never be collected over a long batch.
        gc.unfreeze()


def _write_report(out: Path, pair: Pair, report: dict) -> None:
    target = report_path(out, pair)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(target)


def run_batch(
    pairs: list[Pair],
    out: Path,
    *,
    jobs: int = 1,
    resume: bool = True,
    use_cache: bool = True,
    executor: str = "local",
    ray_address: str | None = None,
    progress: Callable[[Pair, str], None] | None = None,
) -> list[dict]:
    """Score every pair, write its report, return one row per pair (sorted by config, paper)."""
    out.mkdir(parents=True, exist_ok=True)
    rows: dict[str, dict] = {}
    todo: list[Pair] = []
    for pair in pairs:
        if not pair.spec:
            rows[pair.key] = _row(pair, None, f"no spec found for paper {pair.paper}")
            if progress:
                progress(pair, "error")
        elif resume and is_fresh(out, pair):
            rows[pair.key] = _row(pair, json.loads(report_path(out, pair).read_text(encoding="utf-8")), None)
            if progress:
                progress(pair, "cached")
        else:
            todo.append(pair)

    def finish(result: dict) -> None:
        pair = result["pair"]
        if result["report"] is not None:
            _write_report(out, pair, result["report"])
        rows[pair.key] = _row(pair, result["report"], result["error"])
        if progress:
            progress(pair, "error" if result["error"] else "done")

    if executor == "ray":
        _run_ray(todo, use_cache, ray_address, finish)
    elif jobs <= 1 or len(todo) <= 1:
        for pair in todo:
            finish(score_pair(pair, use_cache))
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(score_pair, pair, use_cache) for pair in todo]
            for fut in as_completed(futures):
                finish(fut.result())
    return [rows[k] for k in sorted(rows)]


def _run_ray(todo: list[Pair], use_cache: bool, address: str | None, finish: Callable[[dict], None]) -> None:
    try:
        import ray
    except ImportError:
        raise BatchInputError("--executor ray needs Ray: pip install 'sau-verify[ray]'") from None
    if not ray.is_initialized():
        # Workers must import this package even when it runs from a source checkout.
        package_root = str(Path(__file__).resolve().parent.parent)
        ray.init(
            address=address,
            ignore_reinit_error=True,
            log_to_driver=False,
            include_dashboard=False if address is None else None,
            runtime_env={"env_vars": {"PYTHONPATH": package_root}},
        )
    remote = ray.remote(score_pair)
    pending = {remote.remote(pair, use_cache): pair for pair in todo}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            pending.pop(ref)
            finish(ray.get(ref))


def _row(pair: Pair, report: dict | None, error: str | None) -> dict:
    row: dict = {"config": pair.config, "paper": pair.paper, "repo": pair.repo, "spec": pair.spec}
    if report is None:
        row.update({"status": "error", "error": error or "unknown error"})
        return row
    scores = report["scores"]
    row.update({"status": "ok", "error": ""})
    for d in DIMENSIONS:
        row[d] = scores["dimensions"].get(d)
    for key in ("macro", "micro", "macro_decided", "micro_decided", "coverage"):
        row[key] = scores[key]
    row["saus"] = len(report["saus"])
    return row


def leaderboard(rows: list[dict]) -> list[dict]:
    """Per configuration: mean of each score over its papers (papers that errored count as missing)."""
    by_config: dict[str, list[dict]] = {}
    for row in rows:
        by_config.setdefault(row["config"], []).append(row)
    board = []
    for config in sorted(by_config):
        ok = [r for r in by_config[config] if r["status"] == "ok"]
        entry: dict = {"config": config, "papers": len(by_config[config]), "errors": len(by_config[config]) - len(ok)}
        for key in (*DIMENSIONS, "macro", "micro", "macro_decided", "micro_decided", "coverage"):
            values = [r[key] for r in ok if r.get(key) is not None]
            entry[key] = r4(sum(values) / len(values)) if values else None
        board.append(entry)
    return board


COLUMNS = ("config", "paper", "status", *DIMENSIONS, "macro", "micro", "macro_decided", "micro_decided", "coverage", "saus", "error")
BOARD_COLUMNS = ("config", "papers", "errors", *DIMENSIONS, "macro", "micro", "macro_decided", "micro_decided", "coverage")


def write_tables(out: Path, rows: list[dict]) -> dict[str, Path]:
    board = leaderboard(rows)
    paths = {"csv": out / "summary.csv", "json": out / "summary.json", "markdown": out / "summary.md"}
    with paths["csv"].open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _fmt(row.get(k)) for k in COLUMNS})
    paths["json"].write_text(
        json.dumps({"pairs": rows, "leaderboard": board}, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    md = ["| " + " | ".join(BOARD_COLUMNS) + " |", "|" + "---|" * len(BOARD_COLUMNS)]
    md += ["| " + " | ".join(_fmt(e.get(k)) for k in BOARD_COLUMNS) + " |" for e in board]
    md += ["", "| " + " | ".join(COLUMNS[:-1]) + " |", "|" + "---|" * (len(COLUMNS) - 1)]
    md += ["| " + " | ".join(_fmt(r.get(k)) for k in COLUMNS[:-1]) + " |" for r in rows]
    paths["markdown"].write_text("\n".join(md) + "\n", encoding="utf-8")
    return paths


def _fmt(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)
