"""Does a call in the code perform a step named in an ``order`` claim?

A bare step (``backward``) matches that method on any receiver (``loss.backward()``,
``scaler.scale(loss).backward()``, ``accelerator.backward(loss)``) or a repo function of that name. A dotted
step matches an import-qualified library call (``torch.nn.utils.clip_grad_norm_``), a receiver path
(``optimizer.step`` matches ``self.optimizer.step()``), or a receiver of the same role: optimizers,
schedulers and AMP scalers are told apart by how they were built or named, so ``step`` never matches
``scheduler.step()`` or ``env.step(action)``, and ``scaler.step(opt)`` counts as the optimizer's step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Other spellings of the same step.
LEAF_ALIASES = {
    "backward": ("manual_backward",),
    "grad": ("value_and_grad",),
    "zero_grad": ("clear_grad", "clear_gradients"),
    "clip_grad_norm_": ("clip_grad_norm", "clip_gradients"),
}
_IDENT = re.compile(r"[A-Za-z_]\w*")
MODE_SWITCHES = ("train", "eval")


def role_of(receiver: str, receiver_type: str = "") -> str:
    """optimizer | scheduler | scaler | env | other, from the receiver's constructor, else its name."""
    kind = receiver_type.lower()
    if kind:
        if "lr_scheduler" in kind or "schedul" in kind:
            return "scheduler"
        if "scaler" in kind:
            return "scaler"
        if "optim" in kind or kind.startswith("optax.") or kind.endswith("optimizer"):
            return "optimizer"
    names = _IDENT.findall(receiver)
    leaf = names[-1].lower() if names else ""
    if not leaf:
        return "other"
    if "sched" in leaf or leaf.startswith("lr_") or leaf in ("lrs", "warmup"):
        return "scheduler"
    if "scaler" in leaf:
        return "scaler"
    if "optim" in leaf or leaf in ("opt", "tx") or leaf.startswith("opt_") or leaf.endswith("_opt"):
        return "optimizer"
    if leaf == "env" or leaf.endswith("_env") or leaf.startswith("env"):
        return "env"
    return "other"


@dataclass(frozen=True, slots=True)
class Step:
    text: str

    @property
    def leaf(self) -> str:
        return self.text.rsplit(".", 1)[-1]

    @property
    def head(self) -> str:
        return self.text.rpartition(".")[0]

    def leaves(self) -> tuple[str, ...]:
        return (self.leaf, *LEAF_ALIASES.get(self.leaf, ()))

    def matches(self, *, name: str, receiver: str, leaf: str, qualname: str, receiver_type: str = "",
                definition: str = "", nargs: int = 0) -> bool:
        """``name``/``receiver``: the call as written after aliases; ``qualname``: import-resolved;
        ``definition``: the repo function it runs (``Trainer.normalize``), if any."""
        if leaf not in self.leaves():
            return False
        role = role_of(receiver, receiver_type)
        if (not self.head and leaf in MODE_SWITCHES and receiver and not definition and nargs <= 1
                and "trainer" not in receiver.lower()):
            return False  # `model.train()` / `model.eval()` switch a mode; they are not the training phase
        if not self.head:
            if self.leaf == "step":
                # `self.step(batch)` running the repo's own training step is not the optimizer's step.
                return role in ("optimizer", "scaler") or (role == "other" and not definition)
            return True
        full = self.text
        for candidate in (qualname, name, definition):
            if candidate and (candidate == full or candidate.endswith("." + full)):
                return True
        wanted = role_of(self.head)
        if not receiver and wanted == "other" and qualname and full.endswith("." + qualname):
            return True  # a star-imported library function
        if wanted in ("optimizer", "scheduler", "scaler", "env"):
            if role == wanted:
                return True
            return wanted == "optimizer" and role == "scaler" and self.leaf == "step"
        return False
