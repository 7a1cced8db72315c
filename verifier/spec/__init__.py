"""Spec loading: native v1 (YAML/JSON/TOML), SA-Bench sau.json, PaperBench rubric.json."""
