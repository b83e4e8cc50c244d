/// The value of a leaf node.
public enum LeafValue: Sendable, CustomStringConvertible {
    /// A boolean. Never confused with a number.
    case bool(Bool)
    /// A finite number (Firebase numbers are IEEE-754 doubles).
    case number(Double)
    /// An integer a `Double` cannot hold exactly (|value| > 2^53), kept exact as Firebase's
    /// Android and iOS SDKs keep 64-bit integers (`LongNode`, `long long`). Every other number
    /// is ``number(_:)``: one representation per value (``integer(exactly:)``). Orders among
    /// numbers by exact value; hashes as Firebase hashes it, as the nearest `Double`.
    case integer(Int64)
    /// A string, kept exactly (never Unicode-normalized).
    case string(String)
    /// An unresolved server value; only pending writes hold these.
    case serverValue(ServerValuePlaceholder)

    /// The canonical leaf for an integer: ``number(_:)`` when a `Double` holds it exactly
    /// (|value| ≤ 2^53), else ``integer(_:)``.
    public static func integer(exactly value: Int64) -> LeafValue {
        value.magnitude <= 1 << 53 ? .number(Double(value)) : .integer(value)
    }

    /// The value as a `Double` for a number (an ``integer(_:)`` rounded to the nearest).
    public var doubleValue: Double? {
        switch self {
        case .number(let d): d
        case .integer(let i): Double(i)
        default: nil
        }
    }

    /// The value as an exact `Int64` when it is an integer within 64 bits.
    public var exactInteger: Int64? {
        switch self {
        case .integer(let i): i
        case .number(let d): d.rounded(.towardZero) == d && abs(d) <= 9.2e18 ? Int64(exactly: d) : nil
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .bool(let b): "\(b)"
        case .number(let n): "\(n)"
        case .integer(let i): "\(i)"
        case .string(let s): "\"\(s)\""
        case .serverValue(let v): v.description
        }
    }
}

extension LeafValue: Hashable {
    /// Exact equality: strings by code units (not canonical equivalence), numbers by value.
    public static func == (lhs: LeafValue, rhs: LeafValue) -> Bool {
        switch (lhs, rhs) {
        case let (.bool(a), .bool(b)): a == b
        case let (.number(a), .number(b)): a == b
        case let (.integer(a), .integer(b)): a == b
        case let (.string(a), .string(b)): a.hasSameUTF8(as: b)
        case let (.serverValue(a), .serverValue(b)): a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .bool(let b): hasher.combine(0); hasher.combine(b)
        case .number(let n): hasher.combine(1); hasher.combine(n)
        case .string(let s): hasher.combine(2); for byte in s.utf8 { hasher.combine(byte) }
        case .serverValue(let v): hasher.combine(3); hasher.combine(v)
        case .integer(let i): hasher.combine(4); hasher.combine(i)
        }
    }
}

/// A node's priority: a number or a string. (Firebase also accepts `null`, meaning none.)
public enum Priority: Sendable, CustomStringConvertible {
    /// A numeric priority; sorts before every string priority.
    case number(Double)
    /// A string priority.
    case string(String)

    public var description: String {
        switch self {
        case .number(let n): "\(n)"
        case .string(let s): "\"\(s)\""
        }
    }

    /// The priority as a leaf value.
    public var leafValue: LeafValue {
        switch self {
        case .number(let n): .number(n)
        case .string(let s): .string(s)
        }
    }
}

extension Priority: Hashable {
    public static func == (lhs: Priority, rhs: Priority) -> Bool {
        lhs.leafValue == rhs.leafValue
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(leafValue) }
}

/// A value in the database tree: absent (null), a leaf, or children — with an optional
/// priority on leaves and non-empty children nodes.
///
/// `Node` is an immutable value with structural sharing: updating one child of a node with n
/// children costs O(log n) time and allocation (see ``ChildMap``) and leaves the original
/// intact. Firebase's rules hold by construction:
/// - setting null (``Node/empty``) deletes; a children node left without children becomes
///   empty and loses its priority;
/// - an empty node carries no priority;
/// - writing a non-empty child under a leaf turns it into a children node that keeps the
///   leaf's priority; writing an empty child under a leaf changes nothing.
public struct Node: Sendable {
    /// What a node is. `package`, so that a walk over every node of a tree (the engine's binary
    /// encoding) matches each node once instead of copying its parts out through
    /// ``isEmpty``, ``leafValue``, ``children`` and ``priority`` one by one.
    @usableFromInline
    package enum Storage: Sendable {
        case empty
        case leaf(LeafValue, Priority?)
        case children(ChildMap, Priority?)
    }

    /// Set only by `init(storage:)` and the in-place updates (Node+InPlace.swift).
    @usableFromInline
    package internal(set) var storage: Storage

    private init(storage: Storage) { self.storage = storage }

    /// The absent value (JSON `null`).
    public static let empty = Node(storage: .empty)

    /// A leaf.
    public init(_ value: LeafValue, priority: Priority? = nil) {
        storage = .leaf(value, priority)
    }

    /// A children node (empty, and without priority, when `children` is empty).
    public init(children: ChildMap, priority: Priority? = nil) {
        storage = children.isEmpty ? .empty : .children(children, priority)
    }

    /// A children node from pairs in any order (empty values dropped).
    public init(children pairs: [(key: ChildKey, value: Node)], priority: Priority? = nil) {
        self.init(children: ChildMap(pairs), priority: priority)
    }

    /// A string leaf.
    public static func string(_ s: String) -> Node { Node(.string(s)) }
    /// A number leaf.
    public static func number(_ n: Double) -> Node { Node(.number(n)) }
    /// A boolean leaf.
    public static func bool(_ b: Bool) -> Node { Node(.bool(b)) }

    // MARK: - Inspection

    /// Whether this is the absent value.
    public var isEmpty: Bool {
        if case .empty = storage { return true }
        return false
    }

    /// Whether this is a leaf.
    public var isLeaf: Bool {
        if case .leaf = storage { return true }
        return false
    }

    /// The leaf's value, or `nil` for empty and children nodes.
    public var leafValue: LeafValue? {
        if case .leaf(let v, _) = storage { return v }
        return nil
    }

    /// The priority, if any.
    public var priority: Priority? {
        switch storage {
        case .empty: nil
        case .leaf(_, let p), .children(_, let p): p
        }
    }

    /// The children (empty for leaves and the empty node).
    public var children: ChildMap {
        if case .children(let map, _) = storage { return map }
        return ChildMap()
    }

    /// The number of children.
    public var childCount: Int { children.count }

    /// The child under `key` (the empty node when absent). `.priority` yields the priority as
    /// a leaf. O(log n).
    public func child(_ key: ChildKey) -> Node {
        if key.string == ".priority" {
            return priority.map { Node($0.leafValue) } ?? .empty
        }
        if case .children(let map, _) = storage { return map[key] ?? .empty }
        return .empty
    }

    /// The node at `path` below this one (the empty node when absent).
    public func child(at path: Path) -> Node {
        var node = self
        for key in path.keys {
            node = node.child(key)
            if node.isEmpty { return node }
        }
        return node
    }

    /// Whether the node nests more than `limit` levels of children below itself (a leaf or
    /// the empty node nests 0). Stops descending as soon as the answer is known.
    public func nestingExceeds(_ limit: Int) -> Bool {
        guard case .children(let map, _) = storage else { return false }
        if limit <= 0 { return true }
        return map.containsValue { $0.nestingExceeds(limit - 1) }
    }

    /// Whether a non-empty child exists under `key`.
    public func hasChild(_ key: ChildKey) -> Bool { !child(key).isEmpty }

    // MARK: - Updates

    /// This node with `priority` (ignored on the empty node, which has none).
    public func withPriority(_ priority: Priority?) -> Node {
        switch storage {
        case .empty: self
        case .leaf(let v, _): Node(storage: .leaf(v, priority))
        case .children(let m, _): Node(storage: .children(m, priority))
        }
    }

    /// This node with the child under `key` replaced by `child` (removed when empty). O(log n).
    ///
    /// `.priority` sets the priority from a string or number leaf (or clears it when empty).
    public func updatingChild(_ key: ChildKey, _ child: Node) -> Node {
        if key.string == ".priority" {
            return withPriority(Node.priority(from: child))
        }
        switch storage {
        case .empty:
            return child.isEmpty ? self : Node(storage: .children(ChildMap().setting(key, to: child), nil))
        case .leaf(_, let p):
            // Firebase: a leaf ignores empty child writes; a non-empty one replaces the leaf
            // with a children node that keeps the leaf's priority.
            return child.isEmpty ? self : Node(storage: .children(ChildMap().setting(key, to: child), p))
        case .children(let map, let p):
            let updated = map.setting(key, to: child)
            return updated.isEmpty ? .empty : Node(storage: .children(updated, p))
        }
    }

    /// This node with the node at `path` (relative to it) replaced by `node`.
    /// O(depth · log n).
    public func updating(_ path: Path, with node: Node) -> Node {
        updating(path.keys[...], with: node)
    }

    private func updating(_ keys: ArraySlice<ChildKey>, with node: Node) -> Node {
        guard let front = keys.first else { return node }
        if front.string == ".priority" {
            // `.priority` may only be the last key; anything below it is meaningless.
            return keys.count == 1 ? updatingChild(front, node) : self
        }
        let rest = keys.dropFirst()
        if case .children(let map, let p) = storage {
            // The child is found and replaced in one descent of the map.
            let updated = map.updatingValue(front) { $0.updating(rest, with: node) }
            return updated.isEmpty ? .empty : Node(storage: .children(updated, p))
        }
        let newChild = child(front).updating(rest, with: node)
        return updatingChild(front, newChild)
    }

    /// This node with a merge applied: each `(relative path, node)` written in order.
    public func merging(_ children: [(path: Path, node: Node)]) -> Node {
        var result = self
        for (path, node) in children { result = result.updating(path, with: node) }
        return result
    }

    /// The priority a node written at `.priority` denotes.
    static func priority(from node: Node) -> Priority? {
        switch node.leafValue {
        case .number(let n)?: .number(n)
        case .string(let s)?: .string(s)
        default: nil
        }
    }
}

extension Node: Hashable {
    /// Hashes the node's shape cheaply (kind, leaf value, priority, child count, first key);
    /// consistent with `==`, O(log n).
    public func hash(into hasher: inout Hasher) {
        switch storage {
        case .empty:
            hasher.combine(0)
        case let .leaf(v, p):
            hasher.combine(1)
            hasher.combine(v)
            hasher.combine(p)
        case let .children(map, p):
            hasher.combine(2)
            hasher.combine(map.count)
            hasher.combine(map.first?.key)
            hasher.combine(p)
        }
    }

    /// Structural equality, including priorities. O(1) for shared subtrees.
    public static func == (lhs: Node, rhs: Node) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case (.empty, .empty): true
        case let (.leaf(a, pa), .leaf(b, pb)): a == b && pa == pb
        case let (.children(a, pa), .children(b, pb)): pa == pb && a == b
        default: false
        }
    }
}

extension Node: CustomStringConvertible {
    /// The node in Firebase's JSON export format.
    public var description: String { exportJSONString() }
}
