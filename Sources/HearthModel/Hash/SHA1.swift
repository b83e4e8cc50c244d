// SHA1: FIPS 180-4 SHA-1, used only for Firebase's (non-security) node hash.

/// SHA-1 (FIPS 180-4) digests.
///
/// SHA-1 is **not** collision resistant; Hearth uses it only because Firebase's node hash
/// (a non-security content fingerprint) is defined with it.
package enum SHA1 {
    /// The length of a digest in bytes.
    package static let digestByteCount = 20

    /// The 20-byte SHA-1 digest of `bytes`.
    package static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var hasher = SHA1Hasher()
        hasher.update(bytes)
        return hasher.finalize()
    }
}

/// An incremental SHA-1 computation: feed bytes with ``update(_:)`` in any number of pieces,
/// then take the digest with ``finalize()``.
///
/// Contiguous inputs are compressed directly in 64-byte blocks; only a trailing partial
/// block is buffered (in one 64-byte buffer allocated once per hasher).
package struct SHA1Hasher: Sendable {
    /// The five 32-bit chaining words H0…H4.
    private struct State: Sendable {
        var h0: UInt32 = 0x6745_2301
        var h1: UInt32 = 0xEFCD_AB89
        var h2: UInt32 = 0x98BA_DCFE
        var h3: UInt32 = 0x1032_5476
        var h4: UInt32 = 0xC3D2_E1F0
    }

    private var state = State()
    /// Bytes of the current incomplete block. Invariant: `pending.count < 64` between calls.
    private var pending: [UInt8] = []
    /// Total number of bytes fed so far (the message length, modulo 2^64).
    private var byteCount: UInt64 = 0

    /// Creates a hasher for a new, empty message.
    package init() {
        pending.reserveCapacity(64)
    }

    /// Appends `bytes` to the message.
    package mutating func update(_ bytes: some Sequence<UInt8>) {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            update(bufferPointer: UnsafeRawBufferPointer(buffer))
        }
        if handled != nil { return }
        for byte in bytes {
            pending.append(byte)
            byteCount &+= 1
            if pending.count == 64 { compressPending() }
        }
    }

    /// Appends the bytes of `buffer` to the message.
    package mutating func update(bufferPointer buffer: UnsafeRawBufferPointer) {
        byteCount &+= UInt64(buffer.count)
        var offset = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, buffer.count)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<take]))
            offset = take
            guard pending.count == 64 else {
                assert(offset == buffer.count, "a partial block is left pending only when the input ran out")
                return
            }
            compressPending()
        }
        var local = state
        while buffer.count - offset >= 64 {
            SHA1Hasher.compress(&local, UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + 64)]))
            offset += 64
        }
        state = local
        if offset < buffer.count {
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[offset...]))
        }
        assert(pending.count < 64, "less than one block is pending between updates")
    }

    /// Pads the message, returns its 20-byte digest, and resets the hasher to the empty message.
    package mutating func finalize() -> [UInt8] {
        let bitLength = byteCount &* 8
        pending.append(0x80)
        if pending.count > 56 {
            pending.append(contentsOf: repeatElement(0, count: 64 - pending.count))
            compressPending()
        }
        pending.append(contentsOf: repeatElement(0, count: 56 - pending.count))
        for shift in stride(from: 56, through: 0, by: -8) {
            pending.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        compressPending()

        var digest: [UInt8] = []
        digest.reserveCapacity(SHA1.digestByteCount)
        for word in [state.h0, state.h1, state.h2, state.h3, state.h4] {
            digest.append(UInt8(truncatingIfNeeded: word >> 24))
            digest.append(UInt8(truncatingIfNeeded: word >> 16))
            digest.append(UInt8(truncatingIfNeeded: word >> 8))
            digest.append(UInt8(truncatingIfNeeded: word))
        }
        assert(digest.count == SHA1.digestByteCount, "a SHA-1 digest is 20 bytes")
        self = SHA1Hasher()
        return digest
    }

    /// Compresses the full 64-byte `pending` block and empties it.
    private mutating func compressPending() {
        assert(pending.count == 64, "only a whole 64-byte block is compressed")
        var local = state
        pending.withUnsafeBytes { SHA1Hasher.compress(&local, $0) }
        state = local
        pending.removeAll(keepingCapacity: true)
    }

    /// The SHA-1 compression function on one 64-byte block (FIPS 180-4 §6.1.2).
    private static func compress(_ state: inout State, _ block: UnsafeRawBufferPointer) {
        assert(block.count == 64, "a SHA-1 block is 64 bytes")
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 80) { w in
            for t in 0..<16 {
                w[t] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: t * 4, as: UInt32.self))
            }
            for t in 16..<80 {
                w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1)
            }
            var a = state.h0, b = state.h1, c = state.h2, d = state.h3, e = state.h4
            for t in 0..<80 {
                let f: UInt32, k: UInt32
                switch t {
                case 0..<20: f = (b & c) | (~b & d); k = 0x5A82_7999
                case 20..<40: f = b ^ c ^ d; k = 0x6ED9_EBA1
                case 40..<60: f = (b & c) | (b & d) | (c & d); k = 0x8F1B_BCDC
                default: f = b ^ c ^ d; k = 0xCA62_C1D6
                }
                let temp = rotl(a, 5) &+ f &+ e &+ k &+ w[t]
                e = d
                d = c
                c = rotl(b, 30)
                b = a
                a = temp
            }
            state.h0 &+= a
            state.h1 &+= b
            state.h2 &+= c
            state.h3 &+= d
            state.h4 &+= e
        }
    }

    @inline(__always)
    private static func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 {
        (x << n) | (x >> (32 - n))
    }
}
