# Sourced by the setup scripts: `py_install PYTHON ARGS...` installs Python packages into PYTHON's
# environment with uv (bootstrapped with that python's pip) and falls back to pip where uv cannot be had.
# uv resolves and installs the same requirements as pip, several times faster: this repository's
# `-e '.[dev]'` into a fresh venv with no cache took 24 s with uv and 90 s with pip (2 cores).
py_install() {
  local python="$1"
  shift
  if PIP_BREAK_SYSTEM_PACKAGES=1 "$python" -m pip install --quiet --disable-pip-version-check uv >/dev/null 2>&1 &&
      "$python" -m uv --version >/dev/null 2>&1; then
    # Unlike pip, uv leaves bytecode to the first import, which writes it (no --compile-bytecode: it made a
    # fresh setup-dev.sh 57 s -> 82 s here, and a suite with precompiled bytecode was no faster)
    UV_BREAK_SYSTEM_PACKAGES=1 "$python" -m uv pip install --quiet --python "$python" "$@"
  else
    PIP_BREAK_SYSTEM_PACKAGES=1 "$python" -m pip install --quiet --disable-pip-version-check "$@"
  fi
}
