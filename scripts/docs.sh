#!/usr/bin/env bash
# Builds the documentation: a DocC archive per catalog (Sources/<Module>/<Module>.docc) and the
# `hearth` manual page. Fails if either generator fails, or on any DocC warning — in a catalog's
# articles or in a source doc comment (an unresolved or ambiguous link, an undocumented parameter).
# A symbol of another module is written in code voice (`HearthLog.LogError`): DocC does not
# resolve links across modules.
# Output: .build/plugins/Swift-DocC/outputs/<Module>.doccarchive and
#         .build/plugins/GenerateManual/outputs/HearthTool/hearth.1
# The manual uses the debug build (`swift test` or `swift build` leaves it; release would rebuild
# every dependency).
set -euo pipefail
cd "$(dirname "$0")/.."

targets=()
for catalog in Sources/*/*.docc; do
    targets+=(--target "$(basename "$(dirname "$catalog")")")
done
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$SECONDS
swift package generate-documentation "${targets[@]}" 2>&1 | tee "$log" | grep -E '^(warning|error)|Generated documentation archive' || true
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "docs: generate-documentation failed" >&2; tail -40 "$log" >&2; exit 1; }
if grep -q '^warning' "$log"; then
    grep -A1 '^warning' "$log" >&2
    echo "docs: $(grep -c '^warning' "$log") DocC warnings (above)" >&2
    exit 1
fi
echo "docs: $(( ${#targets[@]} / 2 )) archives in $((SECONDS - start)) s"
start=$SECONDS
swift package generate-manual --configuration debug
[ -s .build/plugins/GenerateManual/outputs/HearthTool/hearth.1 ] || { echo "docs: no hearth.1" >&2; exit 1; }
echo "docs: hearth.1 in $((SECONDS - start)) s"
