"""compiler layer: free-text claims -> typed checks, and their results -> one claim score."""

from verifier.compiler.aggregate import ClaimScore, aggregate, snap
from verifier.compiler.claims import CompiledClaim, Fragment, compile_claim

__all__ = ["ClaimScore", "CompiledClaim", "Fragment", "aggregate", "compile_claim", "snap"]
