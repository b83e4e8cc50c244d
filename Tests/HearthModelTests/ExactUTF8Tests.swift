import Testing
@testable import HearthModel

/// Keys and leaf strings are equal exactly when their UTF-8 bytes are.
@Suite struct ExactUTF8Tests {
    /// Every length from 0 to 40 (the word loop and the byte tail), the strings differing at
    /// each position in turn, or in length only.
    @Test func equalExactlyWhenEveryByteIs() {
        for n in 0...40 {
            let base = String((0..<n).map { Character(UnicodeScalar(UInt8(97 + $0 % 26))) })
            let copy = String(decoding: Array(base.utf8), as: UTF8.self)
            #expect(base.hasSameUTF8(as: copy))
            #expect(Node(.string(base)) == Node(.string(copy)))
            #expect(!base.hasSameUTF8(as: base + "a"))
            #expect(!(base + "a").hasSameUTF8(as: base))
            for i in 0..<n {
                var bytes = Array(base.utf8)
                bytes[i] = UInt8(ascii: "Z")
                let other = String(decoding: bytes, as: UTF8.self)
                #expect(!base.hasSameUTF8(as: other), "length \(n), byte \(i)")
                #expect(ChildKey(base) != ChildKey(other))
                #expect(Node(.string(base)) != Node(.string(other)))
            }
        }
    }

    /// Canonically equivalent strings (`==` says equal) differ as Firebase's keys and values do.
    @Test func canonicalEquivalentsDiffer() {
        let precomposed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(precomposed == decomposed)
        #expect(!precomposed.hasSameUTF8(as: decomposed))
        #expect(ChildKey(precomposed) != ChildKey(decomposed))
        #expect(JSONValue.string(precomposed) != JSONValue.string(decomposed))
        let long = String(repeating: "x", count: 30)
        #expect(!(long + precomposed).hasSameUTF8(as: long + decomposed))
    }

    /// A string compares equal to itself and to a substring's copy of the same bytes.
    @Test func sameBufferAndSubstrings() {
        let s = String(repeating: "hearth-", count: 20)
        #expect(s.hasSameUTF8(as: s))
        let tail = String(s.dropFirst(7))
        #expect(tail.hasSameUTF8(as: String(repeating: "hearth-", count: 19)))
        #expect(!tail.hasSameUTF8(as: s))
    }
}
