"""pytest plugin: FlagGems' own tests on CPU tensors, so its Triton kernels compile for the active SDK backend.

FlagGems picks a vendor at import (none is found on a machine without a GPU) and reaches the device through
`torch.<device>` (`torch.cuda` on NVIDIA). This plugin, loaded before FlagGems' conftest imports the library, maps
the device to the CPU without editing FlagGems: the NVIDIA vendor description is kept (its Triton kernels and configs)
with its device renamed `cpu`, its dispatch key `CPU` and its libdevice still CUDA's (`__nv_*`, which the SDK
implements), and `torch.cpu` gets the few CUDA-only host queries FlagGems
calls (`device(...)` as a no-op context, device properties with the CPU count as "SMs", compute capability 8.0 so
no Hopper-only paths are chosen, generators). Nothing here touches a kernel.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import typing
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import torch

CAPABILITY = (8, 0)


@dataclass
class CpuProperties:
    """What FlagGems reads of `torch.cuda.get_device_properties`."""

    name: str = "cpu"
    major: int = CAPABILITY[0]
    minor: int = CAPABILITY[1]
    multi_processor_count: int = os.cpu_count() or 1
    total_memory: int = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    L2_cache_size: int = 32 << 20


class _DeviceGuard:
    def __init__(self, index: int = 0) -> None:
        self.index = index

    def __enter__(self) -> typing.Self:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class PhiloxGenerator:
    """What FlagGems reads of a CUDA generator: a 16-byte state of (seed, offset) int64s that its Philox kernels
    advance (a CPU generator's state is Mersenne Twister's 5 KiB)."""

    def __init__(self) -> None:
        self._state = torch.tensor([torch.initial_seed() & (2**63 - 1), 0], dtype=torch.int64).view(torch.uint8)

    def get_state(self) -> torch.Tensor:
        return self._state.clone()

    def set_state(self, state: torch.Tensor) -> None:
        self._state = state.clone()

    def manual_seed(self, seed: int) -> PhiloxGenerator:
        self._state = torch.tensor([seed & (2**63 - 1), 0], dtype=torch.int64).view(torch.uint8)
        return self

    def initial_seed(self) -> int:
        return int(self._state.view(torch.int64)[0])


def _mem_get_info(device: object = None) -> tuple[int, int]:
    total = CpuProperties().total_memory
    return (os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"), total)


SHIMS = {
    "device": lambda device=None: contextlib.nullcontext(),
    "get_device_properties": lambda device=None: CpuProperties(),
    "get_device_capability": lambda device=None: CAPABILITY,
    "get_device_name": lambda device=None: "cpu",
    "empty_cache": lambda: None,
    "mem_get_info": _mem_get_info,
    "manual_seed": torch.manual_seed,
    "manual_seed_all": torch.manual_seed,
    "default_generators": (PhiloxGenerator(),),
    "_DeviceGuard": _DeviceGuard,
}
#: replaced even though torch.cpu has them: CUDA answers a device index where torch.cpu answers "cpu"
INDEX_SHIMS = {"current_device": lambda: 0}


def _map_device_to_cpu() -> None:
    for name, value in SHIMS.items():
        if not hasattr(torch.cpu, name):
            setattr(torch.cpu, name, value)
    for name, value in INDEX_SHIMS.items():
        setattr(torch.cpu, name, value)
    spec = find_spec("flag_gems")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("flag_gems is not installed in this environment (pip install flag-gems --no-deps)")
    backend_dir = Path(spec.submodule_search_locations[0]) / "runtime" / "backend"
    sys.path.append(str(backend_dir))
    nvidia = __import__("_nvidia")
    nvidia.vendor_info.device_name = "cpu"
    nvidia.vendor_info.dispatch_key = "CPU"
    nvidia.vendor_info.triton_extra_name = "cuda"
    os.environ["GEMS_VENDOR"] = "nvidia"


_map_device_to_cpu()


def pytest_configure(config: object) -> None:
    """FlagGems' generated pointwise kernels without block pointers (its own `prefer_block_pointer` option, which
    other vendors turn off too): its block-pointer code reads `.type.element_ty` of a block pointer, which Triton
    3.7+ (an emulated, deprecated `make_block_ptr`) no longer has, whatever the backend."""
    from flag_gems.runtime.common import vendors
    from flag_gems.utils import codegen_config_utils

    codegen_config_utils.CODEGEN_COFIGS[vendors.NVIDIA].prefer_block_pointer = False
    _launch_with_every_argument()


def _launch_with_every_argument() -> None:
    """FlagGems' `LibEntry` passes constexpr arguments to a compiled kernel only for the Triton versions it names
    (3.3-3.6) and drops them otherwise; Triton 3.7-3.9 launch a compiled kernel with every argument too, as 3.3-3.6
    do, so its 3.6 path is the one that matches them (without this, every `libentry` kernel fails to launch on any
    backend with Triton >= 3.7: "expected 9 kernel arguments, got 7")."""
    libentry = importlib.import_module("flag_gems.utils.libentry")

    if libentry.major_version == 3 and libentry.minor_version > 6:
        libentry.minor_version = 6
