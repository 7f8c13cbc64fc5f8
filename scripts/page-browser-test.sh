#!/usr/bin/env bash
# The conformance page in a real browser: writes `report --html` for the
# committed manifest, then drives headless Chromium over WebDriver
# (scripts/page-browser-test.py), which checks the heatmap, a filter and a
# drill-down, prints the page's size and timings, and leaves a screenshot
# in reports/page.png; then the same for a repeated run's bundle, whose
# drill-down must show a cell's runs (reports/page-repeated.png). Installs
# Debian's chromium and chromium-driver when either is missing (CI runs
# as root).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  export DEBIAN_FRONTEND=noninteractive
  install_chromium() { apt-get install -y --no-install-recommends chromium chromium-driver; }
  # A fresh image has no package lists; stale ones may name gone versions.
  if ! apt-cache show chromium chromium-driver >/dev/null 2>&1; then
    apt-get update
  fi
  install_chromium || { apt-get update && install_chromium; }
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo run --locked -q -p sharedos-conformance-cli -- report --html "$tmp/page.html"
python3 scripts/page-browser-test.py "$tmp/page.html" reports/conformance.json reports/page.png
# A repeated run's page: a cell's drill-down shows its runs (a shard keeps it quick).
cargo run --locked -q -p sharedos-conformance-cli -- certify --column process:python-reference \
  --repeat 2 --shard 1/8 --out "$tmp/repeated" >/dev/null
cargo run --locked -q -p sharedos-conformance-cli -- report --html "$tmp/repeated.html" "$tmp/repeated"
python3 scripts/page-browser-test.py "$tmp/repeated.html" "$tmp/repeated/manifest.json" reports/page-repeated.png
