"""A backend's expectations manifest: upstream tests that fail on it by design, each with a stated reason.

One entry a line, ``<test-id pattern>  # <category>: <reason>``; blank lines and lines starting with ``#`` are
comments. In a pattern only ``*`` is a wildcard (any run of characters) — test ids are full of ``[``/``]``, which
stay literal. A pattern without ``/`` is matched against the id without its directory
(``test_core.py::test_x[...]``), one with ``/`` against the whole id (``test/unit/language/test_core.py::...``).
The categories are closed on purpose: a test that fails because something is missing is a bug, not an entry.

A ``version-skew`` entry may hold only for some Triton wheels: ``# version-skew[triton<3.7]: <reason>`` is an entry
while the installed wheel is older than 3.7 and no entry otherwise (the same manifest serves a 3.9 wheel here and the
3.6 of the H200 machine). Conditions: ``triton<X.Y`` and ``triton>=X.Y``.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass, field
from pathlib import Path

_CONDITION = re.compile(r"\A(?P<category>[\w-]+)\[triton(?P<op><|>=)(?P<version>\d+\.\d+)\]\Z")

CATEGORIES = {
    "gpu-ir": "asserts on a GPU compiler artifact (TTGIR, LLVM IR, PTX, AMDGCN) a non-GPU backend never makes",
    "cuda-torch": "needs torch's CUDA (or another GPU) runtime, not a Triton backend",
    "gpu-limit": "checks a limit or error of the GPU targets (e.g. shared memory, warps) that does not apply",
    "version-skew": "the staged suite and the installed Triton wheel disagree (explained by the version mismatch)",
    "inexact-reference": (
        "the test's own reference is further from the exact result than its tolerance while the backend's result is "
        "the correctly rounded one (shown per test by tools/check_upstream_reference.py; list ids, no wildcards)"
    ),
}
#: categories whose every entry is one test, each shown separately (a wildcard would hide a new failure)
EXACT_IDS_ONLY = frozenset({"inexact-reference"})
#: categories whose entries may pass on some hosts: the test's reference comes from torch's CPU kernels, which oneDNN
#: picks by the host's ISA (avx512_bf16 or not), so the same id's reference is exact on one host and off on another.
#: Such an entry passing is not reported as stale
HOST_DEPENDENT = frozenset({"inexact-reference"})
FILENAME = "upstream_expectations.txt"


class ManifestError(ValueError):
    """A manifest line that does not follow the format."""


def _version(text: str) -> tuple[int, int]:
    major, minor = (re.match(r"(\d+)\.(\d+)", text) or re.match(r"(\d+)()", text + ".0")).groups()
    return int(major), int(minor or 0)


def installed_triton() -> str:
    import triton

    return triton.__version__


@dataclass
class Entry:
    pattern: str
    category: str
    reason: str
    line: int
    regex: re.Pattern = field(repr=False, compare=False, default=None)
    #: (op, (major, minor)) of a `[triton<X.Y]`-style condition, or None: always an entry
    condition: tuple[str, tuple[int, int]] | None = None

    def __post_init__(self):
        body = ".*".join(re.escape(part) for part in self.pattern.split("*"))
        self.regex = re.compile(body + r"\Z")

    def holds_for(self, triton_version: str) -> bool:
        if self.condition is None:
            return True
        op, bound = self.condition
        have = _version(triton_version)
        return have < bound if op == "<" else have >= bound

    def matches(self, test_id: str) -> bool:
        subject = test_id if "/" in self.pattern else test_id.rsplit("/", 1)[-1]
        return self.regex.match(subject) is not None

    def describe(self) -> str:
        cond = f"[triton{self.condition[0]}{'.'.join(map(str, self.condition[1]))}]" if self.condition else ""
        return f"{self.pattern}  # {self.category}{cond}: {self.reason}"


@dataclass
class Manifest:
    entries: list[Entry]
    path: str | None = None
    #: the Triton wheel the run uses, against which entry conditions are read (None: the installed one)
    triton_version: str | None = None

    def active(self) -> list[Entry]:
        """The entries that hold for the run's Triton wheel."""
        version = self.triton_version or installed_triton()
        return [e for e in self.entries if e.holds_for(version)]

    @classmethod
    def parse(cls, text: str, path: str | None = None) -> Manifest:
        entries = []
        for number, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            where = f"{path or '<manifest>'}:{number}"
            pattern, sep, comment = line.partition("#")
            category, colon, reason = comment.partition(":")
            pattern, category, reason = pattern.strip(), category.strip(), reason.strip()
            condition = None
            cond = _CONDITION.match(category)
            if cond:
                category = cond["category"]
                condition = (cond["op"], _version(cond["version"]))
                if category != "version-skew":
                    raise ManifestError(f"{where}: only a version-skew entry may name a Triton version")
            if not sep or not colon or not reason or not pattern or " " in pattern:
                raise ManifestError(f"{where}: expected '<test-id pattern>  # <category>: <reason>', got {raw!r}")
            if category not in CATEGORIES:
                raise ManifestError(
                    f"{where}: category {category!r} is not a by-design reason; one of {', '.join(CATEGORIES)}"
                )
            if category in EXACT_IDS_ONLY and "*" in pattern:
                raise ManifestError(f"{where}: a {category} entry names one test id, not a pattern: {pattern!r}")
            entries.append(Entry(pattern, category, reason, number, condition=condition))
        return cls(entries, path)

    @classmethod
    def load(cls, path: str | Path) -> Manifest:
        return cls.parse(Path(path).read_text(), str(path))

    def match(self, test_id: str) -> Entry | None:
        """The first entry that holds for the run's Triton wheel and whose pattern matches ``test_id``."""
        return next((e for e in self.active() if e.matches(test_id)), None)

    def by_category(self) -> dict[str, int]:
        """Active entries by category."""
        counts: dict[str, int] = {}
        for e in self.active():
            counts[e.category] = counts.get(e.category, 0) + 1
        return counts


def default_manifest_path(backend: str) -> Path | None:
    """The manifest shipped with one of the SDK's own backends, or None for any other backend."""
    try:
        spec = importlib.util.find_spec(f"triton_backend_sdk.backends.{backend}")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / FILENAME
    return path if path.is_file() else None
