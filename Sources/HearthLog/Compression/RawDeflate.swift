// Raw DEFLATE for layers above the log (the engine's checkpoint chunks), through the same
// long-lived, pooled zlib streams the log uses for records.

/// Raw DEFLATE (RFC 1951) compression through the system zlib.
package enum RawDeflate {
    /// One pool of long-lived deflaters per zlib level 1…9.
    private static let pools = (1...9).map { DeflaterPool(level: Int32($0)) }

    /// The raw DEFLATE stream of `input` when it is strictly smaller than `input`, else `nil`.
    /// - Parameter level: zlib level 1…9 (clamped).
    package static func compress(_ input: [UInt8], level: Int32 = 6) -> [UInt8]? {
        pools[Int(min(max(level, 1), 9)) - 1].compress(input)
    }

    /// Inflates one complete raw DEFLATE stream that must decode to exactly `rawCount` bytes
    /// and consume all of `input`; `nil` on any mismatch (the caller reports corruption).
    package static func decompress(_ input: [UInt8], rawCount: Int) -> [UInt8]? {
        Inflater().decompress(input, rawCount: rawCount)
    }
}
