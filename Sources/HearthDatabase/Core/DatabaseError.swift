import Hearth

/// Everything that can go wrong in the database API, typed.
public enum DatabaseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A path or key is not allowed (empty key, `.` `#` `$` `[` `]`, control characters, too
    /// long, or a write under `.info`).
    case invalidPath(String)
    /// Query parameters that Firebase refuses (two orderings, two limits, a key bound on a
    /// non-key ordering, …).
    case invalidQuery(String)
    /// A value that cannot be stored (NaN or infinite numbers, a key that is not a valid key,
    /// too deep, an unencodable type).
    case invalidValue(String)
    /// A snapshot's value does not decode as the requested type.
    case decodingFailed(String)
    /// The server refused the operation (`permission_denied`).
    case permissionDenied(String)
    /// Any other status the server answered with (`datastale`, `expired_token`, …), and its
    /// message.
    case serverError(status: String, message: String)
    /// `getData()` with no connection and no complete cached value.
    case offline
    /// The database was closed.
    case closed
    /// The local store failed (disk full, I/O error, corruption): what it said.
    case storage(String)
    /// A setting that must come before the database's first use came after it:
    /// ``Database/useEmulator(withHost:port:)`` once a reference was made.
    case alreadyInUse(String)
    /// An asynchronous sequence of child events held `limit` events its consumer had not
    /// taken: it ended rather than drop one (``DatabaseQueryConvertible/childEvents(bufferingLimit:)``).
    case eventBufferFull(limit: Int)

    public var description: String {
        switch self {
        case .invalidPath(let s): "invalid path: \(s)"
        case .invalidQuery(let s): "invalid query: \(s)"
        case .invalidValue(let s): "invalid value: \(s)"
        case .decodingFailed(let s): "decoding failed: \(s)"
        case .permissionDenied(let s): "permission denied: \(s)"
        case let .serverError(status, message): "server error \(status): \(message)"
        case .offline: "the client is offline and has no complete cached value"
        case .closed: "the database is closed"
        case .storage(let s): "local store: \(s)"
        case .alreadyInUse(let s): "too late: \(s)"
        case .eventBufferFull(let limit): "\(limit) events were not consumed; the event sequence ended"
        }
    }

    init(_ error: StoreError) { self = .storage(error.description) }
}
