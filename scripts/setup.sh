#!/usr/bin/env bash
# Installs what building and testing datasourced needs on a Debian machine that has the
# Swift toolchain. Idempotent: installs only what is missing. Run as root.
set -euo pipefail

need_apt=()
dpkg -s libjansson-dev >/dev/null 2>&1 || need_apt+=(libjansson-dev)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
