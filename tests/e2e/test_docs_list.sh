#!/usr/bin/env bash
# README's table of folders names every page of docs/ (issue 28 point 7:
# it listed 9 of 16), so that a reader of the README finds them all: each
# docs/NAME.md must appear as NAME in the `docs/` row.
set -eu
SRC=$2
row=$(grep -E '^\| `docs/` \|' "$SRC/README.md" || true)
if [ -z "$row" ]; then
  echo "README.md has no \`docs/\` row in its table of folders"
  echo "e2e docs list: 0 passed, 1 failed"
  exit 1
fi
missing=0
for page in "$SRC"/docs/*.md; do
  name=$(basename "$page" .md)
  if ! grep -qwF "$name" <<<"$row"; then
    echo "README.md's docs/ row does not name $name (docs/$name.md)"
    missing=$((missing + 1))
  fi
done
if [ "$missing" = 0 ]; then
  echo "e2e docs list: 1 passed, 0 failed"
else
  echo "e2e docs list: 0 passed, 1 failed ($missing pages not listed)"
  exit 1
fi
