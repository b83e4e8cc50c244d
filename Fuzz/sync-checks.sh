#!/usr/bin/env bash
# Links the fuzz checks into the main package's tests: for every Fuzz/Sources/FuzzChecks/*.swift,
# Tests/HearthTests/FuzzChecks/<name> becomes a symbolic link to it (and for every
# Fuzz/Sources/FuzzRulesChecks/*.swift, Tests/HearthRulesTests/FuzzChecks/<name>), and links to files
# that no longer exist are removed. Run it after adding, renaming or removing a file of the checks; the
# main package cannot depend on the Fuzz package, and FuzzRegressionTests (RulesFuzzRegressionTests)
# fails while a copy is missing or differs.
# Usage: Fuzz/sync-checks.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# Each pair: the fuzzers' checks, and the test target that replays the corpus through them.
link() {
    local src=$1 dst=$2
    mkdir -p "$dst"
    for f in "$dst"/*.swift; do
        [ -e "$f" ] || [ -L "$f" ] || continue
        [ -f "$src/$(basename "$f")" ] || { rm "$f"; echo "sync-checks: removed $f"; }
    done
    for f in "$src"/*.swift; do
        name=$(basename "$f")
        ln -sfn "../../../$src/$name" "$dst/$name"
    done
    echo "sync-checks: $(ls "$dst"/*.swift | wc -l) files linked in $dst"
}
link Fuzz/Sources/FuzzChecks Tests/HearthTests/FuzzChecks
link Fuzz/Sources/FuzzRulesChecks Tests/HearthRulesTests/FuzzChecks
