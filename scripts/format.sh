#!/usr/bin/env bash
# Formats the package's Swift sources with the toolchain's swift-format and .swift-format.
#   scripts/format.sh           rewrite Sources/ and Tests/ in place (and Package.swift)
#   scripts/format.sh --check   change nothing; list what it would change, exit 1 if anything
# Fuzz/ and Benchmarks/ are separate packages and are left alone, as is generated code.
set -euo pipefail
cd "$(dirname "$0")/.."

paths=(Package.swift Sources Tests)
case "${1:-}" in
    --check)
        # [EndOfLineComment] (a trailing comment past the line length) is left out: the pretty
        # printer reports it but cannot fix it when the code before the comment is already long,
        # `// doc-sample: test` markers must end their line (DocSampleTests), and .swift-format has
        # no switch for it (it is a pretty-printer finding, not a rule).
        out=$(swift format lint --strict --recursive "${paths[@]}" 2>&1 | grep -v '\[EndOfLineComment\]') || true
        if [ -n "$out" ]; then
            printf '%s\n' "$out"
            files=$(printf '%s\n' "$out" | cut -d: -f1 | sort -u | wc -l)
            echo "format: $(printf '%s\n' "$out" | wc -l) findings in $files files; run scripts/format.sh" >&2
            exit 1
        fi
        echo "format: clean"
        ;;
    "")
        swift format --in-place --recursive "${paths[@]}"
        ;;
    *)
        echo "usage: scripts/format.sh [--check]" >&2
        exit 2
        ;;
esac
