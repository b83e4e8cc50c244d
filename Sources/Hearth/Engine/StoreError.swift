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
    /// A write or sync failed earlier; the store refuses writes until it is reopened.
    case poisoned(String)
    /// The store was closed.
    case closed

    public var description: String {
        switch self {
        case .log(let e): e.description
        case let .corruptCheckpoint(file, offset, reason): "\(file) offset \(offset): corrupt checkpoint: \(reason)"
        case let .corruptRecord(file, offset, lsn, reason): "\(file) offset \(offset) (LSN \(lsn)): undecodable events: \(reason)"
        case .invalidOption(let s): "invalid option: \(s)"
        case .invalidPath(let e): e.description
        case .invalidData(let e): e.description
        case .invalidQuery(let e): e.description
        case .unknownWrite(let id): "no pending write with id \(id)"
        case .unknownQuery(let loc): "no tracked query at \(loc)"
        case .unknownTransaction(let id): "no queued transaction with id \(id)"
        case .unknownOnDisconnect(let id): "no onDisconnect operation with id \(id)"
        case .poisoned(let why): "the store refuses writes after an earlier failure (\(why)); reopen it"
        case .closed: "the store is closed"
        }
    }

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

/// On Apple platforms, `localizedDescription` (and so alerts and logs that use it) reads the
/// same sentence as ``StoreError/description``.
extension StoreError: LocalizedError {
    /// The error's ``description``.
    public var errorDescription: String? { description }
}
#endif
