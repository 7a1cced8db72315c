"""The training loop PyTorch Lightning runs around a LightningModule's hooks, written out as a function.

A Lightning repo has no loop of its own: ``trainer.fit(model)`` calls ``training_step``, zeroes the
gradients, back-propagates, steps the optimizer and calls ``on_train_batch_end`` in a fixed order
(Lightning's documented hook pseudo-code). Order checks inline the module's hooks into this driver, so
"EMA update after every optimizer step" is decided on the real order. Overridden ``backward`` /
``optimizer_step`` / ``optimizer_zero_grad`` replace the defaults; manual optimization drops them.
"""

from __future__ import annotations

import ast

from verifier.index.facts import Definition
from verifier import pysource

DRIVER_NAME = "<lightning-fit>"


def is_lightning_module(cls: Definition) -> bool:
    return cls.kind == "class" and any(b.rsplit(".", 1)[-1] in ("LightningModule", "LightningLite") for b in cls.bases)


def _hook(defined: set[str], name: str, args: str = "") -> list[str]:
    return [f"self.{name}({args})"] if name in defined else []


def driver_source(defined: set[str], manual: bool, step_interval: bool) -> str:
    """The loop as Python text; ``defined`` = hook names the module (or its repo bases) defines."""
    batch: list[str] = [
        *_hook(defined, "on_train_batch_start", "batch, batch_idx"),
        "loss = self.training_step(batch, batch_idx)",
    ]
    if not manual:
        batch += _hook(defined, "on_before_zero_grad", "optimizer")
        batch += (["self.optimizer_zero_grad(epoch, batch_idx, optimizer)"] if "optimizer_zero_grad" in defined
                  else ["optimizer.zero_grad()"])
        batch += _hook(defined, "on_before_backward", "loss")
        batch += ["self.backward(loss)"] if "backward" in defined else ["loss.backward()"]
        batch += _hook(defined, "on_after_backward")
        batch += _hook(defined, "on_before_optimizer_step", "optimizer")
        batch += _hook(defined, "configure_gradient_clipping", "optimizer")
        batch += (["self.optimizer_step(epoch, batch_idx, optimizer)"] if "optimizer_step" in defined
                  else ["optimizer.step()"])
        if step_interval:
            batch += ["lr_scheduler.step()"]
    batch += _hook(defined, "on_train_batch_end", "loss, batch, batch_idx")
    epoch: list[str] = [*_hook(defined, "on_train_epoch_start")]
    epoch += ["for batch_idx, batch in enumerate(train_dataloader):", *("    " + s for s in batch)]
    if "validation_step" in defined:
        epoch += _hook(defined, "on_validation_epoch_start")
        epoch += ["for batch_idx, batch in enumerate(val_dataloader):", "    self.validation_step(batch, batch_idx)"]
        epoch += _hook(defined, "on_validation_epoch_end")
    epoch += _hook(defined, "on_train_epoch_end")
    if not manual and not step_interval:
        epoch += ["lr_scheduler.step()"]
    body = [
        "optimizer = self.configure_optimizers()",
        *_hook(defined, "on_fit_start"),
        *_hook(defined, "on_train_start"),
        "for epoch in range(max_epochs):",
        *("    " + s for s in epoch),
        *_hook(defined, "on_train_end"),
    ]
    return "def _lightning_fit(self):\n" + "\n".join("    " + s for s in body) + "\n"


def driver(cls: Definition, defined: set[str], class_source: str) -> ast.FunctionDef:
    """The driver's ``ast``, every node placed on the class's ``class`` line (where evidence points)."""
    manual = "automatic_optimization = False" in class_source.replace("  ", " ")
    step_interval = '"interval": "step"' in class_source or "'interval': 'step'" in class_source
    tree = pysource.parse(driver_source(defined, manual, step_interval))
    for node in ast.walk(tree):
        if hasattr(node, "lineno"):
            node.lineno = node.end_lineno = cls.span.line
            node.col_offset, node.end_col_offset = 0, 0
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef)
    return fn
