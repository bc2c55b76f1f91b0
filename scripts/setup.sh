#!/usr/bin/env bash
# Installs what building and running datasourced needs on a Debian machine that has the
# Swift toolchain and Python 3.11+ with pip: libjansson-dev, libsqlite3-dev (the page
# cache, through GRDB) and pkg-config from apt, the Python client's pinned packages
# (Clients/python/requirements.txt) from PyPI.
# `setup.sh --tests` also installs Neovim, Vim (vim-nox) and Emacs (emacs-nox) from apt, for the editor clients' tests,
# and the test suites' Python packages: jsonschema (Tests/Schema), Django REST framework and
# Strawberry (Tests/Frameworks).
# Idempotent: installs only what is missing. Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
dpkg -s libjansson-dev >/dev/null 2>&1 || need_apt+=(libjansson-dev)
dpkg -s libsqlite3-dev >/dev/null 2>&1 || need_apt+=(libsqlite3-dev)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
if [ "${1:-}" = "--tests" ]; then
  command -v nvim >/dev/null 2>&1 || need_apt+=(neovim)
  grep -q '+channel' <<<"$(vim --version 2>/dev/null)" || need_apt+=(vim-nox) # the Vim plugin's tests
  # The plugin's screen check runs Neovim in tmux.
  command -v tmux >/dev/null 2>&1 || need_apt+=(tmux)
  command -v emacs >/dev/null 2>&1 || need_apt+=(emacs-nox)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if ! python3 -m pip freeze 2>/dev/null | grep -qxF "pygls==2.1.1" \
   || ! python3 -m pip freeze 2>/dev/null | grep -qxF "pytest==9.0.3"; then
  echo "setup: installing Clients/python/requirements.txt" >&2
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore \
    -r Clients/python/requirements.txt >&2
fi

if [ "${1:-}" = "--tests" ] && ! python3 -c "import rest_framework, strawberry" 2>/dev/null; then
  echo "setup: installing Tests/Frameworks/requirements.txt" >&2
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore \
    -r Tests/Frameworks/requirements.txt >&2
fi

if [ "${1:-}" = "--tests" ] && ! python3 -c "import jsonschema" 2>/dev/null; then
  echo "setup: installing Tests/Schema/requirements.txt" >&2
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore \
    -r Tests/Schema/requirements.txt >&2
fi
