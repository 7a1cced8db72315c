"""Every way a spec can be wrong gives one SpecError line naming the exact file, line and field."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from verifier.spec.errors import SpecError
from verifier.spec.load import load_spec

HEADER = "version: 1\npaper: {id: demo}\nsaus:\n"


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def failure(path: Path) -> SpecError:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    error = info.value
    assert "\n" not in str(error)
    assert str(error).startswith(str(path))
    return error


def where(error: SpecError) -> tuple[int | None, str | None]:
    return error.line, error.field


# ---------------------------------------------------------------- files


def test_missing_file(tmp_path: Path) -> None:
    error = failure(tmp_path / "nope.yaml")
    assert where(error) == (None, None) and error.message == "spec file not found"
    assert str(error) == f"{tmp_path / 'nope.yaml'}: spec file not found"


def test_directory(tmp_path: Path) -> None:
    assert "directory" in failure(tmp_path).message


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads unreadable files")
def test_unreadable_file(tmp_path: Path) -> None:
    path = write(tmp_path, "sau.yaml", HEADER)
    path.chmod(0)
    assert "permission denied" in failure(path).message


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "sau.yaml"
    os.mkfifo(fifo)
    assert failure(fifo).message == "not a regular file"


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "sau.yaml", HEADER.encode() + b"  - id: caf\xe9\n")
    error = failure(path)
    assert where(error) == (4, None) and "not UTF-8" in error.message and "0xe9" in error.message


@pytest.mark.parametrize("text", ["", "   \n\n", "# only a comment\n"])
def test_empty_file(tmp_path: Path, text: str) -> None:
    error = failure(write(tmp_path, "sau.yaml", text))
    assert error.message.startswith("empty spec")


def test_top_level_not_a_mapping(tmp_path: Path) -> None:
    error = failure(write(tmp_path, "sau.yaml", "\n- a\n- b\n"))
    assert where(error) == (2, None) and "mapping at the top level, got a list" in error.message


# ---------------------------------------------------------------- syntax


def test_yaml_syntax_error_line(tmp_path: Path) -> None:
    error = failure(write(tmp_path, "sau.yaml", HEADER + "  - id: a\n    claim: [unclosed\n    dimension: D1\n"))
    assert error.line is not None and error.line >= 5 and error.message.startswith("YAML syntax error")


def test_yaml_bad_indentation(tmp_path: Path) -> None:
    error = failure(write(tmp_path, "sau.yaml", "version: 1\nsaus:\n  - id: a\n   dimension: D1\n"))
    assert error.line == 4 and "YAML syntax error" in error.message


def test_yaml_control_character(tmp_path: Path) -> None:
    error = failure(write(tmp_path, "sau.yaml", "version: 1\nsaus: []\nx: \x07\n"))
    assert error.line == 3 and "YAML syntax error" in error.message


def test_yaml_two_documents(tmp_path: Path) -> None:
    error = failure(write(tmp_path, "sau.yaml", "version: 1\n---\nversion: 1\n"))
    assert error.line == 2 and "single document" in error.message


def test_yaml_python_tags_are_refused(tmp_path: Path) -> None:
    error = failure(write(tmp_path, "sau.yaml", "version: 1\nsaus: !!python/object/apply:os.system ['true']\n"))
    assert error.line == 2 and error.message.startswith("invalid YAML value: could not determine a constructor")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("!!set {a, b}", "invalid YAML value: tag !!set is not allowed in a spec"),
        ("!!binary aGVsbG8=", "invalid YAML value: tag !!binary is not allowed in a spec"),
        ("!!int abc", "invalid YAML value: cannot read int value"),
        ("0x_", "invalid YAML value: cannot read int value"),
        ("1" * 5000, "invalid YAML value: cannot read int value"),
    ],
)
def test_yaml_values_python_cannot_build(tmp_path: Path, value: str, message: str) -> None:
    text = HEADER + f"  - id: a\n    dimension: D1\n    check:\n      kind: value\n      name: lr\n      expect: {value}\n"
    error = failure(write(tmp_path, "sau.yaml", text))
    assert error.line == 9 and error.message.startswith(message)


def test_yaml_dates_stay_strings(tmp_path: Path) -> None:
    text = HEADER + "  - id: 2021-01-01\n    dimension: D1\n    source: 2021-02-30\n"
    sau = load_spec(write(tmp_path, "sau.yaml", text)).spec.saus[0]
    assert (sau.id, sau.source) == ("2021-01-01", "2021-02-30")


def test_huge_integers_in_json_and_toml(tmp_path: Path) -> None:
    digits = "1" * 5000
    error = failure(write(tmp_path, "sau.json", '{"version": 1,\n "pin": {"x": %s}}' % digits))
    assert error.line == 2 and error.message.startswith("JSON value cannot be read")
    error = failure(write(tmp_path, "sau.toml", "version = 1\n[pin]\nx = %s\n" % digits))
    assert error.line == 3 and error.message.startswith("TOML value cannot be read")


def test_infinite_weight(tmp_path: Path) -> None:
    error = failure(write(tmp_path, "sau.yaml", HEADER + "  - id: a\n    dimension: D1\n    weight: .inf\n"))
    assert (error.line, error.field) == (6, "saus[0].weight") and "finite" in error.message


def test_json_syntax_error_line(tmp_path: Path) -> None:
    error = failure(write(tmp_path, "sau.json", '{\n  "version": 1,\n  "saus": [\n    {"id": "a",}\n  ]\n}\n'))
    assert where(error) == (4, None) and error.message.startswith("JSON syntax error")


def test_toml_syntax_error_line(tmp_path: Path) -> None:
    error = failure(write(tmp_path, "sau.toml", 'version = 1\n\n[[saus]]\nid = "a\n'))
    assert where(error) == (4, None) and error.message.startswith("TOML syntax error")
    assert "(at line" not in error.message


# ---------------------------------------------------------------- shape


def test_unknown_shape_suggests_the_key(tmp_path: Path) -> None:
    error = failure(write(tmp_path, "sau.yaml", "# spec\nsau:\n  - id: a\n"))
    assert where(error) == (2, None)
    assert "unrecognised spec" in error.message and "'sau' a typo for 'saus'" in error.message


def test_unsupported_version(tmp_path: Path) -> None:
    error = failure(write(tmp_path, "sau.yaml", "paper: {id: x}\nversion: 2\nsaus: []\n"))
    assert where(error) == (2, "version") and "unsupported spec version 2" in error.message


# ---------------------------------------------------------------- fields (YAML)


def test_duplicate_key_names_both_lines(tmp_path: Path) -> None:
    text = HEADER + "  - id: a\n    dimension: D1\n    claim: one\n    claim: two\n"
    error = failure(write(tmp_path, "sau.yaml", text))
    assert where(error) == (7, "saus[0].claim") and error.message == "duplicate key 'claim' (first at line 6)"


def test_duplicate_sau_ids_name_both_lines(tmp_path: Path) -> None:
    text = HEADER + "  - id: a\n    dimension: D1\n  - id: b\n    dimension: D2\n  - id: a\n    dimension: D3\n"
    error = failure(write(tmp_path, "sau.yaml", text))
    assert where(error) == (8, "saus[2].id") and error.message == "duplicate SAU id 'a' (first at line 4)"


def test_unknown_dimension(tmp_path: Path) -> None:
    error = failure(write(tmp_path, "sau.yaml", HEADER + "  - id: a\n    dimension: numeric\n"))
    assert where(error) == (5, "saus[0].dimension")
    assert error.message.startswith("unknown dimension 'numeric'")


def test_unknown_check_kind_lists_valid_ones(tmp_path: Path) -> None:
    text = HEADER + "".join(f"  - id: s{i}\n    dimension: D1\n    check: {{kind: value, name: x, expect: 1}}\n" for i in range(3))
    text += "  - id: s3\n    dimension: D1\n    check:\n      name: lr\n      kind: valu\n"
    error = failure(write(tmp_path, "sau.yaml", text))
    assert where(error) == (17, "saus[3].check.kind")
    assert str(error) == (
        f"{tmp_path / 'sau.yaml'}:17: saus[3].check.kind: unknown check kind 'valu' (expected one of value, call, "
        "exists, init, formula, order, protocol, pattern, judge); did you mean 'value'?"
    )


def test_check_without_kind(tmp_path: Path) -> None:
    error = failure(write(tmp_path, "sau.yaml", HEADER + "  - id: a\n    dimension: D1\n    check:\n      name: lr\n"))
    assert where(error) == (6, "saus[0].check.kind") and "missing required field 'kind'" in error.message


def test_wrong_field_type(tmp_path: Path) -> None:
    text = HEADER + "  - id: a\n    dimension: D1\n    weight: heavy\n"
    error = failure(write(tmp_path, "sau.yaml", text))
    assert where(error) == (6, "saus[0].weight")
    assert error.message == "wrong type: expected a number, got the string 'heavy'"


def test_wrong_type_in_a_plain_union_is_one_message(tmp_path: Path) -> None:
    text = HEADER + "  - id: a\n    dimension: D1\n    check:\n      kind: value\n      call: f\n      arg: [1, 2]\n      expect: 1\n"
    error = failure(write(tmp_path, "sau.yaml", text))
    assert where(error) == (9, "saus[0].check.arg")
    assert error.message == "wrong type: expected a string or an integer, got a list"
    assert len(error.errors) == 1


def test_missing_required_field(tmp_path: Path) -> None:
    text = HEADER + "  - id: a\n    claim: no dimension here\n"
    error = failure(write(tmp_path, "sau.yaml", text))
    assert where(error) == (4, "saus[0].dimension") and error.message == "missing required field 'dimension'"


def test_missing_field_inside_a_check(tmp_path: Path) -> None:
    text = HEADER + "  - id: a\n    dimension: D2\n    check:\n      kind: call\n      args: {kernel_size: 3}\n"
    error = failure(write(tmp_path, "sau.yaml", text))
    assert where(error) == (6, "saus[0].check.target") and error.message == "missing required field 'target'"


def test_unknown_field_suggests_the_closest(tmp_path: Path) -> None:
    text = HEADER + "  - id: a\n    dimension: D1\n    check:\n      kind: value\n      nmae: lr\n      expect: 1\n"
    error = failure(write(tmp_path, "sau.yaml", text))
    assert where(error) == (8, "saus[0].check.nmae")
    assert error.message.startswith("unknown field 'nmae'; did you mean 'name'?")


def test_unknown_top_level_field(tmp_path: Path) -> None:
    error = failure(write(tmp_path, "sau.yaml", "version: 1\nalias: {lr: [eta]}\nsaus: []\n"))
    assert where(error) == (2, "alias") and error.message == "unknown field 'alias'; did you mean 'aliases'?"


def test_unknown_init_scheme(tmp_path: Path) -> None:
    text = HEADER + "  - id: a\n    dimension: D2\n    check: {kind: init, name: w, expect: zero}\n"
    error = failure(write(tmp_path, "sau.yaml", text))
    assert where(error) == (6, "saus[0].check.expect")
    assert "unknown value 'zero'" in error.message and "did you mean 'zeros'" in error.message


def test_model_validator_message(tmp_path: Path) -> None:
    text = HEADER + "  - id: a\n    dimension: D1\n    checks:\n      - {kind: value, name: lr, expect: 1}\n      - {kind: value, expect: 1}\n"
    error = failure(write(tmp_path, "sau.yaml", text))
    assert where(error) == (8, "saus[0].checks[1]") and "needs `name`, `names`, or `call` with `arg`" in error.message


def test_first_error_in_file_order_and_all_kept(tmp_path: Path) -> None:
    text = HEADER + (
        "  - id: a\n    dimension: D1\n    check: {kind: value, name: lr, expect: 1, tolerance: -1}\n"
        "  - id: b\n    dimension: D9\n"
        "  - id: a\n    dimension: D1\n"
    )
    error = failure(write(tmp_path, "sau.yaml", text))
    assert [(e.line, e.field) for e in error.errors] == [
        (6, "saus[0].check.tolerance"),
        (8, "saus[1].dimension"),
        (9, "saus[2].id"),
    ]
    assert error.errors[0].message == "must be at least 0, got -1"
    assert error.as_dict()["errors"][2]["message"] == "duplicate SAU id 'a' (first at line 4)"


def test_recursive_alias_is_refused(tmp_path: Path) -> None:
    error = failure(write(tmp_path, "sau.yaml", "version: 1\npin: &a\n  self: *a\nsaus: []\n"))
    assert error.line == 2 and "refers to itself" in error.message


def test_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [*a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}]" for i in range(1, 9)]
    text = "version: 1\npin:\n" + "".join(f"  {line}\n" for line in lines) + "saus: []\n"
    assert "too large" in failure(write(tmp_path, "sau.yaml", text)).message


def test_deep_nesting_is_an_error_not_a_crash(tmp_path: Path) -> None:
    for name, text in (("sau.yaml", "[" * 5000 + "]" * 5000), ("sau.json", "[" * 100000 + "]" * 100000)):
        assert failure(write(tmp_path, name, text)).line in (None, 1)


# ---------------------------------------------------------------- JSON and TOML lines


def test_json_lines_of_nested_fields(tmp_path: Path) -> None:
    text = """{
  "version": 1,
  "saus": [
    {"id": "a", "dimension": "D1", "check": {"kind": "value", "name": "lr", "expect": 1}},
    {
      "id": "b",
      "dimension": "D2",
      "check": {
        "kind": "call",
        "target": "torch.optim.Adam",
        "argz": {"lr": 1}
      }
    }
  ]
}
"""
    error = failure(write(tmp_path, "sau.json", text))
    assert where(error) == (11, "saus[1].check.argz") and "did you mean 'args'" in error.message


def test_json_duplicate_key(tmp_path: Path) -> None:
    error = failure(write(tmp_path, "sau.json", '{"version": 1,\n "saus": [],\n "version": 1}'))
    assert where(error) == (3, "version") and error.message == "duplicate key 'version' (first at line 1)"


def test_json_duplicate_ids(tmp_path: Path) -> None:
    text = '{"version": 1, "saus": [\n {"id": "x", "dimension": "D1"},\n {"id": "x", "dimension": "D1"}\n]}'
    error = failure(write(tmp_path, "sau.json", text))
    assert where(error) == (3, "saus[1].id") and error.message == "duplicate SAU id 'x' (first at line 2)"


def test_toml_lines(tmp_path: Path) -> None:
    text = """version = 1

[[saus]]
id = "a"
dimension = "D1"

[saus.check]
kind = "value"
name = "lr"
expect = 1

[[saus]]
id = "b"
dimension = "D5"
"""
    error = failure(write(tmp_path, "sau.toml", text))
    assert where(error) == (14, "saus[1].dimension")


def test_toml_unknown_check_kind_in_inline_table(tmp_path: Path) -> None:
    text = 'version = 1\n[[saus]]\nid = "a"\ndimension = "D1"\ncheck = {kind = "valeu", name = "lr", expect = 1}\n'
    error = failure(write(tmp_path, "sau.toml", text))
    assert where(error) == (5, "saus[0].check.kind") and "unknown check kind 'valeu'" in error.message


def test_toml_duplicate_ids(tmp_path: Path) -> None:
    text = 'version = 1\n[[saus]]\nid = "a"\ndimension = "D1"\n[[saus]]\nid = "a"\ndimension = "D1"\n'
    error = failure(write(tmp_path, "sau.toml", text))
    assert where(error) == (6, "saus[1].id") and error.message == "duplicate SAU id 'a' (first at line 3)"


def test_toml_multiline_string_does_not_shift_lines(tmp_path: Path) -> None:
    text = 'version = 1\n[[saus]]\nid = "a"\nclaim = """\nweight = 3\n"""\ndimension = "D1"\nweight = "x"\n'
    error = failure(write(tmp_path, "sau.toml", text))
    assert where(error) == (8, "saus[0].weight")


def test_yaml_merge_key_override_keeps_its_own_line(tmp_path: Path) -> None:
    text = (
        "version: 1\nsaus:\n  - id: a\n    dimension: D1\n    check: &base {kind: value, name: lr, expect: 1}\n"
        "  - id: b\n    dimension: D1\n    check:\n      <<: *base\n      tolerance: -2\n"
    )
    error = failure(write(tmp_path, "sau.yaml", text))
    assert where(error) == (10, "saus[1].check.tolerance")


def test_an_unknown_formula_assumption_is_an_error_with_a_suggestion(tmp_path: Path) -> None:
    spec = write(tmp_path, "sau.yaml", HEADER + "  - id: a\n    dimension: D2\n    claim: x\n"
                 "    check: {kind: formula, expect: 'mu + s*eps', assume: {eps: standard_nomal}}\n")
    error = failure(spec)
    assert where(error) == (7, "saus[0].check.assume.eps")
    assert "did you mean 'standard_normal'" in str(error)
