"""Cache integrity: an SDK kernel's metadata carries digests of its binary and of itself, checked before use.

Triton keeps a compiled kernel as files of one cache entry (TRITON_CACHE_DIR/<entry>/: a file per stage, the
metadata `<name>.json`, the index `__grp__<name>.json`) and reads them back on a cache hit without checking them: an
edited, truncated or swapped binary would be loaded and run.

Recorded by the stages `TargetBackend.add_stages` gives Triton (`record_digests`, after the stages-inspection hook):
the binary stage puts `sdk_binary_sha256` (sha256 of the bytes Triton stores and hands to the driver; None where a
kernel override may replace them after the stage) into the metadata, the last stage `sdk_metadata_sha256` (of the
metadata as Triton then writes it, this field excepted). Checked, for every SDK backend, before anything of the entry is used:

- `TargetBackend.pack_metadata`, the first SDK code of a cache hit, runs before Triton reads the stage files as
  text: a file that is not UTF-8 is a `CacheIntegrityError` naming it (no recompile: no source is at hand there);
- `SDKDriver._checked_launcher`, before the launcher is built from the metadata: the metadata digest;
- `SDKUtils.load_binary`, before the driver loads the bytes: the binary digest.

A mismatch never runs the payload: the kernel is recompiled from its source (the `@triton.jit` function or IR file
Triton kept), with a `CacheIntegrityWarning` naming the file, and the entry is rewritten. Where that is impossible
(another kind of source; a recompile that does not reproduce the entry's cache key or kernel) it is a
`CacheIntegrityError` naming the file and the entry to delete.

Out of reach: a metadata file that is not UTF-8 or not JSON fails inside Triton (`CompiledKernel.__init__`:
`json.loads(metadata_path.read_text())`) before any SDK code runs for that entry; a corrupted index file is a miss
for Triton (`FileCacheManager.get_group`), which recompiles.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import warnings
from dataclasses import dataclass
from typing import Any

from .errors import CacheIntegrityError, CacheIntegrityWarning

#: metadata field: sha256 (hex) of the kernel binary, or None where it was not recorded (a kernel override)
BINARY_KEY = "sdk_binary_sha256"
#: metadata field: sha256 (hex) of the canonical JSON of every other metadata field
METADATA_KEY = "sdk_metadata_sha256"


def binary_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _as_dict(metadata: Any) -> dict:
    if isinstance(metadata, dict):
        return dict(metadata)
    return dict(metadata._asdict())


def metadata_digest(metadata: Any) -> str:
    """Digest of the metadata as Triton stores it (`json.dumps(metadata, default=vars)`), read back: the metadata dict
    of a compile and the `KernelMetadata` Triton rebuilds from its file digest alike."""
    md = {k: v for k, v in _as_dict(metadata).items() if k != METADATA_KEY}
    canonical = json.dumps(json.loads(json.dumps(md, default=vars)), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


# ---- recording (the pipeline's stages) ----------------------------------------------------------------------------


def record_digests(stages: dict, binary_ext: str) -> None:
    """Wrap Triton's `stages` dict, once it is complete: the stage named `binary_ext` records the binary's digest, the
    last stage (nothing changes the metadata between it and Triton writing the metadata file) the metadata's."""
    names = list(stages)
    if not names:
        return
    last = names[-1]
    for name in {binary_ext, last} & set(names):
        stages[name] = _recording(stages[name], binary_ext if name == binary_ext else None, name == last)


def _recording(fn: Any, binary_ext: str | None, last: bool) -> Any:
    def run(src: Any, metadata: dict) -> Any:
        out = fn(src, metadata)
        if binary_ext is not None:
            record_binary(metadata, out, binary_ext)
        if last:
            record_metadata(metadata)
        return out

    run.__name__ = getattr(fn, "__name__", "stage")
    return run


def record_binary(metadata: dict, binary: Any, binary_ext: str) -> None:
    """After the binary stage: the digest of what Triton will store as `<name>.<binary_ext>`. A kernel override
    (TRITON_KERNEL_OVERRIDE, or an `ir_override` of this stage) may replace those bytes after the stage, so then no
    digest is recorded and the binary is not checked (its metadata still is)."""
    from triton import knobs

    override = knobs.compilation.override or str(metadata.get("ir_override") or "").endswith(f".{binary_ext}")
    ok = isinstance(binary, (bytes, bytearray)) and not override
    metadata[BINARY_KEY] = binary_digest(bytes(binary)) if ok else None


def record_metadata(metadata: dict) -> None:
    """After the last stage: the digest of the metadata as Triton is about to write it."""
    metadata[METADATA_KEY] = metadata_digest(metadata)


# ---- where an entry's files are ---------------------------------------------------------------------------------


def entry_files(metadata: Any, name: str | None = None) -> dict[str, str] | None:
    """The entry's files (`<name>.<ext>` -> path) through Triton's cache manager, or None where there is none."""
    key = getattr(metadata, "hash", None)
    name = name or getattr(metadata, "name", None)
    if not isinstance(key, str) or not isinstance(name, str) or not name:
        return None
    try:
        from triton.runtime.cache import get_cache_manager

        return get_cache_manager(key).get_group(f"{name[:150]}.json") or None
    except Exception:  # noqa: BLE001 - a key that is not hex, a cache manager without files: nothing to name
        return None


@dataclass
class Entry:
    files: dict[str, str] | None
    name: str

    def path(self, ext: str) -> str:
        """The entry's file of `ext`, or a description of it where the entry was not found."""
        if self.files and f"{self.name[:150]}.{ext}" in self.files:
            return self.files[f"{self.name[:150]}.{ext}"]
        return f"<the {ext} file of kernel {self.name!r} in TRITON_CACHE_DIR>"

    def directory(self) -> str | None:
        if not self.files:
            return None
        return os.path.dirname(next(iter(self.files.values())))


def _entry(metadata: Any, src: Any = None) -> Entry:
    """The entry of `metadata`, found as Triton finds it: by the source's name where the source is known (the name
    in the metadata is itself what might be corrupted)."""
    name = getattr(src, "name", None)
    if not isinstance(name, str) or not name:
        name = str(getattr(metadata, "name", "?"))
    return Entry(entry_files(metadata, name), name)


# ---- checks ---------------------------------------------------------------------------------------------------


def check_text_files(metadata: Any, binary_ext: str) -> None:
    """Triton reads every stage file but the binary as text right after `pack_metadata`: a file that does not decode
    would fail there with a bare UnicodeDecodeError."""
    entry = _entry(metadata)
    for child, path in (entry.files or {}).items():
        if child.endswith((".json", f".{binary_ext}")):
            continue
        try:
            with open(path, "rb") as f:
                f.read().decode("utf-8")
        except UnicodeDecodeError as e:
            raise CacheIntegrityError(
                path, f"this stage file is not UTF-8 text (byte {e.start}); Triton cannot read it", entry.directory()
            ) from None
        except OSError:
            continue


@dataclass
class _Expected:
    """What `load_binary` is to check for the kernel whose launcher `_checked_launcher` just built."""

    src: Any
    metadata: Any
    digest: str | None
    replacement: Any = None  # a recompiled CompiledKernel whose binary is to be loaded instead


_expected = threading.local()


def expect(name: str, item: _Expected | None) -> None:
    """Arm the check of the next `load_binary(name, ...)` in this thread. Triton's `_init_handles` builds the launcher,
    then loads the binary, in one thread; per name, in case a load hook loads other kernels in between."""
    if item is None:
        return
    table = getattr(_expected, "table", None)
    if table is None:
        table = _expected.table = {}
    table[name] = item


def _take(name: str) -> _Expected | None:
    table = getattr(_expected, "table", None)
    return table.pop(name, None) if table else None


def checked_metadata(src: Any, metadata: Any, backend: str) -> tuple[Any, _Expected | None]:
    """For `_checked_launcher`: the metadata to build the launcher from (a recompile's where the entry's metadata does
    not match its digest), and what the binary loaded next must be (for `expect`, once the launcher is built)."""
    stored = getattr(metadata, METADATA_KEY, None)
    if stored is None:
        # no digest recorded: a backend whose stages are not the SDK pipeline's, or a compile that started at the
        # binary; nothing to check against
        return metadata, None
    if metadata_digest(metadata) != stored:
        entry = _entry(metadata, src)
        fresh = _recompile(src, metadata, entry, entry.path("json"), "the metadata does not match its digest", backend)
        return fresh.metadata, _Expected(src, fresh.metadata, None, fresh)
    return metadata, _Expected(src, metadata, getattr(metadata, BINARY_KEY, None))


def checked_binary(name: str, kernel: bytes, backend: str) -> tuple[str, bytes]:
    """For `load_binary`: the (name, bytes) to load: Triton's, where they match the digest its metadata recorded,
    else a recompile's."""
    exp = _take(name)
    if exp is None:
        return name, kernel
    if exp.replacement is not None:
        return exp.replacement.metadata.name, exp.replacement.kernel
    if exp.digest is None or binary_digest(kernel) == exp.digest:
        return name, kernel
    md = exp.metadata
    entry = _entry(md, exp.src)
    ext = _binary_ext(md)
    path = entry.path(ext)
    fresh = _recompile(exp.src, md, entry, path, "the kernel binary does not match the digest in its metadata", backend)
    if _launch_view(fresh.metadata) != _launch_view(md):
        # the launcher was built from the entry's metadata: it must describe the recompiled binary too
        raise CacheIntegrityError(
            path,
            f"the kernel binary does not match its digest, and recompiling {name!r} gave a kernel with other "
            f"metadata than the entry's",
            entry.directory(),
        )
    return fresh.metadata.name, fresh.kernel


def _launch_view(metadata: Any) -> dict:
    md = _as_dict(metadata)
    md.pop(BINARY_KEY, None)
    md.pop(METADATA_KEY, None)
    return json.loads(json.dumps(md, default=vars))


def _binary_ext(metadata: Any) -> str:
    from triton.compiler.compiler import make_backend

    return str(make_backend(metadata.target).binary_ext)


# ---- recompiling -----------------------------------------------------------------------------------------------


def _tuples(value: Any) -> Any:
    """JSON gave lists where the options had tuples (part of the options' hash, so of the cache key)."""
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value


def _recompile(src: Any, metadata: Any, entry: Entry, path: str, what: str, backend: str) -> Any:
    """Compile the kernel again from `src` with the entry's options, into the same entry, and check the result."""
    from triton.compiler.compiler import ASTSource, IRSource
    from triton.compiler.compiler import compile as triton_compile

    name = entry.name
    if isinstance(src, ASTSource):
        source: Any = src
    elif isinstance(src, IRSource):
        source = src.path
    else:
        raise CacheIntegrityError(
            path, f"{what} (and kernel {name!r} has no source to recompile it from)", entry.directory()
        )
    warnings.warn(
        CacheIntegrityWarning(f"Triton cache entry {path}: {what}; not running it: recompiling {name!r} ({backend})"),
        stacklevel=_caller_level(),
    )
    dropped = entry.files is not None and _drop(metadata, entry.name)
    md = _as_dict(metadata)
    options = {k: _tuples(v) for k, v in md.items() if k not in ("target", "hash", BINARY_KEY, METADATA_KEY)}
    fresh = triton_compile(source, target=metadata.target, options=options)
    if fresh.hash != md.get("hash"):
        if dropped:  # the @triton.jit functions keep this CompiledKernel in memory: forget it, so a retry recompiles
            from .plugins import drop_jit_caches

            drop_jit_caches()
        raise CacheIntegrityError(
            path,
            f"{what}, and the options it records do not reproduce its cache key, so they cannot be trusted to "
            f"recompile {name!r}",
            entry.directory(),
            hint=(
                f"the entry was dropped from Triton's index: launch again to recompile it (or delete it: rm -r "
                f"'{entry.directory()}')"
                if dropped
                else None
            ),
        )
    stored = getattr(fresh.metadata, METADATA_KEY, None)
    digest = getattr(fresh.metadata, BINARY_KEY, None)
    if (
        stored is None
        or metadata_digest(fresh.metadata) != stored
        or (digest is not None and binary_digest(fresh.kernel) != digest)
    ):
        raise CacheIntegrityError(
            path, f"{what}, and recompiling {name!r} did not replace the entry", entry.directory()
        )
    return fresh


def _caller_level() -> int:
    """The `stacklevel` of the first frame outside Triton and the SDK (the launch in the user's code)."""
    import sys

    import triton

    inside = tuple(
        os.path.dirname(os.path.abspath(p)) + os.sep for p in (triton.__file__, __file__, _backends_file()) if p
    )
    level, frame = 1, sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(inside):
        frame = frame.f_back
        level += 1
    return level


def _backends_file() -> str | None:
    from . import backends

    return backends.__file__


def _drop(metadata: Any, name: str) -> bool:
    """Empty the entry's index (Triton's cache manager API), so that the recompile misses it and rewrites it."""
    try:
        from triton.runtime.cache import get_cache_manager

        get_cache_manager(metadata.hash).put_group(f"{name[:150]}.json", {})
    except Exception:  # noqa: BLE001 - the recompile then finds the entry again and its check reports it
        return False
    return True
