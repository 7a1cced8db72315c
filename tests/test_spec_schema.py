"""The shipped JSON Schema is the model's, current, and agrees with the loader on real examples."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from test_spec_load import CONTRACT_EXAMPLE, EVERY_KIND
from verifier.spec import schema


@pytest.fixture(scope="module")
def generated() -> dict:
    return schema.generate()


def test_committed_schema_is_fresh() -> None:
    # The file in the checkout, and the copy an installed wheel ships, both equal a fresh generation.
    source = Path(__file__).resolve().parent.parent / "schema" / "sau-v1.schema.json"
    assert source.read_text(encoding="utf-8") == schema.render(), "run: python -m verifier.spec.schema"
    committed = schema.committed_path()
    assert committed.name == "sau-v1.schema.json"
    assert committed.read_text(encoding="utf-8") == schema.render()
    assert schema.main(["--check"]) == 0


def test_schema_is_valid_draft_2020_12(generated: dict) -> None:
    assert generated["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert generated["$id"] == schema.SCHEMA_ID
    jsonschema.Draft202012Validator.check_schema(generated)


def test_every_model_and_field_is_described(generated: dict) -> None:
    models = {"Spec": generated, **generated["$defs"]}
    undocumented = [name for name, model in models.items() if not model.get("description")]
    undocumented += [
        f"{name}.{field}"
        for name, model in models.items()
        for field, prop in model.get("properties", {}).items()
        if not prop.get("description")
    ]
    assert undocumented == []


@pytest.mark.parametrize("text", [CONTRACT_EXAMPLE, EVERY_KIND], ids=["contract", "every-kind"])
def test_examples_validate_against_the_schema(text: str, generated: dict) -> None:
    validator = jsonschema.Draft202012Validator(generated)
    assert [e.message for e in validator.iter_errors(yaml.safe_load(text))] == []


@pytest.mark.parametrize(
    "check",
    [
        {"kind": "valu", "name": "lr", "expect": 1},
        {"kind": "value", "expect": 1},
        {"name": "lr", "expect": 1},
        {"kind": "value", "name": "lr", "expect": 1, "nmae": "x"},
        {"kind": "formula", "symbols": {}},
        {"kind": "init", "name": "w", "expect": "zero"},
    ],
)
def test_schema_rejects_what_the_loader_rejects(check: dict, generated: dict, tmp_path: Path) -> None:
    from verifier.spec.errors import SpecError
    from verifier.spec.load import load_spec

    spec = {"version": 1, "saus": [{"id": "a", "dimension": "D1", "check": check}]}
    assert list(jsonschema.Draft202012Validator(generated).iter_errors(spec))
    path = tmp_path / "sau.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    with pytest.raises(SpecError):
        load_spec(path)


def test_dimension_codes_are_in_the_schema(generated: dict) -> None:
    validator = jsonschema.Draft202012Validator(generated)
    for spelling in ("numerical", "D1", "d4", "Ordering"):
        assert not list(validator.iter_errors({"saus": [{"id": "a", "dimension": spelling}]}))
    assert list(validator.iter_errors({"saus": [{"id": "a", "dimension": "D5"}]}))
    both = {"version": 1, "saus": [{"id": "a", "dimension": "D1", "check": {"kind": "judge"}, "checks": []}]}
    assert list(jsonschema.Draft202012Validator(generated).iter_errors(both))
