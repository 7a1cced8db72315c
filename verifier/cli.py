"""The ``sau-verify`` command line.

``sau-verify REPO`` is the main job (the ``check`` command is implied); other jobs are subcommands.
Exit codes: 0 the run meets the bar, 1 it falls short, 2 bad input (spec or arguments). Never a traceback:
expected failures print one line naming file, line and field.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import NoReturn

import click

from verifier import __version__
from verifier.reports import FORMATS, render
from verifier.scoring import gate
from verifier.spec.errors import SpecError

EXAMPLES = """
\b
Examples:
  sau-verify path/to/repo                      # reads path/to/repo/sau.yaml, prints the report
  sau-verify repo --spec claims/sau.json       # an SA-Bench claim file
  sau-verify repo --format json --output report.json
  sau-verify repo --format sarif --output out.sarif --format text
  sau-verify repo --fail-under 0.8             # CI gate on the macro score of decided SAUs
  sau-verify repo --only ppo-D1-001,ppo-D2-003
"""


class DefaultGroup(click.Group):
    """A group whose first argument, when it is not a subcommand, is the repo of the implied ``check``."""

    default_command = "check"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = [self.default_command, *args]
        elif not args:
            args = [self.default_command, "--help"]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXAMPLES)
@click.version_option(__version__, "--version", prog_name="sau-verify")
def main() -> None:
    """Check that a repository implements what its paper claims (SAU spec v1)."""


def fail_input(message: str) -> NoReturn:
    click.echo(f"sau-verify: error: {message}", err=True)
    sys.exit(2)


def parse_only(value: str | None) -> set[str] | None:
    if value is None:
        return None
    ids = {part.strip() for part in value.split(",") if part.strip()}
    if not ids:
        fail_input("--only: give at least one SAU id (comma-separated)")
    return ids


def pair_outputs(formats: tuple[str, ...], outputs: tuple[str, ...]) -> list[tuple[str, str | None]]:
    """``--format a --output x --format b``: the i-th output goes with the i-th format; extras go to stdout."""
    formats = formats or ("text",)
    if len(outputs) > len(formats):
        fail_input("more --output than --format options: pair each --output with a --format")
    pairs = [(fmt, outputs[i] if i < len(outputs) else None) for i, fmt in enumerate(formats)]
    if sum(1 for _, out in pairs if out is None) > 1:
        fail_input("only one --format may go to standard output; give the others an --output")
    return pairs


# ----- the LLM judge's flags (issue 6: verifier/judge) --------------------------------------------------------
def judge_options(fn):
    """--judge and its settings; flags win over SAU_VERIFY_JUDGE_* env vars and [tool.sau-verify] in ./pyproject.toml."""
    options = [
        click.option("--judge", is_flag=True, help="Let an LLM judge decide what static analysis leaves unverified."),
        click.option("--judge-model", help="Judge model name (env SAU_VERIFY_JUDGE_MODEL)."),
        click.option("--judge-base-url", help="OpenAI-compatible base URL, e.g. http://localhost:8000/v1."),
        click.option("--judge-api-key-env", help="Environment variable holding the API key (default OPENAI_API_KEY)."),
        click.option("--judge-cache-only", is_flag=True, help="Never call out: use sau.lock.json verdicts only (CI)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def judge_config(flags: dict):
    from verifier.judge.config import JudgeConfigError, resolve

    try:
        return resolve(flags)
    except JudgeConfigError as exc:
        fail_input(str(exc))


@main.command("check", epilog=EXAMPLES)
@click.argument("repo", type=click.Path(path_type=Path))
@click.option("--spec", "spec_path", type=click.Path(path_type=Path), help="Spec file (default: REPO/sau.yaml).")
@click.option("--format", "formats", multiple=True, type=click.Choice(FORMATS), help="Output format (repeatable).")
@click.option("--output", "outputs", multiple=True, help="Write the matching --format here (repeatable).")
@click.option("--fail-under", type=click.FloatRange(0, 1), help="Exit 1 when the score is below this.")
@click.option(
    "--fail-metric",
    type=click.Choice(["macro", "micro", "macro_decided", "micro_decided"]),
    default="macro_decided",
    show_default=True,
    help="Which score --fail-under compares.",
)
@click.option("--only", help="Comma-separated SAU ids to check.")
@click.option("--no-cache", is_flag=True, help="Re-index every file, ignoring the content-hash cache.")
@click.option(
    "--baseline",
    metavar="REF",
    help="Fail only on SAUs that got worse than this git revision or saved JSON report.",
)
@judge_options
def check_cmd(repo, spec_path, formats, outputs, fail_under, fail_metric, only, no_cache, baseline, **judge_flags):
    """Check REPO against its spec and print the report."""
    from verifier.baseline import BaselineError, baseline_verdicts, regressions
    from verifier.engine import InputError, load_for, run_repo

    pairs = pair_outputs(formats, outputs)
    judge = judge_config(judge_flags)
    try:
        loaded = load_for(repo, spec_path)
        report = run_repo(repo, loaded=loaded, use_cache=not no_cache, only=parse_only(only), judge=judge)
        if baseline:
            old = baseline_verdicts(
                repo,
                baseline,
                lambda tree: run_repo(tree, loaded=loaded, use_cache=not no_cache, only=parse_only(only)).verdicts,
            )
    except (SpecError, InputError, BaselineError) as exc:
        fail_input(str(exc))
    for fmt, out in pairs:
        text = render(report, fmt, color=out is None and fmt == "text" and sys.stdout.isatty())
        if out is None:
            click.echo(text, nl=False)
        else:
            try:
                Path(out).write_text(text, encoding="utf-8")
            except OSError as exc:
                fail_input(f"{out}: cannot write report: {exc.strerror or exc}")
    if baseline:
        worse = regressions(report.verdicts, old)
        for r in worse:
            click.echo(f"regressed: {r.describe()}", err=True)
        click.echo(f"sau-verify: {len(worse)} SAU(s) worse than baseline {baseline}", err=True)
        ok = not worse and (fail_under is None or gate(report.verdicts, report.scores, fail_under, fail_metric))
    else:
        ok = gate(report.verdicts, report.scores, fail_under, fail_metric)
        errored = sorted(v.id for v in report.verdicts if v.status.value == "error" and v.accepted_deviation is None)
        if errored and fail_under is None:
            shown = ", ".join(errored[:5]) + (f" and {len(errored) - 5} more" if len(errored) > 5 else "")
            click.echo(f"sau-verify: {len(errored)} SAU(s) could not be checked (error): {shown}", err=True)
    sys.exit(0 if ok else 1)


@main.command("explain")
@click.argument("repo", type=click.Path(path_type=Path))
@click.argument("sau_id")
@click.option("--spec", "spec_path", type=click.Path(path_type=Path), help="Spec file (default: REPO/sau.yaml).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--no-cache", is_flag=True, help="Re-index every file.")
def explain_cmd(repo, sau_id, spec_path, fmt, no_cache):
    """Everything behind one verdict: the check, every binding and its provenance, graphs, formulas."""
    from verifier.engine import InputError, load_for, run_repo
    from verifier.reports.explain import render_explain

    try:
        loaded = load_for(repo, spec_path)
        report = run_repo(repo, loaded=loaded, use_cache=not no_cache, only={sau_id})
    except (SpecError, InputError) as exc:
        fail_input(str(exc))
    sau = next(s for s in loaded.spec.saus if s.id == sau_id)
    click.echo(render_explain(sau, report.verdicts[0], fmt), nl=False)


@main.command("batch")
@click.option("--runs", type=click.Path(path_type=Path), help="Layout mode: runs/<config>/<paper>/repo.")
@click.option("--specs", type=click.Path(path_type=Path), help="Layout mode: specs/<paper>/sau.*.")
@click.option("--manifest", type=click.Path(path_type=Path), help="A YAML/JSON/CSV list of {config, paper, repo, spec}.")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Folder for the reports and tables.")
@click.option("--jobs", "-j", type=click.IntRange(1, 256), default=1, show_default=True, help="Worker processes.")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True)
@click.option("--ray-address", help="Address of an existing Ray cluster (with --executor ray).")
@click.option("--no-resume", is_flag=True, help="Re-score pairs whose report is newer than their inputs.")
@click.option("--no-cache", is_flag=True, help="Re-index every file.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def batch_cmd(runs, specs, manifest, out, jobs, executor, ray_address, no_resume, no_cache, quiet):
    """Score many (repo, spec) pairs and write a leaderboard (CSV, JSON, Markdown).

    \b
    Examples:
      sau-verify batch --runs runs/ --specs specs/ --out scores/ --jobs 2
      sau-verify batch --manifest pairs.yaml --out scores/
    """
    from verifier.batch import BatchInputError, discover_layout, read_manifest, run_batch, write_tables

    if bool(manifest) == bool(runs or specs):
        fail_input("give either --manifest FILE, or --runs DIR with --specs DIR")
    if not manifest and not (runs and specs):
        fail_input("layout mode needs both --runs and --specs")
    try:
        pairs = read_manifest(manifest) if manifest else discover_layout(runs, specs)
    except BatchInputError as exc:
        fail_input(str(exc))
    if not pairs:
        fail_input("no (repo, spec) pairs found")
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        disable=quiet or not sys.stderr.isatty(),
        transient=True,
    ) as bar:
        task = bar.add_task("scoring", total=len(pairs))

        def step(pair, state):
            bar.update(task, advance=1, description=f"{pair.key} {state}")

        try:
            rows = run_batch(
                pairs, out, jobs=jobs, resume=not no_resume, use_cache=not no_cache,
                executor=executor, ray_address=ray_address, progress=step,
            )
        except BatchInputError as exc:
            fail_input(str(exc))
    paths = write_tables(out, rows)
    errors = [r for r in rows if r["status"] == "error"]
    for r in errors:
        click.echo(f"error: {r['config']}/{r['paper']}: {r['error']}", err=True)
    click.echo(f"scored {len(rows) - len(errors)} of {len(rows)} pairs; tables: {paths['csv']}, {paths['json']}, {paths['markdown']}")
    sys.exit(1 if errors else 0)


@main.command("mutate")
@click.argument("repo", type=click.Path(path_type=Path))
@click.option("--spec", "spec_path", type=click.Path(path_type=Path), help="Spec file (default: REPO/sau.yaml).")
@click.option("--seed", type=int, default=0, show_default=True, help="Which mutants are drawn.")
@click.option("--max-mutants", type=click.IntRange(1, 100000), default=100, show_default=True)
@click.option("--operator", "operators", multiple=True, help="Only these drift operators (repeatable).")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=1, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
@click.option("--output", type=click.Path(path_type=Path), help="Write the report here instead of stdout.")
def mutate_cmd(repo, spec_path, seed, max_mutants, operators, jobs, fmt, output):
    """Apply paper-drift mutants to a copy of a faithful REPO; report which ones the spec catches.

    \b
    Examples:
      sau-verify mutate fixtures/values-ppo-torch/repo --max-mutants 50
      sau-verify mutate repo --operator sign-flip --operator drop-factor --format json
    """
    from verifier.engine import InputError, load_for
    from verifier.mutate.operators import OPERATORS
    from verifier.mutate.report import to_json, to_text
    from verifier.mutate.runner import mutate_repo

    unknown = sorted(set(operators) - set(OPERATORS))
    if unknown:
        fail_input(f"--operator: unknown {', '.join(unknown)} (known: {', '.join(sorted(OPERATORS))})")
    try:
        loaded = load_for(repo, spec_path)
    except (SpecError, InputError) as exc:
        fail_input(str(exc))
    result = mutate_repo(repo, loaded=loaded, seed=seed, max_mutants=max_mutants, operators=list(operators) or None, jobs=jobs)
    text = to_json(result) if fmt == "json" else to_text(result, markdown=fmt == "markdown")
    if output:
        output.write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)


@main.command("compile")
@click.argument("spec_path", metavar="SPEC", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def compile_cmd(spec_path, fmt):
    """Show, claim by claim, the typed checks a spec's free-text claims compile into, and the coverage.

    \b
    Examples:
      sau-verify compile sau.json
      sau-verify compile sau.json --format json > compiled.json
    """
    from verifier.compiler.listing import render_compiled
    from verifier.spec.load import load_spec

    if not spec_path.is_file():
        fail_input(f"{spec_path}: no such file")
    try:
        loaded = load_spec(spec_path)
    except SpecError as exc:
        fail_input(str(exc))
    click.echo(render_compiled(loaded.spec, fmt), nl=False)


@main.command("draft")
@click.argument("paper", type=click.Path(path_type=Path))
@click.option("--output", type=click.Path(path_type=Path), help="Write the spec here instead of stdout.")
@judge_options
def draft_cmd(paper, output, **judge_flags):
    """Draft a starter sau.yaml from a paper's text (paper.md or paper.tex); review it before use.

    \b
    Examples:
      sau-verify draft paper.md > sau.yaml
      sau-verify draft paper.tex --judge --judge-model gpt-4o-mini --output sau.yaml
    """
    from verifier.draft import draft, propose_with_judge

    try:
        text = paper.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        fail_input(f"{paper}: cannot read: {exc.strerror or exc}")
    spec = draft(text, paper.name)
    judge = judge_config(judge_flags)
    if judge is not None and not judge.cache_only:
        spec = propose_with_judge(spec, text, judge)
    if output:
        output.write_text(spec, encoding="utf-8")
    else:
        click.echo(spec, nl=False)


@main.command("rules")
@click.argument("name", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_cmd(name, fmt):
    """List the protocol rules, or show one: what it decides, its parameters and its examples."""
    from verifier.analysis.protocol import describe, nearest_rule, rule_names

    if name is None:
        described = [describe(r) for r in rule_names()]
        if fmt == "json":
            click.echo(json.dumps({"rules": [{"id": d["id"], "summary": d["summary"]} for d in described]}, indent=2, sort_keys=True))
            return
        width = max(len(d["id"]) for d in described)
        for d in described:
            click.echo(f"{d['id']:<{width}}  {d['summary']}")
        return
    d = describe(name)
    if d is None:
        hint = nearest_rule(name)
        fail_input(f"rules: unknown protocol rule {name!r}" + (f"; did you mean {hint!r}?" if hint else f" (known: {', '.join(rule_names())})"))
    if fmt == "json":
        click.echo(json.dumps(d, indent=2, sort_keys=True))
        return
    click.echo(f"{d['id']}: {d['summary']}\n")
    if d["documentation"]:
        click.echo(d["documentation"] + "\n")
    click.echo("Parameters:" if d["parameters"] else "Parameters: none")
    for key, spec in d["parameters"].items():
        flags = [spec.get("type", "string")] + (["required"] if spec.get("required") else [])
        if "default" in spec:
            flags.append(f"default {spec['default']}")
        click.echo(f"  {key} ({', '.join(map(str, flags))}): {str(spec.get('doc', '')).strip()}")
        if spec.get("choices"):
            click.echo(f"      one of: {', '.join(map(str, spec['choices']))}")
    if d["insensitive_to"]:
        click.echo(f"Insensitive to (mutation testing): {', '.join(d['insensitive_to'])}")
    for kind in ("valid", "invalid"):
        if d["examples"][kind]:
            click.echo(f"Examples, {kind}: " + "; ".join(d["examples"][kind]))
    click.echo(f'\nIn a spec: check: {{kind: protocol, rule: {d["id"]}, ...}}')


@main.command("schema")
def schema_cmd():
    """Print the JSON Schema of native spec v1 (for editor completion)."""
    from verifier.rules import schema_dir

    click.echo((schema_dir() / "sau-v1.schema.json").read_text(encoding="utf-8"), nl=False)


if __name__ == "__main__":  # pragma: no cover
    main()
