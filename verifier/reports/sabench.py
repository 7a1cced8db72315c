"""SA-Bench's own result shape: ``dimensions.D1..D4.claims[].score`` and ``overall_score`` (macro)."""

from __future__ import annotations

import json

from verifier.spec.model import DIMENSION_CODES


def render(report) -> str:
    dims: dict[str, dict] = {}
    for dim, code in DIMENSION_CODES.items():
        claims = [
            {
                "id": v.id,
                "claim": v.claim,
                "score": 0.0 if v.score is None else v.score,
                "status": v.status.value,
                "reasoning": v.message,
                "evidence_refs": [f"{e.file}:{e.line}" for e in v.evidence],
            }
            for v in report.verdicts
            if v.dimension == dim.value and v.accepted_deviation is None
        ]
        if claims:
            dims[code] = {"score": report.scores["dimensions"].get(dim.value, 0.0), "claims": claims}
    out = {
        "paper_id": report.paper.get("id", "unknown"),
        "dimensions": dims,
        "overall_score": report.scores["macro"],
        "micro_score": report.scores["micro"],
        "scoring": "overall_score is the macro mean of the dimension means (unverified counted as 0)",
    }
    return json.dumps(out, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
