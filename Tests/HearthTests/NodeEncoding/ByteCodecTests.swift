import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthLog
import HearthTesting

/// The primitive layer under both codecs.
@Suite struct ByteCodecTests {
    @Test func varintsAndZigzagsRoundTripAtTheEdges() throws {
        let unsigned: [UInt64] = [0, 1, 127, 128, 255, 16_383, 16_384, UInt64(Int64.max), UInt64(Int64.max) + 1, .max]
        let signed: [Int64] = [0, -1, 1, -64, 64, .min, .max, .min + 1, .max - 1]
        var w = ByteWriter()
        for v in unsigned { w.varint(v) }
        for v in signed { w.zigzag(v) }
        var r = ByteReader(w.bytes)
        for v in unsigned { #expect(try r.varint() == v) }
        for v in signed { #expect(try r.zigzag() == v) }
        #expect(r.isAtEnd)
        // Sizes: 7 bits per byte.
        #expect(ByteWriter.sized { $0.varint(UInt64(127)) } == 1)
        #expect(ByteWriter.sized { $0.varint(UInt64(128)) } == 2)
        #expect(ByteWriter.sized { $0.varint(UInt64.max) } == 10)
        #expect(ByteWriter.sized { $0.zigzag(-1) } == 1)
    }

    @Test func randomPrimitivesRoundTrip() throws {
        for seed: UInt64 in 1...50 {
            var rng = SeededRandom(seed: seed)
            let u = rng.next() >> UInt64(rng.int(0...63)), z = Int64(bitPattern: rng.next()) >> Int64(rng.int(0...63))
            let a = UInt32(truncatingIfNeeded: rng.next()), b = rng.next(), d = Gen.double(&rng), s = Gen.string(&rng)
            var w = ByteWriter()
            w.varint(u); w.zigzag(z); w.u32(a); w.u64(b); w.double(d); w.bool(seed % 2 == 0); w.string(s)
            var r = ByteReader(w.bytes)
            #expect(try r.varint() == u, "seed \(seed)")
            #expect(try r.zigzag() == z, "seed \(seed)")
            #expect(try r.u32() == a, "seed \(seed)")
            #expect(try r.u64() == b, "seed \(seed)")
            #expect(try r.double().bitPattern == d.bitPattern, "seed \(seed)")
            #expect(try r.bool() == (seed % 2 == 0), "seed \(seed)")
            #expect(Array(try r.string().utf8) == Array(s.utf8), "seed \(seed)")
            #expect(r.isAtEnd, "seed \(seed)")
        }
    }

    @Test func readsNeverCrossTheEndOfTheUnit() {
        // A reader over bytes[1..<5] of a longer array: reads must stop at `end`, not at the
        // array's end.
        let bytes: [UInt8] = [0xEE, 0x04, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68]
        var r = ByteReader(bytes, from: 1, end: 5)
        #expect(throws: DecodeError.self) { try r.string() }  // claims 4 bytes, 3 are in the unit
        var r2 = ByteReader(bytes, from: 2, end: 6)
        #expect(throws: DecodeError.self) { try r2.u64() }
        var r3 = ByteReader(bytes, from: 2, end: 6)
        #expect((try? r3.raw(5)) == nil)
        #expect((try? r3.raw(-1)) == nil)
        #expect((try? r3.raw(4)).map(Array.init) == [0x61, 0x62, 0x63, 0x64])
    }

    @Test func malformedPrimitivesAreErrors() {
        func fails(_ bytes: [UInt8], _ read: (inout ByteReader) throws -> Void) -> Bool {
            var r = ByteReader(bytes)
            do { try read(&r); return false } catch { return error is DecodeError }
        }
        #expect(fails([]) { _ = try $0.u8() })
        #expect(fails([0x80]) { _ = try $0.varint() })  // truncated
        #expect(fails(Array(repeating: 0xFF, count: 9) + [0x02]) { _ = try $0.varint() })  // > 64 bits
        #expect(fails(Array(repeating: 0x80, count: 10) + [0x00]) { _ = try $0.varint() })  // 11 bytes
        #expect(!fails(Array(repeating: 0xFF, count: 9) + [0x01]) { _ = try $0.varint() })  // UInt64.max
        #expect(fails([0x05]) { _ = try $0.count(limit: 4) })
        #expect(fails([0x02]) { _ = try $0.bool() })
        #expect(fails([1, 2, 3]) { _ = try $0.u32() })
        #expect(fails([0x02, 0xC3, 0x28]) { _ = try $0.string() })  // invalid UTF-8
        #expect(fails([0x01]) { _ = try $0.string() })  // length beyond input
    }

    /// Strings decode exactly, ASCII (read without validation) and not, from any offset and
    /// among other fields; a byte of invalid UTF-8 after ASCII still fails.
    @Test func stringsDecodeAsciiAndUnicodeExactly() throws {
        let strings = ["", "a", "-NxYz09_key", "héllo", "日本語", "🔥 fire", String(repeating: "x", count: 300)]
        var w = ByteWriter()
        for s in strings {
            w.u8(7)
            w.string(s)
        }
        var r = ByteReader(w.bytes)
        for s in strings {
            #expect(try r.u8() == 7)
            #expect(try r.string() == s)
        }
        #expect(r.isAtEnd)
        var bad = ByteReader([0x04, 0x61, 0x62, 0x63, 0xFF])
        #expect(throws: DecodeError.self) { _ = try bad.string() }
        var overlong = ByteReader([0x03, 0x61, 0xC0, 0x80])
        #expect(throws: DecodeError.self) { _ = try overlong.string() }
    }

    /// `string()` accepts exactly the byte strings the standard library's validating decoder
    /// accepts, and reads them as it does — over random bytes drawn mostly from UTF-8's lead
    /// and continuation ranges, so that truncated, overlong and surrogate sequences (and the
    /// ones whose U+FFFD replacement has their length) all come up.
    @Test func acceptsExactlyValidUTF8() throws {
        let pieces: [[UInt8]] = [
            [0x61], [0x7F], [0x00], [0x80], [0xBF], [0xC0], [0xC2], [0xDF], [0xE0], [0xED], [0xEF], [0xF0],
            [0xF4], [0xF5], [0xFF], [0xA0], [0x9F], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98], [0xF0, 0x9F, 0x98, 0x80],
            [0xED, 0xA0, 0x80], [0xEF, 0xBF, 0xBD], [0xC3, 0xA9],
        ]
        var rng = SeededRandom(seed: 34)
        var valid = 0, invalid = 0
        for _ in 0..<20_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(rng.next() % 6) { bytes += pieces[Int(rng.next() % UInt64(pieces.count))] }
            var w = ByteWriter()
            w.varint(bytes.count)
            w.raw(bytes)
            var r = ByteReader(w.bytes)
            let expected = String(validating: bytes, as: UTF8.self)
            let got = try? r.string()
            #expect(got == expected, "\(bytes)")
            if let got { #expect(Array(got.utf8) == bytes) }
            if expected == nil { invalid += 1 } else { valid += 1 }
        }
        #expect(valid > 1_000 && invalid > 1_000)
    }

    /// The decoder's cache of recent keys answers a lookup only with a key of exactly the
    /// bytes looked up: keys that share their first 8 bytes and their length (and differ in
    /// the rest) fill every slot, and keys that differ only in length come and go.
    @Test func recentKeysAnswerOnlyWithTheSameBytes() {
        var recent = RecentKeys()
        while !recent.caching() {}
        var rng = SeededRandom(seed: 35)
        var hits = 0, misses = 0
        for i in 0..<5_000 {
            let tail = String((0..<4).map { _ in Character(Unicode.Scalar(UInt8(97 + rng.next() % 26))) })
            let s = i % 2 == 0 ? "abcdefgh" + tail : String(repeating: "x", count: Int(rng.next() % 16) + 1)
            let bytes = Array(s.utf8)
            let (head, rest) = bytes.withUnsafeBufferPointer { RecentKeys.words($0) }
            if let found = recent.key(length: bytes.count, head, rest) {
                #expect(Array(found.string.utf8) == bytes, "\(s) answered with \(found)")
                hits += 1
            } else {
                recent.remember(ChildKey(s), length: bytes.count, head, rest)
                misses += 1
            }
        }
        #expect(hits > 1_000 && misses > 1_000)
    }
}

extension ByteWriter {
    static func sized(_ body: (inout ByteWriter) -> Void) -> Int {
        var w = ByteWriter()
        body(&w)
        return w.bytes.count
    }
}
