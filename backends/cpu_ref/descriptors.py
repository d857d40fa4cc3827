"""Host-side `TensorDescriptor` kernel arguments on cpu_ref.

Triton's TTIR pass `rewrite_tensor_descriptor_to_pointer` (run in the SDK's ttir stage) turns a `tensordesc<...>`
parameter into plain ones: base pointer, shape and strides (i64), padding and tf32-rounding flags (i1), then shape
(i32) and strides (i64) again. The launcher is built for that expanded signature, and this wrapper expands each
descriptor argument the same way (Triton's own `decompose_descriptor`) before calling it. Import-light.
"""

from __future__ import annotations

from typing import Any

FIXED = 9  # gx, gy, gz, stream, function, packed_metadata, launch_metadata, enter hook, exit hook


def expanded_signature(names: list[str], types: list[str]) -> tuple[list[str], list[str], list[int]]:
    """(names, types) with every tensordesc expanded, and the positions of the descriptors among the originals."""
    from triton.backends.driver import expand_signature

    out_names, out_types, positions = [], [], []
    for i, (name, ty) in enumerate(zip(names, types)):
        if isinstance(ty, str) and ty.startswith("tensordesc"):
            parts = expand_signature([ty], None, "")
            positions.append(i)
            out_names += [f"{name}.{k}" for k in range(len(parts))]
            out_types += parts
        else:
            out_names.append(name)
            out_types.append(ty)
    return out_names, out_types, positions


class DescriptorLauncher:
    """Calls `native` with each host TensorDescriptor argument decomposed into the expanded parameters."""

    def __init__(self, native: Any, positions: list[int]) -> None:
        self.native = native
        self.positions = set(positions)

    def __call__(self, *call_args: Any) -> Any:
        from triton.backends.driver import decompose_descriptor

        fixed, args = call_args[:FIXED], call_args[FIXED:]
        flat: list[Any] = []
        for i, a in enumerate(args):
            if i in self.positions:
                flat.extend(decompose_descriptor(a))
            else:
                flat.append(a)
        return self.native(*fixed, *flat)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.native, name)
