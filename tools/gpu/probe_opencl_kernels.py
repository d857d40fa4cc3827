"""The kernels of the upstream tests that gave wrong results on NVIDIA's OpenCL (test_trans_4d, test_dot_multidim,
test_atomic_cas), run on the selected OpenCL device; the OpenCL C (and device binary) of every wrong one is written to
$DUMP. Usage: probe_opencl_kernels.py trans4d dotmd cas (tools/gpu/probe_opencl_h200.sh)."""

import math
import os
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl
import triton_backend_sdk
from triton_backend_sdk.conformance.sync_kernels import locked_increment
from triton_backend_sdk.errors import SDKError

triton_backend_sdk.use("opencl")
DUMP = os.environ.get("DUMP")


def dump(name, h):
    if DUMP:
        os.makedirs(DUMP, exist_ok=True)
        Path(f"{DUMP}/{name}.cl").write_text(h.asm["cl"])
        binary = h.asm.get("clbin")
        if isinstance(binary, bytes):
            Path(f"{DUMP}/{name}.bin").write_bytes(binary)


@triton.jit
def permute_ravel_4d(src, dst, S0: tl.constexpr, S1: tl.constexpr, S2: tl.constexpr, S3: tl.constexpr, P: tl.constexpr):
    """The whole [S0, S1, S2, S3] tile read through a tensor descriptor, permuted by the 4-tuple P, stored raveled."""
    whole = tl.make_tensor_descriptor(
        src, shape=[S0, S1, S2, S3], strides=[S1 * S2 * S3, S2 * S3, S3, 1], block_shape=[S0, S1, S2, S3]
    )
    n: tl.constexpr = S0 * S1 * S2 * S3
    tile = whole.load([0, 0, 0, 0]).permute(P)
    tl.store(dst + tl.arange(0, n), tile.reshape([n]))


def t_trans4d():
    bad = 0
    for dt in [torch.int32, torch.int8]:
        for shape in [(2, 2, 8, 64), (4, 4, 4, 16)]:
            for perm in [(0, 1, 2, 3), (0, 1, 3, 2), (3, 2, 1, 0)]:
                inp = torch.arange(math.prod(shape), dtype=dt).reshape(shape)
                exp = torch.permute(inp, perm)
                act = torch.zeros(exp.shape, dtype=dt)
                h = permute_ravel_4d[(1,)](inp, act, *shape, P=perm, num_warps=8)
                ok = torch.equal(exp.contiguous(), act)
                if not ok:
                    bad += 1
                    dump(f"trans4d_{dt}_{shape[0]}_{''.join(map(str, perm))}", h)
                print("trans4d", dt, shape, perm, "OK" if ok else "WRONG")
    return bad


@triton.jit
def dotmd(X, Y, Z, RANK: tl.constexpr, TRANS_A: tl.constexpr, TRANS_B: tl.constexpr):
    x = tl.load(X + tl.arange(0, 256 << RANK)).reshape([2] * (RANK - 2) + [32, 32])
    y = tl.load(Y + tl.arange(0, 256 << RANK)).reshape([2] * (RANK - 2) + [32, 32])
    if TRANS_A:
        x = tl.trans(x)
    if TRANS_B:
        y = tl.trans(y)
    z = tl.dot(x, y)
    tl.store(Z + tl.arange(0, 256 << RANK), z.reshape([256 << RANK]))


def t_dotmd():
    bad = 0
    for rank in [2, 3, 4]:
        for ta in [False, True]:
            for tb in [False, True]:
                shape = (2,) * (rank - 2) + (32, 32)
                a = torch.randint(-4, 5, shape, dtype=torch.bfloat16)
                b = torch.randint(-4, 5, shape, dtype=torch.bfloat16)
                c = torch.empty(shape, dtype=torch.float32)
                try:
                    h = dotmd[(1,)](a, b, c, rank, ta, tb)
                except SDKError as e:
                    print("dotmd", rank, ta, tb, "ERR", str(e)[:100])
                    continue
                aa = a.transpose(-1, -2) if ta else a
                bb = b.transpose(-1, -2) if tb else b
                d = aa.float() @ bb.float()
                ok = torch.allclose(c, d, rtol=1e-3, atol=1e-2)
                if not ok:
                    bad += 1
                    dump(f"dotmd_{rank}_{int(ta)}{int(tb)}", h)
                print("dotmd", rank, ta, tb, "OK" if ok else f"WRONG maxerr {(c - d).abs().max().item()}")
    return bad


def t_cas():
    bad = 0
    n = int(os.environ.get("CAS_N", "2000"))
    for dt, tdt in [(torch.int32, tl.int32), (torch.int64, tl.int64)]:
        for sem in [None, "acquire", "release", "acq_rel", "relaxed"]:
            Lock = torch.zeros((1,), dtype=dt)
            data = torch.zeros((128,), dtype=torch.float32)
            h = locked_increment[(n,)](data, Lock, BLOCK=128, LOCK_TYPE=tdt, SEM=sem)
            ok = bool((data == n).all())
            if not ok:
                bad += 1
                dump(f"cas_{dt}_{sem}", h)
            elif DUMP and sem in (None, "relaxed") and dt == torch.int32:
                dump(f"cas_ok_{sem}", h)
            print("cas", dt, sem, "OK" if ok else f"WRONG {data.min().item()}..{data.max().item()}")
    return bad


if __name__ == "__main__":
    tot = 0
    for name in sys.argv[1:]:
        tot += globals()["t_" + name]()
    print("BAD", tot)
