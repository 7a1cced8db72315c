"""Write fixture variants as drift patches, so that the drift is read as a diff and not as a second copy.

    python tests/fixture_variants.py materialize <fixture> [<variant>] <dest>   # copy to <dest>/<fixture>
    python tests/fixture_variants.py capture <fixture> <variant> <edited-repo>  # write the variant from it
    python tests/fixture_variants.py convert [<fixture>...]                     # rewrite variants canonically
    python tests/fixture_variants.py rebase [<fixture>...]                      # after editing repo/

``capture`` compares an edited copy of ``fixtures/<fixture>/repo`` with the repo and writes the variant
folder: text files it changes go into ``drift.patch``, files that are new or not text become overlay files,
removed files are listed in ``_deleted.txt``; anything else in the folder except ``expected.yaml`` (which
you write by hand) is removed. Before writing, it checks that the new folder materializes to exactly the
edited copy. ``convert`` captures each variant from its own materialization, so whole-file copies (even in
a variant that already has a patch) are folded into the patch; re-running it changes nothing. ``rebase``
is ``convert`` for after an edit of ``repo/`` that shifted lines: a hunk whose lines (context included) still
stand, unchanged and unambiguous, elsewhere is moved there; any other stale hunk is an error to fix by hand.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixture_patch import PatchError, make_patch  # noqa: E402
from harness import FIXTURES, VARIANT_META, apply_variant, fixture_cases, materialize  # noqa: E402

# What running or editing a copy leaves behind: never part of a variant.
GENERATED_DIRS = frozenset({"__pycache__", ".sau-cache", ".pytest_cache", ".hypothesis", ".mypy_cache", ".ruff_cache"})
GENERATED_SUFFIXES = (".pyc", ".pyo", ".orig", ".rej", "~")


def tree_files(root: Path) -> dict[str, Path]:
    """Files (and symlinks) under ``root`` by POSIX relative path, without generated clutter."""
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in GENERATED_DIRS for part in rel.parts) or path.name.endswith(GENERATED_SUFFIXES):
            continue
        if path.is_symlink() or path.is_file():
            out[rel.as_posix()] = path
    return out


def as_text(data: bytes) -> str | None:
    """The file as text, or None when a diff could not carry it (not UTF-8, or a NUL byte)."""
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _content(path: Path) -> bytes:
    return b"symlink:" + str(path.readlink()).encode() if path.is_symlink() else path.read_bytes()


@dataclass
class VariantFiles:
    """What a variant folder holds besides expected.yaml: file name -> bytes, overlay name -> source path."""

    generated: dict[str, bytes] = field(default_factory=dict)  # drift.patch, _deleted.txt
    overlays: dict[str, Path] = field(default_factory=dict)

    def names(self) -> set[str]:
        return set(self.generated) | set(self.overlays)


def variant_files(fixture: str, edited: Path) -> VariantFiles:
    """The variant folder contents that turn ``fixtures/<fixture>/repo`` into ``edited``."""
    repo = tree_files(FIXTURES / fixture / "repo")
    new = tree_files(edited)
    out = VariantFiles()
    changes: dict[str, tuple[str, str]] = {}
    for rel in sorted(set(repo) & set(new)):
        old_path, new_path = repo[rel], new[rel]
        if new_path.is_symlink() or old_path.is_symlink():
            if _content(old_path) != _content(new_path):
                raise PatchError(f"{edited}: {rel} is a symlink that changed; variants cannot express that")
            continue
        old_bytes, new_bytes = old_path.read_bytes(), new_path.read_bytes()
        if old_bytes == new_bytes:
            continue
        old_text, new_text = as_text(old_bytes), as_text(new_bytes)
        if old_text is not None and new_text is not None:
            changes[rel] = (old_text, new_text)
        else:
            out.overlays[rel] = new_path
    for rel in sorted(set(new) - set(repo)):
        if new[rel].is_symlink():
            raise PatchError(f"{edited}: {rel} is a new symlink; variants cannot express that")
        out.overlays[rel] = new[rel]
    clash = sorted(set(out.overlays) & set(VARIANT_META))
    if clash:
        raise PatchError(f"{edited}: {clash[0]} is a new top-level file whose name a variant folder reserves")
    if changes:
        out.generated["drift.patch"] = make_patch(changes).encode("utf-8")
    deleted = sorted(set(repo) - set(new))
    if deleted:
        out.generated["_deleted.txt"] = "".join(f"{rel}\n" for rel in deleted).encode("utf-8")
    return out


def _write_folder(folder: Path, files: VariantFiles) -> list[str]:
    """Make ``folder`` hold exactly ``files`` (plus expected.yaml); returns what was written or removed."""
    touched: list[str] = []
    folder.mkdir(parents=True, exist_ok=True)
    for path in sorted(folder.rglob("*"), reverse=True):  # children before their directories
        rel = path.relative_to(folder).as_posix()
        if path.is_dir() and not path.is_symlink():
            if not any(path.iterdir()):
                path.rmdir()
        elif rel != "expected.yaml" and rel not in files.names():
            path.unlink()
            touched.append(f"-{rel}")
    for rel, data in sorted(files.generated.items()):
        target = folder / rel
        if not target.is_file() or target.read_bytes() != data:
            target.write_bytes(data)
            touched.append(f"+{rel}")
    for rel, src in sorted(files.overlays.items()):
        target = folder / rel
        if not target.is_file() or target.read_bytes() != src.read_bytes():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
            touched.append(f"+{rel}")
    return touched


def _differences(a: Path, b: Path) -> list[str]:
    fa, fb = tree_files(a), tree_files(b)
    out = [f"only in one tree: {rel}" for rel in sorted(set(fa) ^ set(fb))]
    out += [f"differs: {rel}" for rel in sorted(set(fa) & set(fb)) if _content(fa[rel]) != _content(fb[rel])]
    return out


def capture(fixture: str, variant: str, edited: Path) -> list[str]:
    """Write ``fixtures/<fixture>/variants/<variant>/`` so that it materializes to ``edited``."""
    edited = edited.resolve()
    if not (FIXTURES / fixture / "repo").is_dir():
        raise PatchError(f"no fixture {fixture!r} (no {FIXTURES / fixture / 'repo'})")
    if not variant or "/" in variant or variant.startswith("."):
        raise PatchError(f"bad variant name {variant!r}")
    if edited.is_relative_to((FIXTURES / fixture).resolve()):
        raise PatchError(f"{edited} is inside the fixture; capture from a materialized copy elsewhere")
    files = variant_files(fixture, edited)
    with tempfile.TemporaryDirectory() as tmp:
        staged = Path(tmp) / "variant"
        _write_folder(staged, files)
        check = Path(tmp) / "check" / fixture
        shutil.copytree(FIXTURES / fixture / "repo", check, symlinks=True)
        apply_variant(check, staged, f"{fixture}/{variant} (staged)")
        problems = _differences(check, edited)
        if problems:
            raise PatchError(f"{fixture}/{variant}: the staged variant does not reproduce {edited}: {problems[0]}")
    return _write_folder(FIXTURES / fixture / "variants" / variant, files)


def convert(fixtures: list[str], rebase: bool = False) -> int:
    """Capture every variant of ``fixtures`` (all when empty) from its own materialization; 1 on any error.
    With ``rebase``, a hunk whose lines now stand elsewhere in the edited repo/ is re-anchored there."""
    known = {f for f, _ in fixture_cases()}
    for name in fixtures:
        if name not in known:
            print(f"error: no fixture {name!r}", file=sys.stderr)
            return 1
    status = 0
    for fixture, variant in fixture_cases():
        if variant is None or (fixtures and fixture not in fixtures):
            continue
        moved: list[str] = []
        try:
            with tempfile.TemporaryDirectory() as tmp:
                repo = Path(tmp) / fixture
                shutil.copytree(FIXTURES / fixture / "repo", repo, symlinks=True)
                apply_variant(repo, FIXTURES / fixture / "variants" / variant, f"{fixture}/{variant}",
                              moved if rebase else None)
                touched = capture(fixture, variant, repo)
        except (PatchError, OSError) as exc:
            print(f"error: {fixture}/{variant}: {exc}", file=sys.stderr)
            status = 1
            continue
        for note in moved:
            print(f"{fixture}/{variant}: {note}")
        if touched:
            print(f"{fixture}/{variant}: {' '.join(touched)}")
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("materialize", help="copy a fixture (optionally a variant) to DEST/<fixture>")
    m.add_argument("fixture")
    m.add_argument("rest", nargs="+", metavar="[variant] dest")
    c = sub.add_parser("capture", help="write a variant from an edited copy of the fixture's repo")
    c.add_argument("fixture")
    c.add_argument("variant")
    c.add_argument("edited", type=Path)
    v = sub.add_parser("convert", help="turn overlay copies of repo files into drift.patch (idempotent)")
    v.add_argument("fixtures", nargs="*")
    r = sub.add_parser("rebase", help="after an edit of repo/: re-anchor hunks whose exact lines moved")
    r.add_argument("fixtures", nargs="*")
    args = parser.parse_args(argv)
    try:
        if args.command == "materialize":
            if len(args.rest) > 2:
                parser.error("materialize takes <fixture> [<variant>] <dest>")
            variant = args.rest[0] if len(args.rest) == 2 else None
            dest = Path(args.rest[-1])
            if not (FIXTURES / args.fixture / "repo").is_dir():
                parser.error(f"no fixture {args.fixture!r}")
            if variant is not None and not (FIXTURES / args.fixture / "variants" / variant).is_dir():
                parser.error(f"no variant {variant!r} of {args.fixture}")
            if (dest / args.fixture).exists():
                parser.error(f"{dest / args.fixture} exists")
            print(materialize(args.fixture, variant, dest))
            return 0
        if args.command == "capture":
            touched = capture(args.fixture, args.variant, args.edited)
            print(f"{args.fixture}/{args.variant}: {' '.join(touched) or 'unchanged'}")
            expected = FIXTURES / args.fixture / "variants" / args.variant / "expected.yaml"
            if not expected.is_file():
                print(f"note: write {expected} (the verdicts that change)", file=sys.stderr)
            return 0
        return convert(args.fixtures, rebase=args.command == "rebase")
    except PatchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
