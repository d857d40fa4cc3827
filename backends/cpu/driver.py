"""What Triton's entry point loads for "cpu": one concrete `DriverBase` subclass.

The face's driver (the base backend's driver, for kernels compiled for "cpu"; never auto-selected), or, where
another package provides "cpu", that package's own class.
"""

from __future__ import annotations

from . import entry_classes

CPUDriver = entry_classes("driver")
