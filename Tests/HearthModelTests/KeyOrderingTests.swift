import Testing
@testable import HearthModel
import HearthTesting

@Suite struct KeyOrderingTests {
    /// The iOS SDK's vector (`FUtilitiesTest testKeyComparison`), in ascending order.
    @Test func firebaseVectorIsAscending() {
        let keys: [ChildKey] = [
            "-2147483648", "0", "1", "2", "10", "2147483647", "-2147483649", "-2147483650", "-a",
            "2147483648", "21474836480", "2147483649", "a",
        ]
        for i in keys.indices.dropLast() {
            #expect(keys[i] < keys[i + 1], "\(keys[i]) < \(keys[i + 1])")
            #expect(!(keys[i + 1] < keys[i]))
        }
        #expect(keys.shuffled().sorted() == keys)
    }

    @Test func integerTiesShorterFirst() {
        #expect(ChildKey("7") < ChildKey("07"))
        #expect(ChildKey("07") < ChildKey("007"))
        #expect(ChildKey("0") < ChildKey("-0"))
        #expect(ChildKey("7") < ChildKey("8"))
        #expect(ChildKey("07") < ChildKey("8"))  // numeric value first, length only on ties
        #expect(ChildKey("-1") < ChildKey("0"))
        #expect(ChildKey("-10") < ChildKey("-9"))
    }

    @Test func integerParsingBoundaries() {
        #expect(ChildKey("2147483647").integerValue == Int32.max)
        #expect(ChildKey("2147483648").integerValue == nil)
        #expect(ChildKey("-2147483648").integerValue == Int32.min)
        #expect(ChildKey("-2147483649").integerValue == nil)
        #expect(ChildKey("0000000000007").integerValue == 7)  // leading zeros allowed
        #expect(ChildKey("12345678901").integerValue == nil)  // 11 significant digits
        #expect(ChildKey("-").integerValue == nil)
        #expect(ChildKey("").integerValue == nil)
        #expect(ChildKey("-0").integerValue == 0)
        #expect(ChildKey("-07").integerValue == -7)
        #expect(ChildKey("--1").integerValue == nil)
        #expect(ChildKey("/").integerValue == nil)  // the bytes just below "0" and above "9"
        #expect(ChildKey(":").integerValue == nil)
        #expect(ChildKey("12a").integerValue == nil)
        #expect(ChildKey("-Nx1").integerValue == nil)  // a push id's start
        #expect(ChildKey("+1").integerValue == nil)
        #expect(ChildKey("1.0").integerValue == nil)
        #expect(ChildKey(" 1").integerValue == nil)
        #expect(ChildKey("１").integerValue == nil)  // fullwidth digit is not an integer key
        // Past 2^31 sorts among strings, after every integer key.
        #expect(ChildKey("2147483647") < ChildKey("2147483648"))
        #expect(ChildKey("99") < ChildKey("2147483648"))
        #expect(ChildKey("3") < ChildKey("2147483648"))
    }

    /// Equality is byte equality of the UTF-8, for small (inline) and large (heap) strings and
    /// for strings bridged without contiguous UTF-8 (the slow path).
    @Test func equalityIsExactBytes() {
        let long = String(repeating: "abcdefgh", count: 8)
        let pairs: [(String, String, Bool)] = [
            ("", "", true), ("a", "a", true), ("a", "b", false), ("a", "ab", false),
            (long, long + "", true), (long, long + "x", false), (long + "y", long + "x", false),
            ("\u{E9}" + long, "e\u{301}" + long, false), ("x\u{E9}", "x\u{E9}", true),
        ]
        for (a, b, equal) in pairs {
            // A fresh copy of each, so the two never share storage.
            let ka = ChildKey(String(decoding: Array(a.utf8), as: UTF8.self))
            let kb = ChildKey(String(decoding: Array(b.utf8), as: UTF8.self))
            #expect((ka == kb) == equal, "\(a.debugDescription) vs \(b.debugDescription)")
            #expect((kb == ka) == equal)
            #expect((ka.hashValue == kb.hashValue) || !equal)
        }
    }

    @Test func canonicallyEquivalentKeysAreDistinct() {
        let precomposed = ChildKey("\u{E9}")  // é
        let decomposed = ChildKey("e\u{301}")  // e + combining acute
        #expect(precomposed.string == decomposed.string)  // Swift says equal…
        #expect(precomposed != decomposed)  // …Firebase does not.
        #expect(decomposed < precomposed)  // 'e' (0x65) < 0xE9
        var set = Set<ChildKey>()
        set.insert(precomposed)
        set.insert(decomposed)
        #expect(set.count == 2)
        let map = ChildMap().setting(precomposed, to: .number(1)).setting(decomposed, to: .number(2))
        #expect(map.count == 2)
        #expect(map[precomposed] == .number(1))
        #expect(map[decomposed] == .number(2))
    }

    @Test func utf16OrderNotScalarOrder() {
        // U+FF5E (fullwidth tilde) is above the surrogates in UTF-16, but below U+1F600 as a
        // code point. JavaScript orders by UTF-16 code units: 😀 (D83D DE00) < ～ (FF5E).
        let emoji = ChildKey("\u{1F600}")
        let fullwidth = ChildKey("\u{FF5E}")
        #expect(emoji < fullwidth)
        #expect(ChildKey.compareUTF16("\u{1F600}", "\u{FF5E}") < 0)
        #expect(ChildKey.compareUTF16("a\u{1F600}", "a\u{E000}") < 0)
        #expect(ChildKey.compareUTF16("\u{D7FF}", "\u{1F600}") < 0)
        #expect(ChildKey("Z") < ChildKey("a"))
        #expect(ChildKey("a") < ChildKey("aa"))
        #expect(ChildKey("-a") < ChildKey("a"))
    }

    /// Keys ranked apart (``ChildKey/Rank``: kind and first bytes) are in the order of their
    /// ranks, and equal keys rank equal: integer keys and strings mixed, long shared prefixes,
    /// and the code points where UTF-8 byte order and UTF-16 order part (U+E000…U+FFFF against
    /// supplementary ones) before, at and after the eighth byte. Sorting by rank, ties compared
    /// in full, gives `sorted()`'s order.
    @Test func ranksAgreeWithTheKeyOrder() {
        var rng = SeededRandom(seed: 0x52_414E_4B)
        let alphabet: [Unicode.Scalar] = [
            "a", "b", "z", "0", "1", "9", "-", "\u{0}", "\u{E9}", "\u{7FF}", "\u{800}", "\u{D7FF}",
            "\u{E000}", "\u{FFFD}", "\u{FFFF}", "\u{10000}", "\u{1F600}", "\u{10FFFF}",
        ]
        let prefixes = ["", "-NkP", "-NkPq8zA", "chat", "ab\u{E000}", "1"]
        for _ in 0..<300 {
            var keys: [ChildKey] = []
            for _ in 0..<Int(rng.next() % 60) {
                if rng.next() % 5 == 0 {
                    keys.append(ChildKey(String(Int32(truncatingIfNeeded: rng.next() % 2001) - 1000)))
                    continue
                }
                var s = String.UnicodeScalarView(prefixes[Int(rng.next() % UInt64(prefixes.count))].unicodeScalars)
                for _ in 0..<Int(rng.next() % 12) { s.append(alphabet[Int(rng.next() % UInt64(alphabet.count))]) }
                if !s.isEmpty { keys.append(ChildKey(String(s))) }
            }
            for a in keys {
                for b in keys {
                    let (ra, rb) = (ChildKey.Rank(a), ChildKey.Rank(b))
                    if a == b { #expect(ra == rb, "\(a) ranks apart from itself") }
                    if ra != rb { #expect((ra < rb) == (ChildKey.compare(a, b) < 0), "\(a) against \(b)") }
                }
            }
            let byRank = keys.map { (rank: ChildKey.Rank($0), key: $0) }.sorted { a, b in
                a.rank != b.rank ? a.rank < b.rank : ChildKey.compare(a.key, b.key) < 0
            }
            #expect(byRank.map(\.key.string) == keys.sorted().map(\.string))
        }
    }

    /// Cross-checks the fast comparison with a direct UTF-16 comparison on random strings.
    @Test func utf16ComparisonMatchesReference() {
        var rng = SeededRandom(seed: 42)
        let alphabet: [Unicode.Scalar] = [
            "a", "b", "0", "9", "-", "\u{E9}", "\u{301}", "\u{7FF}", "\u{800}",
            "\u{D7FF}", "\u{E000}", "\u{FFFD}", "\u{FFFF}", "\u{10000}", "\u{1F600}", "\u{10FFFF}",
        ]
        for _ in 0..<5_000 {
            func make() -> String {
                var s = String.UnicodeScalarView()
                for _ in 0..<Int(rng.next() % 5) { s.append(alphabet[Int(rng.next() % UInt64(alphabet.count))]) }
                return String(s)
            }
            let a = make(), b = make()
            let expected: Int =
                Array(a.utf16).lexicographicallyPrecedes(Array(b.utf16))
                ? -1 : (Array(a.utf16) == Array(b.utf16) ? 0 : 1)
            #expect(
                ChildKey.compareUTF16(a, b).signum() == expected,
                "\(Array(a.unicodeScalars)) vs \(Array(b.unicodeScalars))")
        }
    }

    @Test func sentinels() {
        #expect(BoundKey.min < BoundKey.key("-2147483648"))
        #expect(BoundKey.key("zzz") < BoundKey.max)
        #expect(BoundKey(wire: "[MIN_NAME]") == .min)
        #expect(BoundKey(wire: "[MAX_NAME]") == .max)
        #expect(BoundKey.min.compare(to: "a") < 0)
        #expect(BoundKey.max.compare(to: "a") > 0)
    }
}
