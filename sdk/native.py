"""Loader for native plugins (the C ABI of csrc/include/triton_backend_sdk/plugin.h), through ctypes.

ctypes rather than the pybind11 extension: loading happens once per library per process, and the header stays the
only contract (a vendor's library needs no Python headers and no SDK build).
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import os
import re
from dataclasses import dataclass, field

from .errors import SDKError

#: native ABI versions this SDK reads (plugin.h TSDK_PLUGIN_API_VERSION)
NATIVE_API_VERSIONS = (1,)
ENTRY = "tsdk_plugin_info"


class NativePluginError(SDKError):
    """A native plugin library cannot be loaded: the message names the library and what is wrong."""


class _Symbol(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("address", ctypes.c_void_p)]


_INIT = ctypes.CFUNCTYPE(ctypes.c_int32)
_TEARDOWN = ctypes.CFUNCTYPE(None)


class _PluginV1(ctypes.Structure):
    _fields_ = [
        ("api_version", ctypes.c_uint32),
        ("struct_size", ctypes.c_uint32),
        ("name", ctypes.c_char_p),
        ("version", ctypes.c_char_p),
        ("num_symbols", ctypes.c_uint64),
        ("symbols", ctypes.POINTER(_Symbol)),
        ("init", ctypes.c_void_p),
        ("teardown", ctypes.c_void_p),
        ("signatures", ctypes.POINTER(ctypes.c_char_p)),  # appended: read only within struct_size
    ]


_MIN_SIZE = _PluginV1.symbols.offset + ctypes.sizeof(ctypes.c_void_p)


@dataclass
class NativePlugin:
    """A loaded native plugin: its declared identity, its symbol table and the digest of the library file."""

    path: str
    name: str
    version: str
    api_version: int
    digest: str
    symbols: dict[str, int] = field(default_factory=dict)
    handle: ctypes.CDLL | None = field(default=None, repr=False)
    #: symbol -> (result, arguments) as IR element types (f32, i32, ...), where the library declares them
    signatures: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    #: the descriptor's init and teardown (0: none); init runs once, after every check of the library passed
    init: int = field(default=0, repr=False)
    teardown: int = field(default=0, repr=False)
    initialised: bool = False

    def identity(self) -> str:
        return f"{self.name}@{self.version}/abi{self.api_version}/{self.digest}"


_LOADED: dict[str, NativePlugin] = {}


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_native(path: str) -> NativePlugin:
    """dlopen `path`, read and check its descriptor, run its init; once per path per process."""
    plugin = open_native(path)
    initialise(plugin)
    return plugin


def open_native(path: str) -> NativePlugin:
    """dlopen `path` and check its descriptor and symbols, without running its init (`initialise` does, once the
    caller's own checks passed too: a library refused for a clash must not have run code)."""
    path = os.path.realpath(path)
    if path in _LOADED:
        return _LOADED[path]
    if not os.path.isfile(path):
        raise NativePluginError(f"native plugin {path!r}: no such file")
    digest = file_sha256(path)
    try:
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
    except OSError as e:
        raise NativePluginError(f"native plugin {path!r}: dlopen failed: {e}") from e
    try:
        entry = getattr(lib, ENTRY)
    except AttributeError:
        raise NativePluginError(f"native plugin {path!r} does not export {ENTRY}() (see plugin.h)") from None
    entry.restype = ctypes.POINTER(_PluginV1)
    entry.argtypes = []
    ptr = entry()
    if not ptr:
        raise NativePluginError(f"native plugin {path!r}: {ENTRY}() returned NULL")
    desc = ptr.contents
    if desc.api_version not in NATIVE_API_VERSIONS:
        raise NativePluginError(
            f"native plugin {path!r} was built for plugin ABI version {desc.api_version}; this SDK reads ABI "
            f"version(s) {', '.join(map(str, NATIVE_API_VERSIONS))}"
        )
    if desc.struct_size < _MIN_SIZE:
        raise NativePluginError(
            f"native plugin {path!r}: struct_size {desc.struct_size} is smaller than the "
            f"{_MIN_SIZE} bytes ABI version 1 requires"
        )
    name = (desc.name or b"").decode()
    version = (desc.version or b"").decode()
    if not name or not version:
        raise NativePluginError(f"native plugin {path!r}: name and version must be set (got {name!r}, {version!r})")
    symbols: dict[str, int] = {}
    for i in range(desc.num_symbols):
        s = desc.symbols[i]
        sym = (s.name or b"").decode()
        if not sym or not s.address:
            raise NativePluginError(f"native plugin {name} ({path}): symbol table entry {i} has no name or address")
        if sym in symbols:
            raise NativePluginError(f"native plugin {name} ({path}) defines symbol {sym!r} twice")
        owner = process_symbol_owner(sym)
        if owner is not None:
            raise NativePluginError(
                f"native plugin {name} ({path}): symbol {sym!r} is already defined by {owner}; kernels resolve "
                f"external calls against the plugins first, so every kernel calling {sym!r} would get the "
                f"plugin's function: give it a name of its own (a prefix such as '{name}_')"
            )
        symbols[sym] = int(s.address)
    has = desc.struct_size >= _PluginV1.teardown.offset + ctypes.sizeof(ctypes.c_void_p)
    signatures: dict[str, tuple[str, tuple[str, ...]]] = {}
    if desc.struct_size >= _PluginV1.signatures.offset + ctypes.sizeof(ctypes.c_void_p) and desc.signatures:
        for i, sym in enumerate(symbols):
            text = desc.signatures[i]
            if text:
                try:
                    signatures[sym] = parse_signature(text.decode())
                except ValueError as e:
                    raise NativePluginError(f"native plugin {name} ({path}): symbol {sym!r}: {e}") from None
    plugin = NativePlugin(
        path,
        name,
        version,
        desc.api_version,
        digest,
        symbols,
        lib,
        init=int(desc.init or 0) if has else 0,
        teardown=int(desc.teardown or 0) if has else 0,
        signatures=signatures,
    )
    _LOADED[path] = plugin
    return plugin


#: C scalar types of plugin.h rule 4 -> the IR element type a kernel's extern_elementwise call has (signless ints)
C_TYPES = {
    "float": "f32",
    "double": "f64",
    **{f"{u}int{w}_t": f"i{w}" for u in ("", "u") for w in (8, 16, 32, 64)},
}


def parse_signature(text: str) -> tuple[str, tuple[str, ...]]:
    """'float(float, int32_t)' -> ('f32', ('f32', 'i32')); an empty or `void` argument list is no arguments."""
    m = re.fullmatch(r"\s*([A-Za-z_][\w ]*?)\s*\(\s*(.*?)\s*\)\s*", text)
    if m is None:
        raise ValueError(f"signature {text!r} is not a C prototype like 'float(float, float)'")
    ret, args = m.group(1), [a.strip() for a in m.group(2).split(",")] if m.group(2) not in ("", "void") else []
    unknown = [t for t in (ret, *args) if t not in C_TYPES]
    if unknown:
        raise ValueError(f"signature {text!r}: {unknown} not among the ABI's scalar types {sorted(C_TYPES)}")
    return C_TYPES[ret], tuple(C_TYPES[a] for a in args)


def initialise(plugin: NativePlugin) -> None:
    """Run the library's init (once) and register its teardown for exit; an init that fails leaves it unloaded."""
    if plugin.initialised:
        return
    if plugin.init:
        rc = _INIT(plugin.init)()
        if rc != 0:
            _LOADED.pop(plugin.path, None)
            raise NativePluginError(
                f"native plugin {plugin.name} {plugin.version} ({plugin.path}): init() returned {rc}"
            )
    if plugin.teardown:
        atexit.register(_TEARDOWN(plugin.teardown))
    plugin.initialised = True


def process_symbol_owner(symbol: str) -> str | None:
    """The library of this process that already defines `symbol` (libc, libm, the interpreter, ...), or None."""
    process = ctypes.CDLL(None)
    try:
        address = ctypes.cast(getattr(process, symbol), ctypes.c_void_p).value
    except AttributeError:
        return None
    info = _DlInfo()
    if address and _dladdr is not None and _dladdr(ctypes.c_void_p(address), ctypes.byref(info)) and info.dli_fname:
        return os.path.basename(info.dli_fname.decode(errors="replace"))
    return "this process"


class _DlInfo(ctypes.Structure):
    _fields_ = [
        ("dli_fname", ctypes.c_char_p),
        ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p),
        ("dli_saddr", ctypes.c_void_p),
    ]


def _find_dladdr() -> object | None:
    try:
        fn = ctypes.CDLL(None).dladdr
    except AttributeError:
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    fn.restype = ctypes.c_int
    return fn


_dladdr = _find_dladdr()


def loaded() -> list[NativePlugin]:
    return list(_LOADED.values())
