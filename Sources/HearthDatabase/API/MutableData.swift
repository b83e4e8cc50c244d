import Foundation
import HearthModel

/// The data at a transaction's location, for its block to read and change (Firebase's
/// `MutableData`).
///
/// The block gets the local value first — `nil` when nothing is cached yet, exactly as in
/// Firebase — and runs again on the server's value if that differed, so it must compute the
/// new value from what it is given:
///
/// ```swift
/// ref.runTransactionBlock { currentData in
///     let count = currentData.value as? Int ?? 0
///     currentData.value = count + 1
///     return TransactionResult.success(withValue: currentData)
/// }
/// ```
///
/// Every `MutableData` got from one block's argument — the argument itself, one from
/// ``childData(byAppendingPath:)`` or ``children`` — reads and writes the same data: a write
/// through a child is seen by its parent. Setting an invalid value or priority (one
/// ``DatabaseValue/init(any:)`` or the database's validation refuses) does not crash, as
/// Firebase's exception would: the transaction ends, not committed, with that
/// ``DatabaseError`` in its completion, and nothing is written.
public final class MutableData: @unchecked Sendable {
    /// The whole data of the transaction, shared by every `MutableData` made from it.
    final class Root: @unchecked Sendable {
        private let lock = NSLock()
        private var node: Node
        private var error: DatabaseError?
        /// The transaction's location (absolute), for validating what is written.
        let location: Path

        init(_ node: Node, at location: Path) {
            self.node = node
            self.location = location
        }

        func read<T>(_ body: (Node) -> T) -> T {
            lock.lock()
            defer { lock.unlock() }
            return body(node)
        }

        /// The data as the block left it, or the first error one of its writes met.
        var outcome: Result<Node, DatabaseError> {
            lock.lock()
            defer { lock.unlock() }
            return error.map { .failure($0) } ?? .success(node)
        }

        func write(at path: Path, _ change: (Node) throws(DatabaseError) -> Node) {
            lock.lock()
            defer { lock.unlock() }
            guard error == nil else { return }
            do throws(DatabaseError) {
                node = node.updating(path, with: try change(node.child(at: path)))
            } catch {
                self.error = error
            }
        }

        func fail(_ e: DatabaseError) {
            lock.lock()
            defer { lock.unlock() }
            if error == nil { error = e }
        }
    }

    let root: Root
    /// Where this data is, relative to the transaction's location.
    let path: Path

    init(root: Root, path: Path) {
        self.root = root
        self.path = path
    }

    /// Empty data, not attached to any transaction (Firebase's `MutableData()`).
    public convenience init() {
        self.init(root: Root(.empty, at: .root), path: .root)
    }

    /// The key of this data's location relative to the transaction's: `nil` for the data a
    /// block is given, the last path segment for ``childData(byAppendingPath:)``'s.
    public var key: String? { path.back?.string }

    /// The data as Firebase's untyped value (as ``DataSnapshot/value`` gives it: `nil` when
    /// empty, `[String: Any]`, `[Any]`, `Bool`, `String`, `Int`, `Double`). Setting it
    /// replaces the data here and its priority with what ``DatabaseValue/init(any:)``
    /// converts (a `[".value": v, ".priority": p]` dictionary sets both); `nil` removes it.
    public var value: Any? {
        get {
            let v = DatabaseValue(node: root.read { $0.child(at: path) })
            return v.isNull ? nil : v.anyValue
        }
        set {
            let absolute = root.location.appending(path)
            root.write(at: path) { (_) throws(DatabaseError) in
                try DatabaseValue(any: newValue).node(at: absolute)
            }
        }
    }

    /// The priority here: a `String`, a number, or `nil`. Setting a value of another type
    /// fails the transaction (see ``MutableData``).
    public var priority: Any? {
        get {
            guard let p = root.read({ $0.child(at: path).priority }) else { return nil }
            return DatabaseValue(leaf: p.leafValue).anyValue
        }
        set {
            root.write(at: path) { (current) throws(DatabaseError) in
                switch try DatabaseValue(any: newValue) {
                case .null: return current.withPriority(nil)
                case .string(let s): return current.withPriority(.string(s))
                case let v where v.doubleValue?.isFinite == true:
                    return current.withPriority(v.doubleValue.map(Priority.number))
                default:
                    throw .invalidValue("a priority must be a string, a finite number, or nil")
                }
            }
        }
    }

    /// The number of children here.
    public var childrenCount: UInt { UInt(root.read { $0.child(at: path).childCount }) }

    /// Whether there are children here (a leaf or empty data has none).
    public func hasChildren() -> Bool { root.read { $0.child(at: path).childCount > 0 } }

    /// Whether there is data at `path` (slash-separated, relative to here).
    public func hasChild(atPath path: String) -> Bool {
        guard let relative = MutableData.relativePath(path) else { return false }
        return root.read { !$0.child(at: self.path.appending(relative)).isEmpty }
    }

    /// The data at `path` (slash-separated, relative to here), whose writes are writes to this
    /// data. An invalid path fails the transaction (see ``MutableData``); the data returned
    /// then stands for this location.
    public func childData(byAppendingPath path: String) -> MutableData {
        guard let relative = MutableData.relativePath(path) else {
            root.fail(.invalidPath("childData(byAppendingPath:): \"\(path)\" is not a valid path"))
            return self
        }
        return MutableData(root: root, path: self.path.appending(relative))
    }

    /// The children here, in key order, each writing through to this data.
    public var children: [MutableData] {
        root.read { node in node.child(at: path).children.map { MutableData(root: root, path: path.child($0.key)) } }
    }

    /// `string` as a relative path of valid keys, or `nil`.
    private static func relativePath(_ string: String) -> Path? {
        var keys: [ChildKey] = []
        for segment in Path.segments(of: string) {
            guard let key = try? ChildKey.validated(segment) else { return nil }
            keys.append(key)
        }
        return Path(keys: keys)
    }
}

extension MutableData: CustomStringConvertible {
    /// The data here and its key, for debugging.
    public var description: String {
        "MutableData(key: \(key ?? "nil"), value: \(DatabaseValue(node: root.read { $0.child(at: path) })))"
    }
}
