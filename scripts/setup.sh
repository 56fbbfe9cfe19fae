#!/usr/bin/env bash
# Sets up a fresh Debian/Ubuntu machine: Chromium, fonts and the PostgreSQL server the store tests
# start (from the distribution), the real-page corpus, the npm dependencies (without Electron's
# binary, which `npm start` fetches when needed) and the build.
set -euo pipefail
cd "$(dirname "$0")/.."

have_chromium() {
  [ -n "${CHROMIUM_PATH:-}" ] && [ -x "${CHROMIUM_PATH}" ] && return 0
  for p in /usr/lib/chromium/chromium /usr/bin/chromium /usr/bin/chromium-browser /usr/bin/google-chrome; do
    [ -x "$p" ] && return 0
  done
  return 1
}

# The store conformance suite starts a PostgreSQL server of its own (on a temporary directory and
# a loopback port) from the distribution's binaries, never from whatever PATH holds.
have_postgres_server() {
  compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null
}

# What the distribution must provide: Chromium when none is found, and the fonts real pages need,
# whether or not Chromium was already there: CJK, Arabic and the other scripts (Noto), colour
# emoji, and metric-compatible Arial/Times/Courier (Liberation). Without them such text is
# captured as empty boxes and emoji in black and white.
missing=()
have_chromium || missing+=(chromium fonts-dejavu-core)
# The tests sign a render link with the shell recipe of docs/render-links.md, which uses openssl.
command -v openssl >/dev/null || missing+=(openssl)
# --ca-file gives the browser its authorities in an NSS database made with certutil (and the tests try it).
command -v certutil >/dev/null || missing+=(libnss3-tools)
have_postgres_server || missing+=(postgresql)
for f in fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji fonts-liberation; do
  # dpkg -s also answers for a package removed with its configuration left: read its status.
  status=$(dpkg -s "$f" 2>/dev/null || true)
  [[ "$status" == *"Status: install ok installed"* ]] || missing+=("$f")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "Installing from the distribution's packages: ${missing[*]}..."
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

node -e 'const [a,b]=process.versions.node.split(".").map(Number); if (a<20||(a===20&&b<19)) { console.error("Node.js 20.19 or newer is needed, found "+process.versions.node); process.exit(1) }'

# The real-page corpus the capture conformance test and the benchmark use: Debian documentation
# packages downloaded and unpacked into ~/.cache/screenshot-appliance/corpus, never installed
# (installing some of them removes Node.js). Cached: a second run downloads nothing.
echo "Fetching the real-page corpus..."
node scripts/corpus.mjs

# The apps corpus (test/apps/apps-corpus.test.ts): real web apps from the distribution, which the
# test starts itself on loopback ports in temporary directories. Their packages may start system
# services on their default ports; the test never uses those. Installing a package can remove
# others (some remove Node.js): apt's simulation is read first, and nothing is installed if it
# would remove a package.
apps=(prometheus netdata transmission-daemon transmission-cli dokuwiki php-cli glances)
missing_apps=()
for p in "${apps[@]}"; do
  status=$(dpkg -s "$p" 2>/dev/null || true)
  [[ "$status" == *"Status: install ok installed"* ]] || missing_apps+=("$p")
done
if [ "${#missing_apps[@]}" -gt 0 ]; then
  echo "Installing the apps corpus from the distribution's packages: ${missing_apps[*]}..."
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  removed=$(apt-get -s install --no-install-recommends "${missing_apps[@]}" | awk '/^Remv /{print $2}')
  if [ -n "$removed" ]; then
    echo "Not installing the apps corpus: it would remove $(echo "$removed" | tr '\n' ' ')" >&2
    exit 1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing_apps[@]}" >/dev/null
fi

echo "Installing npm dependencies..."
ELECTRON_SKIP_BINARY_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
echo "Building..."
npm run build --silent
echo "Setup complete."
