// SQLite (system libsqlite3) in Firebase Android's layout (`SqlPersistenceStorageEngine`):
//
//   serverCache(path TEXT PRIMARY KEY, value BLOB)       JSON per row; a children node whose
//                                                         estimated size passes 16 KiB is split
//                                                         into one row per child (recursively)
//   writes(id, path, type, part, node)                    one row per pending write (JSON)
//   trackedQueries(id, path, queryParams, lastUse, complete, active)
//   trackedKeys(id, key)                                  (no index, as in the SDK)
//
// WAL, one connection, prepared statements, `locking_mode=EXCLUSIVE`. `synchronous=FULL` for
// the durable tier, `NORMAL` for the others; one transaction per operation as Firebase Android
// runs every persistence call in `runInTransaction`, or (the batched variant) `batchOps`
// operations per transaction.
import CSQLite
import Foundation
import Hearth

let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

final class Statement {
    let stmt: OpaquePointer
    let db: OpaquePointer
    private var finalized = false

    init(_ db: OpaquePointer, _ sql: String) throws {
        var s: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &s, nil) == SQLITE_OK, let s else {
            throw EngineError.sqlite("prepare \(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
        self.stmt = s
        self.db = db
    }

    deinit { finalize() }

    func finalize() {
        if !finalized { sqlite3_finalize(stmt) }
        finalized = true
    }

    func bind(_ i: Int32, _ s: String) {
        sqlite3_bind_text(stmt, i, s, -1, SQLITE_TRANSIENT)
    }

    func bind(_ i: Int32, blob s: String) {
        var s = s
        s.withUTF8 { buf in _ = sqlite3_bind_blob(stmt, i, buf.baseAddress, Int32(buf.count), SQLITE_TRANSIENT) }
    }

    func bind(_ i: Int32, _ v: Int64) { sqlite3_bind_int64(stmt, i, v) }

    /// Runs a statement that returns no rows.
    func run() throws {
        defer { sqlite3_reset(stmt); sqlite3_clear_bindings(stmt) }
        let rc = sqlite3_step(stmt)
        guard rc == SQLITE_DONE || rc == SQLITE_ROW else { throw EngineError.sqlite(String(cString: sqlite3_errmsg(db))) }
    }

    /// Steps through the rows.
    func rows(_ body: (OpaquePointer) throws -> Void) throws {
        defer { sqlite3_reset(stmt); sqlite3_clear_bindings(stmt) }
        while true {
            let rc = sqlite3_step(stmt)
            if rc == SQLITE_DONE { return }
            guard rc == SQLITE_ROW else { throw EngineError.sqlite(String(cString: sqlite3_errmsg(db))) }
            try body(stmt)
        }
    }
}

func columnText(_ stmt: OpaquePointer, _ i: Int32) -> String {
    guard let p = sqlite3_column_text(stmt, i) else { return "" }
    return String(cString: p)
}

func columnBlobString(_ stmt: OpaquePointer, _ i: Int32) -> String {
    let n = Int(sqlite3_column_bytes(stmt, i))
    guard n > 0, let p = sqlite3_column_blob(stmt, i) else { return "" }
    return String(decoding: UnsafeRawBufferPointer(start: p, count: n), as: UTF8.self)
}

/// Firebase Android's path strings: `/a/b/` (the root is `/`).
func androidPath(_ p: Path) -> String {
    var s = "/"
    for k in p.keys { s += k.string; s += "/" }
    return s
}

/// The end of the prefix range of a path string: `/a/b/` → `/a/b0` ('/' + 1 == '0').
func androidPrefixEnd(_ start: String) -> String { String(start.dropLast()) + "0" }

func parseAndroidPath(_ s: String) -> Path {
    Path(keys: s.split(separator: "/", omittingEmptySubsequences: true).map { ChildKey(String($0)) })
}

public final class SQLiteEngine: PersistenceEngine {
    public enum Sync: String { case full = "FULL", normal = "NORMAL" }
    public let name: String
    public var supportsConcurrentWriters: Bool { false }
    let db: OpaquePointer
    let batchOps: Int
    var opsInTransaction = 0
    var inTransaction = false
    var nextWriteID: Int64 = 1

    let begin, commit, insertCache, deleteRange, insertWrite, deleteWrite, upsertQuery, deleteQuery,
        deleteKeys, insertKey, selectKeys, selectWrites, selectQueries, cacheSize, selectAllPaths: Statement
    var loadNestedByDepth: [Int: Statement] = [:]

    /// Loaded at launch (`loadStartupState`).
    var writes: [(id: Int64, path: Path, node: Node)] = []
    var queries: [TrackedQueryDef] = []

    static let splitThreshold = 16 * 1024

    public init(name: String, config: EngineConfig, sync: Sync, batchOps: Int) throws {
        self.name = name
        self.batchOps = batchOps
        try FileManager.default.createDirectory(atPath: config.directory, withIntermediateDirectories: true)
        var handle: OpaquePointer?
        guard sqlite3_open_v2(config.directory + "/firebase.db", &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK,
              let handle else { throw EngineError.sqlite("open \(config.directory)") }
        db = handle
        func exec(_ sql: String) throws {
            guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
                throw EngineError.sqlite("\(sql): \(String(cString: sqlite3_errmsg(handle)))")
            }
        }
        try exec("PRAGMA locking_mode = EXCLUSIVE")
        try exec("PRAGMA journal_mode = WAL")
        try exec("PRAGMA synchronous = \(sync.rawValue)")
        try exec("""
            CREATE TABLE IF NOT EXISTS serverCache (path TEXT PRIMARY KEY, value BLOB);
            CREATE TABLE IF NOT EXISTS writes (id INTEGER, path TEXT, type TEXT, part INTEGER, node BLOB, UNIQUE (id, part));
            CREATE TABLE IF NOT EXISTS trackedQueries (id INTEGER PRIMARY KEY, path TEXT, queryParams TEXT, lastUse INTEGER, complete INTEGER, active INTEGER);
            CREATE TABLE IF NOT EXISTS trackedKeys (id INTEGER, key TEXT);
            """)
        begin = try Statement(handle, "BEGIN")
        commit = try Statement(handle, "COMMIT")
        insertCache = try Statement(handle, "INSERT OR REPLACE INTO serverCache (path, value) VALUES (?, ?)")
        deleteRange = try Statement(handle, "DELETE FROM serverCache WHERE path >= ? AND path < ?")
        insertWrite = try Statement(handle, "INSERT INTO writes (id, path, type, part, node) VALUES (?, ?, 'o', NULL, ?)")
        deleteWrite = try Statement(handle, "DELETE FROM writes WHERE id = ?")
        upsertQuery = try Statement(handle, "INSERT OR REPLACE INTO trackedQueries (id, path, queryParams, lastUse, complete, active) VALUES (?, ?, ?, ?, ?, ?)")
        deleteQuery = try Statement(handle, "DELETE FROM trackedQueries WHERE id = ?")
        deleteKeys = try Statement(handle, "DELETE FROM trackedKeys WHERE id = ?")
        insertKey = try Statement(handle, "INSERT INTO trackedKeys (id, key) VALUES (?, ?)")
        selectKeys = try Statement(handle, "SELECT key FROM trackedKeys WHERE id = ?")
        selectWrites = try Statement(handle, "SELECT id, path, type, part, node FROM writes ORDER BY id, part")
        selectQueries = try Statement(handle, "SELECT id, path, queryParams, lastUse, complete, active FROM trackedQueries ORDER BY id")
        cacheSize = try Statement(handle, "SELECT sum(length(value) + length(path)) FROM serverCache")
        selectAllPaths = try Statement(handle, "SELECT rowid, path FROM serverCache WHERE path >= ? AND path < ?")
        try Statement(handle, "SELECT max(id) FROM writes").rows { s in nextWriteID = sqlite3_column_int64(s, 0) + 1 }
    }

    /// One operation: its own transaction (Firebase Android's `runInTransaction`), or part of
    /// the current batch.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        if batchOps == 0 {
            try begin.run()
            do {
                let r = try body()
                try commit.run()
                return r
            } catch {
                sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
                throw error
            }
        }
        if !inTransaction { try begin.run(); inTransaction = true }
        let r = try body()
        opsInTransaction += 1
        if opsInTransaction >= batchOps { try flush() }
        return r
    }

    public func flush() throws {
        if inTransaction {
            try commit.run()
            inTransaction = false
            opsInTransaction = 0
        }
    }

    public func close() throws {
        try flush()
        for s in [begin, commit, insertCache, deleteRange, insertWrite, deleteWrite, upsertQuery, deleteQuery,
                  deleteKeys, insertKey, selectKeys, selectWrites, selectQueries, cacheSize, selectAllPaths] + Array(loadNestedByDepth.values) {
            s.finalize()
        }
        loadNestedByDepth = [:]
        guard sqlite3_close(db) == SQLITE_OK else { throw EngineError.sqlite("close: \(String(cString: sqlite3_errmsg(db)))") }
    }

    // MARK: Writes

    public func saveWrite(_ node: Node, at path: Path) throws -> Int64 {
        let id = nextWriteID
        nextWriteID += 1
        try transaction {
            insertWrite.bind(1, id)
            insertWrite.bind(2, androidPath(path))
            insertWrite.bind(3, blob: node.exportJSONString())
            try insertWrite.run()
        }
        return id
    }

    public func removeWrite(_ id: Int64) throws {
        try transaction {
            deleteWrite.bind(1, id)
            try deleteWrite.run()
        }
    }

    // MARK: Server cache

    func deleteNested(_ path: Path) throws {
        let start = androidPath(path)
        deleteRange.bind(1, start)
        deleteRange.bind(2, androidPrefixEnd(start))
        try deleteRange.run()
    }

    func saveNode(_ path: Path, _ node: Node) throws {
        insertCache.bind(1, androidPath(path))
        insertCache.bind(2, blob: node.exportJSONString())
        try insertCache.run()
    }

    /// `saveNested`: a children node estimated past 16 KiB becomes one row per child
    /// (recursively), its priority a `.priority` row, and an empty row at its own path so that
    /// older ancestor rows stay shadowed.
    func saveNested(_ path: Path, _ node: Node) throws {
        if !node.isLeaf && !node.isEmpty && estimatedSerializedSize(node) > SQLiteEngine.splitThreshold {
            for (k, c) in node.children { try saveNested(path.child(k), c) }
            if let p = node.priority { try saveNode(path.child(".priority"), Node(p.leafValue)) }
            try saveNode(path, .empty)
        } else {
            try saveNode(path, node)
        }
    }

    public func serverOverwrite(_ node: Node, at path: Path) throws {
        try transaction {
            try deleteNested(path)
            try saveNested(path, node)
        }
    }

    public func serverMerge(_ children: [(path: Path, node: Node)], at path: Path) throws {
        try transaction {
            for c in children {
                let p = path.appending(c.path)
                try deleteNested(p)
                try saveNested(p, c.node)
            }
        }
    }

    /// `loadNested`: the rows at the path and every ancestor, and every row under it, in path
    /// order; ancestors give the path's part of their JSON, descendants are applied over it.
    func loadNested(_ path: Path) throws -> Node {
        let depth = path.depth
        let stmt: Statement
        if let s = loadNestedByDepth[depth] {
            stmt = s
        } else {
            let ancestors = Array(repeating: "path = ?", count: depth + 1).joined(separator: " OR ")
            stmt = try Statement(db, "SELECT path, value FROM serverCache WHERE \(ancestors) OR (path > ? AND path < ?) ORDER BY path")
            loadNestedByDepth[depth] = stmt
        }
        for i in 0...depth { stmt.bind(Int32(i + 1), androidPath(Path(keys: Array(path.keys[..<i])))) }
        let start = androidPath(path)
        stmt.bind(Int32(depth + 2), start)
        stmt.bind(Int32(depth + 3), androidPrefixEnd(start))
        var node = Node.empty
        var sawDescendant = false
        var priorities: [(Path, Node)] = []
        try stmt.rows { s in
            let savedPath = parseAndroidPath(columnText(s, 0))
            let saved = try Node(jsonText: columnBlobString(s, 1))
            if savedPath.back?.string == ".priority" {
                priorities.append((savedPath, saved))
            } else if savedPath.contains(path) {
                precondition(!sawDescendant, "Descendants of path must come after ancestors")
                node = saved.child(at: savedPath.relativePath(to: path)!)
            } else if let rel = path.relativePath(to: savedPath) {
                sawDescendant = true
                node = node.updating(rel, with: saved)
            }
        }
        for (p, v) in priorities {
            if let rel = path.relativePath(to: p) { node = node.updating(rel, with: v) }
        }
        return node
    }

    public func read(_ path: Path) throws -> Node {
        try transaction { try loadNested(path) }
    }

    // MARK: Tracked queries

    public func trackQuery(_ q: TrackedQueryDef) throws {
        try transaction {
            upsertQuery.bind(1, q.id)
            upsertQuery.bind(2, androidPath(q.path))
            upsertQuery.bind(3, q.query.json.serialized())
            upsertQuery.bind(4, q.lastUse)
            upsertQuery.bind(5, q.complete ? 1 : 0)
            upsertQuery.bind(6, q.active ? 1 : 0)
            try upsertQuery.run()
            if let keys = q.keys { try saveKeys(keys, q.id) }
        }
    }

    func saveKeys(_ keys: [ChildKey], _ id: Int64) throws {
        deleteKeys.bind(1, id)
        try deleteKeys.run()
        for k in keys {
            insertKey.bind(1, id)
            insertKey.bind(2, k.string)
            try insertKey.run()
        }
    }

    public func setTrackedKeys(_ keys: [ChildKey], queryID: Int64) throws {
        try transaction { try saveKeys(keys, queryID) }
    }

    // MARK: Launch, views, queries

    public func loadStartupState() throws {
        writes = []
        try selectWrites.rows { s in
            let node = try Node(jsonText: columnBlobString(s, 4))
            writes.append((sqlite3_column_int64(s, 0), parseAndroidPath(columnText(s, 1)), node))
        }
        queries = []
        try selectQueries.rows { s in
            queries.append(TrackedQueryDef(
                id: sqlite3_column_int64(s, 0), path: parseAndroidPath(columnText(s, 1)),
                query: try QuerySpec(json: try JSONValue.parse(columnText(s, 2))),
                complete: sqlite3_column_int(s, 4) != 0, active: sqlite3_column_int(s, 5) != 0,
                lastUse: sqlite3_column_int64(s, 3)))
        }
        // resetPreviouslyActiveTrackedQueries
        try transaction {
            guard sqlite3_exec(db, "UPDATE trackedQueries SET active = 0 WHERE active = 1", nil, nil, nil) == SQLITE_OK else {
                throw EngineError.sqlite(String(cString: sqlite3_errmsg(db)))
            }
        }
    }

    func trackedKeys(_ id: Int64) throws -> [ChildKey] {
        var keys: [ChildKey] = []
        selectKeys.bind(1, id)
        try selectKeys.rows { s in keys.append(ChildKey(columnText(s, 0))) }
        return keys
    }

    /// `serverCache(forQuery)`: a complete filtered query loads its tracked keys, then the
    /// whole path (Android: "TODO[persistence]: Only load the tracked key data"), and keeps
    /// those children.
    public func queryWindow(_ q: TrackedQueryDef) throws -> QueryWindow {
        try transaction {
            var node = try loadNested(q.path)
            if !q.query.loadsAllData && q.complete {
                node = restrict(node, to: try trackedKeys(q.id))
            }
            return q.query.window(of: overlay(node, at: q.path, writes: writes))
        }
    }

    public func rebuildViews() throws -> Int {
        for q in queries { _ = try queryWindow(q) }
        return queries.count
    }

    // MARK: Pruning

    func estimatedCacheSize() throws -> Int64 {
        var size: Int64 = 0
        try cacheSize.rows { s in size = sqlite3_column_int64(s, 0) }
        return size
    }

    /// One round of `doPruneCheckAfterServerUpdate`: measure the cache, remove the LRU
    /// queries, `pruneCache` (every row under the root visited; rows under a pruned path
    /// deleted, kept subtrees below them re-saved), measure again.
    public func pruneFraction(_ fraction: Double) throws -> PruneOutcome {
        try transaction {
            _ = try estimatedCacheSize()
            let (prune, keep) = lruChoice(queries, fraction: fraction)
            for q in prune {
                deleteQuery.bind(1, q.id)
                try deleteQuery.run()
                deleteKeys.bind(1, q.id)
                try deleteKeys.run()
            }
            let forest = PruneForest(prune: prune.map(\.path), keep: keep.map(\.path))
            var doomed: [Int64] = []
            var resave: [(Path, Node)] = []
            selectAllPaths.bind(1, "/")
            selectAllPaths.bind(2, "0")
            var rows: [(Int64, Path)] = []
            try selectAllPaths.rows { s in rows.append((sqlite3_column_int64(s, 0), parseAndroidPath(columnText(s, 1)))) }
            for (rowid, path) in rows where forest.shouldPruneUnkeptDescendants(path) {
                doomed.append(rowid)
                for k in forest.keptBelow(path) { resave.append((k, try loadNested(k))) }
            }
            var i = 0
            while i < doomed.count {
                let chunk = doomed[i..<min(doomed.count, i + 10_000)]
                let sql = "DELETE FROM serverCache WHERE rowid IN (" + chunk.map(String.init).joined(separator: ",") + ")"
                guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw EngineError.sqlite(String(cString: sqlite3_errmsg(db))) }
                i += 10_000
            }
            for (k, n) in resave { try saveNested(k, n) }
            let removed = Set(prune.map(\.id))
            queries.removeAll { removed.contains($0.id) }
            _ = try estimatedCacheSize()
            return PruneOutcome(queriesRemoved: prune.count, rowsOrKeysDeleted: doomed.count)
        }
    }
}

/// Firebase's `PruneForest`, reduced to what one round needs: the leaf-most entry at or above
/// a path decides (prune or keep).
struct PruneForest {
    var entries: [Path: Bool] = [:]
    var kept: [Path] = []

    init(prune: [Path], keep: [Path]) {
        for p in prune { entries[p] = true }
        for k in keep where entries[k] == nil || entries[k] == true {
            // A kept path at or under a pruned one is the exclusion; a pruned path under a
            // kept one is never pruned (Firebase: prune under keep throws, so keep wins).
            entries[k] = false
            kept.append(k)
        }
    }

    func shouldPruneUnkeptDescendants(_ path: Path) -> Bool {
        var i = path.depth
        while i >= 0 {
            if let v = entries[Path(keys: Array(path.keys[..<i]))] { return v }
            i -= 1
        }
        return false
    }

    /// Kept paths strictly below `path`.
    func keptBelow(_ path: Path) -> [Path] {
        kept.filter { $0 != path && path.contains($0) }
    }
}
