"""Which of clang's x86 code-generation controls a device takes (descriptor features, read by render/streaming.py
and render/program.py through the language's `streaming_store` / `kernel_tuning`).

PoCL's CPU device compiles OpenCL C with clang for the host it runs on, so clang's builtins are there: a
non-temporal store (a row written whole skips the read-for-ownership of each line) and x86's sfence to order it. Its
build options pass no `-mprefer-vector-width`, and the tuning of AVX-512 CPUs prefers 256-bit vectors, so the
generated loops use half the registers' width; a kernel attribute naming the generic x86-64 tuning lifts that where
the device's preferred float vector is 16 wide. Other devices (NVIDIA, a GPU, a non-x86 CPU, another vendor's
compiler) get neither.
"""

from __future__ import annotations

import platform
from typing import Any

from .render.language import X86_NONTEMPORAL_STORE, X86_TUNE_WIDE

_X86 = ("x86_64", "amd64", "i386", "i686")


def x86_features(dev: Any, is_cpu: bool, pocl: bool) -> set[str]:
    """The clang/x86 features of OpenCL device `dev`: only PoCL's CPU device, which runs on this host (so the host's
    architecture is the device's)."""
    if not (is_cpu and pocl and platform.machine().lower() in _X86):
        return set()
    feats = {X86_NONTEMPORAL_STORE}
    if int(dev.preferred_vector_width_float) >= 16:
        feats.add(X86_TUNE_WIDE)
    return feats


__all__ = ["x86_features"]
