"""Faces: an SDK backend registered under a second Triton backend name, as data on a small subclass.

Some callers look a backend up by a fixed name: torch.compile's Triton route for CPU tensors
(`torch._inductor.config.cpu_backend = "triton"`) asks for `triton.backends.backends["cpu"]` and compiles for
`GPUTarget("cpu", "", warp_size)`, the names triton-cpu uses. A face gives an existing backend that name:

    class CPUBackend(CompilerFace, CPURefBackend):
        name = "cpu"

    class CPUDriver(DriverFace, CPURefDriver):
        backend_name = "cpu"
        face_of = CPUBackend

(`make_face(name, compiler, driver, module)` builds exactly these two; `triton_backend_sdk.backends.cpu` uses it.)
The face compiles with its base's stages, rules and descriptor; only the name (in its descriptor, its targets, its
cache key and the launcher's backend check) differs, and the target archs in `host_archs` (the empty arch by
default) mean the device this process runs on. Its kernels record the base's name (`FACE_OF` in their metadata): two
faces of one name never run each other's binaries. A face's driver is never Triton's auto-selected one: a caller
activates it (Inductor does, for each CPU kernel) or names it in `TRITON_DEFAULT_BACKEND`.

Import-light: the entry-point modules of faces import this while `import triton` runs.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from triton.backends.compiler import GPUTarget

    from .descriptor import TargetDescriptor


#: compile metadata key: the name of the backend whose face compiled the kernel
FACE_OF = "sdk_face_of"


class CompilerFace:
    """Mixin put before an SDK `TargetBackend` subclass: the base backend under the subclass's `name`."""

    name: ClassVar[str]
    #: target archs that mean "this process's device" (the base's host descriptor)
    host_archs: ClassVar[tuple[str, ...]] = ("",)

    @classmethod
    def face_base(cls) -> type:
        """The backend this face shows (the first base after the face mixins)."""
        for base in cls.__mro__[1:]:
            if not issubclass(base, CompilerFace) and getattr(base, "name", ""):
                return base
        raise TypeError(f"{cls.__name__}: a face needs an SDK backend class among its bases")

    @classmethod
    def describe(cls, target: GPUTarget | None = None) -> TargetDescriptor:
        arch = None if target is None or str(target.arch) in cls.host_archs else str(target.arch)
        return _renamed(cls, arch)

    def make_ttir(self, mod: Any, metadata: dict, options: Any) -> Any:
        """The base's stage, with the base's name in the metadata: two faces of one name (cpu_ref's and opencl's
        "cpu") make binaries that only their own driver can run, and `DriverFace` checks it."""
        metadata[FACE_OF] = self.face_base().name
        return super().make_ttir(mod, metadata, options)  # type: ignore[misc]

    def hash(self) -> str:
        """The base's key (which digests the SDK's and the face's own package) and the base package's sources: an
        edit of the base's code generator recompiles the face's kernels too."""
        import hashlib

        from .backend import source_digest

        key = f"{super().hash()}|{source_digest(self.face_base().__module__)}"  # type: ignore[misc]
        return hashlib.sha256(key.encode()).hexdigest()


@functools.cache
def _renamed(cls: type, arch: str | None) -> TargetDescriptor:
    """The base backend's descriptor for `arch` (None: the host), under the face's name (part of the cache key, so a
    face never shares compiled kernels with its base: their metadata names different targets)."""
    import dataclasses

    from triton.backends.compiler import GPUTarget

    target = None if arch is None else GPUTarget(cls.face_base().name, arch, 1)
    return dataclasses.replace(super(CompilerFace, cls).describe(target), name=cls.name)


class DriverFace:
    """Mixin put before an SDK `SDKDriver` subclass: its driver for kernels compiled by `face_of`."""

    backend_name: ClassVar[str]
    #: the face's compiler class
    face_of: ClassVar[type]

    @classmethod
    def compiler_class(cls) -> type:
        return cls.face_of

    @classmethod
    def default_active(cls) -> bool:
        """Never auto-selected: the base backend's own driver is (or is not) the default; two active drivers would
        stop Triton from picking either."""
        return False

    def _checked_launcher(self, src: Any, metadata: Any) -> Any:
        """Refuse a kernel that another face of this name compiled (e.g. cpu_ref's "cpu" kernel with opencl's "cpu"
        face active: a compile worker started before `use` switched the face), naming both."""
        base = self.face_of.face_base().name
        got = getattr(metadata, FACE_OF, None)
        if got is not None and got != base:
            from .errors import ToolError

            raise ToolError(
                f"kernel {getattr(metadata, 'name', '?')!r} was compiled by the {got} face of {self.backend_name!r}, "
                f"but the active {self.backend_name!r} driver is the {base} face; compile it again (a process that "
                f"compiled it before the face changed, e.g. a compile worker, still shows {got})"
            )
        return super()._checked_launcher(src, metadata)  # type: ignore[misc]

    def runs_kernels_of(self, backend: str, metadata: Any) -> bool:
        """Also the base backend's own kernels: Triton caches a JIT function's kernels per device index, so a kernel
        launched before Inductor activated the face (Liger's kernels in eager code, then `torch.compile`) comes
        back compiled for the base, and the face runs it with the base's launcher."""
        return backend == self.face_of.face_base().name or super().runs_kernels_of(backend, metadata)  # type: ignore[misc]

    def __repr__(self) -> str:  # Inductor and Triton print drivers in errors
        return f"<{type(self).__name__} {self.backend_name!r}: {self.face_of.face_base().name} face>"


def make_face(name: str, compiler: type, driver: type, module: str) -> tuple[type, type]:
    """The face of SDK backend (`compiler`, `driver`) named `name`: the two small subclasses of the module
    docstring, defined as if in `module` (whose `compiler`/`driver` modules Triton's entry point loads; the
    compile cache key digests that package's sources beside the base's)."""
    from .backend import TargetBackend
    from .driver import SDKDriver

    if not (issubclass(compiler, TargetBackend) and issubclass(driver, SDKDriver)):
        raise TypeError(f"a face shows an SDK backend; {compiler.__name__}/{driver.__name__} is not one")
    if issubclass(compiler, CompilerFace):
        raise TypeError(f"{compiler.__name__} is already a face (of {compiler.face_base().name!r})")
    stem = "".join(p.upper() if len(p) <= 3 else p.title() for p in name.split("_"))
    face_compiler = type(
        f"{stem}Backend",
        (CompilerFace, compiler),
        {
            "name": name,
            "__module__": f"{module}.compiler",
            "__doc__": (
                f"The {compiler.name} backend under the Triton backend name {name!r} (a face: triton_backend_sdk.faces)."
            ),
        },
    )
    face_driver = type(
        f"{stem}Driver",
        (DriverFace, driver),
        {
            "backend_name": name,
            "face_of": face_compiler,
            "__module__": f"{module}.driver",
            "__doc__": f"The {compiler.name} driver for kernels compiled by {face_compiler.__name__}.",
        },
    )
    return face_compiler, face_driver


def concrete_class(module: Any, base: type) -> type:
    """The one concrete `base` subclass in `module` (what Triton's backend discovery takes)."""
    import inspect

    found = [
        v
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, base) and v is not base and not inspect.isabstract(v)
    ]
    if len(found) != 1:
        raise RuntimeError(f"{module.__name__}: expected one concrete {base.__name__} subclass, found {found}")
    return found[0]
