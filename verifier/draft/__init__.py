"""draft layer: a starter spec from a paper's text."""

from verifier.draft.draft import draft
from verifier.draft.propose import propose_with_judge

__all__ = ["draft", "propose_with_judge"]
