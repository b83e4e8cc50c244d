@_spi(HearthInternals) import HearthLog
import HearthModel

// Order indexes (body format 5, FORMAT.md §7.1): a large location's children keys sorted by an
// ordering other than the key — by a child, by value, by priority — with the value each is
// ordered by, stored in runs as the cache is stored in chunks. A window of that ordering
// (`orderByChild("ts").limitToLast(50)`) reads the last (or first) runs and then only the
// chunks of the children they name, where without one it needs every child's value.

extension CheckpointFormat {
    /// One location's children in one ordering, sorted as the ordering sorts them (indexed
    /// value, then key), cut into runs.
    struct OrderIndex: Sendable, Hashable {
        /// One run of the index: `count` consecutive entries, stored as a chunk is.
        struct Run: Sendable, Hashable {
            let count: Int
            let offset: UInt64
            let storedLength: Int
            let rawLength: Int
            let compressed: Bool
            /// Masked CRC32C of the stored bytes.
            let crc: UInt32
        }

        /// The location whose children are indexed.
        let path: Path
        /// The ordering (never ``QueryIndex/key``: the chunks are in key order already).
        let index: QueryIndex
        /// The runs, in the ordering's order; their counts add up to the location's children.
        let runs: [Run]

        /// What an index is of: a location and an ordering (a ``QueryLocation`` would make
        /// every unlimited query the default one).
        struct Target: Hashable {
            let path: Path
            let index: QueryIndex
        }
    }

    /// Target raw size of one run of an order index: small, since a window reads a run whole
    /// to take its last entries (16 KiB: about 800 entries of a short key and a number).
    static let orderIndexRunTarget = 16 * 1024

    /// What an order index stores for an indexed value: the value without its priority; an
    /// object as the one-child object `{"o": true}`, since every object orders alike (after
    /// every leaf, then by key).
    static func storedIndexValue(_ value: Node) -> Node {
        if value.isEmpty { return .empty }
        if value.isLeaf { return value.withPriority(nil) }
        return storedObject
    }

    /// What an order index stores for every object.
    static let storedObject = Node(children: [(key: ChildKey("o"), value: .bool(true))])

    /// A run's raw bytes: `varint count ‖ count × (string key ‖ node indexed value)`.
    static func encodeOrderIndexRun(_ entries: ArraySlice<(key: ChildKey, value: Node)>) -> [UInt8] {
        var w = ByteWriter(capacity: entries.count * 24 + 8)
        w.varint(entries.count)
        for entry in entries {
            w.string(entry.key.string)
            NodeCodec.encode(entry.value, into: &w)
        }
        return w.bytes
    }

    /// Decodes a run's raw bytes, checking that it holds `count` entries in strictly increasing
    /// order (indexed value, then key; ``compareIndexed(_:_:)``) and nothing after them.
    static func decodeOrderIndexRun(_ raw: [UInt8], count: Int) throws(DecodeError) -> [(key: ChildKey, value: Node)] {
        var r = ByteReader(raw)
        let n = try r.count(limit: r.remaining)
        guard n == count else { throw r.fail("run holds \(n) entries, the directory says \(count)") }
        var entries: [(key: ChildKey, value: Node)] = []
        entries.reserveCapacity(n)
        for _ in 0..<n {
            let key = ChildKey(try r.string())
            let value = try NodeCodec.decode(from: &r)
            if let last = entries.last, compareIndexed(last, (key, value)) >= 0 {
                throw r.fail("entry \(key) out of order")
            }
            entries.append((key, value))
        }
        guard r.isAtEnd else { throw r.fail("\(r.remaining) trailing bytes in order index run") }
        return entries
    }

    /// Compares two index entries (stored indexed values and keys) as every ordering but the
    /// key's compares children: by indexed value, then by key.
    static func compareIndexed(_ a: (key: ChildKey, value: Node), _ b: (key: ChildKey, value: Node)) -> Int {
        let c = Node.compareForOrdering(a.value, b.value)
        return c != 0 ? c : ChildKey.compare(a.key, b.key)
    }
}
