#!/usr/bin/env bash
# Triton's upstream language tests (test_core/test_standard/test_random) on the opencl backend, on the H200 machine
# of the device tool through NVIDIA's OpenCL, classified against backends/opencl/upstream_expectations.txt.
#
# How to run it (one command; under ~9 minutes; everything lands in $OUT):
#   1. here, once, with network:  bash tools/gpu/fetch_wheels.sh; python3 -m pip download --no-deps -d .whl pytest-timeout
#   2. here, stage the suite matching the machine's triton 3.6 (the staging code of `triton-sdk upstream-tests`):
#        .venv/bin/python -c "from triton_backend_sdk.upstream.staging import stage; \
#          stage('/work/.mirror/lightseekorg+triton/repo', 'build/upstream_3.6', rev='dff2b020')"
#      (dff2b020: main's last commit before is_hip_rdna3, which the 3.6 wheel's _internal_testing lacks) and write
#      build/upstream_3.6/SUITE.json ({"source", "commit", "version"}: the staged copy is no git checkout)
#   3. device tool: run(command="bash tools/gpu/run_upstream_h200.sh", carry=[".whl", "build/upstream_3.6"],
#                       kind="nvidia-h200", timeout_s=600)
# What it does there (triton 3.6, torch 2.11+CUDA, Python 3.12, no network):
#   - NVIDIA's OpenCL through an ICD file in OCL_ICD_VENDORS, chosen with TRITON_OPENCL_DEVICE=NVIDIA; the wheels and
#     this checkout's package (with its opencl entry point) in a private site folder, as run_opencl_h200.sh does;
#   - Triton 3.6 has no TRITON_DEFAULT_BACKEND: a pytest plugin given in PYTEST_ADDOPTS calls
#     driver.set_active(opencl's driver) in every pytest process, so CUDA's driver never runs the tests;
#   - `--device cpu` (the runner's): opencl takes host torch tensors and copies them to and from its OpenCL buffers;
#   - OFFSET=I starts the sample at the I-th test (SAMPLE=2 OFFSET=0 and OFFSET=1 cover the suite once);
#   - unless SAMPLE is given, a probe run of every PROBE-th test measures the rate; the main run takes every S-th test, S chosen so that it
#     ends inside BUDGET (S=1 runs all of them), and is stopped with SIGINT at the limit (pytest still writes junit).
# Outputs: $OUT/junit.xml.gz, upstream.json (the runner's report), table.txt (counts and the table by test function),
#          env.txt, probe.txt, run.log.
set -u
OUT=${OUT:-$PWD/out_upstream_h200}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/run.log") 2>&1
T0=$(date +%s)
BUDGET=${BUDGET:-540}   # seconds for the whole script (the device tool allows 600 per command)
PROBE=${PROBE:-64}      # the probe runs every PROBE-th test
TIMEOUT=${TIMEOUT:-60}  # per-test limit, seconds
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
cd "$(dirname "$0")/../.."
ROOT=$PWD
SUITE=$ROOT/build/upstream_3.6
WORK=$(mktemp -d /tmp/tbs_upstream.XXXXXX)
SITE=$WORK/site
mkdir -p "$SITE" "$WORK/icd"
[ -f "$SUITE/SUITE.json" ] || { echo "no staged suite at $SUITE: stage it here and carry it"; exit 1; }

{ nvidia-smi; python3 -V; nproc; python3 -m pip list 2>/dev/null | grep -Ei '^(triton|torch|numpy|pytest) '; \
  cat "$SUITE/SUITE.json"; echo; } > "$OUT/env.txt" 2>&1

NVCL=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
[ -e "$NVCL" ] || NVCL=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
echo "${NVCL:-/usr/local/nvidia/lib64/libnvidia-opencl.so.1}" > "$WORK/icd/nvidia.icd"
export OCL_ICD_VENDORS=$WORK/icd
export TRITON_OPENCL_DEVICE=${TRITON_OPENCL_DEVICE:-NVIDIA}
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1

W=$ROOT/.whl
# pytest and its plugins always from .whl: the runner's @file selection needs pytest >= 8.2
WHEELS=("$W"/pyopencl-*.whl "$W"/pytools-*.whl "$W"/platformdirs-*.whl "$W"/siphash24-*.whl "$W"/pytest_timeout-*.whl
        "$W"/pytest-[0-9]*.whl "$W"/pluggy-*.whl "$W"/iniconfig-*.whl "$W"/packaging-*.whl "$W"/pygments-*.whl
        "$W"/pytest_xdist-*.whl "$W"/execnet-*.whl)
python3 -c 'import typing_extensions' 2>/dev/null || WHEELS+=("$W"/typing_extensions-*.whl)
python3 -c 'import numpy' 2>/dev/null || WHEELS+=("$W"/numpy-*.whl)
python3 -m pip install --no-deps --no-index --target "$SITE" "${WHEELS[@]}" > "$WORK/pip.log" 2>&1 \
  || { tail -20 "$WORK/pip.log"; exit 1; }
python3 "$ROOT/tools/gpu/stage_package.py" "$ROOT" "$SITE"
cat > "$SITE/sdk_use_opencl.py" <<'EOF'
"""Loaded by pytest (-p): Triton 3.6 picks its driver without TRITON_DEFAULT_BACKEND and, with opencl and CUDA both
active, refuses to pick one; so set opencl's driver before anything reads driver.active."""
from triton.backends import backends
from triton.runtime import driver

driver.set_active(backends["opencl"].driver())
EOF
export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
export PYTEST_ADDOPTS="-p sdk_use_opencl"
python3 -c 'import triton, torch, pytest, xdist, pytest_timeout, pyopencl as cl
print("triton", triton.__version__, "torch", torch.__version__, "pytest", pytest.__version__)
print([(p.name, [d.name for d in p.get_devices()]) for p in cl.get_platforms()])' >> "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

NW=$(nproc)
CLI=(python3 -m triton_backend_sdk.cli upstream-tests --triton-src "$SUITE" --backend opencl --workers "$NW"
     --timeout "$TIMEOUT")

# ---- probe: the rate of this machine, collection included (SAMPLE=S skips it) --------------------------------------
if [ -n "${SAMPLE:-}" ]; then S=$SAMPLE; else
P0=$(date +%s)
timeout -s INT -k 15 150 "${CLI[@]}" --sample "$PROBE" --work-dir "$WORK/probe" --json "$WORK/probe.json" \
  > "$OUT/probe.txt" 2>&1
P1=$(date +%s)
tail -25 "$OUT/probe.txt"
read -r S N < <(python3 - "$WORK" $((P1 - P0)) "$(left)" "$PROBE" <<'EOF'
import json, math, sys
work, wall, left, probe = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
n_all = sum(1 for line in open(f"{work}/probe/collect.log") if "::" in line and not line.startswith(" "))
n_probe = max(1, math.ceil(n_all / probe))
pytest_s = json.load(open(f"{work}/probe.json"))["meta"]["seconds"]
fixed = max(wall - pytest_s, 0.0) + 15.0  # collection and start-up, plus worker start and the slowest test's tail
rate = n_probe / max(pytest_s - 15.0, 5.0)
room = max(left - fixed - 30.0, 30.0)
print(max(1, math.ceil(n_all / (rate * room))), n_all)
EOF
)
echo "probe: $((P1 - P0)) s wall; $N tests collected; main run takes every ${S:-?}th test; $(left) s left" \
  | tee -a "$OUT/probe.txt"
fi
S=${S:-8}

# ---- main run (SIGINT at the limit: pytest writes junit for what ran, classified below with --from-junit) ----------
timeout -s INT -k 45 $(( $(left) - 50 )) "${CLI[@]}" --sample "$S" --sample-offset "${OFFSET:-0}" --work-dir "$WORK/main" --junit "$OUT/junit.xml" \
  --json "$OUT/upstream.json" --readme-table --all-functions > "$OUT/table.txt" 2>&1
echo "main run exit $?"
if [ ! -s "$OUT/upstream.json" ] && [ -s "$OUT/junit.xml" ]; then
  echo "(stopped at the limit: classified from junit.xml)" >> "$OUT/table.txt"
  python3 -m triton_backend_sdk.cli upstream-tests --backend opencl --from-junit "$OUT/junit.xml" --sample "$S" \
    --json "$OUT/upstream.json" --readme-table --all-functions >> "$OUT/table.txt" 2>&1
fi
# the staged copy is no git checkout: the suite's commit and version come from SUITE.json
python3 - "$OUT/upstream.json" "$SUITE/SUITE.json" <<'EOF' >> "$OUT/table.txt"
import json, sys
report, suite = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
report["meta"].setdefault("suite", {}).update(suite)
json.dump(report, open(sys.argv[1], "w"), indent=1)
print(f"suite {suite['commit']} (version {suite['version']}): {suite['source']}")
EOF
tail -60 "$OUT/table.txt"
echo "total $(( $(date +%s) - T0 )) s"
gzip -f "$OUT/junit.xml"   # ~3.5 kB a test: the device tool returns files up to 16 MiB
