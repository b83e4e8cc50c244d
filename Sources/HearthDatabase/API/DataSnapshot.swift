import HearthModel

/// The data at a location at one moment, as an observer or `getData` delivers it (Firebase's
/// `DataSnapshot`): immutable, cheap to copy, safe to share between threads.
///
/// A snapshot from a query lists its ``children`` in the query's order; the snapshots of
/// children (from ``children`` or ``childSnapshot(forPath:)``) list theirs in the default
/// (priority) order, as Firebase's do.
public struct DataSnapshot: Sendable {
    /// The location this snapshot was read from.
    public let ref: DatabaseReference
    /// The data.
    let node: Node
    /// The order of ``children``.
    let index: QueryIndex

    /// A snapshot of `node` read at `ref` by a query ordered by `index`.
    init(ref: DatabaseReference, node: Node, index: QueryIndex = .priority) {
        self.ref = ref
        self.node = node
        self.index = index
    }

    /// The last key of the location — Firebase's `key`, a `String`: empty at the root (where
    /// the reference's ``DatabaseReference/key`` is `nil`, which Firebase's non-optional
    /// snapshot key bridges to `""`).
    public var key: String { ref.key ?? "" }

    /// Whether there is data here (any value other than null).
    public func exists() -> Bool { !node.isEmpty }

    /// The data as a ``DatabaseValue``: ``DatabaseValue/null`` when absent, priorities left
    /// out, integral numbers as ``DatabaseValue/int(_:)``, and children that look like an
    /// array (keys `0`, `1`, … with the largest less than twice their count) as
    /// ``DatabaseValue/array(_:)`` with ``DatabaseValue/null`` in the gaps.
    public var databaseValue: DatabaseValue { DatabaseValue(node: node) }

    /// The data with priorities, in Firebase's export format: children as objects (never
    /// arrays) with a `.priority` member when they have one, and a leaf with a priority as
    /// `[".value": v, ".priority": p]`.
    public var exportedDatabaseValue: DatabaseValue { DatabaseValue(exporting: node) }

    /// The priority, or `nil` when the data has none: a ``DatabaseValue/string(_:)``,
    /// ``DatabaseValue/int(_:)`` or ``DatabaseValue/double(_:)``.
    public var priority: DatabaseValue? { node.priority.map { DatabaseValue(leaf: $0.leafValue) } }

    /// The number of children (0 for a leaf or no data); a `UInt`, as Firebase's.
    public var childrenCount: UInt { UInt(node.childCount) }

    /// Whether there are children (a leaf or absent data has none).
    public func hasChildren() -> Bool { node.childCount > 0 }

    /// Whether there is data at `path`, a slash-separated path relative to this snapshot. An
    /// invalid path has no data.
    public func hasChild(_ path: String) -> Bool { childSnapshot(forPath: path).exists() }

    /// The snapshot at `path`, a slash-separated path relative to this one (absent data gives
    /// a snapshot that does not exist). An invalid path gives an empty snapshot whose ``ref``
    /// reports ``DatabaseError/invalidPath(_:)``.
    public func childSnapshot(forPath path: String) -> DataSnapshot {
        let childRef = ref.child(path)
        guard childRef.invalid == nil, ref.invalid == nil,
            let relative = ref.path.relativePath(to: childRef.path)
        else {
            return DataSnapshot(ref: childRef, node: .empty)
        }
        return DataSnapshot(ref: childRef, node: node.child(at: relative))
    }

    /// The children in the order of the query this snapshot came from.
    public var children: Children { Children(snapshot: self) }

    /// The children of a ``DataSnapshot``, as snapshots, in the query's order.
    public struct Children: Sequence, Sendable {
        let snapshot: DataSnapshot

        /// The number of children.
        public var count: Int { snapshot.node.childCount }

        /// Iterates the children in the query's order.
        public func makeIterator() -> IndexingIterator<[DataSnapshot]> {
            let entries = Array(snapshot.node.children)
            let ordered: [(key: ChildKey, value: Node)]
            if case .key = snapshot.index {
                ordered = entries  // a child map is already in key order
            } else {
                let index = snapshot.index
                ordered = entries.sorted { index.compare($0, $1) < 0 }
            }
            return ordered.map { entry in
                DataSnapshot(ref: snapshot.ref.childRef(entry.key), node: entry.value)
            }.makeIterator()
        }
    }

    /// The data decoded as `T` (see the module's Codable support: Firebase's defaults — a
    /// `Date` as `Date`'s own form, `Data` as base64, `URL` as a string).
    ///
    /// - Throws: ``DatabaseError/decodingFailed(_:)`` naming the coding path, for example when
    ///   the location holds no data and `T` is not optional.
    public func data<T: Decodable>(as type: T.Type) throws(DatabaseError) -> T {
        try NodeDecoder().decode(T.self, from: node)
    }
}

extension DatabaseReference {
    /// The reference to the child `key` (already a valid key, from data).
    func childRef(_ key: ChildKey) -> DatabaseReference {
        DatabaseReference(database: database, path: path.child(key), invalid: invalid)
    }
}

extension DataSnapshot: CustomStringConvertible {
    /// The key and the value in export format.
    public var description: String { "DataSnapshot(\(ref.key ?? "/")): \(exportedDatabaseValue)" }
}
