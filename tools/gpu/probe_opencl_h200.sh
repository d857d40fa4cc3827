#!/usr/bin/env bash
# Focused probe of the wrong results the opencl backend gave on NVIDIA's OpenCL (H200) in the upstream run
# (benchmarks/results/h200/upstream_opencl_3.6.txt): test_atomic_cas, test_trans_4d, test_dot_multidim, test_scaled_dot.
#
# How to run it (one command, ~4 minutes; set up as run_upstream_h200.sh says: .whl/ and build/upstream_3.6 here):
#   device tool: run(command="bash tools/gpu/probe_opencl_h200.sh", carry=[".whl", "build/upstream_3.6"],
#                    kind="nvidia-h200", timeout_s=600)
# What it does there: the same NVIDIA OpenCL + wheels + staged package set-up as run_upstream_h200.sh, then
#   1. tools/gpu/probe_opencl_kernels.py: the failing kernels on the device, the OpenCL C and binary (PTX) of each
#      wrong one kept;
#   2. tools/gpu/probe_cas_variants.py: the atomic_cas lock-and-count kernel with other fence spellings (counts, PTX);
#   3. the upstream tests listed in tools/gpu/probe_ids_h200.txt (the wrong-result ones plus controls), then every
#      ATOMIC_SAMPLE-th (3) upstream test named *atomic* (controls for the fences).
# Outputs: $OUT/summary.txt, $OUT/dumps.tar.gz (OpenCL C, PTX), $OUT/upstream.txt, $OUT/junit.xml.gz,
#          $OUT/upstream_atomic.txt.
set -u
OUT=${OUT:-$PWD/out_probe_h200}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/summary.txt") 2>&1
T0=$(date +%s)
cd "$(dirname "$0")/../.."
ROOT=$PWD
SUITE=$ROOT/build/upstream_3.6
WORK=$(mktemp -d /tmp/tbs_probe.XXXXXX)
SITE=$WORK/site
mkdir -p "$SITE" "$WORK/icd" "$WORK/dumps"

NVCL=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
[ -e "$NVCL" ] || NVCL=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
echo "${NVCL:-/usr/local/nvidia/lib64/libnvidia-opencl.so.1}" > "$WORK/icd/nvidia.icd"
export OCL_ICD_VENDORS=$WORK/icd
export TRITON_OPENCL_DEVICE=${TRITON_OPENCL_DEVICE:-NVIDIA}
export TRITON_CACHE_DIR=$WORK/cache
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1

W=$ROOT/.whl
WHEELS=("$W"/pyopencl-*.whl "$W"/pytools-*.whl "$W"/platformdirs-*.whl "$W"/siphash24-*.whl "$W"/pytest_timeout-*.whl
        "$W"/pytest-[0-9]*.whl "$W"/pluggy-*.whl "$W"/iniconfig-*.whl "$W"/packaging-*.whl "$W"/pygments-*.whl
        "$W"/pytest_xdist-*.whl "$W"/execnet-*.whl)
python3 -c 'import typing_extensions' 2>/dev/null || WHEELS+=("$W"/typing_extensions-*.whl)
python3 -c 'import numpy' 2>/dev/null || WHEELS+=("$W"/numpy-*.whl)
python3 -m pip install --no-deps --no-index --target "$SITE" "${WHEELS[@]}" > "$WORK/pip.log" 2>&1 \
  || { tail -20 "$WORK/pip.log"; exit 1; }
python3 "$ROOT/tools/gpu/stage_package.py" "$ROOT" "$SITE"
cat > "$SITE/sdk_use_opencl.py" <<'PY'
"""Loaded by pytest (-p): Triton 3.6 has no TRITON_DEFAULT_BACKEND; set opencl's driver first (run_upstream_h200.sh)."""
from triton.backends import backends
from triton.runtime import driver

driver.set_active(backends["opencl"].driver())
PY
export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}

echo "== kernels (wrong ones dumped)"
DUMP=$WORK/dumps timeout 150 python3 "$ROOT/tools/gpu/probe_opencl_kernels.py" trans4d dotmd cas 2>&1 | tail -60
echo "== atomic_cas fence variants"
OUT=$WORK/dumps timeout 90 python3 "$ROOT/tools/gpu/probe_cas_variants.py" 2>&1 | tail -30
tar -czf "$OUT/dumps.tar.gz" -C "$WORK" dumps

echo "== upstream tests of tools/gpu/probe_ids_h200.txt ($(( $(date +%s) - T0 )) s so far)"
PYTEST_ADDOPTS="-p sdk_use_opencl" timeout -s INT -k 20 $(( ${BUDGET:-520} - ($(date +%s) - T0) )) \
  python3 -m triton_backend_sdk.cli upstream-tests --triton-src "$SUITE" --backend opencl --workers "$(nproc)" \
  --timeout 60 --ids "$ROOT/tools/gpu/probe_ids_h200.txt" --work-dir "$WORK/up" --junit "$OUT/junit.xml" \
  --all-functions --show 40 > "$OUT/upstream.txt" 2>&1
echo "exit $?"; tail -50 "$OUT/upstream.txt"
# controls for the fences: every ATOMIC_SAMPLE-th upstream test whose name has "atomic" (they passed before)
if [ -n "${ATOMIC_SAMPLE:-3}" ] && [ $(( ${BUDGET:-520} - ($(date +%s) - T0) )) -gt 60 ]; then
  echo "== upstream atomic tests, every ${ATOMIC_SAMPLE:-3}th"
  PYTEST_ADDOPTS="-p sdk_use_opencl" timeout -s INT -k 20 $(( ${BUDGET:-520} - ($(date +%s) - T0) )) \
    python3 -m triton_backend_sdk.cli upstream-tests --triton-src "$SUITE" --backend opencl --workers "$(nproc)" \
    --timeout 60 -k atomic --sample "${ATOMIC_SAMPLE:-3}" --work-dir "$WORK/atomic" --all-functions --show 20 \
    > "$OUT/upstream_atomic.txt" 2>&1
  echo "exit $?"; tail -30 "$OUT/upstream_atomic.txt"
fi
gzip -f "$OUT/junit.xml" 2>/dev/null
echo "total $(( $(date +%s) - T0 )) s"
