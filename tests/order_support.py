"""Build a RepoIndex from source strings (no disk, no cache) and run one order check on it."""

from __future__ import annotations

import hashlib
import textwrap
from pathlib import Path

from verifier.checks import Context, Options, load_all
from verifier.index import python_facts, shell
from verifier.index.facts import FileFacts, FileRole, Language
from verifier.index.repo import RepoIndex
from verifier.spec.model import OrderCheck, Spec


def make_index(files: dict[str, str]) -> RepoIndex:
    sources = {p: textwrap.dedent(t).lstrip("\n") for p, t in files.items()}
    facts: dict[str, FileFacts] = {}
    for path in sorted(sources):
        text = sources[path]
        language = Language.shell if path.endswith(".sh") else Language.python
        role = FileRole.test if path.startswith("tests/") else FileRole.code
        ff = FileFacts(path, hashlib.sha1(text.encode()).hexdigest(), language, role, text.count("\n") + 1)
        facts[path] = python_facts.extract(path, text, ff) if language == Language.python else shell.extract(path, text, ff)
    return RepoIndex(Path("/nonexistent"), facts, source_loader=sources.__getitem__)


def run_order(files: dict[str, str], steps, relation="before", scope=None, options: Options | None = None):
    load_all()
    from verifier.checks.order import check_order

    index = make_index(files)
    check = OrderCheck(kind="order", steps=list(steps), relation=relation, **({"in": scope} if scope else {}))
    ctx = Context(index=index, spec=Spec(), options=options or Options())
    return check_order(check, ctx)


def index_from_dir(root: Path) -> RepoIndex:
    """The real index when the builder is available; otherwise the same extractors over the files on disk."""
    try:
        from verifier.index.build import build_index
    except ImportError:
        build_index = None
    if build_index is not None:
        return build_index(root, use_cache=False)
    files = {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix in (".py", ".sh")
    }
    index = make_index(files)
    index.root = root
    return index


def order_verdicts(repo: Path):
    """Run every order SAU of ``repo/sau.yaml``; a report-like object for harness.mismatches()."""
    from types import SimpleNamespace

    import yaml

    from verifier.checks.order import check_order

    load_all()
    spec = Spec.model_validate(yaml.safe_load((repo / "sau.yaml").read_text()))
    ctx = Context(index=index_from_dir(repo), spec=spec, options=Options())
    verdicts = []
    for sau in spec.saus:
        result = check_order(sau.check, ctx)
        verdicts.append(SimpleNamespace(id=sau.id, status=result.status, score=result.score,
                                        evidence=result.evidence, message=result.message, result=result))
    return SimpleNamespace(verdicts=verdicts)
