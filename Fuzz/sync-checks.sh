#!/usr/bin/env bash
# Links the fuzz checks into the main package's tests: for every Fuzz/Sources/<Checks>/*.swift,
# Tests/<TestTarget>/FuzzChecks/<name> becomes a symbolic link to it, and links to files that no longer
# exist are removed. Each checks module goes to a test target that depends on what it needs:
#   FuzzChecks       -> Tests/HearthTests/FuzzChecks        (Hearth, HearthLog, HearthTesting)
#   FuzzServerChecks -> Tests/HearthServerTests/FuzzChecks  (HearthServer)
#   FuzzRulesChecks  -> Tests/HearthRulesTests/FuzzChecks   (HearthRules)
# Run it after adding, renaming or removing a file of the checks; the main package cannot depend on the
# Fuzz package, and FuzzRegressionTests (RulesFuzzRegressionTests) fails while a copy is missing or differs.
# Usage: Fuzz/sync-checks.sh
set -euo pipefail
cd "$(dirname "$0")/.."
sync() {
    local src=Fuzz/Sources/$1 dst=Tests/$2/FuzzChecks
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
sync FuzzChecks HearthTests
sync FuzzServerChecks HearthServerTests
sync FuzzRulesChecks HearthRulesTests
