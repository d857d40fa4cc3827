"""Native plugins (csrc/include/triton_backend_sdk/plugin.h): built with the system C compiler during the test,
loaded through the SDK, called from cpu_ref kernels through `tl.extern_elementwise`, and hashed into the cache key."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest
import torch
import triton
import triton.language as tl
import triton_backend_sdk
from triton.compiler import ASTSource
from triton_backend_sdk import plugins
from triton_backend_sdk.errors import ToolError, UnsupportedError
from triton_backend_sdk.native import NativePluginError, load_native
from triton_backend_sdk.plugins import Plugin, PluginError

INCLUDE = plugins.include_dir()
CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler (cc) on PATH to build the test plugins")

PLUGIN_C = """
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "triton_backend_sdk/plugin.h"

static float tsdkn_{tag}_softsign(float x) {{ return x / (1.0f + fabsf(x)) * {scale}f; }}
static double tsdkn_{tag}_cube(double x) {{ return x * x * x; }}
static int initialised = 0;
static int32_t init(void) {{ initialised = 1; return {init_rc}; }}
static void teardown(void) {{  /* proves teardown runs at exit: writes the file $TSDKN_TEARDOWN names */
    const char *path = getenv("TSDKN_TEARDOWN");
    FILE *f = path && initialised ? fopen(path, "w") : NULL;
    if (f) {{ fputs("{tag}", f); fclose(f); }}
}}

static const tsdk_symbol symbols[] = {{
    {{"tsdkn_{tag}_softsign", (void *)tsdkn_{tag}_softsign}},
    {{"tsdkn_{tag}_cube", (void *)tsdkn_{tag}_cube}},
}};
static const tsdk_plugin plugin = {{
    {api}, sizeof(tsdk_plugin), "tsdkn_{tag}", "{version}", 2, symbols, init, teardown,
}};
TSDK_EXPORT const tsdk_plugin *tsdk_plugin_info(void) {{ return &plugin; }}
"""


def build_plugin(
    directory,
    tag: str,
    *,
    scale: float = 1.0,
    version: str = "1.0",
    api: str = "TSDK_PLUGIN_API_VERSION",
    init_rc: int = 0,
    name: str | None = None,
) -> str:
    src = os.path.join(directory, f"{name or tag}.c")
    out = os.path.join(directory, f"lib{name or tag}.so")
    with open(src, "w") as f:
        f.write(PLUGIN_C.format(tag=tag, scale=scale, version=version, api=api, init_rc=init_rc))
    subprocess.run(
        [CC, "-shared", "-fPIC", "-O2", "-I", INCLUDE, src, "-o", out, "-lm"],
        check=True,
        capture_output=True,
        text=True,
    )
    return out


@tl.core.extern
def softsign_a(x, _semantic=None):  # type: ignore[no-untyped-def]
    """A C function of plugin `tsdkn_a`, called per element (what Triton's libdevice wrappers do)."""
    return tl.core.extern_elementwise(
        "", "", [x], {(tl.float32,): ("tsdkn_a_softsign", tl.float32)}, is_pure=True, _semantic=_semantic
    )


@tl.core.extern
def cube_a(x, _semantic=None):  # type: ignore[no-untyped-def]
    return tl.core.extern_elementwise(
        "", "", [x], {(tl.float64,): ("tsdkn_a_cube", tl.float64)}, is_pure=True, _semantic=_semantic
    )


@tl.core.extern
def softsign_missing(x, _semantic=None):  # type: ignore[no-untyped-def]
    return tl.core.extern_elementwise(
        "", "", [x], {(tl.float32,): ("tsdkn_missing_softsign", tl.float32)}, is_pure=True, _semantic=_semantic
    )


@triton.jit
def native_kernel(x_ptr, d_ptr, out_ptr, dout_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, softsign_a(tl.load(x_ptr + offs, mask=mask)), mask=mask)
    tl.store(dout_ptr + offs, cube_a(tl.load(d_ptr + offs, mask=mask)), mask=mask)


@triton.jit
def missing_kernel(x_ptr, d_ptr, out_ptr, dout_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, softsign_missing(tl.load(x_ptr + offs)))


def _src(kernel) -> ASTSource:  # type: ignore[no-untyped-def]
    return ASTSource(
        kernel,
        {"x_ptr": "*fp32", "d_ptr": "*fp64", "out_ptr": "*fp32", "dout_ptr": "*fp64", "n": "i32", "BLOCK": "constexpr"},
        {"BLOCK": 128},
    )


def test_native_plugin_symbols_are_called_from_cpu_ref_kernels(tmp_path, rng):
    path = build_plugin(tmp_path, "a", scale=2.0)
    plugins.activate(Plugin("tsdkn-a", "1.0", native=(path,)))
    try:
        native = load_native(path)
        assert (native.name, native.version, native.api_version) == ("tsdkn_a", "1.0", 1)
        assert set(native.symbols) == {"tsdkn_a_softsign", "tsdkn_a_cube"}
        n = 300
        x = torch.randn(n, generator=rng)
        d = torch.randn(n, generator=rng, dtype=torch.float64)
        out, dout = torch.empty_like(x), torch.empty_like(d)
        k = triton.compile(_src(native_kernel), target=triton_backend_sdk.target("cpu_ref"))
        assert "tsdkn_a_softsign" in k.asm["llir"]
        k[(3, 1, 1)](x, d, out, dout, n, 128)
        torch.testing.assert_close(out, x / (1 + x.abs()) * 2.0)
        torch.testing.assert_close(dout, d**3)
    finally:
        plugins.deactivate("tsdkn-a")


def test_unresolved_symbol_names_the_symbol_and_the_loaded_plugins(tmp_path):
    with pytest.raises(ToolError, match=r"tsdkn_missing_softsign(.|\n)*symbols from active native plugins"):
        k = triton.compile(_src(missing_kernel), target=triton_backend_sdk.target("cpu_ref"))
        k._init_handles()


def test_wrong_abi_version_names_both_versions(tmp_path):
    path = build_plugin(tmp_path, "v7", api="7u")
    with pytest.raises(NativePluginError, match=r"plugin ABI version 7; this SDK reads ABI version\(s\) 1"):
        load_native(path)
    with pytest.raises(NativePluginError, match="ABI version 7"):
        plugins.activate(Plugin("tsdkn-v7", "1.0", native=(path,)))
    assert "tsdkn-v7" not in {a.plugin.name for a in plugins.active_plugins()}


def test_failing_init_and_missing_entry_point_are_refused(tmp_path):
    with pytest.raises(NativePluginError, match=r"tsdkn_bad 1\.0 .*init\(\) returned 3"):
        load_native(build_plugin(tmp_path, "bad", init_rc=3))
    lib = tmp_path / "plain.c"
    lib.write_text("int nothing(void) { return 0; }\n")
    subprocess.run([CC, "-shared", "-fPIC", str(lib), "-o", str(tmp_path / "libplain.so")], check=True)
    with pytest.raises(NativePluginError, match="does not export tsdk_plugin_info"):
        load_native(str(tmp_path / "libplain.so"))


def test_symbol_clash_between_plugins_names_both(tmp_path):
    one = build_plugin(tmp_path, "dup", name="dup1")
    two = build_plugin(tmp_path, "dup", name="dup2")
    plugins.activate(Plugin("tsdkn-dup1", "1.0", native=(one,)))
    try:
        with pytest.raises(PluginError, match=r"tsdkn_dup_softsign.*tsdkn-dup2.*already defined by tsdkn-dup1"):
            plugins.activate(Plugin("tsdkn-dup2", "1.0", native=(two,)))
    finally:
        plugins.deactivate("tsdkn-dup1")


def test_native_library_content_is_in_the_cache_key(tmp_path):
    make = triton.compiler.make_backend
    target = triton_backend_sdk.target("cpu_ref")
    keys = []
    for i, scale in enumerate((1.0, 1.0, 3.0)):
        d = tmp_path / str(i)
        d.mkdir()
        plugins.activate(Plugin("tsdkn-key", "1.0", native=(build_plugin(d, "key", scale=scale),)))
        try:
            keys.append(make(target).hash())
        finally:
            plugins.deactivate("tsdkn-key")
    assert keys[0] == keys[1], "the same library content must give the same key"
    assert keys[2] != keys[0], "a rebuilt library with other code must give a new key"


RUN = textwrap.dedent("""
    import sys, torch, triton, triton.language as tl, triton_backend_sdk
    from triton.compiler import ASTSource
    from triton_backend_sdk import plugins

    plugins.activate(plugins.Plugin("tsdkn-proc", "1.0", native=(sys.argv[1],)))

    @tl.core.extern
    def softsign(x, _semantic=None):
        return tl.core.extern_elementwise("", "", [x], {(tl.float32,): ("tsdkn_proc_softsign", tl.float32)},
                                          is_pure=True, _semantic=_semantic)

    @triton.jit
    def k(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, softsign(tl.load(x_ptr + offs)))

    x = torch.linspace(-3, 3, 64)
    out = torch.empty_like(x)
    k[(1,)](x, out, BLOCK=64)
    torch.testing.assert_close(out, x / (1 + x.abs()) * float(sys.argv[2]))
    from triton_backend_sdk.backend import source_digest
    print("SOURCES", source_digest("triton_backend_sdk.backends.cpu_ref.compiler"))
""")


def test_changed_plugin_recompiles_and_unchanged_does_not(tmp_path):
    """Fresh processes sharing one Triton cache: the same library hits the cache, a rebuilt one at the same path
    compiles again (the dump directory is written only when stages run)."""
    script = tmp_path / "run_native.py"  # Triton reads a jit function's source from its file
    script.write_text(RUN)
    for attempt in range(3):
        compiled, sources = _three_runs(tmp_path / str(attempt), script)
        if len(set(sources)) == 1:
            break
        # the SDK's own sources (part of the key) changed between the runs: someone is editing this checkout
    else:
        pytest.skip("the SDK sources kept changing during the test, so cache hits cannot be asserted")
    assert compiled == [True, False, True]


def _three_runs(work, script) -> tuple[list[bool], list[str]]:  # type: ignore[no-untyped-def]
    cache, dump, lib_dir = work / "cache", work / "dump", work / "lib"
    lib_dir.mkdir(parents=True)
    env = dict(os.environ, TRITON_CACHE_DIR=str(cache), TRITON_SDK_DUMP_DIR=str(dump))
    env.pop("TRITON_ALWAYS_COMPILE", None)
    compiled, sources = [], []
    for i, scale in enumerate((1.0, 1.0, 5.0)):
        path = build_plugin(lib_dir, "proc", scale=scale)
        shutil.rmtree(dump, ignore_errors=True)
        env["TSDKN_TEARDOWN"] = str(work / f"teardown{i}")
        r = subprocess.run(
            [sys.executable, str(script), path, str(scale)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert r.returncode == 0, r.stderr[-3000:]
        compiled.append(dump.exists())
        sources.append(r.stdout.split("SOURCES")[-1].strip())
        assert (work / f"teardown{i}").read_text() == "proc", "teardown() did not run at exit"
    return compiled, sources


MARKING_C = """
#include <stdio.h>
#include <stdlib.h>
#include "triton_backend_sdk/plugin.h"

static float {sym}(float x) {{ return x + 1.0f; }}
static int32_t init(void) {{  /* proves whether init ran: writes the file $TSDKN_INIT_MARK names */
    const char *path = getenv("TSDKN_INIT_MARK");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (f) {{ fputs("{tag}\\n", f); fclose(f); }}
    return 0;
}}
static const tsdk_symbol symbols[] = {{ {{"{sym}", (void *){sym}}} }};
static const tsdk_plugin plugin = {{
    TSDK_PLUGIN_API_VERSION, sizeof(tsdk_plugin), "tsdkn_{tag}", "1.0", 1, symbols, init, NULL,
}};
TSDK_EXPORT const tsdk_plugin *tsdk_plugin_info(void) {{ return &plugin; }}
"""


def _marking_plugin(directory, tag: str, sym: str) -> str:
    src, out = os.path.join(directory, f"{tag}.c"), os.path.join(directory, f"lib{tag}.so")
    with open(src, "w") as f:
        f.write(MARKING_C.format(tag=tag, sym=sym))
    subprocess.run([CC, "-shared", "-fPIC", "-I", INCLUDE, src, "-o", out], check=True, capture_output=True)
    return out


def _marks(path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def test_a_symbol_that_shadows_libm_is_refused_before_init_runs(tmp_path, monkeypatch):
    """A plugin exporting `expm1f` would replace libm's for every cpu_ref kernel (external calls resolve against the
    plugins first): refused, naming the library that defines it, and its init never ran."""
    mark = tmp_path / "init.txt"
    monkeypatch.setenv("TSDKN_INIT_MARK", str(mark))
    lib = _marking_plugin(tmp_path, "shadow", "expm1f")
    with pytest.raises(NativePluginError, match=r"symbol 'expm1f' is already defined by libm\.so"):
        plugins.activate(Plugin("tsdkn-shadow", "1.0", native=(lib,)))
    assert _marks(mark) == []
    assert "tsdkn-shadow" not in {a.plugin.name for a in plugins.active_plugins()}


def test_a_plugin_refused_for_a_clash_has_not_run_its_init(tmp_path, monkeypatch):
    mark = tmp_path / "init.txt"
    monkeypatch.setenv("TSDKN_INIT_MARK", str(mark))
    first = _marking_plugin(tmp_path, "clash1", "tsdkn_clash_add1")
    second = _marking_plugin(tmp_path, "clash2", "tsdkn_clash_add1")
    plugins.activate(Plugin("tsdkn-clash1", "1.0", native=(first,)))
    try:
        with pytest.raises(PluginError, match=r"tsdkn_clash_add1.*already defined by tsdkn-clash1"):
            plugins.activate(Plugin("tsdkn-clash2", "1.0", native=(second,)))
        assert _marks(mark) == ["clash1"]
    finally:
        plugins.deactivate("tsdkn-clash1")
    plugins.activate(Plugin("tsdkn-clash2", "1.0", native=(second,)))  # once the clash is gone it loads, once
    try:
        assert _marks(mark) == ["clash1", "clash2"]
    finally:
        plugins.deactivate("tsdkn-clash2")


SIGNED_C = """
#include <stddef.h>
#include "triton_backend_sdk/plugin.h"

static int32_t tsdkn_{tag}_twice(int32_t x) {{ return 2 * x + 1; }}
static float tsdkn_{tag}_half(float x) {{ return 0.5f * x; }}
static const tsdk_symbol symbols[] = {{
    {{"tsdkn_{tag}_twice", (void *)tsdkn_{tag}_twice}},
    {{"tsdkn_{tag}_half", (void *)tsdkn_{tag}_half}},
}};
static const char *const signatures[] = {{"{twice}", "float(float)"}};
static const tsdk_plugin plugin = {{
    TSDK_PLUGIN_API_VERSION, {size}, "tsdkn_{tag}", "1.0", 2, symbols, NULL, NULL, signatures,
}};
TSDK_EXPORT const tsdk_plugin *tsdk_plugin_info(void) {{ return &plugin; }}
"""


def build_signed(directory, tag: str, twice: str = "int32_t(int32_t)", size: str = "sizeof(tsdk_plugin)") -> str:
    src, out = os.path.join(directory, f"{tag}.c"), os.path.join(directory, f"lib{tag}.so")
    with open(src, "w") as f:
        f.write(SIGNED_C.format(tag=tag, twice=twice, size=size))
    subprocess.run([CC, "-shared", "-fPIC", "-I", INCLUDE, src, "-o", out], check=True, capture_output=True)
    return out


@tl.core.extern
def twice_as_int(x, _semantic=None):  # type: ignore[no-untyped-def]
    return tl.core.extern_elementwise(
        "", "", [x], {(tl.int32,): ("tsdkn_sig_twice", tl.int32)}, is_pure=True, _semantic=_semantic
    )


@tl.core.extern
def twice_as_float(x, _semantic=None):  # type: ignore[no-untyped-def]
    return tl.core.extern_elementwise(
        "", "", [x], {(tl.float32,): ("tsdkn_sig_twice", tl.float32)}, is_pure=True, _semantic=_semantic
    )


@triton.jit
def int_call_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, twice_as_int(tl.load(x_ptr + offs, mask=m)), mask=m)


@triton.jit
def float_call_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, twice_as_float(tl.load(x_ptr + offs, mask=m)), mask=m)


def test_native_signatures_are_checked_against_the_kernels_declaration(tmp_path):
    """An int32 function declared as float by the kernel ran with garbage; with the library's signature it is a
    compile-time error naming both prototypes, and the right declaration runs."""
    path = build_signed(tmp_path, "sig")
    assert load_native(path).signatures == {"tsdkn_sig_twice": ("i32", ("i32",)), "tsdkn_sig_half": ("f32", ("f32",))}
    plugins.activate(Plugin("tsdkn-sig", "1.0", native=(path,)))
    try:
        sig = {"x_ptr": "*i32", "out_ptr": "*i32", "n": "i32", "BLOCK": "constexpr"}
        k = triton.compile(ASTSource(int_call_kernel, sig, {"BLOCK": 64}), target=triton_backend_sdk.target("cpu_ref"))
        x = torch.randint(-1000, 1000, (50,), dtype=torch.int32)
        out = torch.empty_like(x)
        k[(1, 1, 1)](x, out, 50, 64)
        assert torch.equal(out, 2 * x + 1)
        fsig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
        with pytest.raises(
            UnsupportedError, match=r"'tsdkn_sig_twice' as f32\(f32\), but plugin tsdkn-sig .* declares it i32\(i32\)"
        ):
            triton.compile(
                ASTSource(float_call_kernel, fsig, {"BLOCK": 64}), target=triton_backend_sdk.target("cpu_ref")
            )
    finally:
        plugins.deactivate("tsdkn-sig")


def test_malformed_signature_refuses_the_load_and_an_older_layout_still_loads(tmp_path):
    with pytest.raises(NativePluginError, match=r"tsdkn_bad_sig.*'tsdkn_bad_sig_twice'.*\['int', 'int'\] not among"):
        load_native(build_signed(tmp_path, "bad_sig", twice="int(int)"))
    # built before the field was appended: struct_size ends before `signatures`, which must not be read
    old = load_native(build_signed(tmp_path, "old_sig", twice="int(int)", size="offsetof(tsdk_plugin, signatures)"))
    assert set(old.symbols) == {"tsdkn_old_sig_twice", "tsdkn_old_sig_half"} and old.signatures == {}
