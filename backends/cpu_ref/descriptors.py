"""Host-side `TensorDescriptor` kernel arguments on cpu_ref.

Triton's TTIR pass `rewrite_tensor_descriptor_to_pointer` (run in the SDK's ttir stage) turns a `tensordesc<...>`
parameter into plain ones: base pointer, shape and strides (i64), padding and tf32-rounding flags (i1), then shape
(i32) and strides (i64) again. The launcher is built for that expanded signature (`launch.expand_descriptors`), and
this wrapper decomposes each descriptor argument the same way before calling it. Import-light.
"""

from __future__ import annotations

from typing import Any

from triton_backend_sdk.launch import flatten_descriptors

FIXED = 9  # gx, gy, gz, stream, function, packed_metadata, launch_metadata, enter hook, exit hook


class DescriptorLauncher:
    """Calls `native` with each host TensorDescriptor argument decomposed into the expanded parameters."""

    def __init__(self, native: Any, positions: set[int]) -> None:
        self.native = native
        self.positions = positions

    def __call__(self, *call_args: Any) -> Any:
        return self.native(*call_args[:FIXED], *flatten_descriptors(call_args[FIXED:], self.positions))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.native, name)
