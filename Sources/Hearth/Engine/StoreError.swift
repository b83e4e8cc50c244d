import HearthLog
import HearthModel

/// Everything that can go wrong with a ``Store``. Every case says what and where.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The log failed: I/O errors, a locked store, damage found on open, a poisoned log.
    case log(LogError)
    /// A checkpoint body is damaged.
    case corruptCheckpoint(file: String, offset: UInt64, reason: String)
    /// A log record passed its checksum but its events could not be decoded.
    case corruptRecord(file: String, offset: UInt64, lsn: LSN, reason: String)
    /// An option is outside its allowed range.
    case invalidOption(String)
    /// A path breaks Firebase's rules.
    case invalidPath(PathError)
    /// Data breaks Firebase's rules.
    case invalidData(NodeError)
    /// A query breaks Firebase's rules.
    case invalidQuery(QueryError)
    /// No pending write has this id.
    case unknownWrite(id: Int64)
    /// No tracked query is at this location.
    case unknownQuery(QueryLocation)
    /// No queued transaction has this id.
    case unknownTransaction(id: Int64)
    /// No onDisconnect operation has this id.
    case unknownOnDisconnect(id: Int64)
    /// A writer id or write id for the writer watermarks is out of range.
    case invalidWriter(String)
    /// A write or sync failed earlier; the store refuses writes until it is reopened.
    case poisoned(String)
    /// The store was closed.
    case closed

    /// What happened and what to do about it, in one line: for logs, command-line tools and
    /// error dialogs.
    public var description: String { "\(whatHappened); \(whatToDo)" }

    /// What went wrong, and where (file and byte offset for damage on disk).
    var whatHappened: String {
        switch self {
        case .log(let e): e.description
        case let .corruptCheckpoint(file, offset, reason):
            "checkpoint \(file) is damaged at offset \(offset): \(reason)"
        case let .corruptRecord(file, offset, lsn, reason):
            "log record \(lsn) in \(file) at offset \(offset) passed its checksum but its events cannot be decoded: \(reason)"
        case .invalidOption(let s): "invalid store option: \(s)"
        case .invalidPath(let e): "invalid path: \(e.description)"
        case .invalidData(let e): "invalid data: \(e.description)"
        case .invalidQuery(let e): "invalid query: \(e.description)"
        case .unknownWrite(let id): "no pending write with id \(id)"
        case .unknownQuery(let loc): "no tracked query at \(loc)"
        case .unknownTransaction(let id): "no queued transaction with id \(id)"
        case .unknownOnDisconnect(let id): "no onDisconnect operation with id \(id)"
        case .invalidWriter(let why): "invalid writer watermark: \(why)"
        case .poisoned(let why): "the store refuses writes after an earlier failure (\(why))"
        case .closed: "the store is closed"
        }
    }

    /// What the caller can do about it.
    var whatToDo: String {
        switch self {
        case .log(let e):
            switch e {
            case .storeLocked: "close the other process's store, or open a different directory"
            case .storeAlreadyOpen: "use the Store already open, or close it first"
            case .storeMissing: "check the path, or open with createIfMissing to create a new store"
            case .unsupportedVersion: "open the store with the newer Hearth build that wrote it"
            case .io: "check the disk (space, permissions, hardware), then reopen the store"
            case .poisoned: "reopen the store; recovery keeps every commit that returned"
            case .closed: "open the store again"
            case .readOnly:
                "open the store without readOnly to write to it (it needs a writable directory and its lock)"
            case .recordTooLarge: "split the change into smaller commits"
            case .invalidArgument: "fix the argument"
            case .corruption, .lsnGap, .missingFile, .unknownRecordType, .manifestMissing:
                Self.damagedAdvice
            }
        case .corruptCheckpoint, .corruptRecord:
            Self.damagedAdvice
        case .invalidOption: "pass a value inside the option's documented range"
        case .invalidPath: "fix the path to follow Firebase's key rules; nothing was written"
        case .invalidData: "fix the value to follow Firebase's data rules; nothing was written"
        case .invalidQuery: "fix the query to follow Firebase's query rules"
        case .unknownWrite: "use an id returned by saveWrite that has not been acknowledged or removed"
        case .unknownQuery: "track the query first (trackQuery), or use the location it was tracked at"
        case .unknownTransaction: "use an id returned when the transaction was queued that is not yet finished"
        case .unknownOnDisconnect:
            "use an id returned when the onDisconnect operation was queued that is not yet cancelled"
        case .invalidWriter:
            "use a writer id of 1…\(EventCodec.maxWriterLength) UTF-8 bytes and a write id ≥ 0; nothing was written"
        case .poisoned: "close and reopen the store; recovery keeps every commit that returned"
        case .closed: "open the store again"
        }
    }

    /// What to do about damage on disk.
    static let damagedAdvice =
        "the store is damaged on disk; run `hearth verify` on it, then `hearth salvage` to keep"
        + " its longest valid prefix (open with `salvage`; damaged files are moved aside as *.broken), or restore it"
        + " from a copy, or delete it and sync again from the server"

    /// Whether the error reports damage on disk (as opposed to bad input or I/O failure).
    public var isCorruption: Bool {
        switch self {
        case .log(let e): e.isCorruption
        case .corruptCheckpoint, .corruptRecord: true
        default: false
        }
    }
}

#if canImport(Darwin)
import Foundation

/// On Apple platforms, `localizedDescription` and error dialogs show what happened and
/// what to do.
extension StoreError: LocalizedError {
    /// What happened, and what to do about it.
    public var errorDescription: String? { description }
    /// What went wrong, and where.
    public var failureReason: String? { whatHappened }
    /// What the caller can do about it.
    public var recoverySuggestion: String? { whatToDo }
}
#endif
