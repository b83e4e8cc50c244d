// Every error the log reports. Corruption errors name the file (its name inside the store directory)
// and the byte offset where the damage starts, so a person or a tool can go and look.

/// The errors of ``Log`` and its reader, scanner and checkpoints.
public indirect enum LogError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another process (or another `Log` in this process) holds the store's lock file.
    case storeLocked(path: String)
    /// This process already has the store open (a second `Store`/`Log` on the same directory).
    case storeAlreadyOpen(path: String)
    /// The directory does not exist and `createIfMissing` is false.
    case storeMissing(path: String)
    /// Segment or checkpoint files exist but there is no MANIFEST: refusing to guess.
    case manifestMissing(path: String)
    /// A file has a format version this code does not know (FORMAT.md: readers reject unknown versions).
    case unsupportedVersion(file: String, offset: UInt64, version: UInt16)
    /// Damage: bad magic or checksum, impossible length, broken chain, trailing garbage in a sealed segment…
    case corruption(file: String, offset: UInt64, reason: String)
    /// A record's LSN is not the one that must come next.
    case lsnGap(file: String, offset: UInt64, expected: LSN, found: LSN)
    /// A file the MANIFEST names does not exist.
    case missingFile(file: String)
    /// A record type the reader does not know and that is not flagged skippable.
    case unknownRecordType(file: String, offset: UInt64, type: UInt8)
    /// A payload larger than ``Log/maxPayloadSize``.
    case recordTooLarge(size: Int, limit: Int)
    /// A caller error (e.g. a checkpoint LSN beyond the end of the log).
    case invalidArgument(String)
    /// A file-system call failed.
    case io(FileSystemError)
    /// An earlier write or sync failed; the log refuses appends until it is reopened.
    case poisoned(underlying: LogError)
    /// The log was closed.
    case closed
    /// The log was opened read-only (``Log/Options/readOnly``): appends, flushes and checkpoint
    /// installs are refused. `path` is the store directory.
    case readOnly(path: String)

    /// A one-line description.
    public var description: String {
        switch self {
        case let .storeLocked(p): "store is locked by another process: \(p)"
        case let .storeAlreadyOpen(p): "store is already open in this process: \(p)"
        case let .storeMissing(p): "store directory does not exist: \(p)"
        case let .manifestMissing(p): "store has log files but no MANIFEST: \(p)"
        case let .unsupportedVersion(f, o, v): "\(f) @\(o): unsupported format version \(v)"
        case let .corruption(f, o, r): "\(f) @\(o): corruption: \(r)"
        case let .lsnGap(f, o, e, g): "\(f) @\(o): LSN gap: expected \(e), found \(g)"
        case let .missingFile(f): "file named by the MANIFEST is missing: \(f)"
        case let .unknownRecordType(f, o, t): "\(f) @\(o): unknown record type \(t) (not skippable)"
        case let .recordTooLarge(s, l): "record payload of \(s) bytes exceeds the limit of \(l)"
        case let .invalidArgument(m): "invalid argument: \(m)"
        case let .io(e): "I/O error: \(e)"
        case let .poisoned(u): "log is poisoned by an earlier failure (reopen the store): \(u)"
        case .closed: "log is closed"
        case let .readOnly(p): "store was opened read-only, so it cannot be written: \(p)"
        }
    }

    /// The file named by a corruption-type error, if any.
    public var file: String? {
        switch self {
        case let .unsupportedVersion(f, _, _), let .corruption(f, _, _), let .lsnGap(f, _, _, _),
            let .unknownRecordType(f, _, _):
            f
        case let .missingFile(f): f
        default: nil
        }
    }

    /// The byte offset named by a corruption-type error, if any.
    public var offset: UInt64? {
        switch self {
        case let .unsupportedVersion(_, o, _), let .corruption(_, o, _), let .lsnGap(_, o, _, _),
            let .unknownRecordType(_, o, _):
            o
        default: nil
        }
    }

    /// Whether this error describes damage on disk (as opposed to I/O, locking or caller errors).
    public var isCorruption: Bool {
        switch self {
        case .unsupportedVersion, .corruption, .lsnGap, .missingFile, .manifestMissing: true
        default: false
        }
    }
}

/// Runs `body`, turning file-system errors into `LogError.io` and passing LogErrors through.
@inline(__always)
func logIO<T>(_ body: () throws -> T) throws(LogError) -> T {
    do { return try body() } catch let e as LogError { throw e } catch let e as FileSystemError {
        throw .io(e)
    } catch { preconditionFailure("unexpected error type: \(error)") }
}
