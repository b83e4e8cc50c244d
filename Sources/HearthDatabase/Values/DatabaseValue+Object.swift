import HearthModel

extension DatabaseValue {
    /// The children of an ``DatabaseValue/object(_:)``: values by key, with keys compared
    /// **exactly**, as the database compares them.
    ///
    /// The database keeps two keys apart whenever their code units differ, as Firebase does —
    /// `"é"` (U+00E9) and `"e\u{301}"` (`e` and a combining acute accent) are two children.
    /// Swift's `String ==` treats such canonically equivalent spellings as one string, so a
    /// `[String: DatabaseValue]` would merge the two children into one and keep one value. An
    /// `Object` keeps one member per exact key: its subscript finds a member only under the same
    /// Unicode scalars, and a literal or ``DatabaseValue/Object/init(_:)`` keeps every distinct key.
    ///
    /// It reads and builds like a dictionary, so app code stays the same:
    ///
    /// ```swift
    /// try await ref.setValue(["name": "Ada", "score": 3])
    /// let name = snapshot.databaseValue.objectValue?["name"]
    /// for (key, value) in object { print(key, value) }
    /// ```
    ///
    /// Iteration and ``DatabaseValue/Object/keys`` follow the database's key order (integer-like keys first by
    /// value, then the others by UTF-16 code units), so output built from an object is stable.
    public struct Object: Sendable, Hashable {
        /// The members, by exact key.
        var members: [ChildKey: DatabaseValue]

        /// Creates an object from members already keyed exactly.
        init(members: [ChildKey: DatabaseValue]) {
            self.members = members
        }

        /// An empty object.
        public init() {
            members = [:]
        }

        /// An object holding `members`, for example a `[String: DatabaseValue]`. A key given
        /// twice with the same code units keeps its last value; keys that only `String ==`
        /// finds equal stay two members.
        public init(_ members: some Sequence<(key: String, value: DatabaseValue)>) {
            self.members = [:]
            for (key, value) in members { self.members[ChildKey(key)] = value }
        }

        /// The number of members.
        public var count: Int { members.count }

        /// Whether there are no members.
        public var isEmpty: Bool { members.isEmpty }

        /// The keys, in the database's key order.
        public var keys: [String] { sortedMembers.map(\.key.string) }

        /// The value under exactly `key` (same Unicode scalars), or `nil`. Setting `nil`
        /// removes the member.
        public subscript(key: String) -> DatabaseValue? {
            get { members[ChildKey(key)] }
            set { members[ChildKey(key)] = newValue }
        }

        /// The members in the database's key order.
        var sortedMembers: [(key: ChildKey, value: DatabaseValue)] {
            members.sorted { ChildKey.compare($0.key, $1.key) < 0 }
        }
    }
}

extension DatabaseValue.Object: Sequence {
    /// Iterates the members as `(key, value)` pairs in the database's key order.
    public func makeIterator() -> IndexingIterator<[(key: String, value: DatabaseValue)]> {
        sortedMembers.map { (key: $0.key.string, value: $0.value) }.makeIterator()
    }

    /// The number of members (iterating does not consume an object).
    public var underestimatedCount: Int { members.count }
}

extension DatabaseValue.Object: ExpressibleByDictionaryLiteral {
    /// An object from a literal; a key written twice with the same code units keeps its last
    /// value.
    public init(dictionaryLiteral elements: (String, DatabaseValue)...) {
        members = [:]
        members.reserveCapacity(elements.count)
        for (key, value) in elements { members[ChildKey(key)] = value }
    }
}
