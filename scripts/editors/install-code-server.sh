#!/usr/bin/env bash
# Install what the VS Code tier needs, with no download outside the package registries:
#   - code-server 4.100.3 (bundles VS Code 1.100; the last release for Node 20) from npm;
#   - Debian's chromium (headless browser), driven by playwright-core from npm;
#   - libkrb5-dev (code-server's `kerberos` native module builds against it) and ripgrep.
# code-server's postinstall runs `npm install` for the bundled VS Code; one of its packages,
# @vscode/ripgrep, would download a prebuilt `rg` from GitHub. Its postinstall first looks for a cached
# download in $TMPDIR/vscode-ripgrep-cache-<version>/, so we pre-seed that cache with Debian's `rg`.
# Native modules are compiled by node-gyp against the headers of the installed Node (nodedir=/usr),
# so node-gyp does not fetch headers either.
#
# Usage: scripts/editors/install-code-server.sh [TOOLS_DIR]   (default: $CORTEX_EDITORS_DIR or /opt/cortex-editors)
# Result: TOOLS_DIR/code-server/bin/code-server and TOOLS_DIR/driver/node_modules/playwright-core.
set -euo pipefail
tools="${1:-${CORTEX_EDITORS_DIR:-/opt/cortex-editors}}"
code_server_version="${CODE_SERVER_VERSION:-4.100.3}"
playwright_version="${PLAYWRIGHT_CORE_VERSION:-1.65.1}"
# @vscode/ripgrep as pinned by code-server 4.100.3's lib/vscode/npm-shrinkwrap.json, and the
# ripgrep-prebuilt release its postinstall asks for.
ripgrep_pkg_version="1.15.11"
ripgrep_release="v13.0.0-10"

debs="libkrb5-dev ripgrep chromium build-essential python3"
if ! dpkg -s $debs >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $debs
  else
    echo "install-code-server: not root; install these Debian packages first: $debs" >&2
  fi
fi
for need in node npm rg chromium; do
  command -v "$need" >/dev/null || { echo "install-code-server: $need is missing" >&2; exit 1; }
done
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" != 20 ]; then
  echo "install-code-server: code-server $code_server_version needs Node 20, found $(node --version)" >&2
  exit 1
fi

case "$(uname -m)" in
  x86_64) rg_target=x86_64-unknown-linux-musl ;;
  aarch64) rg_target=aarch64-unknown-linux-musl ;;
  *) echo "install-code-server: no ripgrep target for $(uname -m)" >&2; exit 1 ;;
esac
tmp="$(node -p 'require("os").tmpdir()')"
cache="$tmp/vscode-ripgrep-cache-$ripgrep_pkg_version"
mkdir -p "$cache"
tar czf "$cache/ripgrep-$ripgrep_release-$rg_target.tar.gz" -C "$(dirname "$(command -v rg)")" rg

mkdir -p "$tools"
export npm_config_unsafe_perm=true npm_config_yes=true npm_config_nodedir=/usr
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
pkg="$tools/code-server/lib/node_modules/code-server"
if [ ! -f "$pkg/.cortex-installed" ]; then
  rm -rf "$tools/code-server"
  # Scripts off for the global install: npm hands `npm_config_global=true` to lifecycle scripts, and
  # code-server's postinstall then runs its nested `npm install` (for lib/vscode) as a *global* install
  # of lib/vscode, which retires the code-server folder it is running from (ENOTEMPTY / TAR_ENTRY_ERROR).
  npm install -g --ignore-scripts --prefix "$tools/code-server" "code-server@$code_server_version"
  (
    cd "$pkg"
    unset npm_config_global npm_config_prefix
    npm rebuild argon2
    # postinstall.sh checks the Node major and the package manager from npm_config_user_agent.
    npm_config_user_agent="npm/$(npm --version) node/$(node --version) linux x64" sh ./postinstall.sh
  )
  touch "$pkg/.cortex-installed"
fi
if [ ! -d "$tools/driver/node_modules/playwright-core" ]; then
  npm install --prefix "$tools/driver" --no-audit --no-fund "playwright-core@$playwright_version"
fi
"$tools/code-server/bin/code-server" --version
echo "code-server: $tools/code-server/bin/code-server"
echo "playwright-core: $tools/driver/node_modules/playwright-core"
