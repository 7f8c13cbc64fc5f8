#!/usr/bin/env bash
# Installs the vendor CLIs the harness grades, at the exact versions
# vendors/package-lock.json pins, into vendors/node_modules (npm ci: the
# lockfile is the only source, and an install that would change it fails).
# Needs Node.js and npm, and the npm registry.
#
# `--latest` is the maintainers' drift watch instead: it installs the newest
# published versions into a folder of their own (vendors/latest, never the
# lockfile's), grades them over the whole suite against the scripted model,
# and compares their verdicts with the committed ones (reports/vendors.json)
# through `check --verdicts`: it exits 0 when nothing moved, and 1 naming
# every runtime and cell that moved otherwise. The pinned install and CI are
# left alone.
set -euo pipefail
cd "$(dirname "$0")/../vendors"
# Each --version runs in a throwaway home: with the user's, Codex writes
# under ~/.codex even to print its version.
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
versions() {
  for cli in codex claude pi; do
    printf '%-7s %s\n' "$cli" "$(HOME="$home" CODEX_HOME="$home" "$1/$cli" --version 2>&1 | grep -v "^WARNING" | head -n 1)"
  done
}
if [ "${1:-}" != --latest ]; then
  npm ci --no-audit --no-fund --loglevel=error
  versions node_modules/.bin
  exit 0
fi
mkdir -p latest/seats
packages=$(node -e 'for (const name of Object.keys(require("./package.json").dependencies)) console.log(name + "@latest")')
# shellcheck disable=SC2086 # one package per word
npm install --prefix latest --no-save --no-package-lock --no-audit --no-fund --loglevel=error $packages
versions latest/node_modules/.bin
# The committed seats, each pointed at the newest CLI: same names, so the
# same columns, compared with the committed verdicts of the pinned ones.
args=()
for vendor in codex claude-code pi; do
  node -e '
    const [from, to, command] = process.argv.slice(1);
    const seat = JSON.parse(require("fs").readFileSync(from, "utf8"));
    delete seat.$schema;
    seat.command = command;
    require("fs").writeFileSync(to, JSON.stringify(seat, null, 2) + "\n");
  ' "../harness/seats/vendors/$vendor.json" "latest/seats/$vendor.json" \
    "$PWD/latest/node_modules/.bin/$(node -e 'console.log({codex: "codex", "claude-code": "claude", pi: "pi"}[process.argv[1]])' "$vendor")"
  args+=(--seat "vendors/latest/seats/$vendor.json" --column "mcp:$vendor")
done
cd ..
cp reports/vendors.json vendors/latest/pinned-verdicts.json
cp reports/vendors.md vendors/latest/pinned-verdicts.md
exec cargo run --locked -q -p sharedos-conformance-cli -- check "${args[@]}" --verdicts vendors/latest/pinned-verdicts.json
