"""The `order` check on small repos given as source strings: verdicts, scores, evidence and limits."""

from __future__ import annotations

import pytest
from order_support import make_index, run_order

from verifier.analysis.callgraph import CallGraph, FnKey
from verifier.analysis.imports import ModuleMap
from verifier.analysis.steps import Step, role_of
from verifier.checks import Options
from verifier.results import Status

STEPS4 = ["zero_grad", "backward", "clip_grad_norm_", "step"]

PLAIN = """
import torch

def train(model, loader, optimizer, scheduler):
    for epoch in range(10):
        for batch in loader:
            optimizer.zero_grad()
            loss = model(batch).mean()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            scheduler.step()

if __name__ == "__main__":
    train(None, [], None, None)
"""


def lines_of(result, role="step"):
    return sorted((e.file, e.line) for e in result.evidence if e.role == role)


def swap(src: str, a: str, b: str) -> str:
    return src.replace(a, "\0").replace(b, a).replace("\0", b)


# ----- step names ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("step", "call", "expected"),
    [
        ("backward", dict(name="loss.backward", receiver="loss", leaf="backward", qualname="loss.backward"), True),
        ("backward", dict(name="scaler.scale().backward", receiver="scaler.scale()", leaf="backward",
                          qualname="scaler.scale().backward"), True),
        ("backward", dict(name="self.manual_backward", receiver="self", leaf="manual_backward",
                          qualname="self.manual_backward"), True),
        ("step", dict(name="optimizer.step", receiver="optimizer", leaf="step", qualname="optimizer.step"), True),
        ("step", dict(name="scheduler.step", receiver="scheduler", leaf="step", qualname="scheduler.step"), False),
        ("step", dict(name="env.step", receiver="env", leaf="step", qualname="env.step"), False),
        ("optimizer.step", dict(name="self.scaler.step", receiver="self.scaler", leaf="step",
                                qualname="self.scaler.step"), True),
        ("optimizer.step", dict(name="self.lr_sched.step", receiver="self.lr_sched", leaf="step",
                                qualname="self.lr_sched.step"), False),
        ("scheduler.step", dict(name="self.warmup.step", receiver="self.warmup", leaf="step", qualname="self.warmup.step",
                                receiver_type="torch.optim.lr_scheduler.LambdaLR"), True),
        ("torch.nn.utils.clip_grad_norm_", dict(name="nn.utils.clip_grad_norm_", receiver="nn.utils",
                                                leaf="clip_grad_norm_", qualname="torch.nn.utils.clip_grad_norm_"), True),
        ("torch.nn.utils.clip_grad_norm_", dict(name="clip_grad_norm_", receiver="", leaf="clip_grad_norm_",
                                                qualname="clip_grad_norm_"), True),
        ("torch.nn.utils.clip_grad_norm_", dict(name="accelerator.clip_grad_norm_", receiver="accelerator",
                                                leaf="clip_grad_norm_", qualname="accelerator.clip_grad_norm_"), False),
        ("ema.update", dict(name="self.ema.update", receiver="self.ema", leaf="update", qualname="self.ema.update"), True),
        ("ema.update", dict(name="tx.update", receiver="tx", leaf="update", qualname="tx.update"), False),
    ],
)
def test_step_matching(step, call, expected):
    assert Step(step).matches(**call) is expected


def test_roles():
    assert role_of("self.optimizer") == "optimizer" and role_of("opt") == "optimizer"
    assert role_of("self.lr_scheduler") == "scheduler" and role_of("sched") == "scheduler"
    assert role_of("scaler") == "scaler" and role_of("self.env") == "env"
    assert role_of("x", "torch.cuda.amp.GradScaler") == "scaler"


# ----- before / per-iteration on plain loops ----------------------------------------------------------------
def test_plain_loop_passes_with_evidence_on_each_step():
    r = run_order({"train.py": PLAIN}, STEPS4, "per-iteration")
    assert (r.status, r.score) == (Status.pass_, 1.0)
    assert lines_of(r) == [("train.py", 6), ("train.py", 8), ("train.py", 9), ("train.py", 10)]
    assert r.details["root"] == "train.py:train"


def test_step_before_backward_breaks_one_edge_with_a_path():
    src = swap(PLAIN, "loss.backward()", "optimizer.step()")
    r = run_order({"train.py": src}, ["zero_grad", "backward", "step"], "per-iteration")
    assert (r.status, r.score) == (Status.partial, 0.5)
    broken = [e for e in r.details["edges"] if not e["holds"]]
    assert [(e["a"], e["b"], e["how"]) for e in broken] == [("backward", "step", "reversed")]
    assert broken[0]["path"] and "train.py:8" in broken[0]["path"][0]


def test_everything_reversed_is_a_mismatch():
    r = run_order({"train.py": PLAIN}, ["step", "backward", "zero_grad"], "per-iteration")
    assert (r.status, r.score) == (Status.mismatch, 0.0)


def test_two_broken_edges_score_a_quarter():
    r = run_order({"train.py": PLAIN}, ["zero_grad", "step", "backward", "clip_grad_norm_"], "before")
    # zero_grad->step holds; step->backward and backward->clip... : step before backward breaks, the rest holds
    assert r.status == Status.partial
    r2 = run_order({"train.py": PLAIN}, ["zero_grad", "step", "clip_grad_norm_", "backward", "scheduler.step"], "before")
    assert (r2.status, r2.score) == (Status.partial, 0.25)


def test_scheduler_per_epoch_is_not_per_iteration():
    src = PLAIN.replace("            scheduler.step()\n", "        scheduler.step()\n")
    assert run_order({"train.py": src}, ["step", "scheduler.step"], "before").status == Status.pass_
    r = run_order({"train.py": src}, ["step", "scheduler.step"], "per-iteration")
    assert r.status == Status.mismatch and "nested loop" in r.message


def test_step_only_before_the_loop_does_not_count():
    src = PLAIN.replace("            optimizer.zero_grad()\n", "").replace(
        "    for epoch in range(10):\n", "    optimizer.zero_grad()\n    for epoch in range(10):\n")
    r = run_order({"train.py": src}, ["zero_grad", "backward", "step"], "per-iteration")
    assert (r.status, r.score) == (Status.partial, 0.5)
    assert "outside" in r.message


def test_zero_grad_closing_the_iteration_is_faithful_but_not_between():
    end = PLAIN.replace("            optimizer.zero_grad()\n", "").replace(
        "            scheduler.step()\n", "            scheduler.step()\n            optimizer.zero_grad()\n")
    r = run_order({"train.py": end}, STEPS4, "per-iteration")
    assert (r.status, r.score) == (Status.pass_, 1.0)
    assert r.details["edges"][0]["how"] == "rotated"
    between = swap(PLAIN, "optimizer.zero_grad()", "loss.backward()")
    r = run_order({"train.py": between}, STEPS4, "per-iteration")
    assert (r.status, r.score) == (Status.partial, 0.5)


def test_conditional_step_under_gradient_accumulation_holds():
    src = """
    def train(model, loader, opt, accum=4):
        for i, batch in enumerate(loader):
            (model(batch) / accum).backward()
            if (i + 1) % accum == 0:
                opt.step()
                opt.zero_grad()
        opt.lr_scheduler_step_unused = None
    """
    r = run_order({"t.py": src}, ["zero_grad", "backward", "step"], "per-iteration")
    assert (r.status, r.score) == (Status.pass_, 1.0)
    assert run_order({"t.py": src}, ["backward", "step"], "before").status == Status.pass_


# ----- interprocedural -----------------------------------------------------------------------------------
AMP = {
    "pkg/__init__.py": "",
    "pkg/ops.py": """
    import torch

    def clip_and_step(scaler, opt, model):
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
    """,
    "pkg/trainer.py": """
    import torch
    from torch.cuda.amp import GradScaler
    from .ops import clip_and_step

    class Trainer:
        def __init__(self, model):
            self.model = model
            self.optimizer = torch.optim.AdamW(model.parameters())
            self.sched = torch.optim.lr_scheduler.StepLR(self.optimizer, 10)
            self.scaler = GradScaler()

        def step(self, batch):
            opt = self.optimizer
            opt.zero_grad()
            loss = self.model(batch)
            self.scaler.scale(loss).backward()
            clip_and_step(self.scaler, opt, self.model)
            self.sched.step()

        def fit(self, loader):
            for batch in loader:
                self.step(batch)
    """,
    "main.py": """
    from pkg.trainer import Trainer

    def main():
        trainer = Trainer(None)
        trainer.fit([])

    if __name__ == "__main__":
        main()
    """,
}


def test_amp_with_helpers_aliases_and_relative_imports():
    r = run_order(AMP, STEPS4, "per-iteration")
    assert (r.status, r.score) == (Status.pass_, 1.0)
    assert ("pkg/ops.py", 6) in lines_of(r)  # scaler.step(opt) is the optimizer step, found in the helper
    assert run_order(AMP, ["optimizer.step", "scheduler.step"], "per-iteration").status == Status.pass_
    assert run_order(AMP, ["scheduler.step", "optimizer.step"], "per-iteration").status == Status.mismatch


def test_call_graph_resolution():
    index = make_index(AMP)
    graph = CallGraph(index, ModuleMap(index))
    assert FnKey("pkg/ops.py", "clip_and_step") in graph.callees[FnKey("pkg/trainer.py", "Trainer.step")]
    assert FnKey("pkg/trainer.py", "Trainer.step") in graph.callees[FnKey("pkg/trainer.py", "Trainer.fit")]
    assert FnKey("pkg/trainer.py", "Trainer.fit") in graph.callees[FnKey("main.py", "main")]
    dist = graph.ancestors({FnKey("pkg/ops.py", "clip_and_step")}, 6)
    assert dist[FnKey("main.py", "main")] == 3


def test_call_graph_uses_unique_method_names_only_for_uncommon_names():
    index = make_index({"a.py": """
    class Runner:
        def launch_experiment(self):
            return 1
        def step(self):
            return 2

    def go(runner):
        runner.launch_experiment()
        runner.step()
    """})
    graph = CallGraph(index, ModuleMap(index))
    assert graph.callees[FnKey("a.py", "go")] == {FnKey("a.py", "Runner.launch_experiment")}


def test_scope_restricts_the_root():
    r = run_order(AMP, ["zero_grad", "backward"], "before", scope="Trainer.step")
    assert r.status == Status.pass_ and r.details["root"] == "pkg/trainer.py:Trainer.step"
    r = run_order(AMP, ["zero_grad", "backward"], "before", scope="NoSuchThing")
    assert r.status == Status.unverified and "NoSuchThing" in r.message


LIGHTNING = """
import torch
import pytorch_lightning as pl

class Lit(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return self.net(batch).mean()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters())

    def on_train_batch_end(self, outputs, batch, batch_idx):
        self.ema_update()

    def ema_update(self):
        pass
"""


def test_lightning_hooks_run_in_the_framework_order():
    r = run_order({"lit.py": LIGHTNING}, ["training_step", "backward", "step", "ema_update"], "per-iteration")
    assert (r.status, r.score) == (Status.pass_, 1.0)
    assert ("lit.py", 4) in lines_of(r)  # implicit steps cite the class
    assert any("Lightning" in e.note for e in r.evidence)
    manual = LIGHTNING.replace("class Lit(pl.LightningModule):", "class Lit(pl.LightningModule):\n    automatic_optimization = False")
    r = run_order({"lit.py": manual}, ["backward", "ema_update"], "per-iteration")
    assert r.status == Status.missing  # manual optimisation: no implicit backward


def test_jax_closure_factory_is_inlined():
    files = {"learn.py": """
    import jax
    import optax

    def make_step(tx):
        def step(params, opt_state, batch):
            grads = jax.grad(loss_fn)(params, batch)
            updates, opt_state = tx.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state
        return step

    def loss_fn(params, batch):
        return params * batch

    def main():
        tx = optax.adam(1e-3)
        step = make_step(tx)
        params, opt_state = 1.0, tx.init(1.0)
        for i in range(10):
            params, opt_state = step(params, opt_state, i)

    if __name__ == "__main__":
        main()
    """}
    r = run_order(files, ["jax.grad", "tx.update", "optax.apply_updates"], "per-iteration")
    assert (r.status, r.score) == (Status.pass_, 1.0)
    assert r.details["root"] == "learn.py:main"


# ----- dead code, missing steps -----------------------------------------------------------------------------
DEAD = """
def normalize(model):
    return model

def train(model, loader, opt):
    for batch in loader:
        model(batch).backward()
        opt.step()
        if False:
            normalize(model)
    return model
    normalize(model)

def old_loop(model, opt):
    opt.step()
    normalize(model)

if __name__ == "__main__":
    train(None, [], None)
"""


def test_steps_only_in_dead_code_do_not_count():
    r = run_order({"t.py": DEAD}, ["step", "normalize"], "per-iteration")
    assert (r.status, r.score) == (Status.missing, 0.0)
    assert sorted(e.line for e in r.evidence if e.role == "dead") == [9, 11, 15]


def test_one_missing_step_of_three_is_half_credit():
    r = run_order({"train.py": PLAIN}, ["zero_grad", "backward", "ema_update", "step"], "per-iteration")
    assert (r.status, r.score) == (Status.partial, 0.5)
    assert r.details["missing"] == ["ema_update"]


def test_no_step_anywhere_is_missing():
    r = run_order({"train.py": PLAIN}, ["warmup", "distill"], "before")
    assert (r.status, r.score) == (Status.missing, 0.0)


# ----- phases --------------------------------------------------------------------------------------------
PIPE = {
    "stages.py": "def pretrain():\n    return 1\n\ndef finetune(m):\n    return m\n\ndef evaluate(m):\n    return m\n",
    "run.py": """
    from stages import pretrain, finetune, evaluate

    def main():
        m = pretrain()
        m = finetune(m)
        evaluate(m)

    if __name__ == "__main__":
        main()
    """,
    "scripts/all.sh": "#!/bin/bash\npython prep.py --out data\npython run.py\n",
    "prep.py": "def prep():\n    return 0\n\nif __name__ == '__main__':\n    prep()\n",
}


def test_phases_from_a_driver_and_a_launch_script():
    r = run_order(PIPE, ["pretrain", "fine_tune", "evaluation"], "phases")
    assert (r.status, r.score) == (Status.pass_, 1.0)
    assert lines_of(r) == [("run.py", 4), ("run.py", 5), ("run.py", 6)]
    r = run_order(PIPE, ["prep", "pretrain"], "phases", scope="scripts/*.sh")
    assert r.status == Status.pass_ and ("scripts/all.sh", 2) in lines_of(r)
    r = run_order(PIPE, ["evaluate", "pretrain"], "phases")
    assert (r.status, r.score) == (Status.mismatch, 0.0)


# ----- bad input and limits ----------------------------------------------------------------------------------
def test_huge_function_is_unverified_with_the_limit():
    body = "".join(f"        if x{i}:\n            g{i}()\n" for i in range(300))
    src = f"def train(opt, loss, loader):\n    for b in loader:\n        opt.zero_grad()\n{body}        loss.backward()\n        opt.step()\n"
    r = run_order({"t.py": src}, ["zero_grad", "backward", "step"], "per-iteration", options=Options(max_cfg_nodes=200))
    assert r.status == Status.unverified and "200" in r.message and r.score is None
    assert run_order({"t.py": src}, ["zero_grad", "backward", "step"], "per-iteration").status == Status.pass_


def test_deep_call_chain_is_bounded_and_reported():
    src = """
    def a(loss, opt):
        b(loss, opt)
    def b(loss, opt):
        c(loss, opt)
    def c(loss, opt):
        loss.backward()
        opt.step()
    def loop(loss, opt):
        for i in range(3):
            opt.zero_grad()
            a(loss, opt)
    """
    r = run_order({"t.py": src}, ["zero_grad", "backward", "step"], "per-iteration", options=Options(max_call_depth=1))
    assert r.status == Status.unverified and "depth limit 1" in r.message
    assert run_order({"t.py": src}, ["zero_grad", "backward", "step"], "per-iteration").status == Status.pass_


def test_recursion_is_cut_and_noted():
    src = """
    def inner(loss, opt, n):
        loss.backward()
        opt.step()
        if n:
            inner(loss, opt, n - 1)
    def loop(loss, opt):
        for i in range(3):
            opt.zero_grad()
            inner(loss, opt, 2)
    """
    r = run_order({"t.py": src}, ["zero_grad", "backward", "step"], "per-iteration")
    assert r.status == Status.pass_
    assert any("recursion" in n for n in r.details["notes"])


def test_partly_parsed_function_is_unverified():
    src = "def loop(loss, opt):\n    for i in range(3):\n        opt.zero_grad()\n        loss.backward(\n        x = = 1\n        opt.step()\n"
    r = run_order({"t.py": src}, ["zero_grad", "backward", "step"], "per-iteration")
    assert r.status == Status.unverified and "did not parse" in r.message


def test_single_step_is_a_spec_error():
    from verifier.checks import Context
    from verifier.checks.order import check_order
    from verifier.spec.model import OrderCheck, Spec

    check = OrderCheck.model_construct(kind="order", steps=["a", " "], relation="before", scope=None)
    r = check_order(check, Context(index=make_index({"t.py": "x = 1\n"}), spec=Spec()))
    assert r.status == Status.error


def test_results_are_deterministic():
    first = run_order(AMP, STEPS4, "per-iteration")
    second = run_order(AMP, STEPS4, "per-iteration")
    assert first == second


def test_an_optional_extra_call_before_is_not_a_reordering():
    src = """
    def run(args, m):
        if args.eval_on_start:
            evaluate(m)
        for epoch in range(3):
            train(m)
        evaluate(m)

    def train(m):
        return m

    def evaluate(m):
        return m
    """
    r = run_order({"t.py": src}, ["train", "evaluate"], "before", scope="run")
    assert (r.status, r.score) == (Status.pass_, 1.0)
    assert "condition" in r.details["edges"][0]["reason"]
    moved = src.replace("if args.eval_on_start:\n            evaluate(m)", "evaluate(m)")
    assert moved != src
    r = run_order({"t.py": moved}, ["train", "evaluate"], "before", scope="run")
    assert (r.status, r.score) == (Status.mismatch, 0.0)


def test_mode_switches_are_not_training_phases():
    assert not Step("train").matches(name="model.train", receiver="model", leaf="train", qualname="model.train")
    assert Step("train").matches(name="trainer.train", receiver="trainer", leaf="train", qualname="trainer.train",
                                 definition="Trainer.train")
    assert Step("model.train").matches(name="model.train", receiver="model", leaf="train", qualname="model.train")
    assert Step("train").matches(name="trainer.train", receiver="trainer", leaf="train", qualname="trainer.train")
