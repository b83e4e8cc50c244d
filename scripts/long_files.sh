#!/usr/bin/env bash
# Lists the Swift files under Sources/ longer than a limit (default 400 lines), longest first;
# exit 1 if there is any (the house rule: no Sources file over ~400 lines).
# Usage: scripts/long_files.sh [LIMIT] [FOLDER...]   (folders default to Sources)
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-400}
shift || true
[ $# -gt 0 ] || set -- Sources
found=$(find "$@" -name '*.swift' -type f -print0 | xargs -0 wc -l | grep -v ' total$' \
    | awk -v limit="$limit" '$1 > limit' | sort -rn || true)
if [ -n "$found" ]; then
    printf '%s\n' "$found"
    echo "long_files: $(printf '%s\n' "$found" | wc -l) files over $limit lines" >&2
    exit 1
fi
echo "long_files: none over $limit lines" >&2
