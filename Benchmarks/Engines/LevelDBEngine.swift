// LevelDB (Debian's libleveldb, C API) in Firebase iOS's layout (`FLevelDBStorageEngine`):
//
//   server_data/  /server_cache/<path>/            one key per leaf, the value a JSON primitive
//                 /tracked_queries/<id>            JSON {"id","path","p","lu","c","a"}
//                 /tracked_query_keys/<id>/<key>   the key
//   writes/       <writeId>                        JSON {"id","path","o": node}
//
// Options as the SDK sets them: `create_if_missing` and LevelDB's defaults (4 MB write
// buffer, snappy compression). The SDK writes with `sync = false`; the `-sync` variant sets
// `sync = true` for a durable tier.
import CLevelDB
import Foundation
import Hearth

final class LevelDB {
    let db: OpaquePointer
    let options: OpaquePointer
    let write: OpaquePointer
    let readOptions: OpaquePointer

    init(path: String, sync: Bool) throws {
        options = leveldb_options_create()
        leveldb_options_set_create_if_missing(options, 1)
        var err: UnsafeMutablePointer<CChar>?
        let handle = leveldb_open(options, path, &err)
        if let err { defer { leveldb_free(err) }; throw EngineError.leveldb(String(cString: err)) }
        guard let handle else { throw EngineError.leveldb("open \(path)") }
        db = handle
        write = leveldb_writeoptions_create()
        leveldb_writeoptions_set_sync(write, sync ? 1 : 0)
        readOptions = leveldb_readoptions_create()
    }

    func close() {
        leveldb_close(db)
        leveldb_options_destroy(options)
        leveldb_writeoptions_destroy(write)
        leveldb_readoptions_destroy(readOptions)
    }

    func commit(_ batch: OpaquePointer) throws {
        var err: UnsafeMutablePointer<CChar>?
        leveldb_write(db, write, batch, &err)
        if let err { defer { leveldb_free(err) }; throw EngineError.leveldb(String(cString: err)) }
    }

    /// Calls `body` for every key with `prefix`, in key order, until it returns false.
    func scan(prefix: String, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) rethrows {
        let it = leveldb_create_iterator(db, readOptions)!
        defer { leveldb_iter_destroy(it) }
        var prefix = prefix
        try prefix.withUTF8 { p in
            if p.count == 0 {
                leveldb_iter_seek_to_first(it)
            } else {
                leveldb_iter_seek(it, UnsafeRawPointer(p.baseAddress!).assumingMemoryBound(to: CChar.self), p.count)
            }
            while leveldb_iter_valid(it) != 0 {
                var klen = 0, vlen = 0
                let k = leveldb_iter_key(it, &klen)!
                let key = UnsafeRawBufferPointer(start: k, count: klen)
                guard p.count == 0 || (klen >= p.count && memcmp(k, p.baseAddress!, p.count) == 0) else { return }
                let v = leveldb_iter_value(it, &vlen)
                if try !body(key, UnsafeRawBufferPointer(start: v, count: vlen)) { return }
                leveldb_iter_next(it)
            }
        }
    }
}

extension OpaquePointer {
    /// Puts into a write batch.
    func put(_ key: String, _ value: String) {
        var key = key, value = value
        key.withUTF8 { k in
            value.withUTF8 { v in
                leveldb_writebatch_put(self, UnsafeRawPointer(k.baseAddress!).assumingMemoryBound(to: CChar.self), k.count,
                                       v.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }, v.count)
            }
        }
    }

    func delete(_ key: String) {
        var key = key
        key.withUTF8 { k in leveldb_writebatch_delete(self, UnsafeRawPointer(k.baseAddress!).assumingMemoryBound(to: CChar.self), k.count) }
    }

    func delete(_ key: UnsafeRawBufferPointer) {
        leveldb_writebatch_delete(self, key.baseAddress!.assumingMemoryBound(to: CChar.self), key.count)
    }
}

public final class LevelDBEngine: PersistenceEngine, @unchecked Sendable {
    public let name: String
    public var supportsConcurrentWriters: Bool { true }
    let server: LevelDB
    let writesDB: LevelDB
    let nextID = NSLock()
    var lastWriteID: Int64 = 0

    var writes: [(id: Int64, path: Path, node: Node)] = []
    var queries: [TrackedQueryDef] = []

    static let cachePrefix = "/server_cache/"

    public init(name: String, config: EngineConfig, sync: Bool) throws {
        self.name = name
        try FileManager.default.createDirectory(atPath: config.directory, withIntermediateDirectories: true)
        server = try LevelDB(path: config.directory + "/server_data", sync: sync)
        writesDB = try LevelDB(path: config.directory + "/writes", sync: sync)
    }

    public func flush() throws {}

    public func close() throws {
        server.close()
        writesDB.close()
    }

    static func cacheKey(_ path: Path) -> String {
        var s = cachePrefix
        for k in path.keys { s += k.string; s += "/" }
        return s
    }

    // MARK: Writes

    public func saveWrite(_ node: Node, at path: Path) throws -> Int64 {
        let id: Int64 = nextID.withLock { lastWriteID += 1; return lastWriteID }
        let json = #"{"id":\#(id),"path":"# + JSONValue.string(androidPath(path)).serialized() + #","o":"# + node.exportJSONString() + "}"
        let b = leveldb_writebatch_create()!
        defer { leveldb_writebatch_destroy(b) }
        b.put(String(id), json)
        try writesDB.commit(b)
        return id
    }

    public func removeWrite(_ id: Int64) throws {
        let b = leveldb_writebatch_create()!
        defer { leveldb_writebatch_destroy(b) }
        b.delete(String(id))
        try writesDB.commit(b)
    }

    // MARK: Server cache

    /// One key per leaf (`internalSetNestedData`); a priority is a `.priority` leaf, and a leaf
    /// with a priority keeps its value under `.value`.
    func putLeaves(_ node: Node, _ key: String, _ b: OpaquePointer) -> Int {
        if node.isEmpty { return 0 }
        if let leaf = node.leafValue {
            if let p = node.priority {
                b.put(key + ".value/", Node(leaf).exportJSONString())
                b.put(key + ".priority/", Node(p.leafValue).exportJSONString())
                return 2
            }
            b.put(key, node.exportJSONString())
            return 1
        }
        var n = 0
        for (k, c) in node.children { n += putLeaves(c, key + k.string + "/", b) }
        if let p = node.priority {
            b.put(key + ".priority/", Node(p.leafValue).exportJSONString())
            n += 1
        }
        return n
    }

    func removeAllWithPrefix(_ prefix: String, _ b: OpaquePointer) {
        server.scan(prefix: prefix) { k, _ in
            b.delete(k)
            return true
        }
    }

    /// `removeAllLeafNodesOnPath`: the leaf keys at the path, every ancestor and the root.
    func removeLeavesOnPath(_ path: Path, _ b: OpaquePointer) {
        var key = LevelDBEngine.cachePrefix
        b.delete(key)
        for k in path.keys {
            key += k.string + "/"
            b.delete(key)
        }
    }

    public func serverOverwrite(_ node: Node, at path: Path) throws {
        let b = leveldb_writebatch_create()!
        defer { leveldb_writebatch_destroy(b) }
        removeLeavesOnPath(path, b)
        let key = LevelDBEngine.cacheKey(path)
        removeAllWithPrefix(key, b)
        _ = putLeaves(node, key, b)
        try server.commit(b)
    }

    public func serverMerge(_ children: [(path: Path, node: Node)], at path: Path) throws {
        let b = leveldb_writebatch_create()!
        defer { leveldb_writebatch_destroy(b) }
        removeLeavesOnPath(path, b)
        for c in children {
            let key = LevelDBEngine.cacheKey(path.appending(c.path))
            removeAllWithPrefix(key, b)
            _ = putLeaves(c.node, key, b)
        }
        try server.commit(b)
    }

    /// `internalNestedDataForPath`: the contiguous key range under the path, rebuilt into a
    /// tree (keys arrive in byte order, so every subtree's keys are contiguous).
    func loadNested(_ path: Path) -> Node {
        let prefix = LevelDBEngine.cacheKey(path)
        let prefixCount = prefix.utf8.count
        struct Frame { var key: ChildKey?; var pairs: [(key: ChildKey, value: Node)] }
        var stack = [Frame(key: nil, pairs: [])]
        var open: [String] = []  // the segments of the open frames below the root
        var leafAtPath: Node?
        server.scan(prefix: prefix) { k, v in
            let rel = UnsafeRawBufferPointer(rebasing: k[prefixCount...])
            let value = parseLeaf(v)
            if rel.isEmpty { leafAtPath = value; return true }
            // Segments: "a/b/c/" → ["a", "b", "c"]
            var segs: [String] = []
            var start = 0
            for i in 0..<rel.count where rel[i] == UInt8(ascii: "/") {
                segs.append(String(decoding: UnsafeRawBufferPointer(rebasing: rel[start..<i]), as: UTF8.self))
                start = i + 1
            }
            let dirs = segs.count - 1
            var common = 0
            while common < open.count && common < dirs && open[common] == segs[common] { common += 1 }
            while open.count > common {
                let f = stack.removeLast()
                open.removeLast()
                stack[stack.count - 1].pairs.append((f.key!, Node(children: f.pairs)))
            }
            for s in segs[common..<dirs] {
                stack.append(Frame(key: ChildKey(s), pairs: []))
                open.append(s)
            }
            stack[stack.count - 1].pairs.append((ChildKey(segs[dirs]), value))
            return true
        }
        if let leafAtPath { return leafAtPath }
        while stack.count > 1 {
            let f = stack.removeLast()
            stack[stack.count - 1].pairs.append((f.key!, Node(children: f.pairs)))
        }
        return Node(children: stack[0].pairs)
    }

    public func read(_ path: Path) throws -> Node { loadNested(path) }

    /// `serverCacheForKeys:atPath:`: one prefix scan per tracked key.
    func loadKeys(_ keys: [ChildKey], at path: Path) -> Node {
        var pairs: [(key: ChildKey, value: Node)] = []
        for k in keys {
            let c = loadNested(path.child(k))
            if !c.isEmpty { pairs.append((k, c)) }
        }
        return Node(children: pairs)
    }

    // MARK: Tracked queries

    public func trackQuery(_ q: TrackedQueryDef) throws {
        let b = leveldb_writebatch_create()!
        defer { leveldb_writebatch_destroy(b) }
        b.put("/tracked_queries/\(q.id)", trackedQueryJSON(q))
        try server.commit(b)
        if let keys = q.keys { try setTrackedKeys(keys, queryID: q.id) }
    }

    public func setTrackedKeys(_ keys: [ChildKey], queryID: Int64) throws {
        let b = leveldb_writebatch_create()!
        defer { leveldb_writebatch_destroy(b) }
        let prefix = "/tracked_query_keys/\(queryID)/"
        removeAllWithPrefix(prefix, b)
        for k in keys { b.put(prefix + k.string, k.string) }
        try server.commit(b)
    }

    func trackedKeys(_ id: Int64) -> [ChildKey] {
        var keys: [ChildKey] = []
        server.scan(prefix: "/tracked_query_keys/\(id)/") { _, v in
            keys.append(ChildKey(String(decoding: v, as: UTF8.self)))
            return true
        }
        return keys
    }

    // MARK: Launch, views, queries

    public func loadStartupState() throws {
        var loaded: [TrackedQueryDef] = []
        try server.scan(prefix: "/tracked_queries/") { _, v in
            loaded.append(try parseTrackedQuery(String(decoding: v, as: UTF8.self)))
            return true
        }
        queries = loaded
        // Queries active in the previous session are saved inactive (one write each on iOS).
        for var q in queries where q.active {
            q.active = false
            try trackQuery(q)
        }
        var ws: [(id: Int64, path: Path, node: Node)] = []
        try writesDB.scan(prefix: "") { _, v in
            let json = try JSONValue.parse(String(decoding: v, as: UTF8.self))
            guard case .number(let id)? = json["id"], case .string(let path)? = json["path"], let o = json["o"] else {
                throw EngineError.corrupt("write")
            }
            ws.append((Int64(id), parseAndroidPath(path), try Node(json: o)))
            return true
        }
        writes = ws.sorted { $0.id < $1.id }  // keys are unpadded decimal ids: re-sorted, as iOS does
        nextID.withLock { lastWriteID = max(lastWriteID, writes.last?.id ?? 0) }
    }

    /// `serverCacheForQuery:`: a complete filtered query loads just its tracked keys (one
    /// prefix scan each); otherwise the whole path.
    public func queryWindow(_ q: TrackedQueryDef) throws -> QueryWindow {
        let node: Node
        if !q.query.loadsAllData && q.complete {
            node = loadKeys(trackedKeys(q.id), at: q.path)
        } else {
            node = loadNested(q.path)
        }
        return q.query.window(of: overlay(node, at: q.path, writes: writes))
    }

    public func rebuildViews() throws -> Int {
        for q in queries { _ = try queryWindow(q) }
        return queries.count
    }

    // MARK: Pruning

    /// `serverCacheEstimatedSizeInBytes`: the value bytes of every cache key (a full scan).
    func estimatedCacheSize() -> Int {
        var size = 0
        server.scan(prefix: LevelDBEngine.cachePrefix) { _, v in size += v.count; return true }
        return size
    }

    /// One round of `doPruneCheckAfterServerUpdate`: measure, remove the LRU queries and their
    /// keys, `pruneCache` (iterate every cache key, delete those under a pruned path and not
    /// kept, one batch), measure again.
    public func pruneFraction(_ fraction: Double) throws -> PruneOutcome {
        _ = estimatedCacheSize()
        let (prune, keep) = lruChoice(queries, fraction: fraction)
        for q in prune {
            let b = leveldb_writebatch_create()!
            defer { leveldb_writebatch_destroy(b) }
            b.delete("/tracked_queries/\(q.id)")
            removeAllWithPrefix("/tracked_query_keys/\(q.id)/", b)
            try server.commit(b)
        }
        let forest = PruneForest(prune: prune.map(\.path), keep: keep.map(\.path))
        let b = leveldb_writebatch_create()!
        defer { leveldb_writebatch_destroy(b) }
        var deleted = 0
        let prefixCount = LevelDBEngine.cachePrefix.utf8.count
        server.scan(prefix: LevelDBEngine.cachePrefix) { k, _ in
            let rel = String(decoding: UnsafeRawBufferPointer(rebasing: k[prefixCount...]), as: UTF8.self)
            let path = Path(keys: rel.split(separator: "/").map { ChildKey(String($0)) })
            if forest.shouldPruneUnkeptDescendants(path) {
                b.delete(k)
                deleted += 1
            }
            return true
        }
        try server.commit(b)
        let removed = Set(prune.map(\.id))
        queries.removeAll { removed.contains($0.id) }
        _ = estimatedCacheSize()
        return PruneOutcome(queriesRemoved: prune.count, rowsOrKeysDeleted: deleted)
    }
}
