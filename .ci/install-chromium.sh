#!/usr/bin/env bash
# Installs Debian's Chromium for the real-browser test (test/browser/). Idempotent: does nothing when
# /usr/bin/chromium is already there. Needs root, or sudo without a password.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  echo 'chromium already installed at /usr/bin/chromium'
  exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo 'install-chromium: not root and no sudo; install the "chromium" package by hand' >&2
    exit 1
  fi
  as_root=(sudo)
fi

as_root+=(env DEBIAN_FRONTEND=noninteractive)
"${as_root[@]}" apt-get update
"${as_root[@]}" apt-get install -y --no-install-recommends chromium
/usr/bin/chromium --version 2>/dev/null
