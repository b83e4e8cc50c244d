#!/usr/bin/env bash
# Refreshes the verbatim copy of Fuzz/Sources/FuzzChecks/FuzzChecks.swift inside
# Tests/HearthTests/FuzzRegressionTests.swift (between its BEGIN/END markers).
set -euo pipefail
cd "$(dirname "$0")/.."
t=Tests/HearthTests/FuzzRegressionTests.swift
head=$(sed '/^\/\/ BEGIN FuzzChecks.swift$/,$d' "$t")
{ printf '%s\n' "$head"; echo '// BEGIN FuzzChecks.swift'; cat Fuzz/Sources/FuzzChecks/FuzzChecks.swift; echo '// END FuzzChecks.swift'; } > "$t.new"
mv "$t.new" "$t"
