// The one protocol every engine implements, so that one driver feeds each the same operations.
//
// Each method does the logical work the real SDK storage layer does for that operation:
// Hearth through its public `Store` API, SQLite in Firebase Android's layout
// (`SqlPersistenceStorageEngine`), LevelDB in Firebase iOS's layout (`FLevelDBStorageEngine`).
// Nodes come in as parsed `Node`s (the SDKs hand their storage layer parsed nodes too), so each
// engine pays for its own serialization (binary codec + deflate for Hearth, JSON text for the
// baselines) inside the timed operation.
import Foundation
import Hearth

/// A tracked query as the driver defines it; every engine persists the same ones.
public struct TrackedQueryDef: Sendable {
    public var id: Int64
    public var path: Path
    public var query: QuerySpec
    public var complete: Bool
    public var active: Bool
    /// Creation order stands for the last-use time, so every engine's LRU picks the same queries.
    public var lastUse: Int64
    /// The tracked keys of a filtered query (nil for a query that loads all data).
    public var keys: [ChildKey]?

    public init(id: Int64, path: Path, query: QuerySpec, complete: Bool, active: Bool, lastUse: Int64, keys: [ChildKey]? = nil) {
        self.id = id
        self.path = path
        self.query = query
        self.complete = complete
        self.active = active
        self.lastUse = lastUse
        self.keys = keys
    }
}

/// What an engine is opened for.
public struct EngineConfig: Sendable {
    /// The store directory (created if missing).
    public var directory: String
    /// Hearth's size cap (the baselines have no automatic byte cap).
    public var hearthCapBytes: Int = 100 << 20
    /// Hearth only: open with `maxInactiveQueries` set so that the maintenance triggered at open
    /// prunes exactly one LRU round of this fraction of the inactive queries (workload 5).
    public var hearthPruneFraction: Double?
    /// Hearth only: a logical clock (one tick per call) instead of the wall clock, so that the
    /// last-use order of tracked queries is their creation order, as the driver tells the baselines.
    public var logicalClock = false

    public init(directory: String) { self.directory = directory }
}

/// The result of one pruning round.
public struct PruneOutcome: Sendable {
    public var queriesRemoved: Int
    public var rowsOrKeysDeleted: Int
}

/// One persistence engine. Not required to be thread-safe unless `supportsConcurrentWriters`.
public protocol PersistenceEngine: AnyObject {
    /// The variant's name, as it appears in the results (e.g. `sqlite-full`).
    var name: String { get }
    /// Whether `saveWrite` may be called from several threads at once (else the driver locks).
    var supportsConcurrentWriters: Bool { get }

    /// A pending user write (a set), durable under the engine's tier when this returns; returns its id.
    func saveWrite(_ node: Node, at path: Path) throws -> Int64
    /// Removes a pending write (ack or revert).
    func removeWrite(_ id: Int64) throws
    /// The server's data at `path` replaced.
    func serverOverwrite(_ node: Node, at path: Path) throws
    /// Children (relative paths) merged into the server's data at `path`.
    func serverMerge(_ children: [(path: Path, node: Node)], at path: Path) throws
    /// Creates or updates a tracked query (with its tracked keys, if any).
    func trackQuery(_ query: TrackedQueryDef) throws
    /// Replaces a tracked query's keys.
    func setTrackedKeys(_ keys: [ChildKey], queryID: Int64) throws

    /// What the SDK reads at launch before anything else: the pending writes (all of them, to
    /// re-send) and the tracked queries. Hearth's `Store.open` does this itself (a no-op here).
    func loadStartupState() throws
    /// The server data at `path`.
    func read(_ path: Path) throws -> Node
    /// A tracked query's window over the cached data with pending writes overlaid, loading only
    /// what the SDK would load for it (e.g. its tracked keys).
    func queryWindow(_ query: TrackedQueryDef) throws -> QueryWindow
    /// Every tracked query's window: the state every view needs at launch (see README: until
    /// Hearth's materialized views land, this is "load + compute each window"). Returns the
    /// number of windows built.
    func rebuildViews() throws -> Int
    /// One LRU pruning round removing `fraction` of the inactive tracked queries and their data.
    func pruneFraction(_ fraction: Double) throws -> PruneOutcome
    /// Ends any open batch (the batched SQLite variant); called at the end of a workload.
    func flush() throws
    /// Closes the engine (everything durable and on disk afterwards).
    func close() throws
}

// MARK: - Shared helpers

/// The bytes of every file under `directory`, recursively.
public func bytesOnDisk(_ directory: String) -> UInt64 {
    let fm = FileManager.default
    guard let e = fm.enumerator(atPath: directory) else { return 0 }
    var total: UInt64 = 0
    while let rel = e.nextObject() as? String {
        if let attrs = try? fm.attributesOfItem(atPath: directory + "/" + rel),
           (attrs[.type] as? FileAttributeType) == .typeRegular,
           let size = attrs[.size] as? NSNumber {
            total += size.uint64Value
        }
    }
    return total
}

/// Overlays pending sets on server data at `path` (in write-id order), as the SDK's write tree
/// does when it builds a view.
func overlay(_ node: Node, at path: Path, writes: [(id: Int64, path: Path, node: Node)]) -> Node {
    var result = node
    for w in writes {
        if w.path.contains(path), let rel = w.path.relativePath(to: path) {
            result = w.node.child(at: rel)  // a set at or above the location replaces it
        } else if path.contains(w.path), let rel = path.relativePath(to: w.path) {
            result = result.updating(rel, with: w.node)
        }
    }
    return result
}

/// Keeps only the immediate children named in `keys` (what a filtered tracked query loads).
func restrict(_ node: Node, to keys: [ChildKey]) -> Node {
    var pairs: [(key: ChildKey, value: Node)] = []
    pairs.reserveCapacity(keys.count)
    for k in keys {
        let c = node.child(k)
        if !c.isEmpty { pairs.append((k, c)) }
    }
    return Node(children: pairs)
}

/// Firebase's `NodeSizeEstimator` (Android): the estimated serialized size that decides the
/// 16 KiB split. Doubles and longs 8, booleans 4, strings length + 2, keys length + 4, a
/// priority 24 more.
func estimatedSerializedSize(_ node: Node) -> Int {
    if node.isEmpty { return 4 }
    if let leaf = node.leafValue {
        var size: Int
        switch leaf {
        case .string(let s): size = s.utf8.count + 2
        case .bool: size = 4
        default: size = 8
        }
        if node.priority != nil { size += 24 + 8 }
        return size
    }
    var sum = 1
    for (k, c) in node.children {
        sum += k.string.utf8.count + 4 + estimatedSerializedSize(c)
    }
    if node.priority != nil { sum += 24 + 8 }
    return sum
}

/// Parses one JSON primitive as Firebase iOS stores a leaf (fast paths for plain strings,
/// booleans and numbers; anything else through the full parser).
func parseLeaf(_ bytes: UnsafeRawBufferPointer) -> Node {
    guard let first = bytes.first else { return .empty }
    if first == UInt8(ascii: "\""), bytes.count >= 2, !bytes.contains(UInt8(ascii: "\\")) {
        return .string(String(decoding: bytes[1..<(bytes.count - 1)], as: UTF8.self))
    }
    let text = String(decoding: bytes, as: UTF8.self)
    if text == "true" { return .bool(true) }
    if text == "false" { return .bool(false) }
    if first != UInt8(ascii: "\""), let d = Double(text) { return .number(d) }
    return (try? Node(jsonText: text)) ?? .empty
}

/// The JSON of a tracked query's definition as the SDKs persist it.
func trackedQueryJSON(_ q: TrackedQueryDef) -> String {
    let members: [JSONMember] = [
        JSONMember(key: "id", value: .number(Double(q.id))),
        JSONMember(key: "path", value: .string(q.path.description)),
        JSONMember(key: "p", value: q.query.json),
        JSONMember(key: "lu", value: .number(Double(q.lastUse))),
        JSONMember(key: "c", value: .bool(q.complete)),
        JSONMember(key: "a", value: .bool(q.active)),
    ]
    return JSONValue.object(members).serialized()
}

/// Parses `trackedQueryJSON` back (what the SDK does at launch for every tracked query).
func parseTrackedQuery(_ text: String) throws -> TrackedQueryDef {
    let v = try JSONValue.parse(text)
    guard case .number(let id)? = v["id"], case .string(let path)? = v["path"], let p = v["p"],
          case .number(let lu)? = v["lu"], case .bool(let c)? = v["c"], case .bool(let a)? = v["a"]
    else { throw EngineError.corrupt("tracked query \(text)") }
    return TrackedQueryDef(id: Int64(id), path: try Path(validating: path), query: try QuerySpec(json: p), complete: c, active: a, lastUse: Int64(lu))
}

public enum EngineError: Error, CustomStringConvertible {
    case sqlite(String)
    case leveldb(String)
    case corrupt(String)
    public var description: String {
        switch self {
        case .sqlite(let s): "sqlite: \(s)"
        case .leveldb(let s): "leveldb: \(s)"
        case .corrupt(let s): "corrupt: \(s)"
        }
    }
}

/// The LRU choice both SDKs make (iOS `FTrackedQueryManager pruneOldQueries`): the inactive
/// queries by last use, the oldest `fraction` of them (at least one) pruned, the rest kept.
func lruChoice(_ queries: [TrackedQueryDef], fraction: Double) -> (prune: [TrackedQueryDef], keep: [TrackedQueryDef]) {
    let inactive = queries.filter { !$0.active }.sorted { ($0.lastUse, $0.id) < ($1.lastUse, $1.id) }
    let n = min(inactive.count, max(Int((Double(inactive.count) * fraction).rounded(.up)), inactive.count > 1000 ? inactive.count - 1000 : 0))
    return (Array(inactive[..<n]), Array(inactive[n...]) + queries.filter(\.active))
}
