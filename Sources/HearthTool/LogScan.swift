@_spi(HearthInternals) import Hearth
import HearthLog

/// The read-only view of a store's files that `dump`, `verify` and `stats` share: the
/// scanner's report (the same scan recovery runs) and the records' payloads, read straight
/// from the segment files without taking the lock or changing anything.
struct LogScan {
    /// Record header size (FORMAT.md §5): the payload follows it.
    static let recordHeaderSize = 32
    /// Records start at multiples of this (FORMAT.md §5).
    static let recordAlignment = 8
    /// Checkpoint header size (FORMAT.md): body offsets are file offsets minus this.
    static let checkpointHeaderSize: UInt64 = 64

    let directory: String
    let report: ScanReport
    private let fs = POSIXFileSystem()
    private let files = FileCache()

    /// Scans `directory` read-only. A missing directory, or one without a store, fails.
    /// `progress`, if given, shows the scan as its `segments` phase.
    init(directory: String, progress: Progress? = nil) throws {
        self.directory = directory
        do {
            if let progress {
                progress.phase("segments", total: Int(clamping: LogScan.segmentBytes(directory)))
                report = try Log.verify(directory: directory, fileSystem: POSIXFileSystem()) {
                    progress.update(Int(clamping: $0))
                }
            } else {
                report = try Log.verify(directory: directory)
            }
        } catch {
            if case .storeMissing = error { throw StoreAccess.missingStore(directory) }
            throw error
        }
        if report.isEmptyStore { throw StoreAccess.missingStore(directory) }
    }

    /// The bytes of the segment files in `directory` (the scan's total, for its progress).
    static func segmentBytes(_ directory: String) -> UInt64 {
        let fs = POSIXFileSystem()
        var total: UInt64 = 0
        for name in (try? fs.listDirectory(directory)) ?? [] where name.hasPrefix("seg-") && name.hasSuffix(".log") {
            guard let f = try? fs.open(directory + "/" + name, mode: .readOnly) else { continue }
            total += (try? f.size()) ?? 0
            try? f.close()
        }
        return total
    }

    /// Every valid record, in log order.
    var records: [RecordInfo] { report.segments.flatMap(\.records) }

    /// The checkpoint LSN (0 without a checkpoint).
    var checkpointLSN: LSN { report.checkpoint?.lsn ?? 0 }

    /// Bytes a record takes in its segment: header, payload, padding.
    static func extent(_ r: RecordInfo) -> UInt64 {
        UInt64((recordHeaderSize + r.storedSize + recordAlignment - 1) / recordAlignment * recordAlignment)
    }

    /// The bytes of the live files (MANIFEST, checkpoint, segments), as ``Store/stats()``
    /// counts them (not the zeros a writer preallocated after the last record, FORMAT.md §4.2);
    /// nil when a file cannot be read.
    func footprintBytes() -> UInt64? {
        var names = ["MANIFEST"]
        if let c = report.checkpoint { names.append(c.file) }
        names += report.segments.map(\.file)
        var total: UInt64 = 0
        for name in names {
            guard let f = try? fs.open(directory + "/" + name, mode: .readOnly) else { return nil }
            defer { try? f.close() }
            guard let size = try? f.size() else { return nil }
            total += size
        }
        return total - (report.segments.last?.preallocatedTail ?? 0)
    }

    /// The record's payload, decompressed.
    func payload(_ r: RecordInfo) throws(LogError) -> [UInt8] {
        let file: any StoreFile
        do { file = try files.open(directory + "/" + r.file, fs) } catch { throw .io(error) }
        let stored: [UInt8]
        do { stored = try file.read(at: r.offset + UInt64(LogScan.recordHeaderSize), count: r.storedSize) } catch {
            throw .io(error)
        }
        guard stored.count == r.storedSize else {
            throw .corruption(
                file: r.file, offset: r.offset, reason: "record payload is cut short (file changed during the scan?)")
        }
        if r.flags & 1 == 0 { return stored }
        guard let raw = RawDeflate.decompress(stored, rawCount: r.rawSize) else {
            throw .corruption(file: r.file, offset: r.offset, reason: "payload does not inflate to its raw length")
        }
        return raw
    }

    /// The record's events, for an event-batch record.
    func events(_ r: RecordInfo) throws -> [StoreEvent] {
        let bytes = try payload(r)
        do { return try EventCodec.decode(bytes) } catch {
            throw StoreError.corruptRecord(file: r.file, offset: r.offset, lsn: r.lsn, reason: "\(error)")
        }
    }

    /// Open segment files, one handle each, closed when the scan goes away.
    private final class FileCache {
        var open: [String: any StoreFile] = [:]

        func open(_ path: String, _ fs: POSIXFileSystem) throws(FileSystemError) -> any StoreFile {
            if let f = open[path] { return f }
            let f = try fs.open(path, mode: .readOnly)
            open[path] = f
            return f
        }

        deinit { for f in open.values { try? f.close() } }
    }
}
