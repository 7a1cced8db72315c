"""Unit behaviour of the protocol analyses beyond the rules' own examples: flow, bounds, counts, fractions."""

from __future__ import annotations

from verifier.analysis.protocol import implementation, load_rule, with_defaults
from verifier.analysis.protocol.examples import context_for
from verifier.analysis.protocol.flow import flow, name_kind, split_word


def verdict(rule, files, scope=None, **params):
    if isinstance(files, str):
        files = {"train.py": files}
    ctx = context_for(files)
    return implementation(rule)(with_defaults(rule, params), ctx, scope, load_rule(rule))


def lines(result):
    return sorted((e.file, e.line) for e in result.evidence)


def test_split_names_and_words():
    assert [name_kind(n) for n in ("X_test", "testLoader", "val_ds", "x_te", "train_set", "test_size", "latest", "value")] == [
        "test", "test", "val", "test", "train", None, None, None]
    assert [split_word(w) for w in ("test", "validation[:10%]", "train+validation", "foo")] == ["test", "val", "val", None]


def test_leak_through_two_repo_calls_is_found_with_source_and_sink():
    src = (
        "from torchvision import datasets\n"
        "def step(model, batch, opt):\n"
        "    loss = model(batch).mean()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
        "def epoch(model, loader, opt):\n"
        "    for batch in loader:\n"
        "        step(model, batch, opt)\n"
        "def main(model, opt):\n"
        "    holdout = datasets.MNIST('d', train=False)\n"
        "    epoch(model, holdout, opt)\n"
    )
    result = verdict("no-test-leakage", src)
    assert result.status.value == "mismatch"
    assert ("train.py", 4) in lines(result) and ("train.py", 10) in lines(result)


def test_leak_analysis_reports_unverified_past_its_depth_bound():
    chain = "".join(f"def f{i}(x):\n    return f{i + 1}(x)\n" for i in range(9))
    src = "import sklearn\n" + chain + "def f9(x):\n    return model.fit(x)\n" + "def main(X_test):\n    f0(X_test)\n"
    ctx = context_for({"train.py": src})
    assert "depth" in flow(ctx).bounded
    result = implementation("no-test-leakage")({}, ctx, None, load_rule("no-test-leakage"))
    assert result.status.value == "unverified" and "depth" in result.message


def test_validation_leak_only_when_asked():
    src = "from sklearn.svm import SVC\nclf = SVC()\nclf.fit(X_val, y_val)\n"
    assert verdict("no-test-leakage", src).status.value != "mismatch"
    assert verdict("no-test-leakage", src, include_validation=True).status.value == "mismatch"


def test_hf_trainer_on_test_split_is_a_leak():
    src = (
        "from datasets import load_dataset\nfrom transformers import Trainer\n"
        "ds = load_dataset('imdb')\n"
        "trainer = Trainer(model=m, train_dataset=ds['test'], eval_dataset=ds['train'])\n"
    )
    result = verdict("no-test-leakage", src)
    assert result.status.value == "mismatch" and ("train.py", 4) in lines(result)


def test_selection_on_training_loss_is_partial():
    src = "import torch\nbest = 1e9\nfor epoch in range(3):\n    train_loss = run(train_loader)\n    if train_loss < best:\n        best = train_loss\n        torch.save(m, 'b.pt')\n"
    result = verdict("select-on-validation", src)
    assert (result.status.value, result.score) == ("partial", 0.5)


def test_split_ratio_hf_default_and_counts():
    hf = "from datasets import load_dataset\nds = load_dataset('imdb', split='train')\nparts = ds.train_test_split(test_size=0.1)\n"
    assert verdict("split-ratio", hf, expect={"train": 0.9, "test": 0.1}).status.value == "pass"
    counts = "import torch\ntrain_ds, val_ds = torch.utils.data.random_split(ds, [45000, 5000])\n"
    result = verdict("split-ratio", counts, expect={"train": 45000, "val": 5000})
    assert result.status.value == "pass" and lines(result) == [("train.py", 2)]
    assert verdict("split-ratio", counts, expect={"train": 40000, "val": 10000}).status.value == "mismatch"


def test_split_ratio_from_config_setting_read_by_name():
    files = {
        "conf/data.yaml": "data:\n  val_split: 0.2\n",
        "train.py": "import torch\nn_val = int(cfg.data.val_split * len(ds))\ntrain_ds, val_ds = torch.utils.data.random_split(ds, [len(ds) - n_val, n_val])\n",
    }
    result = verdict("split-ratio", files, expect={"train": 0.8, "val": 0.2})
    assert result.status.value == "pass" and ("train.py", 3) in lines(result)


def test_split_ratio_missing_and_dataset_partitions():
    assert verdict("split-ratio", "x = 1\n", expect={"train": 0.8, "test": 0.2}).status.value == "missing"
    src = "from torchvision import datasets\ntr = datasets.MNIST('d', train=True)\nte = datasets.MNIST('d', train=False)\n"
    assert verdict("split-ratio", src, expect={"train": 0.8, "test": 0.2}).status.value == "unverified"


def test_seed_counts_in_shell_forms():
    for loop, n in [("for s in $(seq 0 4); do", 5), ("for seed in {1..3}; do", 3), ("for seed in \"${SEEDS[@]}\"; do", 4)]:
        files = {"run.sh": f"SEEDS=(1 2 3 4)\n{loop}\n  python train.py --seed $seed\ndone\n", "train.py": "import torch\n"}
        result = verdict("seeds", files, expect=n)
        assert result.status.value == "pass", (loop, result.message)
        assert lines(result) == [("run.sh", 2)]
    hydra = {"run.sh": "python train.py -m seed=0,1,2,3,4\n", "train.py": "import torch\n"}
    assert verdict("seeds", hydra, expect=5).status.value == "pass"


def test_seed_count_from_config_list_and_more_than_claimed():
    files = {"config.yaml": "seeds: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n",
             "train.py": "import torch\nfor seed in cfg.seeds:\n    torch.manual_seed(seed)\n"}
    result = verdict("seeds", files, expect=5)
    assert (result.status.value, result.score) == ("partial", 0.75) and lines(result) == [("train.py", 2)]


def test_seeds_missing_without_any_seed():
    assert verdict("seeds", "import torch\nx = torch.randn(3)\n", expect=3).status.value == "missing"


def test_eval_mode_set_by_the_caller():
    src = (
        "import torch\n"
        "def run_eval(model, loader):\n"
        "    return [model(x) for x in loader]\n"
        "def main(model, val_loader):\n"
        "    model.eval()\n"
        "    with torch.no_grad():\n"
        "        run_eval(model, val_loader)\n"
    )
    result = verdict("eval-mode", src)
    assert result.status.value == "pass" and ("train.py", 5) in lines(result)


def test_eval_mode_without_no_grad_is_three_quarters():
    src = "import torch\ndef evaluate(model, loader):\n    model.eval()\n    return [model(x) for x in loader]\n"
    result = verdict("eval-mode", src)
    assert (result.status.value, result.score) == ("partial", 0.75)


def test_eval_mode_missing_and_framework_managed():
    assert verdict("eval-mode", "import torch\nx = torch.ones(1)\n").status.value == "missing"
    src = "import pytorch_lightning as pl\nclass M(pl.LightningModule):\n    def validation_step(self, batch, i):\n        return self(batch).mean()\n"
    assert verdict("eval-mode", src).status.value == "pass"


def test_scope_narrows_eval_functions():
    src = (
        "import torch\n"
        "def evaluate(model, loader):\n    model.eval()\n    with torch.no_grad():\n        return [model(x) for x in loader]\n"
        "def test_model(model, loader):\n    return [model(x) for x in loader]\n"
    )
    assert verdict("eval-mode", src).status.value == "mismatch"
    assert verdict("eval-mode", src, scope="evaluate").status.value == "pass"


def test_frozen_by_peft_and_by_stop_gradient():
    peft = "from peft import get_peft_model, LoraConfig\nmodel = get_peft_model(base_model, LoraConfig(r=8))\n"
    assert verdict("frozen", peft, name="base_model").status.value == "pass"
    jax = "import jax\ndef loss(params, target_params, x):\n    t = jax.lax.stop_gradient(apply(target_params, x))\n    return ((apply(params, x) - t) ** 2).mean()\n"
    result = verdict("frozen", jax, name="target_params")
    assert result.status.value == "pass" and lines(result) == [("train.py", 3)]


def test_dataset_mismatch_names_what_is_loaded():
    result = verdict("dataset", "import tensorflow_datasets as tfds\nds = tfds.load('mnist')\n", expect="Fashion-MNIST")
    assert result.status.value == "mismatch" and "MNIST" in result.message and lines(result) == [("train.py", 2)]


def test_metric_unwired_local_implementation_is_capped():
    src = "import numpy as np\ndef mean_iou(pred, target):\n    inter = np.logical_and(pred, target).sum()\n    return inter / np.logical_or(pred, target).sum()\n"
    files = {"metrics.py": src, "main.py": "if __name__ == '__main__':\n    print('train')\n"}
    result = verdict("metric", files, expect="mIoU")
    assert (result.status.value, result.score) == ("partial", 0.75) and ("metrics.py", 2) in lines(result)


def test_baseline_only_mentioned_is_missing():
    result = verdict("baseline", "# TODO: compare with DoRA\nx = 1\n", name="DoRA")
    assert result.status.value == "missing" and lines(result) == [("train.py", 1)]


def test_results_are_deterministic():
    from pathlib import Path

    src = Path(__file__).read_text()
    first = verdict("no-test-leakage", {"a.py": src, "b.py": src})
    second = verdict("no-test-leakage", {"b.py": src, "a.py": src})
    assert first == second


def test_hostile_input_gives_verdicts_not_tracebacks():
    from verifier.checks.pattern import check_pattern
    from verifier.checks.protocol import check_protocol
    from verifier.spec.model import PatternCheck, ProtocolCheck

    deep = "import torch\nx = " + "(" * 150 + "1" + ")" * 150 + "\n"
    nested = "import torch\ndef f(X_test):\n" + "".join("    " * (i + 1) + "if x:\n" for i in range(90)) + "    " * 91 + "X_test.backward()\n"
    bomb = "a: &a {x: 1, y: 1}\n" + "".join(f"l{i}: &l{i} {{p: *{'a' if i == 0 else f'l{i - 1}'}, q: *{'a' if i == 0 else f'l{i - 1}'}}}\n" for i in range(25))
    ctx = context_for({"a.py": deep, "b.py": nested, "c.py": "def broken(:\n  pass\n", "conf.yaml": bomb})
    for rule, params in [("no-test-leakage", {}), ("seeds", {"expect": 5}), ("eval-mode", {}), ("split-ratio", {"expect": {"train": 0.8, "test": 0.2}})]:
        result = check_protocol(ProtocolCheck(rule=rule, **params), ctx)
        assert result.status.value in ("pass", "partial", "mismatch", "missing", "unverified", "error", "stub")
    assert check_pattern(PatternCheck(require="$X.backward()"), ctx).status.value in ("pass", "unverified")


LOADER_HELPER = (
    "import torch\n"
    "from torch.utils.data import DataLoader, random_split\n"
    "from torchvision import datasets\n"
    "def build_loaders(root):\n"
    "    full = datasets.CIFAR10(root, train={train})\n"
    "    train_set, val_set = random_split(full, [45000, 5000])\n"
    "    test_set = datasets.CIFAR10(root, train=False)\n"
    "    return DataLoader(train_set), DataLoader(val_set), DataLoader(test_set)\n"
    "def fit(model, loader, opt):\n"
    "    for x, y in loader:\n"
    "        loss = torch.nn.functional.cross_entropy(model(x), y)\n"
    "        loss.backward()\n"
    "        opt.step()\n"
    "def main(model, opt):\n"
    "    train_loader, val_loader, test_loader = build_loaders('data')\n"
    "    fit(model, train_loader, opt)\n"
)


def test_training_part_of_a_resplit_test_set_leaks_through_the_helper_return():
    leaked = verdict("no-test-leakage", LOADER_HELPER.format(train="False"))
    assert leaked.status.value == "mismatch" and leaked.score == 0.0
    assert ("train.py", 12) in lines(leaked) and ("train.py", 5) in lines(leaked)  # sink, and the test-split load
    clean = verdict("no-test-leakage", LOADER_HELPER.format(train="True"))
    assert clean.status.value == "pass"
    # The pass cites the sink and where its training data comes from (what a renamed split would change).
    roles = {(e.line, e.role) for e in clean.evidence}
    assert (12, "rule") in roles and (16, "source") in roles


def test_seeded_rng_objects_and_environments_need_their_own_seed():
    base = (
        "import argparse\nimport numpy as np\nimport torch\nimport gymnasium as gym\n"
        "def main():\n"
        "    p = argparse.ArgumentParser()\n"
        "    p.add_argument('--seed', type=int, default=0)\n"
        "    args = p.parse_args()\n"
        "    torch.manual_seed(args.seed)\n"
        "    g = {gen}\n"
        "    env = gym.make('CartPole-v1')\n"
        "    obs, _ = {reset}\n"
        "    print(torch.randperm(4, generator=g), obs)\n"
        "if __name__ == '__main__':\n"
        "    main()\n"
    )
    ok = verdict("seeded", base.format(gen="torch.Generator().manual_seed(args.seed)", reset="env.reset(seed=args.seed)"))
    assert ok.status.value == "pass"
    no_gen = verdict("seeded", base.format(gen="torch.Generator()", reset="env.reset(seed=args.seed)"))
    assert (no_gen.status.value, no_gen.score) == ("partial", 0.75) and ("train.py", 10) in lines(no_gen)
    assert "torch.Generator" in no_gen.message
    no_env = verdict("seeded", base.format(gen="torch.Generator().manual_seed(args.seed)", reset="env.reset()"))
    assert (no_env.status.value, no_env.score) == ("partial", 0.75) and ("train.py", 11) in lines(no_env)
    assert "environment" in no_env.message
    # An environment returned to its caller is seeded (or not) there: not judged where it is made.
    helper = verdict("seeded", "import gymnasium as gym\nimport random\nrandom.seed(0)\n"
                     "def make_env(name):\n    env = gym.make(name)\n    env.reset()\n    return env\n")
    assert helper.status.value == "pass"


def test_a_helper_that_only_reads_test_metadata_returns_no_test_data():
    src = (
        "from datasets import load_dataset\n"
        "def prepare(raw, tok):\n"
        "    tokenized = raw.map(tok, batched=True)\n"
        "    return tokenized.map(len, remove_columns=tokenized['test'].column_names)\n"
        "def main(trainer, tok):\n"
        "    data = prepare(load_dataset('wikitext', 'wikitext-2-raw-v1'), tok)\n"
        "    trainer.fit(data['train'])\n"
    )
    result = verdict("no-test-leakage", src)
    assert result.status.value == "pass", result.message
    assert ("train.py", 7) in lines(result)


def test_a_file_uses_an_ml_framework_by_its_imports_not_its_words():
    from verifier.analysis.protocol.common import is_ml_text

    ctx = context_for({
        "train.py": "from torchvision import datasets\nimport numpy as np\n",
        "notes.py": "# compared with torch and sklearn datasets\nimport math\n",
        "broken.py": "import torch\ndef f(:\n",  # unparsable: the text still says torch
    })
    assert [is_ml_text(ctx, p) for p in ("train.py", "notes.py", "broken.py")] == [True, False, True]
