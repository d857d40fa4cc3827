"""What Triton's entry point loads for "cpu": one concrete `BaseBackend` subclass.

The face of the SDK backend `provider()` names (its compiler class with `name = "cpu"`; the empty target arch means
this machine), or, where another package provides "cpu", that package's own class.
"""

from __future__ import annotations

from . import entry_classes

CPUBackend = entry_classes("compiler")
