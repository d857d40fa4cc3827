"""LLVM through llvmlite: the host target machine, the optimisation pipeline, object emission and the JIT loader.

Imported only when a kernel is compiled or loaded, so that `import triton` stays fast.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import os
import tempfile
import threading
import weakref
from collections.abc import Iterator

import llvmlite.binding as llvm
from triton_backend_sdk.errors import ToolError

_lock = threading.Lock()
_lib_ids = itertools.count()
#: (name, sha256 of the object, imported symbols) -> the library linked from them, while anything holds it
_loaded: weakref.WeakValueDictionary[tuple, LoadedObject] = weakref.WeakValueDictionary()


@functools.cache
def _init() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


@functools.cache
def host_cpu() -> tuple[str, str]:
    """(LLVM CPU name, feature string) of this machine."""
    _init()
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


@functools.cache
def recognized_cpu(cpu: str) -> bool:
    """Whether LLVM knows `cpu` for this triple. LLVM only warns on stderr for an unknown name and then, emitting
    code for its feature-less subtarget, aborts the process ("64-bit code requested on a subtarget that doesn't
    support it"); so the warning is read from fd 2 while a target machine for the name is made."""
    _init()
    with tempfile.TemporaryFile() as f:
        saved = os.dup(2)
        os.dup2(f.fileno(), 2)
        try:
            llvm.Target.from_default_triple().create_target_machine(cpu=cpu, features="")
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        return b"not a recognized processor" not in f.read()


@functools.cache
def target_machine(cpu: str, features: str, opt_level: int) -> llvm.TargetMachine:
    _init()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=cpu, features=features, opt=opt_level, reloc="pic", codemodel="default")


def optimize(ir_text: str, cpu: str, features: str, opt_level: int, name: str) -> str:
    """Parse, verify and optimise LLVM IR text for the CPU; returns the optimised IR text."""
    tm = target_machine(cpu, features, opt_level)
    with _lock, _private_module(ir_text, f"LLVM rejected the IR generated for kernel {name!r}") as mod:
        _reap()
        mod.triple = tm.triple
        mod.data_layout = str(tm.target_data)
        try:
            mod.verify()
        except RuntimeError as e:
            raise ToolError(f"cpu_ref: LLVM rejected the IR generated for kernel {name!r}: {e}") from e
        if opt_level > 0:
            pto = llvm.create_pipeline_tuning_options(speed_level=opt_level)
            pto.loop_vectorization = True
            pto.slp_vectorization = True
            pto.loop_unrolling = True
            pb = llvm.create_pass_builder(tm, pto)
            try:
                pb.getModulePassManager().run(mod, pb)
            finally:
                pb.close()
                pto.close()
        return str(mod)


def emit_object(ir_text: str, cpu: str, features: str, opt_level: int, name: str) -> bytes:
    tm = target_machine(cpu, features, opt_level)
    with _lock, _private_module(ir_text, f"cannot re-read LLVM IR of kernel {name!r}") as mod:
        return tm.emit_object(mod)


@contextlib.contextmanager
def _private_module(ir_text: str, what: str) -> Iterator[llvm.ModuleRef]:
    """The module parsed into an LLVM context of its own, both freed on exit (the caller holds `_lock`). With the
    global context, a module that outlived its call (held by a traceback, say) was freed by whichever thread ran
    Python's cyclic GC, inside LLVM while another thread parsed or optimised in that same context with the GIL
    released: LLVMContext is not thread-safe."""
    context = llvm.create_context()
    try:
        try:
            mod = llvm.parse_assembly(ir_text, context=context)
        except RuntimeError as e:
            raise ToolError(f"cpu_ref: {what}: {e}") from e
        try:
            yield mod
        finally:
            mod.close()
    finally:
        context.close()


class LoadedObject:
    """A kernel object linked into the process-wide JIT; holding it keeps the code mapped.

    Freeing it only retires the library: Python's cyclic GC may free it on any thread (pytest-xdist's receiver
    thread, say) while another thread is inside LLVM with the GIL released, linking under `_lock`; unlinking then
    would race that JIT session, and taking `_lock` in a finaliser that holds the GIL could deadlock with it. The
    next compile or load unlinks retired libraries under `_lock`."""

    def __init__(self, lib: object, function: int) -> None:
        self.lib = lib
        self.function = function

    def __del__(self) -> None:
        _retired.append(self.lib)


#: libraries whose LoadedObject was freed, unlinked by `_reap` under `_lock`
_retired: list[object] = []


def _reap() -> None:
    """Unlink retired libraries; called with `_lock` held."""
    while _retired:
        _retired.pop().close()  # type: ignore[attr-defined]


@functools.cache
def _jit() -> llvm.LLJIT:
    """The process's JIT, linking with JITLink. RuntimeDyld, llvmlite's default, maps an object's sections (code,
    constants, its GOT) separately, wherever the kernel finds room: in a process whose address space has filled up (a
    long test run with torch and PoCL) they can land more than 2 GB apart, and a 32-bit PC-relative reference between
    them then aborts the process in llvmlite's assertion-enabled LLVM
    (`RuntimeDyldELF::resolveX86_64Relocation: isInt<32>(RealOffset)`; how CI lost a worker now and then). JITLink
    allocates each object in one block and reaches outside symbols through its own GOT and stubs (~80 us more per
    link)."""
    cpu, features = host_cpu()
    return llvm.create_lljit_compiler(target_machine(cpu, features, 3), use_jit_link=True)


def load_object(name: str, obj: bytes) -> LoadedObject:
    """Link a kernel object into the JIT, once per distinct object while it is held: a second load of the same bytes
    returns the library already linked. Triton's lazy `CompiledKernel._init_handles` takes no lock, so threads making
    the first launches of one kernel each load its binary and each overwrites `kernel.module`; a fresh library per
    load would be unmapped (ResourceTracker disposal) under a thread still running the one it replaced.

    External calls resolve against the process (libm) and the symbols of the active native plugins (plugin.h),
    which are imported explicitly since plugins are dlopen()ed RTLD_LOCAL."""
    from triton_backend_sdk.plugins import native_symbols

    symbols = native_symbols()
    key = (name, hashlib.sha256(obj).digest(), tuple(sorted(symbols.items())))
    with _lock:
        _reap()
        loaded = _loaded.get(key)
        if loaded is None:
            loaded = _link(name, obj, symbols)
            _loaded[key] = loaded
        return loaded


def _link(name: str, obj: bytes, symbols: dict[str, int]) -> LoadedObject:
    """Called with `_lock` held."""
    builder = llvm.JITLibraryBuilder().add_object_img(obj).export_symbol(name)
    for sym, address in symbols.items():
        builder.import_symbol(sym, address)
    try:
        lib = builder.link(_jit(), f"{name}.{next(_lib_ids)}")
    except RuntimeError as e:
        missing = [s for s in undefined_symbols(obj) if s not in symbols and not _in_process(s)]
        raise ToolError(
            f"cpu_ref: cannot link kernel {name!r}: unresolved symbols {missing or '?'} ({e})\n"
            f"  symbols from active native plugins: {sorted(symbols) or 'none'} (extern_elementwise "
            f"symbols resolve against these and the process; see triton_backend_sdk.plugins)"
        ) from e
    return LoadedObject(lib, lib[name])


def _in_process(symbol: str) -> bool:
    import ctypes

    return hasattr(ctypes.CDLL(None), symbol)


def undefined_symbols(obj: bytes) -> list[str]:
    """Names an ELF64 little-endian object references but does not define (for link error messages)."""
    import struct

    if obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return []
    (shoff,) = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * shentsize) for i in range(shnum)]
    out = []
    for sh in sections:
        if sh[1] != 2:  # SHT_SYMTAB
            continue
        strtab = sections[sh[6]]
        for off in range(sh[4], sh[4] + sh[5], sh[9] or 24):
            st_name, _info, _other, st_shndx = struct.unpack_from("<IBBH", obj, off)
            if st_shndx == 0 and st_name:
                start = strtab[4] + st_name
                out.append(obj[start : obj.index(b"\0", start)].decode())
    return out
