// What a scan of a store directory found. Produced by the read-only scanner; recovery acts on it.

/// One record as found on disk (for tooling).
public struct RecordInfo: Sendable, Equatable {
    /// Segment file name.
    public var file: String
    /// Byte offset of the record header in the file.
    public var offset: UInt64
    /// The record's LSN.
    public var lsn: LSN
    /// Engine-defined type byte.
    public var type: UInt8
    /// Raw flag byte (bit0 compressed, bit1 skippable, bit2 continued).
    public var flags: UInt8
    /// Payload bytes as stored (compressed size when compressed).
    public var storedSize: Int
    /// Payload bytes after decompression.
    public var rawSize: Int
}

/// The scan of one segment file.
public struct SegmentScan: Sendable {
    /// File name.
    public var file: String
    /// Segment number.
    public var number: UInt64
    /// File size in bytes.
    public var size: UInt64
    /// LSN of its first record (from its header), 0 if the header is unreadable.
    public var baseLSN: LSN
    /// Every valid record, in order (empty unless the scan was asked to keep records).
    public var records: [RecordInfo]
    /// Number of valid records.
    public var recordCount: Int
    /// End of the valid prefix: recovery keeps bytes `0..<validEnd` of this file.
    public var validEnd: UInt64
    /// LSN of the last valid record, or baseLSN - 1 if none.
    public var lastLSN: LSN
    /// Zero bytes after the last record of the LAST segment, up to the end of the file: space a
    /// writer preallocated ahead of its tail (FORMAT.md §4.2). The normal end of the log, not
    /// damage; recovery cuts it off. Zero for every other segment and when the tail is not all
    /// zeros (then it is a torn tail, in ``ScanReport/damage``).
    public var preallocatedTail: UInt64 = 0
}

/// Damage found by a scan.
public struct Damage: Sendable {
    /// The damaged file.
    public var file: String
    /// Where the damage starts.
    public var offset: UInt64
    /// The typed error recovery raises for it (unless it is a torn tail).
    public var error: LogError
    /// True when it is the torn tail of the last segment that recovery truncates (the normal result of
    /// a crash); false for corruption that stops recovery (or that salvage moves aside).
    public var isTornTail: Bool
}

/// A scan of a whole store directory. Computed without writing anything.
public struct ScanReport: Sendable {
    /// MANIFEST generation, nil if there is no readable MANIFEST.
    public var manifestGeneration: UInt64?
    /// The checkpoint named by the MANIFEST: file, LSN and body length.
    public var checkpoint: (file: String, lsn: LSN, bodyLength: UInt64)?
    /// The earlier checkpoint files that checkpoint reads chunks from (FORMAT.md §6), which stay
    /// live with it.
    public var referencedCheckpoints: [String] = []
    /// Every live segment, in order (stops at the first that could not be opened).
    public var segments: [SegmentScan]
    /// Temp files (`*.tmp`) that open removes.
    public var tempFiles: [String]
    /// Segment and checkpoint files not named by the MANIFEST, which open removes.
    public var strayFiles: [String]
    /// Files moved aside by an earlier salvage (`*.broken`); never touched.
    public var brokenFiles: [String]
    /// The first problem found, if any. Recovery truncates a torn tail and refuses anything else.
    public var damage: Damage?
    /// Whether the directory holds no store yet (no MANIFEST and no log files).
    public var isEmptyStore: Bool
    /// LSN of the last valid record of the live log (or the checkpoint LSN when the log is empty).
    public var lastLSN: LSN

    /// The valid record count over all segments.
    public var recordCount: Int { segments.reduce(0) { $0 + $1.recordCount } }

    // Recovery inputs (not public): the decoded MANIFEST and the state to resume writing from.
    var manifest: Manifest?
    /// Index of the segment holding the damage, when there is damage in a segment.
    var damagedSegment: Int?
    /// For record-level damage in a segment: the end of that segment's valid prefix (salvage keeps it).
    var salvagePrefixEnd: UInt64?
    /// Chain value at the valid end of the last kept segment.
    var endChain: UInt32 = 0
    /// The header of every scanned segment (same order as `segments`), nil if unreadable.
    var headers: [SegmentHeader?] = []
}
