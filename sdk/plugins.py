"""The plugin registry: what a plugin declares, API checks, activation, Triton C++ plugin passes, cache identity.

A plugin is a `Plugin` value: a name, a version, the range of SDK API versions it was written for, and what it adds —
passes at injection points (Python `IRPass`es, Triton C++ `TritonPass`es, stage hooks), custom ops and native
libraries (plugin.h). Plugins arrive three ways: the entry point group `triton_backend_sdk.plugins` (loaded on the
first compile of any SDK backend), `activate(plugin)` from Python, and `TRITON_PLUGIN_PATHS` (Triton's own variable:
each library's passes run at the end of the TTIR stage, `after-pass:ttir.end`).

Everything active is part of every SDK backend's cache key (`identity`), computed once per change of the registry,
not per launch. Changing the registry drops Triton's in-memory kernel caches (`invalidate`), because their keys are
only the specialization and the options: without that, a kernel launched before a plugin was activated would keep
running the code compiled without it.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from . import API_VERSION, __version__
from .errors import SDKError
from .pipeline import Hook, Injection, IRPass, TritonPass, check_stage_point, inject, remove_injection

ENTRY_POINT_GROUP = "triton_backend_sdk.plugins"
#: entry-point names of installed plugins not to load (comma or space separated): a way around a broken one
DISABLE_VARIABLE = "TRITON_SDK_DISABLE_PLUGINS"
#: the point where TRITON_PLUGIN_PATHS libraries' passes run
TTIR_END = "after-pass:ttir.end"


class PluginError(SDKError):
    """A plugin cannot be used: the message names the plugin, its version and what is incompatible."""


def check_api(kind: str, name: str, version: str, api: tuple[int, int]) -> None:
    """Refuse a plugin or backend written for SDK API versions that exclude this SDK's `API_VERSION`."""
    lo, hi = api
    if not lo <= API_VERSION <= hi:
        span = f"{lo}" if lo == hi else f"{lo}..{hi}"
        raise PluginError(
            f"{kind} {name!r} {version} supports SDK API version {span}, but triton-backend-sdk "
            f"{__version__} provides API version {API_VERSION}"
        )


@dataclass(frozen=True)
class Plugin:
    """What a plugin declares. `passes` are (point, pass or hook) pairs; `backends` limits them (empty: all)."""

    name: str
    version: str
    #: inclusive range of SDK API versions (`triton_backend_sdk.API_VERSION`) this plugin supports
    api: tuple[int, int] = (1, 1)
    passes: tuple[tuple[str, IRPass | TritonPass | Hook], ...] = ()
    #: custom ops (what `custom_op` returns, or the op classes), listed and hashed
    ops: tuple[Any, ...] = ()
    #: paths of native libraries implementing plugin.h
    native: tuple[str, ...] = ()
    #: upstream Triton extension libraries (Triton's `tritonGetPluginInfo` ABI, e.g. the wheel's
    #: `triton/plugins/libMLIRDialectPlugin.so`): their MLIR dialects are registered in every context Triton makes
    #: (`ir.extend_dialects_with`), their builder ops added to Triton's IR builder (`ir.builder.extend_with`) and
    #: their passes made available to `TritonPass` (`passes.plugin.extend_with`); `custom_ops.dialect_op` gives the
    #: dialect's ops their SDK IR form and lowerings. Loaded once per process: deactivating keeps them mapped.
    mlir_libraries: tuple[str, ...] = ()
    backends: tuple[str, ...] = ()
    #: called once on activation, after the API check (e.g. to register lowering rules)
    setup: Callable[[], None] | None = None
    #: the module that declared the plugin; its source is hashed into the cache key
    module: str = field(default_factory=lambda: str(sys._getframe(2).f_globals.get("__name__", "?")))

    def __post_init__(self) -> None:
        if not self.name or not self.version:
            raise PluginError(f"a plugin needs a name and a version, got name={self.name!r} version={self.version!r}")
        if len(self.api) != 2 or self.api[0] > self.api[1]:
            raise PluginError(f"plugin {self.name!r}: api must be an inclusive (min, max) range, got {self.api!r}")


@dataclass
class Active:
    plugin: Plugin
    source: str
    injections: list[Injection] = field(default_factory=list)
    natives: list[Any] = field(default_factory=list)
    #: "path:sha256" of each MLIR extension library
    mlir: list[str] = field(default_factory=list)

    def identity(self) -> str:
        p = self.plugin
        py = _module_digest(p.module)  # the module's import closure (sdk/code_identity.py)
        nat = ",".join(n.identity() for n in self.natives)
        ops = ",".join(sorted(getattr(getattr(o, "op", o), "name", str(o)) for o in p.ops))
        mlir = ",".join(self.mlir)
        return f"{p.name}@{p.version}[api {p.api[0]}-{p.api[1]}; py {py}; ops {ops}; native {nat}; mlir {mlir}]"


_ACTIVE: dict[str, Active] = {}
_generation = 0
_loaded_external = False
_lock = threading.RLock()


def activate(plugin: Plugin, source: str = "python") -> Active:
    """Check `plugin` against this SDK, load its native libraries, inject its passes; later compiles see it."""
    with _lock:
        return _activate(plugin, source)


def _activate(plugin: Plugin, source: str) -> Active:
    check_api("plugin", plugin.name, plugin.version, plugin.api)
    for point, item in plugin.passes:  # before any of its code runs
        try:
            check_stage_point(point, item, plugin.backends)
        except ValueError as e:
            raise PluginError(f"plugin {plugin.name!r} {plugin.version} ({source}): {e}") from e
    if plugin.name in _ACTIVE:
        other = _ACTIVE[plugin.name]
        raise PluginError(
            f"plugin {plugin.name!r} {plugin.version} ({source}) is already active as version "
            f"{other.plugin.version} ({other.source}); deactivate it first"
        )
    from .native import initialise, open_native

    natives = [open_native(p) for p in plugin.native]
    _check_symbol_clashes(plugin.name, natives)
    mlir = [_mlir_library_digest(plugin, p) for p in plugin.mlir_libraries]  # exists, readable: before code runs
    for n in natives:  # only now does any of its code run
        initialise(n)
    for path in plugin.mlir_libraries:
        load_mlir_library(path)
    if plugin.setup is not None:
        plugin.setup()
    active = Active(plugin, source, natives=natives, mlir=mlir)
    try:
        for point, item in plugin.passes:
            active.injections.append(inject(point, item, plugin.backends, f"plugin {plugin.name!r} {plugin.version}"))
    except Exception:
        for inj in active.injections:
            remove_injection(inj)
        raise
    _ACTIVE[plugin.name] = active
    invalidate()
    return active


def deactivate(name: str) -> None:
    """Remove plugin `name`'s passes and symbols from later compiles (loaded libraries stay mapped)."""
    with _lock:
        active = _ACTIVE.pop(name, None)
        if active is None:
            raise PluginError(f"no active plugin named {name!r}; active: {sorted(_ACTIVE)}")
        for inj in active.injections:
            remove_injection(inj)
        invalidate()


def active_plugins() -> list[Active]:
    ensure_loaded()
    return list(_ACTIVE.values())


def _check_symbol_clashes(name: str, natives: list[Any]) -> None:
    seen: dict[str, str] = {}
    for a in _ACTIVE.values():
        for n in a.natives:
            seen.update({s: f"{a.plugin.name} ({n.path})" for s in n.symbols})
    for n in natives:
        for s in n.symbols:
            if s in seen:
                raise PluginError(f"native symbol {s!r} of plugin {name!r} ({n.path}) is already defined by {seen[s]}")
            seen[s] = f"{name} ({n.path})"


def native_symbols() -> dict[str, int]:
    """Name -> address of every symbol of the active plugins' native libraries (what cpu_ref's JIT links against)."""
    ensure_loaded()
    out: dict[str, int] = {}
    for a in _ACTIVE.values():
        for n in a.natives:
            out.update(n.symbols)
    return out


def native_signatures() -> dict[str, tuple[str, str, tuple[str, ...]]]:
    """Symbol -> (plugin, result, argument element types) for the active native symbols that declare a signature."""
    ensure_loaded()
    out: dict[str, tuple[str, str, tuple[str, ...]]] = {}
    for a in _ACTIVE.values():
        for n in a.natives:
            out.update({s: (f"{a.plugin.name} ({n.path})", *sig) for s, sig in n.signatures.items()})
    return out


# ---- external sources: entry points and TRITON_PLUGIN_PATHS ------------------------------------------------------

_env_injected: set[str] = set()
#: set while ensure_loaded runs: nothing was compiled by an SDK backend yet, so Triton's caches need not be dropped
_quiet = False


def ensure_loaded() -> None:
    """Activate the entry-point plugins and TRITON_PLUGIN_PATHS libraries, once per process.

    Called when the first SDK backend object is made (before anything compiles), and again by anything that reads
    the registry; a failure (an incompatible plugin) is raised again on the next call, not forgotten.
    """
    global _loaded_external, _quiet
    if _loaded_external:
        return
    with _lock:
        if _loaded_external:
            return
        _quiet = True
        try:
            sources = {a.source for a in _ACTIVE.values()}
            skip = disabled_plugins()
            for ep in entry_points():
                if ep.name not in skip and describe_source(ep) not in sources:
                    activate(load_entry_point(ep), source=describe_source(ep))
            for path in triton_plugin_paths():
                if path not in _env_injected:
                    for pass_name in triton_library_passes(path):
                        inject(TTIR_END, TritonPass(pass_name, path))
                    _env_injected.add(path)
            _loaded_external = True
        finally:
            _quiet = False


def entry_points() -> list[metadata.EntryPoint]:
    return sorted(metadata.entry_points().select(group=ENTRY_POINT_GROUP), key=lambda e: e.name)


def disabled_plugins() -> frozenset[str]:
    """Names in TRITON_SDK_DISABLE_PLUGINS, read where plugins load (the registry, not a compile stage)."""
    return frozenset(os.environ.get(DISABLE_VARIABLE, "").replace(",", " ").split())


def describe_source(ep: metadata.EntryPoint) -> str:
    dist = f"{ep.dist.name} {ep.dist.version}" if ep.dist else "unknown distribution"
    return f"entry point {ep.name} = {ep.value} ({dist})"


def load_entry_point(ep: metadata.EntryPoint) -> Plugin:
    """Import an entry point; its value is a `Plugin` or a callable returning one."""
    try:
        obj = ep.load()
    except Exception as e:
        raise PluginError(f"plugin entry point {ep.name} = {ep.value} failed to import: {e!r}") from e
    plugin = obj() if callable(obj) and not isinstance(obj, Plugin) else obj
    if not isinstance(plugin, Plugin):
        raise PluginError(f"plugin entry point {ep.name} = {ep.value} gave {plugin!r}, not a triton_backend_sdk Plugin")
    return plugin


def triton_plugin_paths() -> list[str]:
    return [p for p in os.environ.get("TRITON_PLUGIN_PATHS", "").split(os.pathsep) if p]


_TRITON_LIBS: dict[str, list[str]] = {}


def triton_library_passes(path: str) -> list[str]:
    """Load a Triton C++ plugin library (`passes.plugin.extend_with`) once; the `add_*` functions it created."""
    from triton._C.libtriton import passes

    path = os.path.realpath(path)
    if path not in _TRITON_LIBS:
        if not os.path.isfile(path):
            raise PluginError(f"Triton plugin library {path!r}: no such file")
        before = set(dir(passes.plugin))
        try:
            passes.plugin.extend_with(path)
        except Exception as e:
            raise PluginError(f"Triton could not load plugin library {path!r}: {e}") from e
        _TRITON_LIBS[path] = sorted(n for n in set(dir(passes.plugin)) - before if n.startswith("add_"))
    return _TRITON_LIBS[path]


def _mlir_library_digest(plugin: Plugin, path: str) -> str:
    import hashlib

    try:
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:16]
    except OSError as e:
        raise PluginError(f"plugin {plugin.name!r} {plugin.version}: MLIR extension library {path!r}: {e}") from e
    return f"{os.path.realpath(path)}:{digest}"


_MLIR_LIBS: set[str] = set()


def load_mlir_library(path: str) -> None:
    """Register an upstream Triton extension library's dialects, builder ops and passes with Triton, once per
    process (Triton keeps what it loads). Listed among the loaded Triton plugin libraries, so that opencl refuses to
    start PoCL after it instead of letting the two LLVMs abort the process."""
    from triton._C.libtriton import ir

    real = os.path.realpath(path)
    if real in _MLIR_LIBS:
        return
    triton_library_passes(real)  # passes.plugin.extend_with, and the PoCL-order bookkeeping
    try:
        ir.extend_dialects_with(real)
        ir.builder.extend_with(real)
    except Exception as e:
        raise PluginError(f"Triton could not load the dialects of extension library {real!r}: {e}") from e
    _MLIR_LIBS.add(real)


def triton_pass_adder(library: str | None, pass_name: str) -> Callable[..., None]:
    """The `add_*` function for a Triton pass: from a plugin library, or from Triton's bindings (`group.add_x`)."""
    from triton._C.libtriton import passes

    if library is not None:
        names = triton_library_passes(library)
        if not hasattr(passes.plugin, pass_name):
            raise PluginError(f"Triton plugin library {library!r} has no pass {pass_name!r}; it provides {names}")
        return getattr(passes.plugin, pass_name)
    group, _, fn = pass_name.partition(".")
    adder = getattr(getattr(passes, group, None), fn, None)
    if adder is None:
        raise PluginError(f"Triton has no pass passes.{pass_name}")
    return adder


# ---- cache identity ----------------------------------------------------------------------------------------------


def invalidate() -> None:
    """The registry changed: recompute identities, and drop Triton's in-memory kernel caches (see module doc)."""
    global _generation
    _generation += 1
    if not _quiet:
        _drop_jit_caches()


def drop_jit_caches() -> None:
    """Forget every @triton.jit function's in-memory kernels (they rebind to the active driver on next launch)."""
    _drop_jit_caches()


def _drop_jit_caches() -> None:
    jit = sys.modules.get("triton.runtime.jit")
    if jit is None:
        return
    registry = getattr(jit, "_triton_jit_function_registry", None)
    if registry is not None:  # Triton 3.9 keeps every JITFunction here
        functions = list(registry.values())
    else:  # older wheels: find them the slow way (only on a registry change)
        import gc

        functions = [o for o in gc.get_objects() if isinstance(o, jit.JITFunction)]
    for fn in functions:
        forget_kernels(fn)


def jit_function_of(fn: Any) -> Any:
    """The @triton.jit function under autotune / heuristics wrappers (the one holding the kernel caches)."""
    while not hasattr(fn, "device_caches") and hasattr(fn, "fn"):
        fn = fn.fn
    return fn


def forget_kernels(fn: Any) -> None:
    """Drop one @triton.jit function's in-memory kernels (the next launch reloads from Triton's disk cache). A
    process that runs thousands of one-off specializations (the op suite, the conformance runner) would otherwise
    keep every binary it ever loaded: ~0.2 MB per cpu_ref kernel, ~0.8 MB per opencl program."""
    from collections import defaultdict

    fn = jit_function_of(fn)
    if getattr(fn, "device_caches", None):  # a fresh defaultdict rebuilds backend and binder lazily
        fn.device_caches = defaultdict(fn.create_binder)


def identity(backend: str) -> str:
    """Everything plugins contribute to `backend`'s compile cache key."""
    ensure_loaded()
    return _identity(backend, _generation)


@functools.lru_cache(maxsize=64)
def _identity(backend: str, generation: int) -> str:
    from . import custom_ops

    parts = [a.identity() for _, a in sorted(_ACTIVE.items()) if not a.plugin.backends or backend in a.plugin.backends]
    return "|".join([*parts, f"ops[{custom_ops.identity()}]"])


def file_digest(path: str) -> str:
    """Content hash of a file, keyed by its path, size and mtime (so an unchanged file is read once per process)."""
    st = os.stat(path)
    return _file_digest(os.path.realpath(path), st.st_size, st.st_mtime_ns)


@functools.cache
def _file_digest(path: str, size: int, mtime: int) -> str:
    from .native import file_sha256

    return file_sha256(path)[:16]


def _module_digest(module: str) -> str:
    import hashlib

    from .code_identity import module_closure

    closure = module_closure(module)
    return hashlib.sha256(repr(closure).encode()).hexdigest()[:16] if closure else "?"


def include_dir() -> str:
    """The directory to pass to the C compiler (`-I`) for `#include "triton_backend_sdk/plugin.h"`: inside the
    installed package (wheels, see setup.py), else the source checkout's csrc/include (editable installs)."""
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "include"), os.path.join(os.path.dirname(here), "csrc", "include")):
        if os.path.isfile(os.path.join(cand, "triton_backend_sdk", "plugin.h")):
            return cand
    raise PluginError(f"plugin.h not found next to {here}; reinstall triton-backend-sdk")


# ---- listing -----------------------------------------------------------------------------------------------------


def describe_all() -> list[dict[str, Any]]:
    """Backends and plugins with versions, API ranges and origins (what `triton-sdk plugins` prints)."""
    rows: list[dict[str, Any]] = []
    for ep in sorted(metadata.entry_points().select(group="triton.backends"), key=lambda e: e.name):
        row = {
            "kind": "backend",
            "name": ep.name,
            "source": describe_source(ep),
            "version": ep.dist.version if ep.dist else "?",
            "api": "?",
        }
        try:
            from triton.backends import backends

            cls = backends[ep.name].compiler if ep.name in backends else None
        except Exception as e:  # noqa: BLE001 - listing must survive a broken backend and say so
            cls, row["error"] = None, repr(e)
        if cls is not None:
            row["version"] = str(getattr(cls, "version", row["version"]))
            api = getattr(cls, "sdk_api", None)
            row["api"] = f"{api[0]}-{api[1]}" if api else "not an SDK backend"
            if api:
                try:
                    check_api("backend", ep.name, row["version"], api)
                except PluginError as e:
                    row["error"] = str(e)
        rows.append(row)
    skip = disabled_plugins()
    for ep in entry_points():
        row = {"kind": "plugin", "name": ep.name, "source": describe_source(ep), "version": "?", "api": "?"}
        if ep.name in skip:
            rows.append({**row, "disabled": f"not loaded: named in {DISABLE_VARIABLE}"})
            continue
        try:
            p = load_entry_point(ep)
            row.update(
                version=p.version,
                api=f"{p.api[0]}-{p.api[1]}",
                passes=[pt for pt, _ in p.passes],
                ops=[getattr(getattr(o, "op", o), "name", str(o)) for o in p.ops],
                native=list(p.native),
                mlir_libraries=list(p.mlir_libraries),
            )
            check_api("plugin", p.name, p.version, p.api)
        except PluginError as e:
            row["error"] = str(e)
        rows.append(row)
    for path in triton_plugin_paths():
        row = {
            "kind": "triton-plugin",
            "name": os.path.basename(path),
            "source": "TRITON_PLUGIN_PATHS",
            "version": "-",
            "api": "Triton plugin API",
            "path": path,
        }
        try:
            row["passes"] = [f"{TTIR_END} {p}" for p in triton_library_passes(path)]
        except PluginError as e:
            row["error"] = str(e)
        rows.append(row)
    for name in sorted(skip - {ep.name for ep in entry_points()}):
        rows.append(
            {
                "kind": "plugin",
                "name": name,
                "source": DISABLE_VARIABLE,
                "version": "-",
                "api": "-",
                "warning": f"{DISABLE_VARIABLE} names {name!r}, which no installed plugin entry point is called",
            }
        )
    return rows
