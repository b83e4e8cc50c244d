// The MANIFEST: which checkpoint, which earlier checkpoint files it references and which segments
// are live (FORMAT.md §6).
//
//   0   8  magic "HRTHMAN\x01"
//   8   2  format version (1; 2 when it references earlier checkpoint files)
//  10   2  reserved, zero
//  12   4  segment count n (≤ 2^20)
//  16   8  generation: +1 on every replacement
//  24   8  checkpoint id (0 = no checkpoint; else the file is ckpt-<id as 16 hex>.ckpt)
//  32   8  checkpoint LSN
//  40   8  checkpoint body length
//  48   4  checkpoint body CRC32C, masked
//  52   4  referenced checkpoint count m (format 2; reserved, zero, in format 1)
//  56   8  reserved, zero
//  64  16n segment entries, ascending: segment number (8), base LSN (8)
//  64+16n 32m referenced checkpoints (format 2), ascending ids: id (8), LSN (8), body length (8),
//          body CRC32C masked (4), reserved zero (4)
//  then 4  masked CRC32C of every byte before it
//
// The file is exactly 68 + 16n + 32m bytes. It is only ever replaced whole: MANIFEST.tmp is written
// and synced, renamed over MANIFEST, and the directory is synced. With no referenced file it is
// written as format 1, so a store that never references one stays readable by builds that know
// only format 1.

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
    /// Earlier checkpoint files the current checkpoint reads chunks from, ascending by id (each
    /// below the checkpoint's id). They stay live with it.
    var references: [CheckpointRef] = []

    /// The file names this MANIFEST keeps live: its segments, its checkpoint and the files that
    /// checkpoint references.
    var liveFileNames: Set<String> {
        Set(segments.map { Layout.segmentName($0.number) })
            .union(([checkpoint].compactMap { $0 } + references).map { Layout.checkpointName($0.id) })
    }

    func encode() -> [UInt8] {
        let size =
            Layout.manifestFixedSize + Layout.manifestEntrySize * segments.count
            + Layout.manifestReferenceSize * references.count + 4
        var w = ByteWriter(capacity: size)
        w.raw(Layout.manifestMagic)
        w.u16(references.isEmpty ? Layout.formatVersion : Layout.manifestReferencesVersion)
        w.u16(0)
        w.u32(UInt32(segments.count))
        w.u64(generation)
        w.u64(checkpoint?.id ?? 0)
        w.u64(checkpoint?.lsn ?? 0)
        w.u64(checkpoint?.bodyLength ?? 0)
        w.u32(checkpoint?.bodyCRC ?? 0)
        w.u32(UInt32(references.count))
        w.zeros(8)
        for e in segments {
            w.u64(e.number)
            w.u64(e.baseLSN)
        }
        for r in references {
            w.u64(r.id)
            w.u64(r.lsn)
            w.u64(r.bodyLength)
            w.u32(r.bodyCRC)
            w.u32(0)
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
        guard version == Layout.formatVersion || version == Layout.manifestReferencesVersion else {
            throw .unsupportedVersion(file: file, offset: 8, version: version)
        }
        guard b.count >= Layout.manifestFixedSize + 4 else {
            throw .corruption(file: file, offset: 0, reason: "MANIFEST truncated (\(b.count) bytes)")
        }
        let n = Int(b.le(UInt32.self, at: 12))
        // Format 1 keeps these bytes reserved: they are never a count there.
        let m = version == Layout.formatVersion ? 0 : Int(b.le(UInt32.self, at: 52))
        guard n <= Layout.maxManifestSegments, m <= Layout.maxManifestReferences,
            b.count
                == Layout.manifestFixedSize + Layout.manifestEntrySize * n + Layout.manifestReferenceSize * m + 4
        else {
            throw .corruption(
                file: file, offset: 12,
                reason: "segment count \(n) and reference count \(m) do not match the file size \(b.count)")
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
        let refs = try decodeReferences(
            b, at: Layout.manifestFixedSize + Layout.manifestEntrySize * n, count: m,
            below: ckpt, file: file)
        return Manifest(generation: b.le(UInt64.self, at: 16), checkpoint: ckpt, segments: segs, references: refs)
    }

    /// The referenced checkpoint entries of a format 2 MANIFEST: ids strictly ascending, each
    /// below the checkpoint's (a MANIFEST without a checkpoint references nothing).
    private static func decodeReferences(
        _ b: [UInt8], at start: Int, count m: Int, below ckpt: CheckpointRef?, file: String
    ) throws(LogError) -> [CheckpointRef] {
        var refs: [CheckpointRef] = []
        refs.reserveCapacity(m)
        for i in 0..<m {
            let o = start + Layout.manifestReferenceSize * i
            let r = CheckpointRef(
                id: b.le(UInt64.self, at: o), lsn: b.le(UInt64.self, at: o + 8),
                bodyLength: b.le(UInt64.self, at: o + 16), bodyCRC: b.le(UInt32.self, at: o + 24))
            guard let ckpt, r.id > 0, r.id < ckpt.id, r.lsn <= ckpt.lsn, r.bodyLength < Layout.maxLSN,
                b.le(UInt32.self, at: o + 28) == 0, refs.last.map({ $0.id < r.id }) ?? true
            else {
                throw .corruption(
                    file: file, offset: UInt64(o), reason: "referenced checkpoint entry out of range or order")
            }
            refs.append(r)
        }
        return refs
    }
}
