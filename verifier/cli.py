"""The ``sau-verify`` command line.

``sau-verify REPO`` is the main job (the ``check`` command is implied); other jobs are subcommands.
Exit codes: 0 the run meets the bar, 1 it falls short, 2 bad input (spec or arguments). Never a traceback:
expected failures print one line naming file, line and field.
"""

from __future__ import annotations

import sys
from pathlib import Path

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


def fail_input(message: str) -> "NoReturn":  # type: ignore[name-defined]
    click.echo(f"sau-verify: error: {message}", err=True)
    sys.exit(2)


def parse_only(value: str | None) -> set[str] | None:
    if not value:
        return None
    return {part.strip() for part in value.split(",") if part.strip()}


def pair_outputs(formats: tuple[str, ...], outputs: tuple[str, ...]) -> list[tuple[str, str | None]]:
    """``--format a --output x --format b``: the i-th output goes with the i-th format; extras go to stdout."""
    formats = formats or ("text",)
    if len(outputs) > len(formats):
        fail_input("more --output than --format options: pair each --output with a --format")
    pairs = [(fmt, outputs[i] if i < len(outputs) else None) for i, fmt in enumerate(formats)]
    if sum(1 for _, out in pairs if out is None) > 1:
        fail_input("only one --format may go to standard output; give the others an --output")
    return pairs


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
def check_cmd(repo, spec_path, formats, outputs, fail_under, fail_metric, only, no_cache):
    """Check REPO against its spec and print the report."""
    from verifier.engine import InputError, run_repo

    pairs = pair_outputs(formats, outputs)
    try:
        report = run_repo(repo, spec_path, use_cache=not no_cache, only=parse_only(only))
    except (SpecError, InputError) as exc:
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
    ok = gate(report.verdicts, report.scores, fail_under, fail_metric)
    sys.exit(0 if ok else 1)


@main.command("schema")
def schema_cmd():
    """Print the JSON Schema of native spec v1 (for editor completion)."""
    from verifier.rules import schema_dir

    click.echo((schema_dir() / "sau-v1.schema.json").read_text(encoding="utf-8"), nl=False)


if __name__ == "__main__":  # pragma: no cover
    main()
