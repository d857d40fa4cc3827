"""Differential fuzzing of the SDK's backends against Triton's interpreter.

    triton-sdk fuzz --cases N [--seed S] [--backends cpu_ref opencl] [--out DIR] [--avoid-known]
    triton-sdk fuzz --replay DIR/repros/<failure>/kernel.py --backends cpu_ref

How it works (one module per concern):

- gen.py: seeded kernels, `--exprs` cases each (one expression, one output per case): random 1-D/2-D tiles (powers
  of two, BM*BN <= 256) over ragged sizes (masked) and 1-3 programs; inputs in four layouts (contiguous,
  transposed, padded rows, every second element: strides are kernel arguments) with masked loads (`other=` or
  not, bounds or bounds-with-holes masks); expression trees of arithmetic (+ - * / // % << >> & | ^), math
  functions, where, minimum/maximum (both NaN modes), fma, clamp, umulhi, casts (rtne/rtz) and bitcasts over
  f32/f16/bf16/f64/fp8 e4m3/e5m2, int8..int64, uint8..uint64; sum/max/min/argmax/argmin reductions (stored, or
  kept and broadcast inside a tree), cumsum (either direction), tl.dot of small tiles (f16, bf16, f32, int8, fp8).
- render.py: the Python source (triton.jit needs a file) with its spec; spec.py the data; inputs.py the values
  (seeded mixtures: small, full-range, edge and special values, random bit patterns) and guarded outputs.
- worker.py / pool.py: one process per backend (and one for the interpreter) reading jobs on stdin; a crash or a
  hang ends only that process (reported as `crash`/`timeout`, the worker is replaced).
- interp_ref.py: the reference. Triton's interpreter runs the same file, with its numpy semantics replaced where
  they are not what Triton/the SDK define (each replacement and why is listed there): bf16/fp8 arithmetic,
  reductions and dots (numpy would add their bit patterns); float conversions (rounded once, fp8 saturating);
  integer division by zero, INT_MIN/-1, shifts by >= the width and float->int of NaN/out-of-range values follow
  Triton's CUDA path as sdk/transforms/int_semantics.py documents it (refnum.py, checked against the H200 goldens
  in tests/data/int_semantics_cuda.json); stock Triton's frontend rounding of bf16 literals is reproduced.
- compare.py: the tolerances. Integers, bools, data movement and every float expression of exactly rounded
  operations (+ - * / fma sqrt_rn floor ceil min max, casts, selects, loads) must match bit for bit (+-0 equal, NaN
  any NaN); kernels run with `enable_fp_fusion=False` (a contraction is not a bug). Approximate operations may be
  off by the OpenCL 1.2 full-profile bounds (exp/exp2/log/log2 3 ulp, sin/cos 4, sqrt 3, rsqrt 2, erf 16), sums and
  cumsums of n terms by (n-1)·eps·Σ|x|, dots of K products by K·eps·Σ|a·b| (eps of the result's format): the
  reference is run again with every such result moved by its bound (up, down, random signs), and the runs' spread
  plus one ulp of the output format is the tolerance, so cancellation and rounding to narrow formats downstream
  are accounted for. An element the runs disagree on (NaN or not, an integer or bool decided by an approximate
  value, an overflow that depends on the summation order) is ill-conditioned and skipped (counted).
- Excluded inputs, where Triton itself leaves the result undefined: shift amounts and divisors are opaque loads of
  another input or are masked/or'ed into range (`x >> x` is folded to 0 by Triton's own TTIR passes: shifting by
  >= the width is poison in MLIR), integer literals stay in range of their dtype (Triton refuses others), NaN never reaches argmax/argmin
  (their NaN order is unspecified), a float is bitcast to an integer only where no NaN propagation chose its bits.
- minimize.py / runner.py: each failure (deduplicated by signature) is shrunk to one case and a smaller tree and
  written to DIR/repros/<kind>-<backend>-<kernel>[-c<case>]/ (kernel.py: the repro with its input seed;
  original.py; report.json with the command). known.py lists the bugs found and not fixed yet, each pinned by a
  regression test in tests/test_fuzz.py.
"""
