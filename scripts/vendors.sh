#!/usr/bin/env bash
# Installs the vendor CLIs the harness grades, at the exact versions
# vendors/package-lock.json pins, into vendors/node_modules (npm ci: the
# lockfile is the only source, and an install that would change it fails).
# Needs Node.js and npm, and the npm registry.
set -euo pipefail
cd "$(dirname "$0")/../vendors"
npm ci --no-audit --no-fund --loglevel=error
bin=node_modules/.bin
# Each --version runs in a throwaway home: with the user's, Codex writes
# under ~/.codex even to print its version.
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
for cli in codex claude pi; do
  printf '%-7s %s\n' "$cli" "$(HOME="$home" CODEX_HOME="$home" "$bin/$cli" --version 2>&1 | grep -v "^WARNING" | head -n 1)"
done
