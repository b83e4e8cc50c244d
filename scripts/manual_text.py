#!/usr/bin/env python3
"""Keeps the non-ASCII characters of the `hearth` help texts in its manual page.

ArgumentParser's generate-manual drops every non-ASCII character (`≥`, `…`, `—`, …) and escapes
backslashes, so neither the characters nor roff escapes can pass through it. scripts/docs.sh
therefore hands it the tool's help (`--experimental-dump-help`) with each such character as an
ASCII placeholder, then turns the placeholders in the page into roff's `\\[uXXXX]` escapes, which
groff and mandoc render as the character.

Usage:
    python3 scripts/manual_text.py encode < dump.json > ascii.json   # characters -> placeholders
    python3 scripts/manual_text.py decode PAGE                       # placeholders -> escapes, in place
    python3 scripts/manual_text.py check DUMP PAGE                   # exit 1 unless PAGE keeps them all
    python3 scripts/manual_text.py --self-test
Python 3 standard library only.
"""

import json
import re
import sys
from collections import Counter

PLACEHOLDER = re.compile(r"@u([0-9A-F]{4,6})@")
ESCAPE = re.compile(r"\\\[u([0-9A-F]{4,6})\]")


def encode_text(text):
    if PLACEHOLDER.search(text):
        raise ValueError(f"the help text already holds a placeholder: {PLACEHOLDER.search(text).group(0)}")
    return "".join(c if ord(c) < 128 else f"@u{ord(c):04X}@" for c in text)


def decode_page(page):
    return PLACEHOLDER.sub(lambda m: f"\\[u{m.group(1)}]", page)


def encode_json(value):
    """The dump with every string (keys too) encoded."""
    if isinstance(value, str):
        return encode_text(value)
    if isinstance(value, list):
        return [encode_json(v) for v in value]
    if isinstance(value, dict):
        return {encode_text(k): encode_json(v) for k, v in value.items()}
    return value


def non_ascii(text):
    return Counter(c for c in text if ord(c) >= 128)


def missing(dump_text, page):
    """The characters of the dump's strings the page does not render, with how many are lost."""
    wanted = Counter()

    def walk(value):
        if isinstance(value, str):
            wanted.update(non_ascii(value))
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)

    walk(json.loads(dump_text))
    rendered = Counter(chr(int(m.group(1), 16)) for m in ESCAPE.finditer(page)) + non_ascii(page)
    return {c: n - rendered[c] for c, n in wanted.items() if rendered[c] < n}


def self_test():
    dump = json.dumps({"abstract": "at least ≥ 32 bytes … — done", "n": 1, "list": ["\\e ok"]}, ensure_ascii=False)
    encoded = json.dumps(encode_json(json.loads(dump)))
    assert all(ord(c) < 128 for c in encoded), encoded
    assert "@u2265@" in encoded and "@u2026@" in encoded and "@u2014@" in encoded, encoded
    page = decode_page(json.loads(encoded)["abstract"])
    assert page == "at least \\[u2265] 32 bytes \\[u2026] \\[u2014] done", page
    assert missing(dump, page) == {}, missing(dump, page)
    assert missing(dump, "at least  32 bytes  done") == {"≥": 1, "…": 1, "—": 1}
    try:
        encode_text("@u2265@")
        raise AssertionError("a placeholder in the input must be refused")
    except ValueError:
        pass
    print("manual_text: ok")


def main(argv):
    if argv[1:] == ["--self-test"]:
        self_test()
        return 0
    if argv[1:2] == ["encode"] and len(argv) == 2:
        json.dump(encode_json(json.load(sys.stdin)), sys.stdout)
        return 0
    if argv[1:2] == ["decode"] and len(argv) == 3:
        with open(argv[2], encoding="utf-8") as f:
            page = f.read()
        with open(argv[2], "w", encoding="utf-8") as f:
            f.write(decode_page(page))
        return 0
    if argv[1:2] == ["check"] and len(argv) == 4:
        with open(argv[2], encoding="utf-8") as f:
            dump = f.read()
        with open(argv[3], encoding="utf-8") as f:
            page = f.read()
        lost = missing(dump, page)
        for c, n in sorted(lost.items()):
            print(f"manual_text: {argv[3]} lost {n} of U+{ord(c):04X} {c}", file=sys.stderr)
        return 1 if lost else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
