import HearthLog
import HearthModel

/// Binary encoding of event batches: the payload of a log record of type
/// ``EventCodec/recordType`` (FORMAT.md §"Event batches").
///
/// A batch is a varint event count followed by the events; each event is a tag byte and its
/// fields. Paths are a varint key count and the keys as strings; nodes use ``NodeCodec``;
/// queries are their JSON form (``QuerySpec/json``) as a string; times are zigzag varints of
/// milliseconds.
@_spi(HearthInternals) public enum EventCodec {
    /// The log record type of an event batch.
    public static let recordType: UInt8 = 0x01

    /// The most events one batch may hold when decoding.
    static let maxEvents = 1 << 20

    enum Tag: UInt8 {
        case serverOverwrite = 1, serverMerge, writeSaved, writeAcked, writeReverted
        case trackedQuerySaved, trackedQueryRemoved, pinChanged, authSaved, authCleared
        case transactionSaved, transactionRemoved, onDisconnectSaved, onDisconnectAcked
        case onDisconnectRemoved, serverTimeOffset, sessionStarted, cachePruned
        case trackedQueryKeysChanged
        case writerWatermark, writerWatermarksRemoved, writerIdentity
        case writerIdentityFrom
    }

    /// Encodes a batch of events.
    public static func encode(_ events: [StoreEvent]) -> [UInt8] {
        var w = ByteWriter(capacity: 128)
        w.varint(events.count)
        for e in events { encode(e, into: &w) }
        return w.bytes
    }

    /// Decodes a batch of events.
    /// - Throws: ``DecodeError`` with the offset of the first malformed byte.
    public static func decode(_ bytes: [UInt8]) throws(DecodeError) -> [StoreEvent] {
        var r = ByteReader(bytes)
        // Every event takes at least one byte (`authCleared` is a lone tag byte), which bounds
        // the count by the input left after the count — not by half of it: an event may take
        // one byte, and a batch of two `authCleared`s is valid.
        let n = try r.count(limit: maxEvents)
        guard n <= r.remaining else { throw r.fail("\(n) events but only \(r.remaining) bytes left") }
        var events: [StoreEvent] = []
        events.reserveCapacity(n)
        for _ in 0..<n { events.append(try decodeEvent(&r)) }
        guard r.isAtEnd else { throw r.fail("\(r.remaining) trailing bytes after \(n) events") }
        return events
    }

    // MARK: - Fields

    static func path(_ p: Path, _ w: inout ByteWriter) {
        w.varint(p.keys.count)
        for k in p.keys { w.string(k.string) }
    }

    static func path(_ r: inout ByteReader) throws(DecodeError) -> Path {
        let n = try r.count(limit: NodeCodec.maxDepth)
        var keys: [ChildKey] = []
        keys.reserveCapacity(n)
        for _ in 0..<n {
            let s = try r.string()
            guard !s.isEmpty else { throw r.fail("empty key in path") }
            keys.append(ChildKey(s))
        }
        return Path(keys: keys)
    }

    static func children(_ c: [ChildUpdate], _ w: inout ByteWriter) {
        w.varint(c.count)
        for u in c {
            path(u.path, &w)
            NodeCodec.encode(u.node, into: &w)
        }
    }

    /// ``children(_:_:)`` with each child's data inspected as it is encoded
    /// (``NodeCodec/encode(_:into:inspecting:)``): returns the relative path of the first
    /// child nesting too deep — the bytes are then incomplete — or nil.
    static func inspectedChildren(
        _ c: [ChildUpdate], _ w: inout ByteWriter, _ found: inout NodeCodec.Inspection
    ) -> Path? {
        w.varint(c.count)
        for u in c {
            path(u.path, &w)
            NodeCodec.encode(u.node, into: &w, inspecting: &found)
            if found.tooDeep { return u.path }
        }
        return nil
    }

    static func children(_ r: inout ByteReader) throws(DecodeError) -> [ChildUpdate] {
        let n = try r.count(limit: r.remaining / 2)
        var out: [ChildUpdate] = []
        out.reserveCapacity(n)
        for _ in 0..<n { out.append(ChildUpdate(path: try path(&r), node: try NodeCodec.decode(from: &r))) }
        return out
    }

    /// A list of child keys: `varint k ‖ k × string`, in the event's order (the store writes
    /// them in key order).
    static func keys(_ keys: [ChildKey], _ w: inout ByteWriter) {
        w.varint(keys.count)
        for k in keys { w.string(k.string) }
    }

    static func keys(_ r: inout ByteReader) throws(DecodeError) -> [ChildKey] {
        // Every key takes at least its length byte.
        let n = try r.count(limit: r.remaining)
        var out: [ChildKey] = []
        out.reserveCapacity(n)
        for _ in 0..<n {
            let s = try r.string()
            guard !s.isEmpty else { throw r.fail("empty child key") }
            out.append(ChildKey(s))
        }
        return out
    }

    static func query(_ q: QuerySpec, _ w: inout ByteWriter) { w.string(q.json.serialized()) }

    static func query(_ r: inout ByteReader) throws(DecodeError) -> QuerySpec {
        let start = r.offset
        let text = try r.string()
        do {
            return try QuerySpec(json: JSONValue.parse(text))
        } catch {
            throw DecodeError(offset: start, reason: "invalid query \(text): \(error)")
        }
    }

    static func location(_ l: QueryLocation, _ w: inout ByteWriter) {
        path(l.path, &w)
        query(l.query, &w)
    }

    static func location(_ r: inout ByteReader) throws(DecodeError) -> QueryLocation {
        QueryLocation(path: try path(&r), query: try query(&r))
    }

    static func id(_ r: inout ByteReader) throws(DecodeError) -> Int64 {
        let v = try r.varint()
        guard v <= UInt64(Int64.max) else { throw r.fail("id out of range") }
        return Int64(v)
    }

    // MARK: - Events

    static func encode(_ e: StoreEvent, into w: inout ByteWriter) {
        switch e {
        case let .serverOverwrite(p, node, at):
            w.u8(Tag.serverOverwrite.rawValue); path(p, &w); NodeCodec.encode(node, into: &w); w.zigzag(at)
        case let .serverMerge(p, c, at):
            w.u8(Tag.serverMerge.rawValue); path(p, &w); children(c, &w); w.zigzag(at)
        case .writeSaved(let write):
            w.u8(Tag.writeSaved.rawValue); w.varint(UInt64(write.id)); path(write.path, &w)
            switch write.operation {
            case .set(let node): w.u8(0); NodeCodec.encode(node, into: &w)
            case .update(let c): w.u8(1); children(c, &w)
            }
        case .writeAcked(let id):
            w.u8(Tag.writeAcked.rawValue); w.varint(UInt64(id))
        case .writeReverted(let id):
            w.u8(Tag.writeReverted.rawValue); w.varint(UInt64(id))
        case .trackedQuerySaved(let q):
            w.u8(Tag.trackedQuerySaved.rawValue); w.varint(UInt64(q.id)); location(q.location, &w)
            w.bool(q.complete); w.bool(q.active); w.zigzag(q.lastUse)
            if let keys = q.keys {
                w.u8(1)
                let sorted = keys.sorted()
                w.varint(sorted.count)
                for k in sorted { w.string(k.string) }
            } else {
                w.u8(0)
            }
        case let .trackedQueryKeysChanged(id, added, removed):
            w.u8(Tag.trackedQueryKeysChanged.rawValue); w.varint(UInt64(id))
            keys(added, &w)
            keys(removed, &w)
        case .trackedQueryRemoved(let id):
            w.u8(Tag.trackedQueryRemoved.rawValue); w.varint(UInt64(id))
        case let .pinChanged(l, on):
            w.u8(Tag.pinChanged.rawValue); location(l, &w); w.bool(on)
        case .authSaved(let t):
            w.u8(Tag.authSaved.rawValue); w.string(t.token); w.zigzag(t.expiresAt)
        case .authCleared:
            w.u8(Tag.authCleared.rawValue)
        case .transactionSaved(let t):
            w.u8(Tag.transactionSaved.rawValue); w.varint(UInt64(t.id)); path(t.path, &w); w.string(t.functionName)
            NodeCodec.encode(t.argument, into: &w); NodeCodec.encode(t.localResult, into: &w)
            w.varint(t.retryCount); w.u8(t.status.rawValue)
        case .transactionRemoved(let id):
            w.u8(Tag.transactionRemoved.rawValue); w.varint(UInt64(id))
        case .onDisconnectSaved(let op):
            w.u8(Tag.onDisconnectSaved.rawValue); w.varint(UInt64(op.id)); path(op.path, &w)
            switch op.action {
            case .set(let node): w.u8(0); NodeCodec.encode(node, into: &w)
            case .update(let c): w.u8(1); children(c, &w)
            case .remove: w.u8(2)
            case .cancel: w.u8(3)
            }
            w.bool(op.acknowledged)
        case .onDisconnectAcked(let id):
            w.u8(Tag.onDisconnectAcked.rawValue); w.varint(UInt64(id))
        case .onDisconnectRemoved(let id):
            w.u8(Tag.onDisconnectRemoved.rawValue); w.varint(UInt64(id))
        case .serverTimeOffset(let ms):
            w.u8(Tag.serverTimeOffset.rawValue); w.double(ms)
        case .sessionStarted(let at):
            w.u8(Tag.sessionStarted.rawValue); w.zigzag(at)
        case .cachePruned(let result):
            w.u8(Tag.cachePruned.rawValue)
            w.varint(result.prunedPaths.count)
            for p in result.prunedPaths { path(p, &w) }
            w.varint(result.keptPaths.count)
            for p in result.keptPaths { path(p, &w) }
            w.varint(result.removedQueryIDs.count)
            for id in result.removedQueryIDs { w.varint(UInt64(id)) }
        case let .writerWatermark(writer, id, at):
            w.u8(Tag.writerWatermark.rawValue); w.string(writer); w.varint(UInt64(id)); w.zigzag(at)
        case .writerWatermarksRemoved(let writers):
            w.u8(Tag.writerWatermarksRemoved.rawValue); w.varint(writers.count)
            for writer in writers { w.string(writer) }
        case .writerIdentity(let writer, nil):
            w.u8(Tag.writerIdentity.rawValue); w.string(writer)
        case .writerIdentity(let writer, let first?):
            w.u8(Tag.writerIdentityFrom.rawValue); w.string(writer); w.varint(UInt64(first))
        }
    }

    /// A writer id: a non-empty string of at most ``maxWriterLength`` bytes.
    static func writer(_ r: inout ByteReader) throws(DecodeError) -> String {
        let s = try r.string()
        guard !s.isEmpty, s.utf8.count <= maxWriterLength else {
            throw r.fail("writer id of \(s.utf8.count) bytes (1…\(maxWriterLength))")
        }
        return s
    }

    /// The longest writer id the store accepts, in UTF-8 bytes.
    public static let maxWriterLength = 256

    static func decodeEvent(_ r: inout ByteReader) throws(DecodeError) -> StoreEvent {
        let tagOffset = r.offset
        guard let tag = Tag(rawValue: try r.u8()) else {
            throw DecodeError(offset: tagOffset, reason: "unknown event tag \(r.bytes[tagOffset])")
        }
        switch tag {
        case .serverOverwrite:
            return .serverOverwrite(path: try path(&r), node: try NodeCodec.decode(from: &r), at: try r.zigzag())
        case .serverMerge:
            return .serverMerge(path: try path(&r), children: try children(&r), at: try r.zigzag())
        case .writeSaved:
            let writeID = try id(&r)
            let p = try path(&r)
            switch try r.u8() {
            case 0:
                return .writeSaved(PendingWrite(id: writeID, path: p, operation: .set(try NodeCodec.decode(from: &r))))
            case 1: return .writeSaved(PendingWrite(id: writeID, path: p, operation: .update(try children(&r))))
            case let b: throw DecodeError(offset: r.offset - 1, reason: "unknown write operation \(b)")
            }
        case .writeAcked: return .writeAcked(id: try id(&r))
        case .writeReverted: return .writeReverted(id: try id(&r))
        case .trackedQuerySaved:
            let queryID = try id(&r)
            let loc = try location(&r)
            let complete = try r.bool(), active = try r.bool()
            let lastUse = try r.zigzag()
            var keys: Set<ChildKey>?
            switch try r.u8() {
            case 0: keys = nil
            case 1:
                let n = try r.count(limit: r.remaining / 2)
                var set = Set<ChildKey>(minimumCapacity: n)
                for _ in 0..<n { set.insert(ChildKey(try r.string())) }
                keys = set
            case let b: throw DecodeError(offset: r.offset - 1, reason: "unknown keys flag \(b)")
            }
            return .trackedQuerySaved(
                TrackedQuery(
                    id: queryID, location: loc, complete: complete, active: active, lastUse: lastUse, keys: keys))
        case .trackedQueryKeysChanged:
            return .trackedQueryKeysChanged(id: try id(&r), added: try keys(&r), removed: try keys(&r))
        case .trackedQueryRemoved: return .trackedQueryRemoved(id: try id(&r))
        case .pinChanged: return .pinChanged(try location(&r), on: try r.bool())
        case .authSaved: return .authSaved(AuthToken(token: try r.string(), expiresAt: try r.zigzag()))
        case .authCleared: return .authCleared
        case .transactionSaved:
            let txID = try id(&r)
            let p = try path(&r)
            let name = try r.string()
            let arg = try NodeCodec.decode(from: &r)
            let result = try NodeCodec.decode(from: &r)
            let retries = try r.count(limit: Int(Int32.max))
            let statusOffset = r.offset
            guard let status = QueuedTransaction.Status(rawValue: try r.u8()) else {
                throw DecodeError(offset: statusOffset, reason: "unknown transaction status")
            }
            return .transactionSaved(
                QueuedTransaction(
                    id: txID, path: p, functionName: name, argument: arg, localResult: result, retryCount: retries,
                    status: status))
        case .transactionRemoved: return .transactionRemoved(id: try id(&r))
        case .onDisconnectSaved:
            let opID = try id(&r)
            let p = try path(&r)
            let action: OnDisconnectOperation.Action
            switch try r.u8() {
            case 0: action = .set(try NodeCodec.decode(from: &r))
            case 1: action = .update(try children(&r))
            case 2: action = .remove
            case 3: action = .cancel
            case let b: throw DecodeError(offset: r.offset - 1, reason: "unknown onDisconnect action \(b)")
            }
            return .onDisconnectSaved(
                OnDisconnectOperation(id: opID, path: p, action: action, acknowledged: try r.bool()))
        case .onDisconnectAcked: return .onDisconnectAcked(id: try id(&r))
        case .onDisconnectRemoved: return .onDisconnectRemoved(id: try id(&r))
        case .serverTimeOffset:
            let ms = try r.double()
            guard ms.isFinite else { throw r.fail("non-finite server time offset") }
            return .serverTimeOffset(ms: ms)
        case .sessionStarted: return .sessionStarted(at: try r.zigzag())
        case .cachePruned:
            var pruned: [Path] = [], kept: [Path] = [], ids: [Int64] = []
            for _ in 0..<(try r.count(limit: r.remaining)) { pruned.append(try path(&r)) }
            for _ in 0..<(try r.count(limit: r.remaining)) { kept.append(try path(&r)) }
            for _ in 0..<(try r.count(limit: r.remaining)) { ids.append(try id(&r)) }
            return .cachePruned(PruneResult(prunedPaths: pruned, keptPaths: kept, removedQueryIDs: ids))
        case .writerWatermark:
            return .writerWatermark(writer: try writer(&r), id: try id(&r), at: try r.zigzag())
        case .writerWatermarksRemoved:
            // Every writer takes at least two bytes (length and one byte).
            let n = try r.count(limit: r.remaining / 2)
            var writers: [String] = []
            writers.reserveCapacity(n)
            for _ in 0..<n { writers.append(try writer(&r)) }
            return .writerWatermarksRemoved(writers: writers)
        case .writerIdentity:
            return .writerIdentity(writer: try writer(&r), firstWriteID: nil)
        case .writerIdentityFrom:
            return .writerIdentity(writer: try writer(&r), firstWriteID: try id(&r))
        }
    }
}
