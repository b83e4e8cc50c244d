import Testing
@testable import HearthModel

private func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    var s = ""
    for b in bytes {
        s.append(digits[Int(b >> 4)])
        s.append(digits[Int(b & 0x0F)])
    }
    return s
}

/// The deterministic test message of length `n` used for the per-length vectors
/// (Python: `bytes(((i*7+3)&0xff) for i in range(n))`).
private func pattern(_ n: Int) -> [UInt8] {
    (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
}

@Suite("SHA-1")
struct SHA1Tests {
    @Test("FIPS 180-4 / RFC 3174 vectors")
    func standardVectors() {
        #expect(hex(SHA1.hash([UInt8]())) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(hex(SHA1.hash("abc".utf8)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(
            hex(SHA1.hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    }

    @Test("one million 'a', one-shot and fed in uneven pieces")
    func millionA() {
        let expected = "34aa973cd4c4daa4f61eeb2bdbad27316534016f"
        let message = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(hex(SHA1.hash(message)) == expected)

        var hasher = SHA1Hasher()
        var offset = 0
        var step = 1
        while offset < message.count {
            let end = min(message.count, offset + step)
            hasher.update(message[offset..<end])
            offset = end
            step = step % 150 + 7
        }
        #expect(hex(hasher.finalize()) == expected)
    }

    @Test("block-boundary lengths match Python hashlib")
    func boundaryLengths() {
        let expected: [Int: String] = [
            1: "9842926af7ca0a8cca12604f945414f07b01e13d",
            55: "ddf57317ef34bfee3b6df83d359098930eb278bc",
            56: "a0d492bb0fc889d0eca3bc137066ab6f4f74f369",
            57: "11a02dcf95859677a62e75024067c22b165d890f",
            63: "c55856749bef509bdfe6bfebfc7bf4e793e82132",
            64: "bede92be29c3874e1b54ddc77988d606fc857a8e",
            65: "b05a80522b053d6dc7e0a517d0e70212c7dad11f",
            119: "504e27376a6e0f0dba8295b85cb25dc4dfa17d23",
            120: "82134b02fb3f702491be9bed581eeab59334acb2",
            127: "34d5e582029e9b9b85b2febe31da3db7cdabaaea",
            128: "a09133e6730ffe899efb70204cb5646cd5dc24ee",
            129: "808aea332ce367541d37adae7f94e59c5c1a934e",
            130: "6e95f38fbdd38454ab4370ca87d628b526515950",
        ]
        for (n, digest) in expected {
            #expect(hex(SHA1.hash(pattern(n))) == digest, "length \(n)")
        }
    }

    @Test("every length 0…130 matches Python hashlib (digest of all 131 digests)")
    func everyLength() {
        // Python: sha1(b"".join(sha1(pattern(n)).digest() for n in range(131))).hexdigest()
        var all: [UInt8] = []
        for n in 0...130 { all += SHA1.hash(pattern(n)) }
        #expect(hex(SHA1.hash(all)) == "b5fed4935db74380bc137c89243f5f29ec8fcd55")
    }

    @Test("incremental updates at every split point equal the one-shot digest")
    func incrementalSplits() {
        for n in [0, 63, 64, 65, 130] {
            let message = pattern(n)
            let oneShot = SHA1.hash(message)
            for split in 0...n {
                var hasher = SHA1Hasher()
                hasher.update(message[0..<split])
                hasher.update(message[split...])
                #expect(hasher.finalize() == oneShot, "length \(n) split \(split)")
            }
        }
    }

    @Test("non-contiguous sequences hash like contiguous ones; finalize resets")
    func nonContiguousAndReset() {
        for n in [0, 1, 64, 100, 130] {
            let message = pattern(n)
            let lazy = message.lazy.map { $0 }  // no contiguous storage
            #expect(SHA1.hash(lazy) == SHA1.hash(message))
            var hasher = SHA1Hasher()
            hasher.update(message.prefix(10))
            hasher.update(lazy.dropFirst(10))
            #expect(hasher.finalize() == SHA1.hash(message))
        }
        var hasher = SHA1Hasher()
        hasher.update("abc".utf8)
        _ = hasher.finalize()
        #expect(hex(hasher.finalize()) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        hasher.update("abc".utf8)
        #expect(hex(hasher.finalize()) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(SHA1.hash(pattern(5)).count == SHA1.digestByteCount)
    }

    @Test("raw buffer update")
    func rawBuffer() {
        let message = pattern(100)
        var hasher = SHA1Hasher()
        message.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        #expect(hasher.finalize() == SHA1.hash(message))
    }

    @Test("Firebase check: base64(sha1(utf8(\"number:4010000000000000\")))")
    func firebaseComposition() {
        // Python: base64.b64encode(hashlib.sha1(b"number:4010000000000000").digest())
        #expect(Base64.encode(SHA1.hash("number:4010000000000000".utf8)) == "eVih19a6ZDz3NL32uVBtg9KSgQY=")
    }
}

@Suite("Base64")
struct Base64Tests {
    static let rfc4648: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ]

    @Test("RFC 4648 §10 vectors encode and decode")
    func rfcVectors() {
        for (plain, encoded) in Self.rfc4648 {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.encode(plain.utf8) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
        }
    }

    @Test("all alphabet characters and all byte values round trip")
    func roundTrip() {
        let all = (0...255).map { UInt8($0) }
        #expect(Base64.encode([0xFB, 0xFF, 0xBF]) == "+/+/")
        for n in 0...all.count {
            let bytes = Array(all.prefix(n).reversed())
            let text = Base64.encode(bytes)
            #expect(text.utf8.count == (n + 2) / 3 * 4)
            #expect(Base64.decode(text) == bytes)
        }
        #expect(Base64.encode(all.lazy.map { $0 }) == Base64.encode(all))
    }

    @Test(
        "decode rejects invalid input",
        arguments: [
            "Zg", "Zg=", "Zm9", "Z===", "====", "Zg==Zg==", "Zm=v", "Zh==", "Zm9=",
            "Zm9v\n", " Zm9v", "Zm9v-_==", "Zm 9v", "é===",
        ])
    func rejects(_ text: String) {
        #expect(Base64.decode(text) == nil)
    }
}
