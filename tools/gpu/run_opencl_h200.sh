#!/usr/bin/env bash
# The opencl backend on a real NVIDIA GPU (the H200 machine of the device tool), beside Triton's own CUDA backend.
#
# How to run it (one command; under 8 minutes; everything lands in $OUT):
#   1. here, once, with network:   bash tools/gpu/fetch_wheels.sh        (fills .whl/, ignored by git)
#   2. device tool:  run(command="bash tools/gpu/run_opencl_h200.sh", carry=[".whl"], kind="nvidia-h200",
#                        timeout_s=600)   (ONLY=asm before it: just the kernels' PTX from both backends, ~30 s;
#                        ONLY=bench: just the speed cases; CASE=matmul: only cases naming it; WI_SWEEP="64 256":
#                        the opencl matmul again at those work-items per program; AB_VARIANTS="prefetch=0
#                        double_buffer=0": the opencl matmul alternating the defaults and these launch options)
# What it does, on the H200 machine (triton 3.6, torch 2.11+CUDA, Python 3.12, no network):
#   - makes NVIDIA's OpenCL visible: an ICD file naming /usr/local/nvidia/lib64/libnvidia-opencl.so.1 (plus PoCL's
#     own ICD files if present) in a folder given as OCL_ICD_VENDORS; selects it with TRITON_OPENCL_DEVICE=NVIDIA;
#   - installs pyopencl and its deps from .whl/ with --no-deps --no-index into a private folder (numpy and pytest
#     only if the machine lacks them), and stages this checkout's package there with a dist-info naming the opencl
#     entry point (no build: the compiled extension belongs to cpu_ref, and the package declares triton>=3.7 while
#     the machine has 3.6, so pip is never asked to resolve it);
#   - writes device info, runs the benchmark kernels (vector add, softmax, layer norm, fp32 matmul) on Triton's CUDA
#     backend and on opencl in separate processes (Triton's per-device kernel cache must not mix drivers), then the
#     opencl tests and the op suite on the NVIDIA device, each under a time limit taken from what is left.
# Outputs: $OUT/summary.md (speed ratios ours/CUDA, test counts), run.log, env.txt, devices.txt, bench_*.json,
#          tests_*.log and junit_*.xml.
set -x
set -u
OUT=${OUT:-$PWD/out_h200}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/run.log") 2>&1
T0=$(date +%s)
BUDGET=${BUDGET:-450}   # seconds for the whole script (the device tool allows 600 per command)
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
cd "$(dirname "$0")/../.."
ROOT=$PWD
WORK=$(mktemp -d /tmp/tbs_h200.XXXXXX)
SITE=$WORK/site
mkdir -p "$SITE" "$WORK/icd" "$WORK/cache"

{ nvidia-smi; python3 -V; python3 -m pip list 2>/dev/null | grep -Ei '^(triton|torch|numpy|pytest) '; \
  ls -la /etc/OpenCL/vendors /usr/local/nvidia/lib64 2>&1 | head -40; } > "$OUT/env.txt" 2>&1

# ---- OpenCL ICDs: NVIDIA through an ICD file, PoCL's own files kept ----------------------------------------------
NVCL=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
[ -e "$NVCL" ] || NVCL=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
echo "${NVCL:-/usr/local/nvidia/lib64/libnvidia-opencl.so.1}" > "$WORK/icd/nvidia.icd"
cp /etc/OpenCL/vendors/*.icd "$WORK/icd/" 2>/dev/null || true
export OCL_ICD_VENDORS=$WORK/icd
export TRITON_OPENCL_DEVICE=${TRITON_OPENCL_DEVICE:-NVIDIA}
export TRITON_CACHE_DIR=$WORK/cache
export PYTHONDONTWRITEBYTECODE=1

# ---- pyopencl + deps from .whl, into a private folder --------------------------------------------------------------
W=$ROOT/.whl
ls -la "$W" || { echo "no .whl/ folder: run tools/gpu/fetch_wheels.sh here and carry .whl" | tee "$OUT/summary.md"; exit 1; }
WHEELS=("$W"/pyopencl-*.whl "$W"/pytools-*.whl "$W"/platformdirs-*.whl "$W"/siphash24-*.whl)
python3 -c 'import typing_extensions' 2>/dev/null || WHEELS+=("$W"/typing_extensions-*.whl)
python3 -c 'import numpy' 2>/dev/null || WHEELS+=("$W"/numpy-*.whl)
python3 -c 'import pytest' 2>/dev/null || WHEELS+=("$W"/pytest-*.whl "$W"/pluggy-*.whl "$W"/iniconfig-*.whl \
                                                   "$W"/packaging-*.whl "$W"/pygments-*.whl)
python3 -c 'import xdist' 2>/dev/null || WHEELS+=("$W"/pytest_xdist-*.whl "$W"/execnet-*.whl)
python3 -m pip install --no-deps --no-index --target "$SITE" "${WHEELS[@]}" > "$OUT/pip.log" 2>&1 \
  || { tail -20 "$OUT/pip.log"; echo "pip install failed" >> "$OUT/summary.md"; }

# ---- this checkout's package, staged as installed (import name triton_backend_sdk, opencl entry point) -----------
python3 "$ROOT/tools/gpu/stage_package.py" "$ROOT" "$SITE"
export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}

H="python3 $ROOT/tools/gpu/opencl_h200.py"
timeout 60 $H info > "$OUT/devices.txt" 2>&1; cat "$OUT/devices.txt"

# ---- ONLY=asm: the benchmark kernels' device code from both backends (PTX), then stop ----------------------------
if [ "${ONLY:-}" = asm ]; then
  for be in cuda opencl; do timeout 120 $H asm --backend $be --out "$OUT/asm" > "$OUT/asm_$be.log" 2>&1; done
  tail -5 "$OUT"/asm_*.log; ls -la "$OUT/asm"; exit 0
fi

# ---- speed: the same kernels on Triton's CUDA backend and on opencl (ONLY=bench: then stop) ----------------------
timeout 90 $H bench --backend cuda --only "${CASE:-}" --json "$OUT/bench_cuda.json" > "$OUT/bench_cuda.log" 2>&1
timeout 120 $H bench --backend opencl --only "${CASE:-}" --json "$OUT/bench_opencl.json" > "$OUT/bench_opencl.log" 2>&1
tail -5 "$OUT/bench_cuda.log" "$OUT/bench_opencl.log"
# WI_SWEEP="64 256": the opencl matmul again with each number of work-items per program (a launch option)
for wi in ${WI_SWEEP:-}; do
  timeout 60 $H bench --backend opencl --only matmul --work-items "$wi" --json "$OUT/bench_opencl_wi$wi.json" \
    > "$OUT/bench_opencl_wi$wi.log" 2>&1
  tail -1 "$OUT/bench_opencl_wi$wi.log"
done
# AB_VARIANTS="double_buffer=0 prefetch=0,double_buffer=0" (AB_ROUNDS=3): the opencl matmul with the default options
# and with each variant's boolean launch options, alternating, AB_ROUNDS times (one file: ab.jsonl)
for i in $(seq 1 "${AB_ROUNDS:-3}"); do
  [ -n "${AB_VARIANTS:-}" ] || break
  for variant in default $AB_VARIANTS; do
    flags=(); [ "$variant" = default ] || for kv in ${variant//,/ }; do flags+=(--opt "$kv"); done
    timeout 60 $H bench --backend opencl --only matmul "${flags[@]}" --json "$WORK/ab.json" > "$WORK/ab.log" 2>&1
    python3 -c 'import json,sys; [print(json.dumps(r)) for r in json.load(open(sys.argv[1]))]' "$WORK/ab.json" \
      | tee -a "$OUT/ab.jsonl"
  done
done
# ONLY=bench: the speed table only (summary.md from the bench files; the device tool returns at most 8 files, so
# several runs in one call should keep just their bench_*.json)
[ "${ONLY:-}" = bench ] && { $H report --out "$OUT" > "$OUT/summary.md" 2>&1; cat "$OUT/summary.md"; exit 0; }

# ---- correctness on NVIDIA's OpenCL: our tests and the kernels suite, then the op suite -----------------------------
# (SIGINT at the time limit: pytest stops and still writes its summary and junit file for what ran)
PYT=(python3 -m pytest -q -p no:cacheprovider -o addopts=)   # opencl@wg128 is the default shape on a GPU: not rerun
NPROC=$(nproc); [ "$NPROC" -gt 8 ] && NPROC=8   # the op suite in parallel workers: each has its own OpenCL context
python3 -c 'import xdist' 2>/dev/null && PAR="-n $NPROC" || PAR=""
T=$(left); [ "$T" -gt 130 ] && T=130
[ "$T" -gt 20 ] && timeout -s INT -k 15 "$T" "${PYT[@]}" $PAR tests/test_kernels.py tests/test_opencl_*.py tests/test_thread_locality.py tests/test_prefetch_dot_operands.py -k "(opencl or prefetch) and not wg128" \
  --junitxml="$OUT/junit_kernels.xml" > "$OUT/tests_kernels.log" 2>&1
tail -15 "$OUT/tests_kernels.log"
T=$(( $(left) - 25 ))
[ "$T" -gt 20 ] && timeout -s INT -k 15 "$T" "${PYT[@]}" $PAR tests/test_op_suite.py -k "opencl and test_case and not wg128" \
  --junitxml="$OUT/junit_op_suite.xml" > "$OUT/tests_op_suite.log" 2>&1
tail -15 "$OUT/tests_op_suite.log"

$H report --out "$OUT" > "$OUT/summary.md" 2>&1
cat "$OUT/summary.md"
echo "total $(( $(date +%s) - T0 )) s"
