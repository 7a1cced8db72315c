"""A config key or command-line option no code reads sets nothing: it neither passes a claim nor overrides the
code's own value.

Agents write ``configs/train.yaml`` with the paper's ``lr: 3.0e-4`` and then hard-code ``AdamW(lr=1e-3)``. Each case
is a small repo written to disk and checked for real. Every way a run may read a key stays a read, as pyflakes
prefers silence: by attribute or string, through an interpolation, a splat, Hydra's ``instantiate``, iteration or
``setattr``, a section or the whole config handed to a library, and any file the repo's code does not load itself
(DeepSpeed, accelerate, CI files, or no loader at all).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from minirepo import make_repo

from verifier.engine import run_repo
from verifier.results import Status

CONFIG = """\
    model:
      hidden_dim: 256
    optim:
      lr: 3.0e-4
      weight_decay: 0.01
    train:
      epochs: 100
      warmup_epochs: 5
    """

TRAIN = """\
    import torch
    import yaml


    def main():
        with open("configs/train.yaml") as f:
            cfg = yaml.safe_load(f)
        model = torch.nn.Linear(10, cfg["model"]["hidden_dim"])
        {optimizer}
        for _ in range(cfg["train"]["epochs"]):
            opt.step()


    if __name__ == "__main__":
        main()
    """

LR = "{kind: value, name: learning_rate, expect: 3.0e-4}"
WARMUP = "{kind: value, name: warmup_epochs, expect: 5}"


def verdict(tmp_path: Path, files: dict[str, str], check: str = LR):
    repo = make_repo(tmp_path, files, [{"id": "t-D1-001", "dimension": "D1", "claim": "the claim",
                                        "check": yaml.safe_load(check)}])
    (result,) = run_repo(repo, use_cache=False).verdicts
    return result


def roles(result) -> list[tuple[str, int, str]]:
    return sorted((e.file, e.line, e.role) for e in result.evidence)


def repo_files(optimizer: str, config: str = CONFIG, **extra: str) -> dict[str, str]:
    return {"configs/train.yaml": config, "train.py": TRAIN.replace("{optimizer}", optimizer), **extra}


def test_an_unread_key_does_not_override_a_hard_coded_value(tmp_path):
    result = verdict(tmp_path, repo_files("opt = torch.optim.AdamW(model.parameters(), lr=1e-3)"))
    assert (result.status, result.score) == (Status.partial, 0.5)  # 1e-3 is 3.33x the claimed 3e-4
    assert "lr = 0.001 (call keyword, train.py:9)" in result.message
    assert "optim.lr: 3e-4 at configs/train.yaml:4 is not in effect" in result.message
    assert "no code reads `lr`" in result.message
    assert ("train.py", 9, "effective") in roles(result)
    assert ("configs/train.yaml", 4, "unread") in roles(result)


def test_an_unread_key_leaves_the_library_default_in_effect(tmp_path):
    result = verdict(tmp_path, repo_files("opt = torch.optim.AdamW(model.parameters())"))
    assert (result.status, result.score) == (Status.partial, 0.25)  # AdamW's own 1e-3 runs
    assert "lr = 0.001 (torch.optim.AdamW default" in result.message
    assert "optim.lr: 3e-4 at configs/train.yaml:4 is not in effect" in result.message
    assert ("train.py", 9, "library-default") in roles(result)
    assert ("configs/train.yaml", 4, "unread") in roles(result)


def test_an_unread_key_with_the_right_value_is_a_minor_deviation(tmp_path):
    result = verdict(tmp_path, repo_files("opt = torch.optim.AdamW(model.parameters())"), WARMUP)
    assert (result.status, result.score) == (Status.partial, 0.75)
    assert "but no run uses it: the key is set in configs/train.yaml, but no code reads `warmup_epochs`" in result.message
    assert "runs start in `main`, train.py:5" in result.message
    assert ("configs/train.yaml", 8, "dead") in roles(result)
    assert ("train.py", 5, "entry") in roles(result)


def test_a_key_read_only_by_a_function_no_run_calls_is_a_minor_deviation(tmp_path):
    optimizer = "opt = torch.optim.AdamW(model.parameters())"
    files = repo_files(optimizer, **{"sched.py": """\
        def warmup(cfg, opt):
            for group in opt.param_groups:
                group["warmup"] = cfg["train"]["warmup_epochs"]
        """})
    result = verdict(tmp_path, files, WARMUP)
    assert (result.status, result.score) == (Status.partial, 0.75)
    assert "only `warmup` reads `.warmup_epochs` (sched.py:3)" in result.message
    assert ("sched.py", 3, "dead") in roles(result)


@pytest.mark.parametrize(
    "optimizer",
    [
        'opt = torch.optim.AdamW(model.parameters(), lr=cfg["optim"]["lr"])',
        'opt = torch.optim.AdamW(model.parameters(), lr=cfg["optim"].get("lr", 1e-3))',
        'opt = torch.optim.AdamW(model.parameters(), **cfg["optim"])',
        'opt_cfg = cfg["optim"]; opt = torch.optim.AdamW(model.parameters(), **opt_cfg)',
        'opt = torch.optim.AdamW(model.parameters(), **{k: v for k, v in cfg["optim"].items()})',
        'opt = torch.optim.AdamW(model.parameters(), **dict(cfg["optim"]))',
    ],
    ids=["subscript", "get", "splat-section", "splat-local", "items", "splat-dict-call"],
)
def test_every_way_code_reads_the_key_passes(tmp_path, optimizer):
    result = verdict(tmp_path, repo_files(optimizer))
    assert (result.status, result.score) == (Status.pass_, 1.0), result.message
    assert ("configs/train.yaml", 4, "effective") in roles(result)


def test_a_key_copied_onto_the_namespace_with_setattr_passes(tmp_path):
    optimizer = ("import argparse; args = argparse.Namespace()\n"
                 "        section = cfg['optim']\n"
                 "        for key, value in list(section.items()): setattr(args, key, value)\n"
                 "        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)")
    result = verdict(tmp_path, repo_files(optimizer))
    assert result.status is Status.pass_, result.message


def test_an_interpolated_key_is_read_where_the_interpolation_is(tmp_path):
    config = CONFIG.rstrip(" ") + "    sched:\n      max_lr: ${optim.lr}\n"
    optimizer = 'opt = torch.optim.AdamW(model.parameters()); peak = cfg["sched"]["max_lr"]'
    result = verdict(tmp_path, repo_files(optimizer, config=config))
    assert result.status is Status.pass_, result.message


def test_hydra_instantiate_reads_every_key_of_a_node(tmp_path):
    files = {
        "conf/config.yaml": """\
            optim:
              _target_: torch.optim.AdamW
              lr: 3.0e-4
            """,
        "train.py": """\
            import hydra
            from hydra.utils import instantiate


            @hydra.main(config_path="conf", config_name="config", version_base=None)
            def main(cfg):
                opt = instantiate(cfg.optim, params=[])
                opt.step()


            if __name__ == "__main__":
                main()
            """,
    }
    result = verdict(tmp_path, files)
    assert (result.status, result.score) == (Status.pass_, 1.0), result.message


def test_a_config_a_library_reads_is_left_alone(tmp_path):
    files = repo_files(
        'opt = torch.optim.AdamW(model.parameters(), lr=cfg["optim"]["lr"])',
        **{"ds_config.json": '{"train_batch_size": 64, "gradient_accumulation_steps": 2}',
           "launch.sh": "deepspeed train.py --deepspeed ds_config.json\n"},
    )
    result = verdict(tmp_path, files, "{kind: value, name: train_batch_size, expect: 64}")
    assert (result.status, result.score) == (Status.pass_, 1.0), result.message


def test_a_section_handed_to_a_library_is_read_by_it(tmp_path):
    config = CONFIG.rstrip(" ") + "    deepspeed:\n      train_batch_size: 64\n"
    optimizer = ('import deepspeed\n'
                 '        engine, opt, _, _ = deepspeed.initialize(model=model, config=cfg["deepspeed"])')
    result = verdict(tmp_path, repo_files(optimizer, config=config), "{kind: value, name: train_batch_size, expect: 64}")
    assert (result.status, result.score) == (Status.pass_, 1.0), result.message


def test_the_whole_config_handed_to_a_library_counts_as_read(tmp_path):
    optimizer = ('import wandb; wandb.init(config=cfg)\n'
                 '        opt = torch.optim.AdamW(model.parameters())')
    result = verdict(tmp_path, repo_files(optimizer))
    assert (result.status, result.score) == (Status.pass_, 1.0), result.message


def test_a_config_no_code_loads_is_left_alone(tmp_path):
    files = {
        "configs/train.yaml": CONFIG,
        "train.py": """\
            import torch


            def main():
                opt = torch.optim.AdamW(torch.nn.Linear(2, 2).parameters())
                opt.step()
                print("the recipe is in configs/train.yaml")


            if __name__ == "__main__":
                main()
            """,
    }
    result = verdict(tmp_path, files)
    assert (result.status, result.score) == (Status.pass_, 1.0), result.message  # a launcher may read it


def test_a_splatted_batch_is_data_not_a_config(tmp_path):
    optimizer = ('opt = torch.optim.AdamW(model.parameters())\n'
                 '        for batch in [{"input": torch.zeros(1, 10)}]: model(**batch)')
    result = verdict(tmp_path, repo_files(optimizer), WARMUP)
    assert (result.status, result.score) == (Status.partial, 0.75), result.message


def test_a_config_attribute_read_through_omegaconf_passes(tmp_path):
    files = {
        "configs/train.yaml": CONFIG,
        "train.py": """\
            import torch
            from omegaconf import OmegaConf


            def main():
                cfg = OmegaConf.load("configs/train.yaml")
                opt = torch.optim.AdamW(torch.nn.Linear(2, 2).parameters(), lr=cfg.optim.lr)
                opt.step()


            if __name__ == "__main__":
                main()
            """,
    }
    result = verdict(tmp_path, files)
    assert (result.status, result.score) == (Status.pass_, 1.0), result.message


def test_a_splat_of_a_dict_written_in_place_reads_no_config(tmp_path):
    optimizer = ('kwargs = dict(lr=1e-3, weight_decay=0.0)\n'
                 '        opt = torch.optim.AdamW(model.parameters(), **kwargs)')
    result = verdict(tmp_path, repo_files(optimizer), WARMUP)
    assert (result.status, result.score) == (Status.partial, 0.75), result.message


def test_a_learning_rate_read_off_the_param_groups_is_no_read_of_the_key(tmp_path):
    optimizer = ('opt = torch.optim.AdamW(model.parameters(), lr=1e-3)\n'
                 '        print(opt.param_groups[0]["lr"])\n'
                 '        for group in opt.param_groups: print(group["lr"])')
    result = verdict(tmp_path, repo_files(optimizer))
    assert (result.status, result.score) == (Status.partial, 0.5), result.message
    assert "optim.lr: 3e-4 at configs/train.yaml:4 is not in effect" in result.message


CLICK = """\
    import click
    import torch


    @click.command()
    @click.option("--lr", default=3e-4, type=float)
    @click.option("--epochs", default=100)
    def train(lr, epochs):
        {body}


    if __name__ == "__main__":
        train()
    """


def test_a_click_option_its_command_never_reads_does_not_override_the_code(tmp_path):
    body = ("opt = torch.optim.AdamW(torch.nn.Linear(2, 2).parameters(), lr=1e-3)\n"
            "        for _ in range(epochs):\n"
            "            opt.step()")
    result = verdict(tmp_path, {"train.py": CLICK.replace("{body}", body)})
    assert (result.status, result.score) == (Status.partial, 0.5)
    assert "lr = 0.001 (call keyword, train.py:9)" in result.message
    assert "args.lr: 3e-4 at train.py:6 is not in effect (the option is parsed, but `train` never reads `lr`)" in result.message
    assert ("train.py", 6, "unread") in roles(result)


@pytest.mark.parametrize(
    "body",
    [
        "opt = torch.optim.AdamW(torch.nn.Linear(2, 2).parameters(), lr=lr)",
        "def make(): return torch.optim.AdamW(torch.nn.Linear(2, 2).parameters(), lr=lr)\n        make()",
        "print(locals())",
    ],
    ids=["read", "read-by-a-nested-function", "locals"],
)
def test_a_click_option_its_command_reads_passes(tmp_path, body):
    result = verdict(tmp_path, {"train.py": CLICK.replace("{body}", body)})
    assert (result.status, result.score) == (Status.pass_, 1.0), result.message


def test_a_typer_option_its_command_never_reads_is_a_minor_deviation(tmp_path):
    files = {"train.py": """\
        import typer

        app = typer.Typer()


        @app.command()
        def train(warmup_epochs: int = typer.Option(5), epochs: int = typer.Option(100)):
            for epoch in range(epochs):
                print(epoch)


        if __name__ == "__main__":
            app()
        """}
    result = verdict(tmp_path, files, WARMUP)
    assert (result.status, result.score) == (Status.partial, 0.75), result.message
    assert "`train` never reads `warmup_epochs`" in result.message


def test_a_key_that_is_read_cites_the_read(tmp_path):
    result = verdict(tmp_path, repo_files('opt = torch.optim.AdamW(model.parameters(), lr=cfg["optim"]["lr"])'))
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert roles(result) == [("configs/train.yaml", 4, "effective"), ("train.py", 9, "read")]


@pytest.mark.parametrize(
    "optimizer",
    [
        'opt = torch.optim.AdamW(model.parameters()); name = "optim"; section = cfg.get(name)',
        'import argparse; args = argparse.Namespace(); vars(args).update(cfg)\n'
        '        opt = torch.optim.AdamW(model.parameters())',
        'key = "warmup_epochs"; n = cfg["train"][key]; opt = torch.optim.AdamW(model.parameters())',
    ],
    ids=["computed-get", "merged-into-a-namespace", "computed-subscript"],  # the merge: a library call gets cfg
)
def test_a_config_read_by_a_computed_key_or_merged_elsewhere_counts_as_read(tmp_path, optimizer):
    result = verdict(tmp_path, repo_files(optimizer), WARMUP)
    assert (result.status, result.score) == (Status.pass_, 1.0), result.message


def test_a_checkpoint_config_is_read_by_the_library_that_loads_the_checkpoint(tmp_path):
    files = repo_files(
        'opt = torch.optim.AdamW(model.parameters(), lr=cfg["optim"]["lr"])\n'
        '        import json; json.dump({}, open("checkpoints/config.json", "w"))',
        **{"checkpoints/config.json": '{"hidden_size": 768, "num_attention_heads": 12}'},
    )
    repo = make_repo(tmp_path, files, [{"id": "t-D1-001", "dimension": "D1", "claim": "the claim",
                                        "check": {"kind": "value", "name": "num_heads", "expect": 12}}])
    (repo / "checkpoints" / "model.safetensors").write_bytes(b"\0" * 16)
    (result,) = run_repo(repo, use_cache=False).verdicts
    assert (result.status, result.score) == (Status.pass_, 1.0), result.message
    (repo / "checkpoints" / "model.safetensors").unlink()
    (result,) = run_repo(repo, use_cache=False).verdicts
    assert (result.status, result.score) == (Status.partial, 0.75), result.message  # a json.dump'd file of its own


def test_a_config_json_in_a_repo_that_loads_pretrained_checkpoints_is_left_to_the_library(tmp_path):
    files = repo_files(
        'opt = torch.optim.AdamW(model.parameters(), lr=cfg["optim"]["lr"])\n'
        '        from transformers import AutoModel; AutoModel.from_pretrained("checkpoints")\n'
        '        import json; json.dump({}, open("checkpoints/config.json", "w"))',
        **{"checkpoints/config.json": '{"hidden_size": 768, "num_attention_heads": 12}'},
    )
    result = verdict(tmp_path, files, "{kind: value, name: num_heads, expect: 12}")
    assert (result.status, result.score) == (Status.pass_, 1.0), result.message


def test_a_click_option_that_is_read_cites_the_read(tmp_path):
    body = ("opt = torch.optim.AdamW(torch.nn.Linear(2, 2).parameters(), lr=lr)\n"
            "        for _ in range(epochs):\n"
            "            opt.step()")
    result = verdict(tmp_path, {"train.py": CLICK.replace("{body}", body)})
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert roles(result) == [("train.py", 6, "effective"), ("train.py", 9, "read")]


def test_an_argparse_option_that_is_read_cites_the_read(tmp_path):
    files = {"train.py": """\
        import argparse

        import torch


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--learning-rate", type=float, default=3e-4)
            args = parser.parse_args()
            opt = torch.optim.AdamW(torch.nn.Linear(2, 2).parameters(), lr=args.learning_rate)
            opt.step()


        if __name__ == "__main__":
            main()
        """}
    result = verdict(tmp_path, files)
    assert (result.status, result.score) == (Status.pass_, 1.0), result.message
    assert ("train.py", 10, "read") in roles(result)


def test_iterating_a_list_in_the_config_reads_no_other_key(tmp_path):
    config = CONFIG.rstrip(" ") + "    layers:\n      - {dim: 64}\n      - {dim: 128}\n"
    optimizer = ('opt = torch.optim.AdamW(model.parameters())\n'
                 '        blocks = [torch.nn.Linear(8, layer["dim"]) for layer in cfg["layers"]]')
    result = verdict(tmp_path, repo_files(optimizer, config=config), WARMUP)
    assert (result.status, result.score) == (Status.partial, 0.75), result.message


def test_iterating_a_mapping_in_the_config_may_read_any_of_its_keys(tmp_path):
    optimizer = ('opt = torch.optim.AdamW(model.parameters())\n'
                 '        names = [key for key in cfg["train"]]')
    result = verdict(tmp_path, repo_files(optimizer), WARMUP)
    assert (result.status, result.score) == (Status.pass_, 1.0), result.message
