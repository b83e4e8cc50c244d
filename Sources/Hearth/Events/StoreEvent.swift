// The event: one change to the store's state, as the log records it.

import HearthModel

/// One change to the store's state. The log holds nothing but these (grouped in commit
/// batches); the state is the fold of the reducer (`StoreState.apply`, one layer up in State/)
/// over them, at run time and at replay alike. Events are plain data: they carry only the
/// values defined beside them in Events/, never a type of the layers above. Events carry every
/// input the reducer needs — including times — so replay is deterministic.
@_spi(HearthInternals) public enum StoreEvent: Sendable, Hashable {
    /// The server's data at `path` replaced (`at`: store clock, ms; used for LRU).
    case serverOverwrite(path: Path, node: Node, at: Int64)
    /// The server's data merged at `path`.
    case serverMerge(path: Path, children: [ChildUpdate], at: Int64)
    /// A user write saved (before it is sent).
    case writeSaved(PendingWrite)
    /// A pending write acknowledged by the server and removed.
    case writeAcked(id: Int64)
    /// A pending write rejected or abandoned and removed.
    case writeReverted(id: Int64)
    /// A tracked query created or replaced (upsert by id).
    case trackedQuerySaved(TrackedQuery)
    /// The keys of a filtered tracked query's window changed: `added` joined it, `removed` left
    /// it (Firebase's `updateTrackedQueryKeys`). Recorded by every commit whose server data
    /// changes a tracked filtered query's window, and when such a query is first tracked, so
    /// the keys follow the data and an offline re-listen is served the right children.
    case trackedQueryKeysChanged(id: Int64, added: [ChildKey], removed: [ChildKey])
    /// A tracked query removed (its data stays cached, now prunable as untracked data last
    /// used when the query was).
    case trackedQueryRemoved(id: Int64)
    /// A keepSynced pin set or cleared.
    case pinChanged(QueryLocation, on: Bool)
    /// The auth credential saved.
    case authSaved(AuthToken)
    /// Signed out: the credential removed.
    case authCleared
    /// A transaction queued or updated (upsert by id).
    case transactionSaved(QueuedTransaction)
    /// A transaction completed or abandoned and removed.
    case transactionRemoved(id: Int64)
    /// An onDisconnect operation queued (or replaced, by id).
    case onDisconnectSaved(OnDisconnectOperation)
    /// The server acknowledged an onDisconnect operation.
    case onDisconnectAcked(id: Int64)
    /// An onDisconnect operation removed.
    case onDisconnectRemoved(id: Int64)
    /// The last known offset of the server's clock from the local one, in ms.
    case serverTimeOffset(ms: Double)
    /// A new session began: queries active in the previous session become inactive, last
    /// used now.
    case sessionStarted(at: Int64)
    /// LRU pruning removed cached server data: at each pruned path everything except the
    /// kept subtrees below it, and the pruned tracked queries and untracked entries.
    case cachePruned(PruneResult)
    /// The highest write id applied for `writer` is now at least `id` (`at`: store clock, ms,
    /// when it advanced; the table is bounded by evicting the least recently advanced). A
    /// server commits it in the same batch as the write itself, so that a write re-sent after
    /// its acknowledgement was lost is recognised and not applied twice (FORMAT.md §11.7).
    case writerWatermark(writer: String, id: Int64, at: Int64)
    /// Watermarks forgotten (evicted to bound the table): those writers' re-sent writes are
    /// applied again, as in plain at-least-once delivery.
    case writerWatermarksRemoved(writers: [String])
    /// A client store's writer id — the random name under which a server that supports it
    /// deduplicates its writes — for the writes with ids from `firstWriteID` on (until a later
    /// writer begins). A client takes a fresh one each time it opens its store and writes,
    /// committed with that first write. `firstWriteID` `nil` is the form engine event format 3
    /// wrote (tag 22): the store's only writer id, for every write (FORMAT.md §11.7).
    case writerIdentity(writer: String, firstWriteID: Int64?)
}

extension StoreEvent {
    /// Whether the event is server data: an overwrite or a merge of the server cache.
    var isServerData: Bool {
        switch self {
        case .serverOverwrite, .serverMerge: true
        default: false
        }
    }

    /// Whether the event saves a pending write.
    var isWriteSaved: Bool {
        if case .writeSaved = self { true } else { false }
    }

    /// Whether the event prunes the server cache.
    var isPrune: Bool {
        if case .cachePruned = self { true } else { false }
    }
}
