"""Corrupted Triton cache entries of SDK kernels: never run, never a crash, never a silent wrong result.

Triton reads a cache hit back from its files unchecked; before sdk/integrity.py an opencl container with edited
OpenCL C ran and gave wrong values, another kernel's binary copied under this kernel's name ran that kernel, flipped
bytes in cpu_ref's object crashed the process (SIGILL/SIGSEGV), and the rest failed as `struct.error`,
`UnicodeDecodeError`, LLVM's 'section header table goes past the end of the file' naming no file. Now the metadata
carries digests of the binary and of itself: a mismatch recompiles with a `CacheIntegrityWarning` naming the file
(and the entry is rewritten), or, where the entry's own options cannot be trusted to recompile it, or a stage file
cannot be read at all, raises a `CacheIntegrityError` naming the file and the entry to delete.

The cases of a backend run in one subprocess (a crash fails the tests, not the session): it compiles into an empty
cache and keeps the entry's files; each case restores them, corrupts the entry, forgets the in-memory kernels,
launches again (the disk cache hit), then once more. All of it in one process, so every launch looks up the very
entry the first compile wrote (the cache key includes the SDK's sources).

Out of the SDK's reach, and asserted as such (these cases pass on the code before the digests too): a metadata file
that is not valid JSON or not UTF-8 fails inside Triton's `CompiledKernel.__init__` (`json.loads(metadata_path.
read_text())`) before any SDK code runs for that entry, with Triton's JSONDecodeError/UnicodeDecodeError.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    r'''
    import glob, hashlib, json, os, shutil, struct, sys, warnings
    backend, cases = sys.argv[1], sys.argv[2].split(",")
    import torch
    import triton
    import triton.language as tl
    import triton_backend_sdk
    from triton_backend_sdk.plugins import drop_jit_caches

    triton_backend_sdk.use(backend)
    EXT = {"cpu_ref": "obj", "opencl": "clbin"}[backend]


    @triton.jit
    def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


    @triton.jit
    def mul_kernel(x, y, out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out + offs, tl.load(x + offs, mask=m) * tl.load(y + offs, mask=m), mask=m)


    n = 100
    x = torch.arange(n, dtype=torch.float32)
    y = torch.full((n,), 3.0)


    def launch(kernel):
        out = torch.zeros(n)
        compiled = kernel[(2,)](x, y, out, n, BLOCK=64)
        return out, compiled


    def text_section(obj):
        """(offset, size) of the largest .text* section of an ELF64 little-endian object."""
        shoff, = struct.unpack_from("<Q", obj, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", obj, 0x3A)
        def sh(i):
            return struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * shentsize)
        strtab = sh(shstrndx)[4]
        best = None
        for i in range(shnum):
            name_off, _, _, _, off, size = sh(i)[:6]
            name = obj[strtab + name_off : obj.index(b"\0", strtab + name_off)]
            if name.startswith(b".text") and size and (best is None or size > best[1]):
                best = (off, size)
        return best


    def corrupt(case, files, other):
        name = "add_kernel"
        binary = files[f"{name}.{EXT}"]
        meta = files[f"{name}.json"]
        data = bytearray(open(binary, "rb").read())
        if case == "binary_flipped":
            if backend == "cpu_ref":  # the kernel's code itself
                off, size = text_section(bytes(data))
                for i in range(off, off + min(size, 32)):
                    data[i] ^= 0xFF
            else:
                for i in range(len(data) // 3, len(data) // 3 + 64):
                    data[i] ^= 0xFF
            open(binary, "wb").write(data)
            return binary
        if case == "binary_truncated":
            open(binary, "wb").write(data[: len(data) // 2])
            return binary
        if case == "binary_swapped":
            shutil.copy(other[f"mul_kernel.{EXT}"], binary)
            return binary
        if case == "source_edited":  # the OpenCL C inside the container: the add becomes a subtraction
            i = data.rfind(b" + ")
            assert i > 0, "no ' + ' in the kernel source"
            data[i : i + 3] = b" - "
            open(binary, "wb").write(data)
            return binary
        md = json.load(open(meta))
        if case == "metadata_field":  # valid JSON, a field the launcher reads
            if backend == "cpu_ref":
                md["cpu_ref_asserts"] = not md["cpu_ref_asserts"]
            else:
                md["opencl_local_size"] = 2 * md["opencl_local_size"]
            open(meta, "w").write(json.dumps(md))
            return meta
        if case == "metadata_name":  # valid JSON: the name Triton loads the binary by
            md["name"] = "renamed_kernel"
            open(meta, "w").write(json.dumps(md))
            return meta
        if case == "metadata_option":  # valid JSON, an option: it no longer reproduces the entry's cache key
            md["num_warps"] = 2 * md["num_warps"]
            open(meta, "w").write(json.dumps(md))
            return meta
        if case == "metadata_truncated":
            text = open(meta).read()
            open(meta, "w").write(text[: len(text) // 2])
            return meta
        if case == "metadata_not_utf8":
            raw = bytearray(open(meta, "rb").read())
            raw[10] = 0xFF
            open(meta, "wb").write(raw)
            return meta
        if case == "stage_text_not_utf8":
            ttir = files[f"{name}.ttir"]
            raw = bytearray(open(ttir, "rb").read())
            raw[20] = 0xFF
            open(ttir, "wb").write(raw)
            return ttir
        raise SystemExit(f"unknown case {case}")


    def attempt():
        drop_jit_caches()
        got = {}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out, compiled = launch(add_kernel)
                got["result"] = "ok" if torch.equal(out, x + y) else "wrong"
                files = compiled.metadata_group
                md = json.load(open(files[f"add_kernel.json"]))
                got["binary_matches"] = (
                    hashlib.sha256(open(files[f"add_kernel.{EXT}"], "rb").read()).hexdigest()
                    == md.get("sdk_binary_sha256")
                )
            except Exception as e:
                got["result"] = "error"
                got["error"] = f"{type(e).__module__}.{type(e).__name__}: {e}"
        got["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught if "Cache" in w.category.__name__]
        return got


    _, compiled = launch(add_kernel)
    other = launch(mul_kernel)[1].metadata_group
    files = dict(compiled.metadata_group)
    entry = os.path.dirname(files["add_kernel.json"])
    pristine = {}
    for f in os.listdir(entry):
        with open(os.path.join(entry, f), "rb") as fh:
            pristine[f] = fh.read()
    for case in cases:
        for f, data in pristine.items():
            with open(os.path.join(entry, f), "wb") as fh:
                fh.write(data)
        path = corrupt(case, files, other)
        first = attempt()
        report = {"case": case, "path": path, "first": first, "again": attempt()}
        print("REPORT " + json.dumps(report), flush=True)
    '''
)

BINARY_CASES = ["binary_flipped", "binary_truncated", "binary_swapped"]
RECOMPILED = {*BINARY_CASES, "source_edited", "metadata_field", "metadata_name"}
NAMED_ERROR = {"metadata_option", "stage_text_not_utf8"}
#: inside Triton before SDK code runs: Triton's own exception, asserted not to be a crash or a result
TRITON_ONLY = {"metadata_truncated": "JSONDecodeError", "metadata_not_utf8": "UnicodeDecodeError"}
CASES = [
    *[("cpu_ref", c) for c in BINARY_CASES],
    *[("opencl", c) for c in [*BINARY_CASES, "source_edited"]],
    *[
        (b, c)
        for b in ("cpu_ref", "opencl")
        for c in ["metadata_field", "metadata_name", "metadata_option", *TRITON_ONLY]
    ],
    *[(b, "stage_text_not_utf8") for b in ("cpu_ref", "opencl")],
]


_REPORTS: dict[str, dict] = {}


def _reports(backend: str, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Every case of `backend`, run in one child (see the module docstring); a case where it died says so."""
    from conftest import _unavailable

    reason = _unavailable(backend)
    if reason:
        pytest.skip(reason)
    if backend in _REPORTS:
        return _REPORTS[backend]
    reports: dict = {}
    todo = [c for b, c in CASES if b == backend]
    while todo:  # a child that dies (the code before the digests: SIGILL) is reported, the next child goes on
        tmp = tmp_path_factory.mktemp(f"cache_integrity_{backend}")
        script = tmp / "child.py"
        script.write_text(CHILD)
        env = dict(os.environ, TRITON_CACHE_DIR=str(tmp / "cache"))
        env.pop("TRITON_DEFAULT_BACKEND", None)
        env.pop("TRITON_ALWAYS_COMPILE", None)
        proc = subprocess.run(
            [sys.executable, str(script), backend, ",".join(todo)],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        for line in proc.stdout.splitlines():
            if line.startswith("REPORT "):
                r = json.loads(line[len("REPORT ") :])
                reports[r["case"]] = r
        done = [c for c in todo if c in reports]
        if len(done) == len(todo):
            break
        if not done and proc.returncode == 0:
            raise AssertionError(f"child reported nothing:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        died = todo[len(done)]
        reports[died] = {"died": f"rc {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"}
        todo = todo[len(done) + 1 :]
    _REPORTS[backend] = reports
    return reports


@pytest.mark.parametrize(("backend_name", "case"), CASES, ids=[f"{b}-{c}" for b, c in CASES])
def test_corrupted_cache_entry(backend_name: str, case: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    reports = _reports(backend_name, tmp_path_factory)
    report = reports[case]
    assert "died" not in report, f"the child died in this case: {report['died']}"
    path, first, again = report["path"], report["first"], report["again"]
    assert first["result"] != "wrong" and again["result"] != "wrong", report
    if case in RECOMPILED:
        assert first["result"] == "ok", report
        assert len(first["warnings"]) == 1, report
        assert first["warnings"][0].startswith("CacheIntegrityWarning:") and path in first["warnings"][0], report
        assert "recompiling 'add_kernel'" in first["warnings"][0], report
        # the entry was rewritten: the next launch is a clean hit
        assert again == {"result": "ok", "binary_matches": True, "warnings": []}, report
    elif case in NAMED_ERROR:
        assert first["result"] == "error", report
        assert first["error"].startswith("triton_backend_sdk.errors.CacheIntegrityError:"), report
        assert path in first["error"] and "rm -r" in first["error"], report
        if case == "metadata_option":
            # the entry was dropped from Triton's index (and the in-memory kernel forgotten): a retry recompiles
            assert "the options it records do not reproduce its cache key" in first["error"], report
            assert again == {"result": "ok", "binary_matches": True, "warnings": []}, report
        else:
            assert again["result"] == "error" and path in again["error"], report
    else:
        assert first["result"] == "error" and TRITON_ONLY[case] in first["error"], report


def test_compiled_metadata_records_digests(backend) -> None:
    """Every SDK kernel's metadata carries both digests, and they match the binary and the metadata Triton wrote."""
    import hashlib

    import torch
    import triton
    import triton.language as tl
    from triton_backend_sdk.integrity import BINARY_KEY, METADATA_KEY, metadata_digest

    @triton.jit
    def _copy(x, y, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)

    x = torch.arange(8, dtype=torch.float32)
    y = torch.zeros(8)
    compiled = _copy[(1,)](x, y, 8, BLOCK=8)
    torch.testing.assert_close(y, x)
    md = compiled.metadata
    assert getattr(md, BINARY_KEY) == hashlib.sha256(compiled.kernel).hexdigest()
    assert getattr(md, METADATA_KEY) == metadata_digest(md)
    with open(compiled.metadata_group[f"{compiled.name}.json"]) as f:
        assert metadata_digest(json.load(f)) == getattr(md, METADATA_KEY)


def test_no_binary_digest_under_a_kernel_override(monkeypatch) -> None:
    """An override may replace the binary after the stage: no digest is recorded for it (the metadata's still is)."""
    from triton_backend_sdk.integrity import BINARY_KEY, record_binary

    md: dict = {"ir_override": "/some/where/k.obj"}
    record_binary(md, b"\x7fELF", "obj")
    assert md[BINARY_KEY] is None
    md = {}
    record_binary(md, b"\x7fELF", "obj")
    assert md[BINARY_KEY] is not None
    monkeypatch.setenv("TRITON_KERNEL_OVERRIDE", "1")
    record_binary(md, b"\x7fELF", "obj")
    assert md[BINARY_KEY] is None


def test_error_names_file_and_survives_copy() -> None:
    import copy
    import pickle

    from triton_backend_sdk.errors import CacheIntegrityError, SDKError

    e = CacheIntegrityError("/c/E/k.obj", "the kernel binary does not match its digest", "/c/E")
    assert isinstance(e, SDKError) and "/c/E/k.obj" in str(e) and "rm -r '/c/E'" in str(e)
    assert str(copy.deepcopy(e)) == str(e) == str(pickle.loads(pickle.dumps(e)))
