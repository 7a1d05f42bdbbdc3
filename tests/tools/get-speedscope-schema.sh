#!/usr/bin/env bash
# Fetches the JSON schema that speedscope publishes for its file format
# (shipped in the npm package `speedscope`) into build/ext/, where the
# speedscope tests look for it.  Without it those tests are skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=build/ext/speedscope
[ -s "$dest/file-format-schema.json" ] && exit 0
if ! command -v npm >/dev/null 2>&1; then
    echo "npm is not installed: the speedscope schema is not fetched" >&2
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && timeout 120 npm pack --silent speedscope@1 >/dev/null 2>&1) ||
    { echo "npm pack speedscope failed: the speedscope schema is not fetched" >&2; exit 0; }
tar -xzf "$tmp"/speedscope-*.tgz -C "$tmp" package/dist/release/file-format-schema.json
mkdir -p "$dest"
mv "$tmp/package/dist/release/file-format-schema.json" "$dest/"
echo "speedscope schema: $dest/file-format-schema.json"
