#!/usr/bin/env bash
# Debian's Chromium for the browser tests (never a browser download by a test tool).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium fonts-dejavu-core >/dev/null
test -x /usr/bin/chromium
