"""The value data files are well-formed: every lexicon entry documented, names unambiguous, defaults typed."""

import numbers

from verifier import rules
from verifier.analysis.calibration import default_substitutes, normalise_text
from verifier.analysis.values import LibraryDefaults


def test_lexicon_entries_are_documented_and_unambiguous():
    lexicon = rules.load("lexicon.yaml")
    assert len(lexicon) >= 60
    owner: dict[str, str] = {}
    for canonical, entry in lexicon.items():
        assert isinstance(entry.get("description"), str) and entry["description"].strip(), canonical
        assert isinstance(entry.get("synonyms"), list) and entry["synonyms"], canonical
        for name in entry["synonyms"]:
            key = str(name).lower()
            assert owner.setdefault(key, canonical) == canonical, f"{name} is in {owner[key]} and {canonical}"
        for name in entry.get("weak") or ():
            assert str(name).lower() not in {str(s).lower() for s in entry["synonyms"]}, (canonical, name)


def test_library_defaults_have_positions_and_numeric_numbers():
    data = rules.load("library_defaults.yaml")
    for key in ("torch.optim.Adam", "torch.optim.AdamW", "transformers.TrainingArguments", "peft.LoraConfig",
                "stable_baselines3.PPO", "optax.adamw", "sklearn.model_selection.train_test_split",
                "torch.nn.utils.clip_grad_norm_"):
        assert key in data, key
    for key, entry in data.items():
        assert isinstance(entry.get("params"), list), key
        for name, value in (entry.get("defaults") or {}).items():
            # YAML reads `1e-8` (no dot) as a string; every default that looks numeric must be a number.
            if isinstance(value, str):
                assert not value[:1].isdigit(), f"{key}.{name} = {value!r} is a string"
            elif value is not None and not isinstance(value, (bool, list)):
                assert isinstance(value, numbers.Number), (key, name)


def test_library_lookup_by_suffix_and_position():
    library = LibraryDefaults(rules.load("library_defaults.yaml"))
    adam = library.lookup("optim.Adam")
    assert adam is not None and adam.key == "torch.optim.Adam"
    assert adam.param_at(1) == "lr" and adam.position_of("betas") == 2
    assert library.lookup("transformers.Seq2SeqTrainingArguments").defaults["learning_rate"] == 5e-5
    assert library.lookup("Conv2d").key == "torch.nn.Conv2d"
    assert library.lookup("nothing.like.this") is None


def test_substitute_groups_are_normalised():
    subs = default_substitutes()
    assert subs.relation(normalise_text("AdamW"), normalise_text("adam_w")) == "same"
    assert subs.relation("adam", "adamw") == "substitute"
    assert subs.relation("true", "yes") == "same"


def test_no_rules_file_repeats_a_key():
    """YAML keeps the last of two equal keys without a word: a repeated entry silently replaces the first."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        pass

    def mapping(loader, node, deep=False):
        keys = [loader.construct_object(k, deep=True) for k, _ in node.value]
        repeated = sorted({str(k) for k in keys if keys.count(k) > 1})
        assert not repeated, f"{node.start_mark.name}:{node.start_mark.line + 1}: repeated keys {repeated}"
        return yaml.SafeLoader.construct_mapping(loader, node, deep)

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    files = sorted(rules.rules_dir().rglob("*.yaml"))
    assert len(files) >= 20
    for path in files:
        yaml.load(path.read_text(encoding="utf-8"), Loader=StrictLoader)  # noqa: S506 - a SafeLoader subclass
