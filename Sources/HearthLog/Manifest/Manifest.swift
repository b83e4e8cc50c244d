// The MANIFEST: which checkpoint and which segments are live (FORMAT.md §6).
//
//   0   8  magic "HRTHMAN\x01"
//   8   2  format version (1)
//  10   2  reserved, zero
//  12   4  segment count n (≤ 2^20)
//  16   8  generation: +1 on every replacement
//  24   8  checkpoint id (0 = no checkpoint; else the file is ckpt-<id as 16 hex>.ckpt)
//  32   8  checkpoint LSN
//  40   8  checkpoint body length
//  48   4  checkpoint body CRC32C, masked
//  52  12  reserved, zero
//  64  16n segment entries, ascending: segment number (8), base LSN (8)
//  64+16n 4 masked CRC32C of every byte before it
//
// The file is exactly 68 + 16n bytes. It is only ever replaced whole: MANIFEST.tmp is written and
// synced, renamed over MANIFEST, and the directory is synced.

/// The decoded MANIFEST.
struct Manifest: Equatable, Sendable {
    struct Entry: Equatable, Sendable {
        var number: UInt64
        var baseLSN: LSN
    }

    struct CheckpointRef: Equatable, Sendable {
        var id: UInt64
        var lsn: LSN
        var bodyLength: UInt64
        var bodyCRC: UInt32
    }

    var generation: UInt64
    var checkpoint: CheckpointRef?
    var segments: [Entry]

    func encode() -> [UInt8] {
        var w = ByteWriter(capacity: Layout.manifestFixedSize + Layout.manifestEntrySize * segments.count + 4)
        w.raw(Layout.manifestMagic)
        w.u16(Layout.formatVersion)
        w.u16(0)
        w.u32(UInt32(segments.count))
        w.u64(generation)
        w.u64(checkpoint?.id ?? 0)
        w.u64(checkpoint?.lsn ?? 0)
        w.u64(checkpoint?.bodyLength ?? 0)
        w.u32(checkpoint?.bodyCRC ?? 0)
        w.zeros(12)
        for e in segments {
            w.u64(e.number)
            w.u64(e.baseLSN)
        }
        w.u32(CRC32C.mask(CRC32C.checksum(w.bytes)))
        return w.bytes
    }

    /// Decodes and validates a whole MANIFEST file.
    static func decode(_ b: [UInt8], file: String = Layout.manifestName) throws(LogError) -> Manifest {
        guard b.count >= 10, Array(b[0..<8]) == Layout.manifestMagic else {
            throw .corruption(file: file, offset: 0, reason: "bad MANIFEST magic or truncated file (\(b.count) bytes)")
        }
        let version = b.le(UInt16.self, at: 8)
        guard version == Layout.formatVersion else {
            throw .unsupportedVersion(file: file, offset: 8, version: version)
        }
        guard b.count >= Layout.manifestFixedSize + 4 else {
            throw .corruption(file: file, offset: 0, reason: "MANIFEST truncated (\(b.count) bytes)")
        }
        let n = Int(b.le(UInt32.self, at: 12))
        guard n <= Layout.maxManifestSegments,
            b.count == Layout.manifestFixedSize + Layout.manifestEntrySize * n + 4
        else {
            throw .corruption(
                file: file, offset: 12, reason: "segment count \(n) does not match the file size \(b.count)")
        }
        let crcAt = b.count - 4
        guard CRC32C.mask(CRC32C.checksum(Array(b[0..<crcAt]))) == b.le(UInt32.self, at: crcAt) else {
            throw .corruption(file: file, offset: UInt64(crcAt), reason: "MANIFEST checksum mismatch")
        }
        let ckptID = b.le(UInt64.self, at: 24)
        let ckpt =
            ckptID == 0
            ? nil
            : CheckpointRef(
                id: ckptID, lsn: b.le(UInt64.self, at: 32),
                bodyLength: b.le(UInt64.self, at: 40),
                bodyCRC: b.le(UInt32.self, at: 48))
        if let c = ckpt, c.lsn >= Layout.maxLSN || c.bodyLength >= Layout.maxLSN || c.id >= Layout.maxLSN {
            throw .corruption(file: file, offset: 24, reason: "checkpoint fields out of range")
        }
        var segs: [Entry] = []
        segs.reserveCapacity(n)
        for i in 0..<n {
            let o = Layout.manifestFixedSize + Layout.manifestEntrySize * i
            let e = Entry(number: b.le(UInt64.self, at: o), baseLSN: b.le(UInt64.self, at: o + 8))
            if e.number >= Layout.maxLSN || e.baseLSN >= Layout.maxLSN || e.baseLSN == 0 {
                throw .corruption(file: file, offset: UInt64(o), reason: "segment entry out of range")
            }
            if let last = segs.last, e.number <= last.number || e.baseLSN < last.baseLSN {
                throw .corruption(file: file, offset: UInt64(o), reason: "segment entries out of order")
            }
            segs.append(e)
        }
        return Manifest(generation: b.le(UInt64.self, at: 16), checkpoint: ckpt, segments: segs)
    }
}
