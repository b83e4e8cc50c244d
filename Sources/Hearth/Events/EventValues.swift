// The values events carry (writes, queries, credentials, transactions, onDisconnect operations,
// pruning results): plain data defined beside ``StoreEvent`` so that events name nothing above them.

import HearthModel

/// One child of an update (merge): a path relative to the update's location and the node to
/// write there (`Node.empty` deletes).
public struct ChildUpdate: Sendable, Hashable {
    /// Where, relative to the update's location.
    public let path: Path
    /// What to write.
    public let node: Node

    /// Creates a child update.
    public init(path: Path, node: Node) {
        self.path = path
        self.node = node
    }
}

/// A user write not yet acknowledged by the server, kept unresolved (server-value
/// placeholders stay placeholders until read).
public struct PendingWrite: Sendable, Hashable {
    /// A set (overwrite) or an update (merge).
    public enum Operation: Sendable, Hashable {
        /// Overwrite the location with a node.
        case set(Node)
        /// Write each child at its relative path, leaving other children alone.
        case update([ChildUpdate])
    }

    /// The write's id: strictly increasing, never reused within a store.
    public let id: Int64
    /// The written location.
    public let path: Path
    /// What is written.
    public let operation: Operation

    /// Creates a pending write.
    public init(id: Int64, path: Path, operation: Operation) {
        self.id = id
        self.path = path
        self.operation = operation
    }

    /// The absolute paths this write touches: its path for a set, each child's for an update.
    package var touchedPaths: [Path] {
        switch operation {
        case .set: [path]
        case .update(let children): children.map { path.appending($0.path) }
        }
    }
}

/// A query location: a path and the query at it. Tracked queries and pins are keyed by it.
/// Queries that load all data are normalized to the default query (as Firebase does), so
/// `orderByValue()` with no bounds and the default query at one path are one location.
public struct QueryLocation: Sendable, Hashable, CustomStringConvertible {
    /// The path.
    public let path: Path
    /// The query, normalized.
    public let query: QuerySpec

    /// Creates a location, normalizing queries that load all data to the default query.
    public init(path: Path, query: QuerySpec) {
        self.path = path
        self.query = query.loadsAllData ? .default : query
    }

    public var description: String { "\(path) \(query.identifier)" }
}

/// A query the client listens to (or listened to), persisted so that its cached data can be
/// served offline after a restart and pruned by recency.
public struct TrackedQuery: Sendable, Hashable {
    /// The id, assigned by the store.
    public let id: Int64
    /// Where and what.
    public let location: QueryLocation
    /// Whether the cache holds the query's complete result (the server said so).
    public var complete: Bool
    /// Whether a listener currently uses it. Active queries are never pruned.
    public var active: Bool
    /// When it was last used, in milliseconds of the store's clock.
    public var lastUse: Int64
    /// For a filtered query, the keys of the children in its window; `nil` for queries that
    /// load all data.
    public var keys: Set<ChildKey>?

    /// Creates a tracked query.
    public init(
        id: Int64, location: QueryLocation, complete: Bool, active: Bool, lastUse: Int64, keys: Set<ChildKey>? = nil
    ) {
        self.id = id
        self.location = location
        self.complete = complete
        self.active = active
        self.lastUse = lastUse
        self.keys = location.query.loadsAllData ? nil : (keys ?? [])
    }

    /// The tracked path.
    public var path: Path { location.path }
    /// The tracked query.
    public var query: QuerySpec { location.query }
}

/// The persisted auth credential.
public struct AuthToken: Sendable, Hashable {
    /// The token (a secret: tools redact it).
    public let token: String
    /// When it expires, in milliseconds since the Unix epoch.
    public let expiresAt: Int64

    /// Creates a credential.
    public init(token: String, expiresAt: Int64) {
        self.token = token
        self.expiresAt = expiresAt
    }
}

/// A transaction queued (typically offline) so that it survives a restart. The update
/// function itself is code; the store keeps the name under which the client registered it,
/// and its argument, so the client can run it again.
public struct QueuedTransaction: Sendable, Hashable {
    /// Where the transaction is in its life.
    public enum Status: UInt8, Sendable, Hashable, CaseIterable {
        /// Waiting to be sent.
        case queued = 0
        /// Sent; awaiting the server's answer.
        case sent = 1
        /// The server rejected the compare-and-set; to be re-run against fresh data.
        case needsRetry = 2
        /// Decided: the server applied it. Kept until the app's handlers have run, so that the
        /// outcome survives a crash; ``QueuedTransaction/localResult`` is empty.
        case committed = 3
        /// Decided: it ended without being applied. Kept until the app's handlers have run;
        /// ``QueuedTransaction/localResult`` holds the reason as the client encoded it (empty
        /// when the function aborted).
        case aborted = 4
        /// Decided, and not a transaction: a plain write's outcome, the server applied it. The
        /// record is the write's outcome kept until the app's handlers have run;
        /// ``QueuedTransaction/argument`` holds the write's id (a number),
        /// ``QueuedTransaction/functionName`` is empty and ``QueuedTransaction/localResult``
        /// is empty.
        case writeApplied = 5
        /// Decided, and not a transaction: a plain write's outcome, the server refused it (the
        /// write was reverted). As ``writeApplied``, with ``QueuedTransaction/localResult``
        /// holding the reason as the client encoded it.
        case writeRefused = 6

        /// Whether the record has ended and only its outcome waits to be delivered.
        public var isDecided: Bool {
            switch self {
            case .queued, .sent, .needsRetry: false
            case .committed, .aborted, .writeApplied, .writeRefused: true
            }
        }

        /// Whether the record is a plain write's outcome rather than a transaction's.
        public var isWriteOutcome: Bool { self == .writeApplied || self == .writeRefused }
    }

    /// The id, assigned by the store.
    public let id: Int64
    /// The location the transaction updates.
    public let path: Path
    /// The name of the registered update function.
    public let functionName: String
    /// The function's argument.
    public let argument: Node
    /// The result of the last local run, applied optimistically.
    public var localResult: Node
    /// How many times it has been retried.
    public var retryCount: Int
    /// Its status.
    public var status: Status

    /// Creates a queued transaction.
    public init(
        id: Int64, path: Path, functionName: String, argument: Node, localResult: Node, retryCount: Int = 0,
        status: Status = .queued
    ) {
        self.id = id
        self.path = path
        self.functionName = functionName
        self.argument = argument
        self.localResult = localResult
        self.retryCount = retryCount
        self.status = status
    }
}

/// An onDisconnect operation: queued while offline and sent on connect, or already
/// acknowledged by the server (kept so the client can apply it locally when its own
/// connection drops).
public struct OnDisconnectOperation: Sendable, Hashable {
    /// What the server is to do when the client disconnects.
    public enum Action: Sendable, Hashable {
        /// Set the location to a node.
        case set(Node)
        /// Merge children into the location.
        case update([ChildUpdate])
        /// Remove the location.
        case remove
        /// Cancel the onDisconnect operations at and below the location.
        case cancel
    }

    /// The id, assigned by the store.
    public let id: Int64
    /// The location.
    public let path: Path
    /// The action.
    public let action: Action
    /// Whether the server has acknowledged it.
    public var acknowledged: Bool

    /// Creates an operation.
    public init(id: Int64, path: Path, action: Action, acknowledged: Bool = false) {
        self.id = id
        self.path = path
        self.action = action
        self.acknowledged = acknowledged
    }
}

/// What one pruning round removed. Recorded as an event so that replay reproduces it.
@_spi(HearthInternals) public struct PruneResult: Sendable, Hashable {
    /// Paths whose cached data is removed…
    public let prunedPaths: [Path]
    /// …except for these paths below them.
    public let keptPaths: [Path]
    /// Tracked queries removed.
    public let removedQueryIDs: [Int64]

    /// Creates a result.
    public init(prunedPaths: [Path], keptPaths: [Path], removedQueryIDs: [Int64]) {
        self.prunedPaths = prunedPaths
        self.keptPaths = keptPaths
        self.removedQueryIDs = removedQueryIDs
    }
}
