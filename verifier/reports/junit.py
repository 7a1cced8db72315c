"""JUnit XML: one testcase per SAU (failure when not faithful, skipped when unverified, error when it errored)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from verifier.reports.common import is_failing, primary_evidence
from verifier.results import Status


def render(report) -> str:
    suite = ET.Element("testsuite", name=f"sau-verify:{report.paper.get('id', 'unknown')}")
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for v in report.verdicts:
        counts["tests"] += 1
        case = ET.SubElement(suite, "testcase", classname=f"sau.{v.dimension}", name=v.id)
        ev = primary_evidence(v)
        if ev is not None:
            case.set("file", ev.file)
            case.set("line", str(ev.line))
        score = "n/a" if v.score is None else f"{v.score:.2f}"
        if v.accepted_deviation is not None:
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=f"accepted deviation: {v.accepted_deviation}")
        elif v.status == Status.unverified:
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=v.message)
        elif v.status == Status.error:
            counts["errors"] += 1
            ET.SubElement(case, "error", message=v.message, type="error")
        elif is_failing(v):
            counts["failures"] += 1
            failure = ET.SubElement(case, "failure", message=f"[{v.status.value} {score}] {v.message}", type=v.status.value)
            failure.text = "\n".join(f"{e.file}:{e.line}: {e.role}: {e.snippet}" for e in v.evidence)
        props = ET.SubElement(case, "properties")
        ET.SubElement(props, "property", name="score", value=score)
        ET.SubElement(props, "property", name="status", value=v.status.value)
    for key, value in counts.items():
        suite.set(key, str(value))
    suites = ET.Element("testsuites", name="sau-verify")
    suites.append(suite)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
