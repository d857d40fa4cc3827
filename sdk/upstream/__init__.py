"""Runner for Triton's upstream language tests on any backend (``triton-sdk upstream-tests``).

Split by concern: ``staging`` copies the suite out of a checkout or git dir, ``manifest`` reads a backend's
expected-by-design failures, ``report`` classifies JUnit results against it, ``runner`` drives pytest.
"""

from .manifest import Manifest, default_manifest_path
from .report import Report, classify
from .runner import run

__all__ = ["Manifest", "Report", "classify", "default_manifest_path", "run"]
