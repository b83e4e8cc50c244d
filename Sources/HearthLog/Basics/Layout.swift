// Constants of the on-disk format (FORMAT.md) and the names of the files of a store directory.

/// Format constants shared by the writer, the reader and the scanner. Changing any of them changes the
/// format: bump `formatVersion` and update FORMAT.md in the same change.
enum Layout {
    /// The only format version this code reads or writes (segments, MANIFEST, checkpoints).
    static let formatVersion: UInt16 = 1

    static let segmentMagic: [UInt8] = Array("HRTHSEG\u{1}".utf8)
    static let manifestMagic: [UInt8] = Array("HRTHMAN\u{1}".utf8)
    static let checkpointMagic: [UInt8] = Array("HRTHCKP\u{1}".utf8)

    /// Segment header size; the first record starts here.
    static let segmentHeaderSize = 64
    /// Record header size.
    static let recordHeaderSize = 32
    /// Records start at multiples of this within a segment (zero padding in between).
    static let recordAlignment = 8
    /// Checkpoint header size; the body starts here.
    static let checkpointHeaderSize = 64
    /// Fixed part of the MANIFEST, before the segment list.
    static let manifestFixedSize = 64
    /// Bytes per MANIFEST segment entry.
    static let manifestEntrySize = 16
    /// Upper bound on the number of live segments a MANIFEST may name (checked before allocating).
    static let maxManifestSegments = 1 << 20
    /// The MANIFEST format that lists referenced checkpoint files (FORMAT.md §6); a MANIFEST with
    /// none is written as ``formatVersion``, byte for byte what builds before it write.
    static let manifestReferencesVersion: UInt16 = 2
    /// Bytes per MANIFEST referenced-checkpoint entry (format 2).
    static let manifestReferenceSize = 32
    /// Upper bound on the referenced checkpoint files a MANIFEST may name (checked before allocating).
    static let maxManifestReferences = 1 << 16

    /// LSNs, ids and lengths decoded from disk must be below this (2^62), so that no arithmetic on a
    /// hostile value can overflow. A writer reaches it only after 2^62 records.
    static let maxLSN: UInt64 = 1 << 62

    /// Largest payload (uncompressed) a record may carry: 64 MiB.
    static let maxPayloadSize = 64 << 20

    // Record flag bits (FORMAT.md §5). Bits 3–7 are reserved and must be zero.
    static let flagCompressed: UInt8 = 1 << 0
    static let flagSkippable: UInt8 = 1 << 1
    static let flagContinued: UInt8 = 1 << 2
    static let knownFlags: UInt8 = flagCompressed | flagSkippable | flagContinued

    static let lockName = "LOCK"
    static let manifestName = "MANIFEST"
    static let tempSuffix = ".tmp"
    static let brokenSuffix = ".broken"

    static func hex16(_ v: UInt64) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: max(0, 16 - s.count)) + s
    }

    static func segmentName(_ number: UInt64) -> String { "seg-\(hex16(number)).log" }
    static func checkpointName(_ id: UInt64) -> String { "ckpt-\(hex16(id)).ckpt" }

    /// Parses "seg-<16 hex>.log".
    static func segmentNumber(fromName name: String) -> UInt64? {
        parseHex(name, prefix: "seg-", suffix: ".log")
    }

    /// Parses "ckpt-<16 hex>.ckpt".
    static func checkpointID(fromName name: String) -> UInt64? {
        parseHex(name, prefix: "ckpt-", suffix: ".ckpt")
    }

    private static func parseHex(_ name: String, prefix: String, suffix: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix),
            name.count == prefix.count + 16 + suffix.count
        else { return nil }
        let hex = name.dropFirst(prefix.count).dropLast(suffix.count)
        guard hex.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
        return UInt64(hex, radix: 16)
    }

    /// Rounds `n` up to the record alignment.
    static func aligned(_ n: Int) -> Int { (n + recordAlignment - 1) & ~(recordAlignment - 1) }
}
