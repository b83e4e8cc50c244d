// Replay: streams the records after a given LSN, in order, from the segment files.

/// One record read back from the log.
public struct LogRecord: Sendable {
    /// Its LSN.
    public var lsn: LSN
    /// Engine-defined type.
    public var type: UInt8
    /// Raw flags byte (bit0 compressed, bit1 skippable, bit2 continued: more records of the same
    /// atomic batch follow).
    public var flags: UInt8
    /// The decompressed payload.
    public var payload: [UInt8]
    /// Segment file name (tooling).
    public var file: String
    /// Byte offset of the record in that file (tooling).
    public var offset: UInt64
    /// Payload bytes as stored (tooling).
    public var storedSize: Int
    /// Payload bytes after decompression.
    public var rawSize: Int

    /// Whether a reader that does not know `type` may skip the record.
    public var isSkippable: Bool { flags & Layout.flagSkippable != 0 }
    /// Whether this record is followed by more records of the same atomic batch.
    public var isContinued: Bool { flags & Layout.flagContinued != 0 }
}

/// Iterates records after an LSN. Not thread-safe; use from one thread. Created by ``Log/reader(after:knownTypes:)``.
public final class LogReader {
    private let fs: any FileSystem
    private let directory: String
    private let segments: [Manifest.Entry]
    private let after: LSN
    private let end: LSN
    private let knownTypes: Set<UInt8>?
    private var index: Int
    private var cursor: SegmentCursor?
    private var file: (any StoreFile)?
    private let inflater = Inflater()

    init(
        fs: any FileSystem, directory: String, segments: [Manifest.Entry], after: LSN, end: LSN,
        knownTypes: Set<UInt8>?
    ) {
        self.fs = fs
        self.directory = directory
        self.segments = segments
        self.after = after
        self.end = end
        self.knownTypes = knownTypes
        // Start at the last segment whose base LSN is ≤ after + 1.
        index = max(0, (segments.lastIndex { $0.baseLSN <= after + 1 }) ?? 0)
    }

    deinit { try? file?.close() }

    /// The next record with LSN in `after+1 ... end`, or nil when done. Records of unknown types that
    /// are flagged skippable are skipped when `knownTypes` was given; unknown others throw.
    public func next() throws(LogError) -> LogRecord? {
        while true {
            if cursor == nil {
                guard index < segments.count else { return nil }
                let name = Layout.segmentName(segments[index].number)
                let f: any StoreFile
                do { f = try fs.open(joinPath(directory, name), mode: .readOnly) } catch {
                    throw error.code == .notFound ? .missingFile(file: name) : .io(error)
                }
                file = f
                cursor = try SegmentCursor(reader: try ChunkedReader(file: f, name: name))
                guard cursor!.header.baseLSN == segments[index].baseLSN else {
                    throw .corruption(file: name, offset: 24, reason: "segment base LSN disagrees with the MANIFEST")
                }
            }
            let name = cursor!.name
            if cursor!.expectedLSN > end { return nil }
            switch try cursor!.next() {
            case .end:
                try? file?.close()
                file = nil
                cursor = nil
                index += 1
                continue
            case let .invalid(at, reason):
                throw .corruption(file: name, offset: at, reason: reason)
            case let .hardError(e):
                throw e
            case let .record(h, at, stored):
                if h.lsn <= after { continue }
                if let known = knownTypes, !known.contains(h.type) {
                    if h.isSkippable { continue }
                    throw .unknownRecordType(file: name, offset: at, type: h.type)
                }
                var payload = stored
                if h.isCompressed {
                    guard let raw = inflater.decompress(stored, rawCount: Int(h.rawLength)) else {
                        throw .corruption(file: name, offset: at, reason: "payload does not inflate to its raw length")
                    }
                    payload = raw
                }
                return LogRecord(
                    lsn: h.lsn, type: h.type, flags: h.flags, payload: payload, file: name, offset: at,
                    storedSize: Int(h.storedLength), rawSize: Int(h.rawLength))
            }
        }
    }
}
