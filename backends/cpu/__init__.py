"""cpu: the Triton backend name torch.compile's CPU-Triton route asks for, shown by an SDK backend.

Inductor with `torch._inductor.config.cpu_backend = "triton"` compiles CPU kernels for `GPUTarget("cpu", "", 32)`
and runs them with `triton.backends.backends["cpu"].driver`: triton-cpu's names. This package registers that name
(entry point group `triton.backends`) as a face (`triton_backend_sdk.faces`) of cpu_ref, or of the SDK backend named
by `TRITON_SDK_CPU_BACKEND`, else by `TRITON_DEFAULT_BACKEND` (opencl); `use(name)` changes it in a running process.

It never shadows another "cpu" backend: where one exists (a triton-cpu build, whose backend is the module
`triton.backends.cpu`, or another package's `cpu` entry point), the entry-point modules here re-export that
backend's classes, so whichever of the two Triton's discovery reads last, the other package's backend is the one
registered. The face's driver is never Triton's auto-selected driver (Inductor activates it for its CPU kernels).

Import-light and failure-free: Triton imports `compiler` and `driver` while `import triton` runs; a lookup that
fails falls back to the cpu_ref face.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from typing import Any, NamedTuple

NAME = "cpu"
#: this package (the value of our own `cpu` entry point)
OURS = __name__
#: the backend the face shows when no variable names an SDK backend
DEFAULT_BASE = "triton_backend_sdk.backends.cpu_ref"
#: the module triton-cpu's builds put their backend in
TRITON_CPU = "triton.backends.cpu"
#: names the SDK backend behind "cpu" (before TRITON_DEFAULT_BACKEND); `use` sets it for Inductor's compile workers
BASE_ENV = "TRITON_SDK_CPU_BACKEND"


class Provider(NamedTuple):
    #: package holding the `compiler` and `driver` modules of the backend behind the name
    module: str
    #: True: an SDK face of `module`'s backend; False: another package's "cpu" backend, re-exported unchanged
    face: bool


@functools.cache
def provider() -> Provider:
    """Who answers to "cpu" at `import triton` (decided once, when Triton's discovery loads this entry point)."""
    try:
        other = _other_cpu_backend()
    except Exception:  # noqa: BLE001 - import triton must never fail because of us
        other = None
    return Provider(_face_base(), face=True) if other is None else Provider(other, face=False)


@functools.cache
def face(base_module: str) -> tuple[type, type]:
    """(compiler, driver): the "cpu" face of the SDK backend whose entry-point package is `base_module`."""
    from triton.backends.compiler import BaseBackend
    from triton.backends.driver import DriverBase
    from triton_backend_sdk.faces import concrete_class, make_face

    compiler = concrete_class(importlib.import_module(f"{base_module}.compiler"), BaseBackend)
    driver = concrete_class(importlib.import_module(f"{base_module}.driver"), DriverBase)
    return make_face(NAME, compiler, driver, OURS)


def entry_classes(kind: str) -> type:
    """What the entry-point module `kind` ("compiler" or "driver") exports: the face's class, or the other
    package's (the real "cpu" backend wins)."""
    p = provider()
    if not p.face:
        from triton.backends.compiler import BaseBackend
        from triton.backends.driver import DriverBase
        from triton_backend_sdk.faces import concrete_class

        try:
            module = importlib.import_module(f"{p.module}.{kind}")
            return concrete_class(module, BaseBackend if kind == "compiler" else DriverBase)
        except Exception:  # noqa: BLE001 - its own entry point reports its failure; ours still registers
            p = Provider(DEFAULT_BASE, face=True)
    try:
        pair = face(p.module)
    except Exception:  # noqa: BLE001 - the selected base failed to load: cpu_ref's face
        pair = face(DEFAULT_BASE)
    return pair[0] if kind == "compiler" else pair[1]


def use(name: str) -> Any:
    """Make Triton's "cpu" backend a face of SDK backend `name` ("cpu_ref", "opencl", a vendor's) in this process:
    torch.compile's CPU-Triton route then compiles and runs its kernels there. Sets `TRITON_SDK_CPU_BACKEND` so that
    compile workers started later agree. Refused where "cpu" is another package's backend (a triton-cpu install).
    Returns the face's compiler class."""
    from triton.backends import Backend, backends
    from triton.runtime import driver
    from triton_backend_sdk.errors import ToolError
    from triton_backend_sdk.faces import CompilerFace, DriverFace

    current = backends.get(NAME)
    if current is not None and not issubclass(current.compiler, CompilerFace):
        raise ToolError(
            f"Triton's {NAME!r} backend is {current.compiler.__module__}.{current.compiler.__name__}, another "
            f"package's (triton-cpu?): the SDK does not replace it"
        )
    if name not in backends or not hasattr(backends[name].compiler, "describe") or name == NAME:
        sdk = sorted(n for n, b in backends.items() if hasattr(b.compiler, "describe") and n != NAME)
        raise ToolError(f"{name!r} is not an SDK backend Triton registered; SDK backends: {sdk}")
    base_module = backends[name].compiler.__module__.rpartition(".")[0]
    compiler, drv = face(base_module)
    changed = current is None or current.compiler is not compiler
    backends[NAME] = Backend(compiler=compiler, driver=drv)
    os.environ[BASE_ENV] = name
    if isinstance(driver.active, DriverFace) and not isinstance(driver.active, drv):
        from triton_backend_sdk.driver import activate

        activate(drv())
    if changed:
        _forget_inductor_kernels()
    return compiler


def _forget_inductor_kernels() -> None:
    """Inductor keeps the kernels it loaded by their source, which names "cpu", not the face: drop them (its own
    `clear_caches`, as `fresh_cache` does), so that later compiles build the new face's; its compile workers were
    started with the previous face, so stop them (the next compile starts new ones). Functions compiled before keep
    running the kernels they hold."""
    utils = sys.modules.get("torch._inductor.utils")
    if utils is not None and hasattr(utils, "clear_caches"):
        utils.clear_caches()
    async_compile = sys.modules.get("torch._inductor.async_compile")
    if async_compile is not None and hasattr(async_compile, "shutdown_compile_workers"):
        async_compile.shutdown_compile_workers()


def _entry_points() -> dict[str, list[str]]:
    from importlib.metadata import entry_points

    found: dict[str, list[str]] = {}
    for ep in entry_points().select(group="triton.backends"):
        found.setdefault(ep.name, []).append(ep.value)
    return found


def _other_cpu_backend() -> str | None:
    import importlib.util

    if importlib.util.find_spec(TRITON_CPU) is not None:
        return TRITON_CPU
    for value in _entry_points().get(NAME, []):
        if value != OURS:
            return value
    return None


def _face_base() -> str:
    """cpu_ref, or the SDK backend (not a face) that TRITON_SDK_CPU_BACKEND, else TRITON_DEFAULT_BACKEND, names."""
    selected = os.environ.get(BASE_ENV) or os.environ.get("TRITON_DEFAULT_BACKEND") or ""
    if not selected or selected == NAME:
        return DEFAULT_BASE
    try:
        from triton.backends.compiler import BaseBackend
        from triton_backend_sdk.backend import TargetBackend
        from triton_backend_sdk.faces import CompilerFace, concrete_class

        for value in _entry_points().get(selected, []):
            cls = concrete_class(importlib.import_module(f"{value}.compiler"), BaseBackend)
            if issubclass(cls, TargetBackend) and not issubclass(cls, CompilerFace):
                return value
    except Exception:  # noqa: BLE001 - a broken selected backend reports itself when Triton loads it
        return DEFAULT_BASE
    return DEFAULT_BASE
