#!/usr/bin/env bash
# The GPU check, in one go on a machine with an NVIDIA GPU (3 to 8 minutes; the stages time
# out after 120 + 280 + 120 s, so the whole script ends within 9 minutes):
#   1. make gradnb, CuPy and the test tools importable (see "Dependencies" below);
#   2. fail fast, saying why, if gradnb cannot see a CUDA device;
#   3. the device tests (tests/gpu), then the whole suite except the browser test, both with
#      GRADNB_REQUIRE_CUDA=1 so that a CUDA case can fail but never quietly skip;
#   4. benchmarks/bench_gpu.py: the MLP training step at batch 128 and 4,096 on CuPy, NumPy and
#      PyTorch (CUDA where present).
# Everything is written to $OUT if set, else gpu_check/out/: environment.txt, gpu-tests.log,
# suite.log, suite-junit.xml, RESULTS_GPU.md and summary.txt. Exit status 0 only when every
# stage passed.
#
# Dependencies: where python3 can already import CuPy, pytest and hypothesis (a GPU image),
# nothing is downloaded: gradnb runs from this checkout through PYTHONPATH, and wheels that
# gpu_check/fetch_wheels.sh put in gpu_check/wheels/ (the notebook stack) are installed with
# --no-index. Elsewhere it runs pip install -e '.[test,gpu]' (CuPy's prebuilt cupy-cuda12x).
#
#   bash gpu_check/run.sh            # PYTHON=... picks another interpreter
set -uo pipefail
cd "$(dirname "$0")/.."
results="${OUT:-gpu_check/out}"
mkdir -p "$results"
py="${PYTHON:-python3}"
site="${TMPDIR:-/tmp}/gradnb-gpu-check-site"
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 GRADNB_REQUIRE_CUDA=1

# -- dependencies ----------------------------------------------------------------------------
# Only the wheels of distributions the interpreter lacks: the machine's own packages stay.
installed=$("$py" -m pip list --format=freeze 2>/dev/null | cut -d= -f1 | tr 'A-Z_.' 'a-z--')
missing=()
for wheel in gpu_check/wheels/*.whl; do
  [ -e "$wheel" ] || continue
  name=$(basename "$wheel" | cut -d- -f1 | tr 'A-Z_.' 'a-z--')
  grep -qx "$name" <<<"$installed" || missing+=("$wheel")
done
if [ ${#missing[@]} -gt 0 ]; then
  "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$site" "${missing[@]}" || { echo "run.sh: installing the wheels failed"; exit 3; }
fi
export PYTHONPATH="$PWD:$site${PYTHONPATH:+:$PYTHONPATH}"
if ! "$py" -c "import cupy, pytest, hypothesis" 2>/dev/null; then
  "$py" -m pip install -q -e ".[test,gpu]" || { echo "run.sh: pip install -e '.[test,gpu]' failed"; exit 3; }
fi

# -- the machine -----------------------------------------------------------------------------
{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  command -v nvidia-smi >/dev/null && nvidia-smi -L || echo "nvidia-smi: not available"
  "$py" - <<'PY'
import platform, sys
import numpy, gradnb
from gradnb._core import backend as _backend
print("python", platform.python_version(), sys.executable)
print("numpy", numpy.__version__)
reason = _backend.cuda_unavailable_reason()
if reason is None:
    import cupy
    print("cupy", cupy.__version__, "CUDA runtime", cupy.cuda.runtime.runtimeGetVersion())
    print("gradnb.cuda.device_count()", gradnb.cuda.device_count())
else:
    print("CUDA unavailable:", reason)
for name in ("torch", "IPython", "ipywidgets", "ipykernel", "nbclient", "hypothesis", "pytest"):
    try:
        module = __import__(name)
        print(name, getattr(module, "__version__", "?"))
    except ImportError as exc:
        print(name, "missing:", exc)
PY
} 2>&1 | tee "$results/environment.txt"
if ! "$py" -c "import gradnb, sys; sys.exit(0 if gradnb.cuda.is_available() else 1)"; then
  echo "run.sh: gradnb sees no CUDA device; see $results/environment.txt" | tee "$results/summary.txt"
  exit 2
fi

# -- tests and benchmark ---------------------------------------------------------------------
status=0
stage() {  # stage NAME SECONDS COMMAND...: run with a time limit, record the outcome
  local name=$1 limit=$2
  shift 2
  local started=$SECONDS
  timeout "$limit" "$@"
  local rc=$?
  echo "$name: exit $rc after $((SECONDS - started)) s$([ $rc = 124 ] && echo ' (timed out)')" \
    >>"$results/summary.txt"
  [ $rc = 0 ] || status=1
}
: >"$results/summary.txt"
stage "device tests (tests/gpu)" 120 bash -c \
  "set -o pipefail; '$py' -m pytest tests/gpu -q -rs -p no:cacheprovider 2>&1 | tee '$results/gpu-tests.log'"
stage "whole suite (-m 'not browser')" 280 bash -c \
  "set -o pipefail; '$py' -m pytest -q -m 'not browser' -rs --maxfail=25 -p no:cacheprovider \
   --junitxml='$results/suite-junit.xml' 2>&1 | tee '$results/suite.log'"
stage "benchmark (bench_gpu.py)" 120 "$py" benchmarks/bench_gpu.py --repeats 20 \
  --out "$results/RESULTS_GPU.md"
cat "$results/summary.txt"
exit $status
