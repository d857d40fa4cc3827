"""What a backend's device can do, as one frozen, hashable value."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from triton.backends.compiler import GPUTarget

ALL_DTYPES = frozenset(
    {
        "i1",
        "i8",
        "i16",
        "i32",
        "i64",
        "u8",
        "u16",
        "u32",
        "u64",
        "fp16",
        "bf16",
        "fp32",
        "fp64",
        "fp8e4nv",
        "fp8e5",
        "fp8e4b15",
        "fp8e5b16",
        "fp8e4b8",
    }
)


@dataclass(frozen=True)
class TargetDescriptor:
    """A device as the compiler sees it.

    `name` is the Triton backend name (`GPUTarget.backend`); `arch` identifies the device model (a CPU name, an
    OpenCL device string) and goes into the cache key; `warp_size` is the subgroup width the backend's execution
    model uses (1 for a CPU that runs one program per thread).
    """

    name: str
    arch: str
    warp_size: int = 1
    max_threads_per_program: int = 1024
    shared_memory_bytes: int = 0
    local_memory_bytes: int = 0
    vector_width_bits: int = 128
    num_compute_units: int = 1
    supported_dtypes: frozenset[str] = field(default=ALL_DTYPES)
    features: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("_", "").isalnum():
            raise ValueError(f"TargetDescriptor.name must be an identifier, got {self.name!r}")
        if self.warp_size < 1 or self.warp_size & (self.warp_size - 1):
            raise ValueError(f"TargetDescriptor.warp_size must be a power of two, got {self.warp_size}")
        if self.vector_width_bits < 8:
            raise ValueError(f"TargetDescriptor.vector_width_bits must be >= 8, got {self.vector_width_bits}")
        unknown = set(self.supported_dtypes) - ALL_DTYPES
        if unknown:
            raise ValueError(f"TargetDescriptor.supported_dtypes has unknown dtypes {sorted(unknown)}")

    def gpu_target(self) -> GPUTarget:
        """The `GPUTarget` to pass to `triton.compile(..., target=...)`."""
        return GPUTarget(self.name, self.arch, self.warp_size)

    def hash(self) -> str:
        key = repr(
            (
                self.name,
                self.arch,
                self.warp_size,
                self.max_threads_per_program,
                self.shared_memory_bytes,
                self.local_memory_bytes,
                self.vector_width_bits,
                self.num_compute_units,
                tuple(sorted(self.supported_dtypes)),
                self.features,
            )
        )
        return hashlib.sha256(key.encode()).hexdigest()[:16]
