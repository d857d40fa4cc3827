"""Classify a pytest JUnit XML of the upstream suite against a backend's manifest, and render the results.

Outcomes: passed, failed (a real failure: an error of the run), refused (failed, but the manifest says it
cannot pass on this backend by design), skipped (pytest skip or xfail), crashed (the xdist worker process died
while running it), timeout (pytest-timeout stopped it). A manifest entry whose every matched test passed is
reported as an error too, so the manifest cannot go stale.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .manifest import HOST_DEPENDENT, Manifest

OUTCOMES = ("passed", "failed", "refused", "skipped", "crashed", "timeout")
_CRASH = re.compile(r"worker '[^']+' crashed while running")
_TIMEOUT = re.compile(r"Timeout \(?>[\d.]+s\)? from pytest-timeout|^Failed: Timeout")


@dataclass
class TestResult:
    id: str
    outcome: str
    message: str = ""
    reason: str = ""
    seconds: float = 0.0

    @property
    def function(self) -> str:
        return self.id.split("::")[-1].split("[", 1)[0]


@dataclass
class Report:
    results: list[TestResult]
    manifest: Manifest
    meta: dict = field(default_factory=dict)
    stale: list[str] = field(default_factory=list)

    def totals(self) -> dict[str, int]:
        counts = dict.fromkeys(OUTCOMES, 0)
        for r in self.results:
            counts[r.outcome] += 1
        return counts

    def by_function(self) -> dict[str, dict[str, int]]:
        table: dict[str, dict[str, int]] = {}
        for r in self.results:
            table.setdefault(r.function, dict.fromkeys(OUTCOMES, 0))[r.outcome] += 1
        return dict(sorted(table.items()))

    def errors(self) -> list[str]:
        """Everything that makes the run fail: unexpected failures, crashes, timeouts, stale manifest entries."""
        out = [
            f"{r.outcome.upper()} {r.id}: {_first_line(r.message)}"
            for r in self.results
            if r.outcome in ("failed", "crashed", "timeout")
        ]
        return out + [f"NOW PASSES (remove it from the manifest): {s}" for s in self.stale]

    @property
    def ok(self) -> bool:
        return not self.errors()

    def table(self, only_problems: bool = False) -> str:
        """Per test function: name → count per outcome (``only_problems``: functions with anything not passed)."""
        rows = [
            (name, c)
            for name, c in self.by_function().items()
            if not only_problems or c["passed"] + c["skipped"] < sum(c.values())
        ]
        width = max([len(n) for n, _ in rows] + [8])
        lines = [f"{'function':{width}s} " + " ".join(f"{o:>8s}" for o in OUTCOMES)]
        lines += [f"{n:{width}s} " + " ".join(f"{c[o]:8d}" for o in OUTCOMES) for n, c in rows]
        t = self.totals()
        lines.append(f"{'total':{width}s} " + " ".join(f"{t[o]:8d}" for o in OUTCOMES))
        return "\n".join(lines)

    def closing_line(self) -> str:
        t = self.totals()
        return ", ".join(f"{t[o]} {o}" for o in OUTCOMES) + f"; {len(self.stale)} manifest entries now pass"

    def to_dict(self) -> dict:
        return {
            "meta": self.meta,
            "totals": self.totals(),
            "functions": self.by_function(),
            "errors": self.errors(),
            "manifest": {
                "path": self.manifest.path,
                "entries": len(self.manifest.active()),
                "by_category": self.manifest.by_category(),
            },
            "tests": [asdict(r) for r in self.results],
        }

    def to_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n")


def _first_line(message: str) -> str:
    return next((line for line in message.splitlines() if line.strip()), "")


def _test_id(classname: str, name: str, modules: dict[str, str]) -> str:
    """JUnit's dotted classname back to pytest's node id, using the staged test modules (dotted → path)."""
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):
        path = modules.get(".".join(parts[:cut]))
        if path:
            return "::".join([path, *parts[cut:], name])
    return "::".join([classname.replace(".", "/") + ".py", name])


def _raw_outcome(case: ET.Element) -> tuple[str, str]:
    for child in case:
        if child.tag == "skipped":
            return "skipped", child.get("message", "")
        if child.tag in ("failure", "error"):
            message = child.get("message", "") or (child.text or "")[:2000]
            if _CRASH.search(message) or _CRASH.search(child.text or ""):
                return "crashed", message
            if _TIMEOUT.search(message):
                return "timeout", message
            return "failed", message
    return "passed", ""


def classify(
    junit_xml: str | Path,
    manifest: Manifest,
    test_paths: list[str] | None = None,
    meta: dict | None = None,
    timed_out: set[str] | None = None,
) -> Report:
    """Read pytest's JUnit XML; ``test_paths`` are the staged files (to turn classnames back into node ids).

    ``timed_out``: node ids the watchdog ended (their worker's exit shows up as a crash in the XML).
    """
    modules = {p.removesuffix(".py").replace("/", "."): p for p in test_paths or []}
    results = []
    unfinished = 0
    for case in ET.parse(junit_xml).getroot().iter("testcase"):
        if not case.get("name"):  # pytest stopped by SIGINT writes an empty <testcase/> per test still running
            unfinished += 1
            continue
        test_id = _test_id(case.get("classname", ""), case.get("name", ""), modules)
        outcome, message = _raw_outcome(case)
        if outcome == "crashed" and test_id in (timed_out or ()):
            outcome, message = "timeout", f"stuck past the timeout outside Python; the watchdog ended it ({message})"
        result = TestResult(test_id, outcome, message, seconds=float(case.get("time", 0) or 0))
        results.append(result)
    matched: dict[int, list[str]] = {}
    for r in results:
        entry = manifest.match(r.id)
        if entry is None:
            continue
        matched.setdefault(entry.line, []).append(r.outcome)
        if r.outcome == "failed":
            r.outcome, r.reason = "refused", f"{entry.category}: {entry.reason}"
    stale = [
        e.describe()
        for e in manifest.entries
        if matched.get(e.line) and set(matched[e.line]) == {"passed"} and e.category not in HOST_DEPENDENT
    ]
    meta = dict(meta or {})
    if unfinished:
        meta["unfinished_testcases"] = unfinished
    return Report(results, manifest, meta, stale)
