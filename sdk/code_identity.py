"""Digests of the code a plugin, pass, hook or custom-op lowering contributes, for compile cache keys.

A digest of the one file that defines a pass missed every module it imports: editing a helper that a custom op's
lowering calls reused the old binary in the next process. Here an object's identity is its module's source and,
transitively, every module that source imports (at the top or inside functions, as written in the file), except
the standard library, Triton and the SDK (their versions and sources are in the key already); a module installed
from a distribution counts as that distribution's name and version, not its files. A hook's captured values count
where they are plain data; anything else it depends on it states through a `cache_key()` it carries.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import inspect
import os
import site
import sys
import sysconfig
from importlib import metadata
from typing import Any

#: top-level packages whose code is in the key through other parts (Triton's version, the SDK's source digest)
OWN_KEYS = frozenset({"triton", "triton_backend_sdk"})
#: closure values that are captured into the key as they are
PLAIN = (int, float, str, bytes, bool, type(None))


@functools.cache
def _installed_roots() -> tuple[str, ...]:
    roots = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    roots.update(site.getsitepackages() if hasattr(site, "getsitepackages") else [])
    return tuple(sorted(os.path.realpath(r) + os.sep for r in roots))


@functools.cache
def _distributions() -> dict[str, list[str]]:
    return metadata.packages_distributions()


def _file_sha(path: str) -> str:
    from .plugins import file_digest

    return file_digest(path)


def _module_path(name: str) -> str | None:
    mod = sys.modules.get(name)
    path = getattr(mod, "__file__", None) if mod is not None else None
    if path is None and mod is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError, AttributeError):
            return None
        path = spec.origin if spec is not None and spec.has_location else None
    return os.path.realpath(path) if path and os.path.exists(path) else None


def _distribution_of(name: str) -> str:
    top = name.partition(".")[0]
    dists = _distributions().get(top, [])
    if not dists:
        return f"{top}==?"
    return ",".join(f"{d}=={metadata.version(d)}" for d in sorted(dists))


def _imports(name: str, path: str) -> set[str]:
    st = os.stat(path)
    return set(_imports_cached(name, path, st.st_size, st.st_mtime_ns))


@functools.cache
def _imports_cached(name: str, path: str, size: int, mtime: int) -> frozenset[str]:
    """Module names the file imports (absolute, relative ones resolved; `from pkg import sub` gives `pkg.sub` when
    that is a module); parsed once per version of the file."""
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return frozenset()
    is_pkg = os.path.basename(path).startswith("__init__.")
    package = name if is_pkg else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                base_parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                base = ".".join([*base_parts, node.module] if node.module else base_parts)
            else:
                base = node.module or ""
            if not base:
                continue
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in sys.modules)
    return frozenset(found)


def _skipped(name: str) -> bool:
    top = name.partition(".")[0]
    return top in sys.stdlib_module_names or top in OWN_KEYS


def module_closure(name: str) -> tuple[tuple[str, str], ...]:
    """(module, digest or distribution) for `name` and everything it imports transitively that the key needs;
    walked on each call (a plugin's and a custom op's once per registry change, where the registry caches them; an
    injected item's once per compile, in the backend's hash), each file parsed once per version."""
    out: dict[str, str] = {}
    todo = [name]
    while todo:
        mod = todo.pop()
        if mod in out or _skipped(mod):
            continue
        path = _module_path(mod)
        if path is None:
            continue
        if path.startswith(_installed_roots()):
            out[mod] = _distribution_of(mod)
            continue
        out[mod] = _file_sha(path)
        if path.endswith(".py"):
            todo.extend(sorted(_imports(mod, path) - out.keys()))
    return tuple(sorted(out.items()))


def _module_of(obj: Any) -> str | None:
    target = getattr(obj, "function", obj)
    mod = inspect.getmodule(target)
    if mod is None and not isinstance(target, type):
        mod = inspect.getmodule(type(target))
    return mod.__name__ if mod is not None else None


def captured(obj: Any) -> str:
    """A function's (or a callable object's `__call__`'s) closure values, where they are plain data."""
    fn = getattr(obj, "function", obj)
    fn = getattr(fn, "__func__", fn)
    cells = getattr(fn, "__closure__", None) or ()
    names = getattr(getattr(fn, "__code__", None), "co_freevars", ())
    parts = []
    for var, cell in zip(names, cells):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(value, PLAIN) or (isinstance(value, tuple) and all(isinstance(v, PLAIN) for v in value)):
            parts.append(f"{var}={value!r}")
    return ",".join(parts)


def code_identity(obj: Any) -> str:
    """What an injected pass or hook, or a custom op's lowering, contributes to the key: its qualified name, the
    digests of its module's import closure, its plain captured values and its own `cache_key()`, if any."""
    target = getattr(obj, "function", obj)
    qual = getattr(target, "__qualname__", None) or type(target).__qualname__
    mod = _module_of(obj)
    closure = module_closure(mod) if mod else ()
    digest = hashlib.sha256(repr(closure).encode()).hexdigest()[:16]
    key = getattr(obj, "cache_key", None)
    extra = f";key={key()}" if callable(key) else ""
    cap = captured(obj)
    return f"{mod}.{qual}@{digest}" + (f";captured({cap})" if cap else "") + extra


__all__ = ["captured", "code_identity", "module_closure"]
