"""cpu_ref compiles a `.ttgir` file: layouts dropped, layout-only ops forwarded, anything else refused by name."""

from __future__ import annotations

import pytest
import torch
import triton
import triton_backend_sdk
from triton_backend_sdk.backends.cpu_ref.ttgir import is_ttgir, to_ttir

# A 2-D copy that moves both the offsets and the data through layout conversions and a shared-memory round trip,
# then adds a row sum (a reduce whose result has a slice layout) to every element.
TTGIR = """
#blk = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#col = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#sh = #ttg.swizzled_shared<{vec = 4, perPhase = 2, maxPhase = 4, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-warps" = 4 : i32, "ttg.num-ctas" = 1 : i32, "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @rowsum_copy(%x: !tt.ptr<f32>, %z: !tt.ptr<f32>) {
    %n = arith.constant dense<16> : tensor<8x1xi32, #blk>
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32, #ttg.slice<{dim = 1, parent = #blk}>>
    %c = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32, #ttg.slice<{dim = 0, parent = #blk}>>
    %r2 = tt.expand_dims %r {axis = 1 : i32} : tensor<8xi32, #ttg.slice<{dim = 1, parent = #blk}>> -> tensor<8x1xi32, #blk>
    %c2 = tt.expand_dims %c {axis = 0 : i32} : tensor<16xi32, #ttg.slice<{dim = 0, parent = #blk}>> -> tensor<1x16xi32, #blk>
    %rm = arith.muli %r2, %n : tensor<8x1xi32, #blk>
    %rb = tt.broadcast %rm : tensor<8x1xi32, #blk> -> tensor<8x16xi32, #blk>
    %cb = tt.broadcast %c2 : tensor<1x16xi32, #blk> -> tensor<8x16xi32, #blk>
    %off = arith.addi %rb, %cb : tensor<8x16xi32, #blk>
    %xs = tt.splat %x : !tt.ptr<f32> -> tensor<8x16x!tt.ptr<f32>, #blk>
    %xp = tt.addptr %xs, %off : tensor<8x16x!tt.ptr<f32>, #blk>, tensor<8x16xi32, #blk>
    %v = tt.load %xp : tensor<8x16x!tt.ptr<f32>, #blk>
    %buf = ttg.local_alloc %v : (tensor<8x16xf32, #blk>) -> !ttg.memdesc<8x16xf32, #sh, #smem>
    %w = ttg.local_load %buf : !ttg.memdesc<8x16xf32, #sh, #smem> -> tensor<8x16xf32, #blk>
    %s = "tt.reduce"(%w) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      tt.reduce.return %t : f32
    }) : (tensor<8x16xf32, #blk>) -> tensor<8xf32, #ttg.slice<{dim = 1, parent = #blk}>>
    %s2 = tt.expand_dims %s {axis = 1 : i32} : tensor<8xf32, #ttg.slice<{dim = 1, parent = #blk}>> -> tensor<8x1xf32, #blk>
    %sb = tt.broadcast %s2 : tensor<8x1xf32, #blk> -> tensor<8x16xf32, #blk>
    %y = arith.addf %w, %sb : tensor<8x16xf32, #blk>
    %yc = ttg.convert_layout %y : tensor<8x16xf32, #blk> -> tensor<8x16xf32, #col>
    %oc = ttg.convert_layout %off : tensor<8x16xi32, #blk> -> tensor<8x16xi32, #col>
    %zs = tt.splat %z : !tt.ptr<f32> -> tensor<8x16x!tt.ptr<f32>, #col>
    %zp = tt.addptr %zs, %oc : tensor<8x16x!tt.ptr<f32>, #col>, tensor<8x16xi32, #col>
    tt.store %zp, %yc : tensor<8x16x!tt.ptr<f32>, #col>
    tt.return
  }
}
"""


@pytest.fixture
def cpu_ref():
    prev = triton.runtime.driver.active
    triton_backend_sdk.use("cpu_ref")
    yield
    triton.runtime.driver.set_active(prev)


def test_ttgir_file_runs(cpu_ref, tmp_path):
    path = tmp_path / "rowsum_copy.ttgir"
    path.write_text(TTGIR)
    kernel = triton.compile(str(path), target=triton_backend_sdk.target("cpu_ref"))
    sdkir = kernel.asm["sdkir"]
    assert "#ttg" not in sdkir and "#blk" not in sdkir and "ttg.convert_layout" not in sdkir
    x = torch.randn(8, 16)
    z = torch.zeros(8, 16)
    kernel[(1, 1, 1)](x, z)
    torch.testing.assert_close(z, x + x.sum(1, keepdim=True))


def test_to_ttir_drops_layouts_and_forwards_layout_ops():
    assert is_ttgir(TTGIR) and not is_ttgir("module {\n  tt.func public @k() {\n    tt.return\n  }\n}\n")
    text = to_ttir(TTGIR)
    assert "#ttg" not in text and "#blk" not in text and "#col" not in text and "memdesc" not in text
    assert "tensor<8x16xf32>" in text and "tensor<8xf32>" in text
    assert "ttg.local_alloc" not in text and "ttg.convert_layout" not in text
    assert "tt.store %zp, %y : tensor<8x16x!tt.ptr<f32>>" in text  # users of a converted value read the original
    assert "tt.addptr %zs, %off :" in text


def test_shared_buffer_written_later_is_refused(cpu_ref, tmp_path):
    """A buffer allocated empty and filled by ttg.local_store is real shared-memory traffic, not a layout change."""
    mutable = "!ttg.memdesc<8x16xf32, #sh, #smem, mutable>"
    src = TTGIR.replace(
        "%buf = ttg.local_alloc %v : (tensor<8x16xf32, #blk>) -> !ttg.memdesc<8x16xf32, #sh, #smem>",
        f"%buf = ttg.local_alloc : () -> {mutable}\n    ttg.local_store %v, %buf : tensor<8x16xf32, #blk> -> {mutable}",
    )
    src = src.replace("ttg.local_load %buf : !ttg.memdesc<8x16xf32, #sh, #smem>", f"ttg.local_load %buf : {mutable}")
    path = tmp_path / "stored.ttgir"
    path.write_text(src)
    with pytest.raises(Exception, match="ttg.local_"):
        triton.compile(str(path), target=triton_backend_sdk.target("cpu_ref"))
