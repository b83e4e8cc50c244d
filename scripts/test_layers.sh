#!/usr/bin/env bash
# Self-check of scripts/layers.py on the fixture trees in scripts/testdata/:
#   acyclic/  must exit 0, with exactly its four folder edges (names in comments, strings, private
#             types, nested types and `@_exported import typealias M.T` lines make none);
#   cyclic/   must exit 1 and name its folder cycle (Core/Events, Core/State) and module cycle (App, Core).
# Usage: scripts/test_layers.sh   (exit 1 on the first failed expectation)
set -uo pipefail
cd "$(dirname "$0")"
fail() { echo "test_layers: FAIL: $*" >&2; exit 1; }

out=$(python3 layers.py --root testdata/acyclic 2>/dev/null); rc=$?
[ "$rc" -eq 0 ] || fail "acyclic fixture exited $rc, expected 0"$'\n'"$out"
edges=$(printf '%s\n' "$out" | grep -E '^  \S+ -> \S+ ' | sed -E 's/^  (\S+ -> \S+) .*/\1/')
expected=$'App -> Core\nCore -> Base\nApp/. -> Core/.\nCore/. -> Base/.\nCore/. -> Core/High\nCore/High -> Core/Low'
[ "$edges" = "$expected" ] || fail "acyclic fixture edges:"$'\n'"$edges"$'\n'"expected:"$'\n'"$expected"

out=$(python3 layers.py --root testdata/cyclic 2>/dev/null); rc=$?
[ "$rc" -eq 1 ] || fail "cyclic fixture exited $rc, expected 1"$'\n'"$out"
grep -qx 'folder cycle: Core/Events, Core/State' <<<"$out" || fail "cyclic fixture: no folder cycle"$'\n'"$out"
grep -qx 'module cycle: App, Core' <<<"$out" || fail "cyclic fixture: no module cycle"$'\n'"$out"

out=$(python3 layers.py --root testdata/acyclic --long 5 2>/dev/null); rc=$?
[ "$rc" -eq 1 ] || fail "--long 5 on the acyclic fixture exited $rc, expected 1"
grep -q 'Core/Low/Low.swift' <<<"$out" || fail "--long 5 did not list Low.swift"

echo "test_layers: ok"
