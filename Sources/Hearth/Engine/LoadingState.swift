import HearthLog
import HearthModel

/// The state, with the checkpoint's server cache either resident (decoded into `state`) or
/// not (read from the checkpoint's chunks on demand).
///
/// While the cache is not resident, events are applied to everything but the server cache
/// (which is empty in `state`), and the cache-changing events are kept, in order, in
/// `deferred`. A read at a path meanwhile assembles the checkpoint chunks on its way
/// (``CheckpointReader/partialCache(for:)``) and replays the deferred events projected onto
/// that path. When the cache is loaded, the deferred events are applied to it in order and
/// `cacheLoaded` becomes true: the same result as applying every event in order, because
/// server-cache events touch nothing but the cache and untracked bookkeeping, which is
/// applied immediately either way.
///
/// The way back (``dropCache()``): a resident cache that is a known checkpoint's cache
/// (`base`) plus the server events since (`sinceBase`) becomes that checkpoint read on demand
/// with those events deferred again. The store loads the cache only for what needs it whole
/// (pruning, a checkpoint, ``Store/state()``) and drops it after (Store+ResidentCache.swift).
struct LoadingState: Sendable {
    var state: StoreState
    var cacheLoaded: Bool
    var deferred: [StoreEvent] = []
    /// While the cache is resident: the checkpoint whose cache, with `sinceBase` applied in
    /// order, is the resident cache — what ``dropCache()`` goes back to. `nil`: none is known
    /// (a fresh store, an eager store, or a prune since), and the cache stays resident.
    private(set) var base: Base?
    /// The server-cache events applied since `base` (meaningful only with a `base`).
    private(set) var sinceBase: [StoreEvent] = []
    /// The server-cache events applied since the snapshot of a checkpoint being written, so
    /// that once it is installed it can become the `base`; `nil` when none is being written or
    /// the cache changed otherwise (a prune) since its snapshot.
    private(set) var sinceSnapshot: [StoreEvent]?

    /// A checkpoint a resident cache can be dropped back to: read through a reader, or only
    /// installed — its reader is built (its directory read and decoded again) when the cache
    /// is dropped to it (``readBase(_:of:)``), not at every install: under a stream of server
    /// data the cache stays resident across many checkpoints, and building a reader at each
    /// was a tenth of the checkpoints' time in a 50 MiB fill.
    enum Base: Sendable {
        case reader(CheckpointReader)
        case installed(Checkpoint)
    }

    init(state: StoreState, cacheLoaded: Bool) {
        self.state = state
        self.cacheLoaded = cacheLoaded
    }

    /// Applies one event, deferring its server-cache part while the cache is not loaded.
    mutating func apply(_ event: StoreEvent) {
        if cacheLoaded {
            state.apply(event)
            switch event {
            case .serverOverwrite, .serverMerge:
                if base != nil { sinceBase.append(event) }
                sinceSnapshot?.append(event)
            case .cachePruned:
                // The pruned cache is no checkpoint's plus server events.
                base = nil
                sinceBase = []
                sinceSnapshot = nil
            default:
                break
            }
            return
        }
        switch event {
        case let .serverOverwrite(path, _, at), let .serverMerge(path, _, at):
            state.noteServerWrite(at: path, time: at)
            deferred.append(event)
        case .cachePruned:
            // Its tracked queries and untracked entries go now (the empty cache stays empty);
            // the data it removes is removed wherever the deferred events are applied.
            state.apply(event)
            deferred.append(event)
        default:
            state.apply(event)
        }
    }

    /// Installs the loaded cache and applies the deferred events to it. With `base` (the
    /// reader `cache` was read from), the cache can be dropped again later.
    mutating func finishLoading(cache: Node, base: CheckpointReader? = nil) {
        precondition(!cacheLoaded, "cache loaded twice")
        var c = cache
        for event in deferred { c = StoreState.applyingCacheEvent(event, to: c) }
        state.serverCache = c
        self.base = base.map { .reader($0) }
        sinceBase = base == nil ? [] : deferred
        deferred = []
        cacheLoaded = true
    }

    /// Starts recording the server events after a checkpoint's snapshot (taken from `state`
    /// in the same critical section).
    mutating func checkpointSnapshotTaken() {
        sinceSnapshot = cacheLoaded ? [] : nil
    }

    /// The checkpoint whose snapshot was last taken is installed (`checkpoint`): it becomes
    /// the base the resident cache can be dropped to. Without it (the checkpoint failed, or
    /// will not be read), the recording just stops.
    ///
    /// Returns the events no longer held (the old base's, or the stopped recording), for the
    /// caller to release after the store's lock: tens of thousands after a checkpoint of a
    /// fill, whose release under the lock kept every writer waiting 3–23 ms per checkpoint.
    mutating func checkpointInstalled(_ checkpoint: Checkpoint?) -> [StoreEvent] {
        guard var events = sinceSnapshot else { return [] }
        sinceSnapshot = nil
        guard cacheLoaded, let checkpoint else { return events }
        base = .installed(checkpoint)
        swap(&events, &sinceBase)
        return events
    }

    /// A checkpoint of the cache not resident — the current checkpoint's with the first `count`
    /// deferred events applied (Store+ChunkCheckpoint.swift) — is installed, and reads go on from
    /// it: those events are in it, and only the ones after them stay deferred. Returns the
    /// events no longer held, for the caller to release after the store's lock.
    mutating func checkpointedFromChunks(eventCount count: Int) -> [StoreEvent] {
        precondition(!cacheLoaded && count <= deferred.count, "a checkpoint of the deferred events it folded in")
        var done = Array(deferred[count...])
        swap(&done, &deferred)
        return done
    }

    /// The base checkpoint whose reader is still to be built, if that is the base.
    var unreadBase: Checkpoint? {
        if case .installed(let checkpoint)? = base { return checkpoint }
        return nil
    }

    /// The reader of `checkpoint`, built outside the store's lock, if that is still the
    /// base; nil (it could not be read back): the cache has no base and stays resident.
    mutating func readBase(_ reader: CheckpointReader?, of checkpoint: Checkpoint) {
        guard case .installed(let current)? = base, current === checkpoint else { return }
        guard let reader else {
            base = nil
            sinceBase = []
            return
        }
        base = .reader(reader)
    }

    /// Whether ``dropCache()`` would drop the resident cache (once its base is read).
    var canDropCache: Bool { cacheLoaded && base != nil }

    /// Drops the resident cache back to its base checkpoint, with the server events since
    /// deferred again; returns that checkpoint's reader (the store reads chunks from it), or
    /// `nil` (nothing dropped) when the cache is not resident or has no base, or one whose
    /// reader is not built yet (``readBase(_:of:)``).
    mutating func dropCache() -> CheckpointReader? {
        guard cacheLoaded, case .reader(let reader)? = base else { return nil }
        state.serverCache = .empty
        deferred = sinceBase
        sinceBase = []
        base = nil
        sinceSnapshot = nil
        cacheLoaded = false
        return reader
    }

    /// The server value at `path`, given the checkpoint's cache at that path (`base`, read
    /// from the chunks), with the deferred events projected onto it.
    func serverValue(at path: Path, base: Node) -> Node {
        LoadingState.project(deferred, onto: base, at: path)
    }

    /// The children `keys` of the server data at `path`, given the checkpoint's cache at
    /// that path (`base`, holding at least those children), with the deferred events
    /// projected onto each. The result holds no other children.
    ///
    /// Equal to ``project(_:onto:at:)`` at each `path/key`, but the deferred writes are sorted
    /// once into those at or above `path` (which touch every child) and those below it (by
    /// child key), so that a long tail of large merges costs one pass, not one per key.
    func serverChildren(_ keys: Set<ChildKey>, at path: Path, base: Node) -> Node {
        if deferred.contains(where: \.isPrune) {
            // A prune keeps some paths below the ones it removes: each child on its own.
            return Node(
                children: keys.compactMap { key in
                    let value = LoadingState.project(deferred, onto: base.child(key), at: path.child(key))
                    return value.isEmpty ? nil : (key: key, value: value)
                })
        }
        typealias Write = (sequence: Int, at: Path, node: Node)
        var above: [Write] = []
        var below: [ChildKey: [Write]] = [:]
        var sequence = 0
        func add(_ at: Path, _ node: Node) {
            defer { sequence += 1 }
            if at.contains(path) {
                above.append((sequence, at, node))
            } else if path.contains(at) {
                let key = at.keys[path.depth]
                if keys.contains(key) { below[key, default: []].append((sequence, at, node)) }
            }
        }
        for event in deferred {
            switch event {
            case let .serverOverwrite(target, node, _):
                add(target, node)
            case let .serverMerge(target, children, _):
                // A merge below the location or beside it touches it only through children
                // under it; one beside it (neither above nor below) not at all.
                guard target.contains(path) || path.contains(target) else { continue }
                for child in children { add(target.appending(child.path), child.node) }
            default:
                break
            }
        }
        if above.isEmpty && below.isEmpty {
            // No deferred event touches these children: the base's, in key order (no sort).
            return StoreState.children(keys, of: base)
        }
        var pairs: [(key: ChildKey, value: Node)] = []
        for key in keys {
            let at = path.child(key)
            var value = base.child(key)
            // Both lists are in event order; apply their merge in that order.
            let own = below[key] ?? []
            var i = 0, j = 0
            while i < above.count || j < own.count {
                let w: Write
                if j == own.count || (i < above.count && above[i].sequence < own[j].sequence) {
                    w = above[i]; i += 1
                } else {
                    w = own[j]; j += 1
                }
                value = StoreState.overlay(value, at: at, write: w.node, writtenAt: w.at, serverNow: nil)
            }
            if !value.isEmpty { pairs.append((key, value)) }
        }
        return Node(children: pairs)
    }

    /// `value` — the server data at `path` — with the server overwrites and merges among
    /// `events` applied in order (other events are ignored).
    static func project(_ events: [StoreEvent], onto value: Node, at path: Path) -> Node {
        var value = value
        for event in events {
            switch event {
            case .cachePruned(let result):
                // Pruning is a function of paths: applied to a tree holding `value` at `path`
                // and nothing else, it leaves at `path` what it leaves there in the whole cache.
                value = StoreState.pruning(Node.empty.updating(path, with: value), by: result).child(at: path)
            case let .serverOverwrite(target, node, _):
                value = StoreState.overlay(value, at: path, write: node, writtenAt: target, serverNow: nil)
            case let .serverMerge(target, children, _):
                for child in children {
                    value = StoreState.overlay(
                        value, at: path, write: child.node, writtenAt: target.appending(child.path), serverNow: nil)
                }
            default:
                break
            }
        }
        return value
    }
}
