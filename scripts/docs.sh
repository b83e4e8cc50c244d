#!/usr/bin/env bash
# Builds the documentation: a DocC archive per catalog (Sources/<Module>/<Module>.docc) and the
# `hearth` manual page. Fails if either generator fails, or on any DocC warning — in a catalog's
# articles or in a source doc comment (an unresolved or ambiguous link, an undocumented parameter).
# A symbol of another module is written in code voice (`HearthLog.LogError`): DocC does not
# resolve links across modules.
# Output: .build/plugins/Swift-DocC/outputs/<Module>.doccarchive and
#         .build/plugins/GenerateManual/outputs/HearthTool/hearth.1
# The manual uses the debug build (`swift test` or `swift build` leaves it; release would rebuild
# every dependency); it keeps the help texts' non-ASCII characters as roff escapes.
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
page=.build/plugins/GenerateManual/outputs/HearthTool/hearth.1
swift package generate-manual --configuration debug
[ -s "$page" ] || { echo "docs: no hearth.1" >&2; exit 1; }
# ArgumentParser's generator drops every non-ASCII character (and escapes backslashes, so no roff
# escape passes through it either): run it again on the help with those characters as ASCII
# placeholders, then turn the placeholders into roff escapes (scripts/manual_text.py). The page
# must then render every character of the help.
python3 scripts/manual_text.py --self-test
# (SwiftPM names the plugin's build of it generate-manual-tool.)
generator=$(find .build -type f \( -name generate-manual -o -name generate-manual-tool \) -perm -u+x | head -n 1)
[ -n "$generator" ] || { echo "docs: generate-manual not found under .build" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$work"' EXIT
"$(swift build --show-bin-path)/hearth" --experimental-dump-help >"$work/dump.json"
python3 scripts/manual_text.py encode <"$work/dump.json" >"$work/ascii.json"
printf '#!/bin/sh\nexec cat "%s"\n' "$work/ascii.json" >"$work/hearth"
chmod +x "$work/hearth"
"$generator" "$work/hearth" --output-directory "$work"
python3 scripts/manual_text.py decode "$work/hearth.1"
python3 scripts/manual_text.py check "$work/dump.json" "$work/hearth.1" || { echo "docs: hearth.1 lost characters" >&2; exit 1; }
mv "$work/hearth.1" "$page"
echo "docs: hearth.1 in $((SECONDS - start)) s"
