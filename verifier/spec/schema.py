"""Generate the JSON Schema of native spec v1 from the pydantic model, for editor completion.

The model is the single source of truth; this module only adds what pydantic cannot infer: prose for each
field, the D1..D4 spellings the dimension validator accepts, the required ``kind`` discriminator, and the
"one of these fields" rules the model validators enforce. ``python -m verifier.spec.schema`` rewrites
``schema/sau-v1.schema.json``; ``--check`` exits 1 when the committed file is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from verifier.spec.model import CHECK_KINDS, DIMENSION_CODES, Dimension, Spec

SCHEMA_ID = "urn:sau-verify:schema:sau-v1"
SCHEMA_FILE = "sau-v1.schema.json"

_MODEL_DESCRIPTIONS = {
    "Spec": "A sau-verify spec, version 1: the claims (SAUs) a paper makes and how to check them in its code.",
    "Paper": "The paper the repository implements.",
    "RepoScope": "Which files of the repository are analysed (globs relative to the repository root).",
    "SAU": "A Semantic Alignment Unit: one claim of the paper, in one dimension, with its checks.",
    "Deviation": "A known, documented departure from the paper.",
    "CountRange": "How many matching calls are expected.",
    "ValueCheck": "The effective value of a parameter equals `expect`, lies `within` an interval, or equals the "
    "parameter named by `same_as`; or the runs the repository launches take every value of `sweep`.",
    "CallCheck": "The repository calls an API with the given arguments.",
    "ExistsCheck": "A component is implemented (not a stub) and, with `reachable`, called from an entry point.",
    "InitCheck": "A parameter or tensor is initialised with the given scheme.",
    "FormulaCheck": "Some expression computed in the repository is mathematically equivalent to the formula.",
    "OrderCheck": "Steps happen in the given order on every path.",
    "ProtocolCheck": "An experimental-protocol rule from the built-in library; other fields are the rule's parameters.",
    "PatternCheck": "A structural code pattern with $METAVARS, for what no rule covers.",
    "JudgeCheck": "Only an LLM judge can decide; it sees the claim and the evidence found from the hints.",
}

_FIELD_DESCRIPTIONS = {
    "Spec.version": "Spec format version; must be 1.",
    "Spec.paper": "The paper: id, title, url.",
    "Spec.repo": "Optional scope; defaults leave out tests/, docs/, .git, virtualenvs and build output.",
    "Spec.pin": "Config values assumed when code branches on them, e.g. {loss_type: sigmoid}.",
    "Spec.aliases": "More names for a canonical parameter, added to the built-in lexicon.",
    "Spec.saus": "The claims to verify.",
    "Paper.id": "Short paper identifier, used in reports.",
    "Paper.title": "Paper title.",
    "Paper.url": "Where the paper can be read.",
    "RepoScope.include": "Globs of files to analyse.",
    "RepoScope.exclude": "Globs of files to leave out.",
    "SAU.id": "Unique id, conventionally <paper>-D<N>-<NNN>.",
    "SAU.dimension": "numerical | methodological | protocol | ordering, or D1 | D2 | D3 | D4 (any case).",
    "SAU.claim": "The claim as the paper states it.",
    "SAU.source": "Where in the paper: section, table or equation.",
    "SAU.weight": "Weight of this SAU in aggregate scores.",
    "SAU.check": "The one check of this SAU. Without `check` or `checks` the claim text is compiled or judged.",
    "SAU.checks": "Several checks; the SAU's score is their mean and its status the worst of theirs.",
    "SAU.deviation": "A known, accepted departure from the paper.",
    "Deviation.accepted": "Whether the departure is accepted as faithful.",
    "Deviation.reason": "Why the code departs from the paper.",
    "CountRange.min": "At least this many calls.",
    "CountRange.max": "At most this many calls.",
    "kind": "The check kind.",
    "CallCheck.args": "Arguments the call must have, by keyword name: {kernel_size: 3}.",
    "CallCheck.count": "How many matching calls are expected.",
    "ExistsCheck.symbol": "Function, class or method name, qualified or not.",
    "ExistsCheck.reachable": "Also require that it is called from an entry point.",
    "InitCheck.name": "The parameter or tensor, resolved like value names.",
    "InitCheck.expect": "The initialisation scheme.",
    "InitCheck.args": "Scheme arguments, e.g. {std: 0.02}.",
    "FormulaCheck.symbols": "Paper symbol -> code name, expression or descriptive role name (partial allowed).",
    "FormulaCheck.functions": "Paper symbols that are functions, e.g. [LN, MSA].",
    "FormulaCheck.assume": "Per symbol: positive or nonnegative (a SymPy assumption), or standard_normal (the draw of a reparameterised sample), e.g. {sigma: positive}.",
    "FormulaCheck.pin": "Config values assumed when code branches on them.",
    "FormulaCheck.sign": "exact, or either (equal up to sign).",
    "FormulaCheck.reduction": "strip outer mean/sum/expectation on both sides, or keep and compare them.",
    "FormulaCheck.paths": "any: one implementation path suffices; all: every path must be equivalent.",
    "OrderCheck.steps": "Call names, qualified names or repository functions, in order.",
    "OrderCheck.relation": "before: each step dominates the next; per-iteration: same loop iteration; "
    "phases: repository-level phases run in that order from the entry point.",
    "ProtocolCheck.rule": "A rule name from the built-in rule library, e.g. split-ratio, seeded, eval-mode.",
    "PatternCheck.require": "Pattern(s) that must occur.",
    "PatternCheck.forbid": "Pattern(s) that must not occur.",
    "PatternCheck.inside": "Only match inside this enclosing pattern.",
    "PatternCheck.where": "Comparisons on metavariables.",
    "JudgeCheck.hints": "Files or symbols to show the judge.",
}

# Fields the model validators require one of (pydantic cannot express these in the schema itself).
_ONE_OF_REQUIRED = {
    "ValueCheck": [["name"], ["names"], ["call", "arg"]],
    "FormulaCheck": [["expect"], ["latex"]],
    "PatternCheck": [["require"], ["forbid"]],
}

_EXACTLY_ONE_OF = {"ValueCheck": ["expect", "sweep", "within", "same_as"]}


def generate() -> dict[str, Any]:
    schema = Spec.model_json_schema(by_alias=True, mode="validation")
    defs = schema["$defs"]
    for name, model in [("Spec", schema), *defs.items()]:
        if name in _MODEL_DESCRIPTIONS:
            model["description"] = _MODEL_DESCRIPTIONS[name]
        properties = model.get("properties", {})
        for field, prop in properties.items():
            text = _FIELD_DESCRIPTIONS.get(f"{name}.{field}") or _FIELD_DESCRIPTIONS.get(field)
            if text and "description" not in prop:
                prop["description"] = text
        if "kind" in properties and properties["kind"].get("const") in CHECK_KINDS:
            model["required"] = ["kind", *[r for r in model.get("required", []) if r != "kind"]]
        if name in _ONE_OF_REQUIRED:
            model["anyOf"] = [{"required": fields} for fields in _ONE_OF_REQUIRED[name]]
    # Exactly one of these fields (the model validators enforce it).
    for name, alternatives in _EXACTLY_ONE_OF.items():
        defs[name]["oneOf"] = [{"required": [field]} for field in alternatives]
    defs["SAU"]["not"] = {"required": ["check", "checks"]}
    spellings = [d.value for d in Dimension] + [DIMENSION_CODES[d] for d in Dimension]
    defs["Dimension"] = {
        "title": "Dimension",
        "description": "The SA-Bench dimension: D1 numerical, D2 methodological, D3 protocol, D4 ordering.",
        "type": "string",
        # The enum drives editor completion; the pattern admits any case, as Dimension.parse does.
        "anyOf": [{"enum": spellings}, {"pattern": "^(?:" + "|".join(map(_any_case, spellings)) + ")$"}],
    }
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def _any_case(word: str) -> str:
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in word)


def render() -> str:
    return json.dumps(generate(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def committed_path() -> Path:
    from verifier.rules import schema_dir

    return schema_dir() / SCHEMA_FILE


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    target = committed_path()
    fresh = render()
    if "--check" in args:
        current = target.read_text(encoding="utf-8") if target.is_file() else ""
        if current != fresh:
            print(f"{target} is stale: run python -m verifier.spec.schema", file=sys.stderr)
            return 1
        return 0
    target.write_text(fresh, encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
