"""The strict drift-patch applier, the capture/convert tool, and the real fixture variants written with them."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import fixture_variants
import harness
from fixture_patch import PatchError, apply_patch, make_patch, parse_patch, split_lines
from fixture_variants import as_text, capture, convert, variant_files
from harness import FIXTURES, VARIANT_META, fixture_cases, materialize

TRAIN = ("import torch\n\nlr = 0.1\nsteps = 10\nmodel = torch.nn.Linear(2, 2)\n"
         "opt = torch.optim.SGD(model.parameters(), lr=lr)\n")

CLEAN = """\
--- a/train.py
+++ b/train.py
@@ -2,4 +2,4 @@
 
 lr = 0.1
-steps = 10
+steps = 20
 model = torch.nn.Linear(2, 2)
"""


def _repo(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    root = tmp_path / "repo"
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return root


def test_applies_a_clean_patch(tmp_path):
    root = _repo(tmp_path, {"train.py": TRAIN})
    assert apply_patch(CLEAN, root) == ["train.py"]
    assert (root / "train.py").read_text() == TRAIN.replace("steps = 10", "steps = 20")


def test_context_mismatch_is_one_line_naming_file_and_hunk_and_writes_nothing(tmp_path):
    drifted_repo = TRAIN.replace("lr = 0.1", "lr = 0.2")
    root = _repo(tmp_path, {"train.py": drifted_repo, "eval.py": "x = 1\n"})
    patch = "--- a/eval.py\n+++ b/eval.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n" + CLEAN
    with pytest.raises(PatchError) as err:
        apply_patch(patch, root, "fx/v/drift.patch")
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("fx/v/drift.patch line 8: train.py: hunk @@ -2,4 +2,4 @@ does not apply: line 3 is")
    assert "'lr = 0.2\\n'" in message and "'lr = 0.1\\n'" in message
    assert (root / "eval.py").read_text() == "x = 1\n"  # the section that did apply is not written either


def test_no_offset_search_when_the_header_names_the_wrong_line(tmp_path):
    root = _repo(tmp_path, {"train.py": "# header\n" + TRAIN})  # the same lines, one further down
    expected = r"hunk @@ -2,4 \+2,4 @@ does not apply: line 2 is 'import torch\\n', patch expects '\\n'"
    with pytest.raises(PatchError, match=expected):
        apply_patch(CLEAN, root)


def test_header_counts_and_new_start_are_checked(tmp_path):
    root = _repo(tmp_path, {"train.py": TRAIN})
    with pytest.raises(PatchError, match="more lines than its header says"):
        apply_patch(CLEAN.replace("@@ -2,4 +2,4 @@", "@@ -2,3 +2,4 @@"), root)
    with pytest.raises(PatchError, match="line 8: expected a '--- a/<path>' / '\\+\\+\\+ b/<path>' header"):
        apply_patch(CLEAN.replace("@@ -2,4 +2,4 @@", "@@ -2,3 +2,3 @@"), root)
    with pytest.raises(PatchError, match="new start 3 != 2"):
        apply_patch(CLEAN.replace("+2,4", "+3,4"), root)
    with pytest.raises(PatchError, match="ends early"):
        apply_patch(CLEAN.replace("@@ -2,4 +2,4 @@", "@@ -2,5 +2,5 @@"), root)


def test_a_whitespace_stripped_context_line_is_reported(tmp_path):
    root = _repo(tmp_path, {"train.py": TRAIN})
    with pytest.raises(PatchError, match="lost its leading space"):
        apply_patch(CLEAN.replace("\n \n", "\n\n"), root)


@pytest.mark.parametrize("path", ["../outside.py", "sub/../../outside.py", "/etc/passwd", "./train.py", "a\\b.py"])
def test_refuses_paths_outside_the_repo(tmp_path, path):
    root = _repo(tmp_path, {"train.py": TRAIN})
    (tmp_path / "outside.py").write_text("steps = 10\n")
    patch = f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-steps = 10\n+steps = 20\n"
    with pytest.raises(PatchError, match="unsafe path"):
        apply_patch(patch, root)
    assert (tmp_path / "outside.py").read_text() == "steps = 10\n"


def test_refuses_a_symlink_that_leads_outside(tmp_path):
    root = _repo(tmp_path, {"train.py": TRAIN})
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "cfg.py").write_text("steps = 10\n")
    (root / "link").symlink_to(tmp_path / "elsewhere")
    patch = "--- a/link/cfg.py\n+++ b/link/cfg.py\n@@ -1 +1 @@\n-steps = 10\n+steps = 20\n"
    with pytest.raises(PatchError, match="resolves outside the repo"):
        apply_patch(patch, root)
    assert (tmp_path / "elsewhere" / "cfg.py").read_text() == "steps = 10\n"


def test_deletions_and_overlays_cannot_leave_the_repo(tmp_path):
    root = _repo(tmp_path, {"train.py": TRAIN})
    (tmp_path / "victim.txt").write_text("keep\n")
    variant = tmp_path / "variant"
    variant.mkdir()
    (variant / "_deleted.txt").write_text("../victim.txt\n")
    with pytest.raises(PatchError, match="unsafe path"):
        harness.apply_variant(root, variant, "fx/v")
    assert (tmp_path / "victim.txt").exists()


def test_new_files_and_renames_are_not_patch_hunks(tmp_path):
    root = _repo(tmp_path, {"train.py": TRAIN})
    with pytest.raises(PatchError, match="new files are overlay files"):
        apply_patch("--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x = 1\n", root)
    with pytest.raises(PatchError, match="renames are not supported"):
        apply_patch(CLEAN.replace("+++ b/train.py", "+++ b/other.py"), root)


def test_files_must_be_sorted_and_unique():
    section = CLEAN
    with pytest.raises(PatchError, match="sorted and unique"):
        parse_patch(section + section)
    with pytest.raises(PatchError, match="sorted and unique"):
        parse_patch(section.replace("train.py", "z.py") + section)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a = 1\nb = 2", "a = 1\nb = 3"),  # last line changes, neither has a newline
        ("a = 1\nb = 2", "a = 1\nb = 2\n"),  # a newline is added at the end
        ("a = 1\nb = 2\n", "a = 1\nb = 2"),  # the final newline is dropped
        ("a = 1\nb = 2", "a = 0\nb = 2"),  # the change is far enough away that the last line is context
    ],
)
def test_handles_files_without_a_trailing_newline(tmp_path, old, new):
    root = _repo(tmp_path, {"m.py": old})
    patch = make_patch({"m.py": (old, new)})
    if not old.endswith("\n") or not new.endswith("\n"):
        assert "\n\\ No newline at end of file\n" in patch
    apply_patch(patch, root)
    assert (root / "m.py").read_bytes() == new.encode()


def test_hand_written_no_newline_marker(tmp_path):
    root = _repo(tmp_path, {"m.py": "a = 1\nb = 2"})
    patch = "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n\\ No newline at end of file\n+b = 3\n"
    apply_patch(patch, root)
    assert (root / "m.py").read_bytes() == b"a = 1\nb = 3\n"
    root2 = _repo(tmp_path / "2", {"m.py": "a = 1\nb = 2\n"})  # the marker says no newline, the file has one
    with pytest.raises(PatchError, match=r"line 2 is 'b = 2\\n', patch expects 'b = 2'"):
        apply_patch(patch, root2)


def test_crlf_lines_round_trip_byte_for_byte(tmp_path):
    old = "a = 1\r\nb = 2\r\nc = 3\r\n"
    new = "a = 1\r\nb = 5\r\nc = 3\r\n"
    root = _repo(tmp_path, {"w.py": old})
    patch = make_patch({"w.py": (old, new)})
    assert "-b = 2\r\n+b = 5\r\n" in patch
    apply_patch(patch, root)
    assert (root / "w.py").read_bytes() == new.encode()
    root2 = _repo(tmp_path / "lf", {"w.py": old.replace("\r\n", "\n")})
    with pytest.raises(PatchError, match="does not apply"):
        apply_patch(patch, root2)


def test_generated_patches_round_trip_on_random_edits(tmp_path):
    rng = random.Random(7)
    vocab = ["x = 1\n", "y = 2\n", "\n", "def f():\n", "    return x\n", "z = x + y\n", "# note\n"]
    for case in range(60):
        old_lines = [rng.choice(vocab) for _ in range(rng.randint(0, 40))]
        new_lines = list(old_lines)
        for _ in range(rng.randint(1, 5)):
            k = rng.randint(0, len(new_lines))
            op = rng.choice(("insert", "delete", "replace"))
            if op == "insert" or not new_lines:
                new_lines.insert(k, rng.choice(vocab))
            elif op == "delete":
                del new_lines[min(k, len(new_lines) - 1)]
            else:
                new_lines[min(k, len(new_lines) - 1)] = f"w = {case}\n"
        old, new = "".join(old_lines), "".join(new_lines)
        if rng.random() < 0.3:
            new = new.rstrip("\n")
        root = _repo(tmp_path / str(case), {"f.py": old})
        patch = make_patch({"f.py": (old, new)})
        assert (patch == "") == (old == new)
        if patch:
            apply_patch(patch, root)
        assert (root / "f.py").read_text() == new, case


def test_split_lines_only_splits_on_newline():
    assert split_lines("a\x0cb\u2028c\rd\n") == ["a\x0cb\u2028c\rd\n"]
    assert split_lines("a\nb") == ["a\n", "b"]
    assert split_lines("") == []


# --- capture / convert on a synthetic fixture ---------------------------------------------------------------


@pytest.fixture
def fixtures_dir(tmp_path, monkeypatch):
    root = tmp_path / "fixtures"
    fx = root / "toy"
    _repo(fx, {"train.py": TRAIN, "cfg.yaml": "lr: 0.1\nsteps: 10\n", "weights.bin": b"\x00\x01\x02",
               "scripts/run.sh": "python train.py\n"})
    (fx / "expected.yaml").write_text("saus: {}\n")
    monkeypatch.setattr(harness, "FIXTURES", root)
    monkeypatch.setattr(fixture_variants, "FIXTURES", root)
    return root


def test_capture_writes_patch_overlays_and_deletions_and_reproduces_the_edit(fixtures_dir, tmp_path):
    edited = materialize("toy", None, tmp_path / "work")
    (edited / "train.py").write_text(TRAIN.replace("lr = 0.1", "lr = 0.3"))
    (edited / "weights.bin").write_bytes(b"\x00\x09")
    (edited / "extra.py").write_text("seed = 0\n")
    (edited / "scripts" / "run.sh").unlink()
    (edited / "__pycache__").mkdir()
    (edited / "__pycache__" / "train.cpython-311.pyc").write_bytes(b"\x00")
    variant = fixtures_dir / "toy" / "variants" / "lr-3x"
    variant.mkdir(parents=True)
    (variant / "expected.yaml").write_text("saus: {x: {status: mismatch}}\n")
    (variant / "stale.py").write_text("left over\n")

    capture("toy", "lr-3x", edited)

    assert sorted(p.relative_to(variant).as_posix() for p in variant.rglob("*") if p.is_file()) == [
        "_deleted.txt", "drift.patch", "expected.yaml", "extra.py", "weights.bin"]
    assert (variant / "expected.yaml").read_text() == "saus: {x: {status: mismatch}}\n"
    assert (variant / "_deleted.txt").read_text() == "scripts/run.sh\n"
    assert (variant / "drift.patch").read_text() == (
        "--- a/train.py\n+++ b/train.py\n@@ -1,6 +1,6 @@\n import torch\n \n-lr = 0.1\n+lr = 0.3\n"
        " steps = 10\n model = torch.nn.Linear(2, 2)\n opt = torch.optim.SGD(model.parameters(), lr=lr)\n")
    again = materialize("toy", "lr-3x", tmp_path / "again")
    assert (again / "train.py").read_text() == (edited / "train.py").read_text()
    assert (again / "weights.bin").read_bytes() == b"\x00\x09"
    assert not (again / "scripts" / "run.sh").exists() and (again / "extra.py").exists()


def test_capture_refuses_an_edited_dir_inside_the_fixture(fixtures_dir):
    with pytest.raises(PatchError, match="inside the fixture"):
        capture("toy", "v", fixtures_dir / "toy" / "repo")


def test_convert_merges_new_overlay_copies_into_an_existing_patch_and_is_idempotent(fixtures_dir, capsys):
    variant = fixtures_dir / "toy" / "variants" / "steps"
    variant.mkdir(parents=True)
    (variant / "expected.yaml").write_text("saus: {}\n")
    (variant / "drift.patch").write_text(CLEAN)
    # a helper later copies the (already patched) train.py and the untouched cfg.yaml and edits both
    (variant / "train.py").write_text(TRAIN.replace("steps = 10", "steps = 20").replace("lr = 0.1", "lr = 1.0"))
    (variant / "cfg.yaml").write_text("lr: 0.1\nsteps: 20\n")

    assert convert([]) == 0
    assert sorted(p.name for p in variant.iterdir()) == ["drift.patch", "expected.yaml"]
    patch = (variant / "drift.patch").read_text()
    assert patch.index("--- a/cfg.yaml") < patch.index("--- a/train.py")
    assert "-steps: 10\n+steps: 20\n" in patch
    assert "-lr = 0.1\n-steps = 10\n+lr = 1.0\n+steps = 20\n" in patch
    capsys.readouterr()
    assert convert([]) == 0
    assert capsys.readouterr().out == ""
    assert (variant / "drift.patch").read_text() == patch


def test_convert_reports_a_stale_patch_and_leaves_it_alone(fixtures_dir, capsys):
    variant = fixtures_dir / "toy" / "variants" / "stale"
    variant.mkdir(parents=True)
    (variant / "drift.patch").write_text(CLEAN.replace(" lr = 0.1", " lr = 0.5"))
    assert convert(["toy"]) == 1
    assert "toy/stale/drift.patch line 3: train.py: hunk @@ -2,4 +2,4 @@ does not apply" in capsys.readouterr().err
    assert (variant / "drift.patch").read_text() == CLEAN.replace(" lr = 0.1", " lr = 0.5")


def test_rebase_re_anchors_hunks_after_repo_lines_shift_and_refuses_changed_context(fixtures_dir, tmp_path, capsys):
    variant = fixtures_dir / "toy" / "variants" / "steps"
    variant.mkdir(parents=True)
    (variant / "drift.patch").write_text(CLEAN)
    train = fixtures_dir / "toy" / "repo" / "train.py"
    train.write_text("# header\n" + TRAIN)  # someone edits repo/: every line moves down by one
    with pytest.raises(PatchError, match="does not apply"):
        materialize("toy", "steps", tmp_path / "strict")
    assert convert(["toy"]) == 1
    capsys.readouterr()

    assert convert(["toy"], rebase=True) == 0
    assert "toy/steps: train.py: hunk @@ -2,4 +2,4 @@ moved by +1 lines" in capsys.readouterr().out
    assert (variant / "drift.patch").read_text() == (  # re-anchored, and rewritten with the canonical context
        "--- a/train.py\n+++ b/train.py\n@@ -2,6 +2,6 @@\n import torch\n \n lr = 0.1\n-steps = 10\n+steps = 20\n"
        " model = torch.nn.Linear(2, 2)\n opt = torch.optim.SGD(model.parameters(), lr=lr)\n")
    done = materialize("toy", "steps", tmp_path / "rebased") / "train.py"
    assert done.read_text() == "# header\n" + TRAIN.replace("steps = 10", "steps = 20")

    train.write_text("# header\n" + TRAIN.replace("lr = 0.1", "lr = 0.5"))  # a context line changed: no guessing
    assert convert(["toy"], rebase=True) == 1
    assert "does not apply: line 4 is" in capsys.readouterr().err


# --- the real fixtures ------------------------------------------------------------------------------------

VARIANTS = [(f, v) for f, v in fixture_cases() if v is not None]


@pytest.mark.parametrize(("fixture", "variant"), VARIANTS, ids=[f"{f}/{v}" for f, v in VARIANTS])
def test_real_variant_patch_applies_and_every_hunk_changes_something(fixture, variant, tmp_path):
    folder = FIXTURES / fixture / "variants" / variant
    patch = folder / "drift.patch"
    materialize(fixture, variant, tmp_path)  # raises PatchError on a stale patch
    if not patch.is_file():
        assert overlays(folder) or (folder / "_deleted.txt").is_file(), f"{fixture}/{variant} has no drift at all"
        return
    sections = parse_patch(patch.read_text(), f"{fixture}/{variant}/drift.patch")
    assert sections, f"{fixture}/{variant}: empty drift.patch"
    for fp in sections:
        original = (FIXTURES / fixture / "repo" / fp.path).read_text()
        for hunk in fp.hunks:
            assert hunk.old != hunk.new, f"{fixture}/{variant}: no-op hunk {hunk.header} in {fp.path}"
        assert (tmp_path / fixture / fp.path).read_text() != original or fp.path in overlays(folder)


def overlays(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                  if p.is_file() and p.relative_to(folder).as_posix() not in VARIANT_META)


@pytest.mark.parametrize(("fixture", "variant"), VARIANTS, ids=[f"{f}/{v}" for f, v in VARIANTS])
def test_no_overlay_file_is_a_copy_of_a_repo_file(fixture, variant):
    folder = FIXTURES / fixture / "variants" / variant
    for rel in overlays(folder):
        counterpart = FIXTURES / fixture / "repo" / rel
        if not counterpart.is_file():
            continue  # new in the variant: an overlay file is the way to add it
        mine, theirs = (folder / rel).read_bytes(), counterpart.read_bytes()
        assert mine != theirs, f"{fixture}/{variant}/{rel} is byte-identical to the repo's"
        assert as_text(mine) is None or as_text(theirs) is None, (
            f"{fixture}/{variant}/{rel} is a whole copy of a repo text file; "
            "run `python tests/fixture_variants.py convert` to turn it into drift.patch")


@pytest.mark.parametrize(("fixture", "variant"), VARIANTS, ids=[f"{f}/{v}" for f, v in VARIANTS])
def test_real_variant_folder_is_what_capture_writes(fixture, variant, tmp_path):
    """drift.patch is canonical (sorted files, 3 lines of context, difflib hunks), so re-running convert
    is a no-op and a diff of a variant folder shows only real drift edits."""
    folder = FIXTURES / fixture / "variants" / variant
    want = variant_files(fixture, materialize(fixture, variant, tmp_path))
    for name, data in want.generated.items():
        assert (folder / name).read_bytes() == data, f"{fixture}/{variant}/{name} is not canonical"
    present = overlays(folder) + [name for name in ("_deleted.txt", "drift.patch") if (folder / name).is_file()]
    assert sorted(want.names()) == sorted(present), f"{fixture}/{variant}: run fixture_variants.py convert"
