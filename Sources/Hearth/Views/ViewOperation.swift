// What the sync tree applies to its views: a user write, server data, an ack or a listen's
// completion, with where it came from (Firebase's `Operation` and `OperationSource`).
//
// Decision: one type per meaning, each named for its job. This one is `ViewOperation` (internal).
// The public `PendingWrite.Operation` (a set or an update, what a pending write does) serves the
// view engine too: a `WriteRecord` is exactly one of those two cases, so it holds that type rather
// than one of its own.

import HearthModel

/// Where an operation comes from (Firebase's `OperationSource`).
struct OperationSource {
    /// A user write (or its ack/revert).
    let fromUser: Bool
    /// Server data.
    let fromServer: Bool
    /// For tagged server data: the identifier of the one query view it is for.
    let queryID: String?
    /// Whether the server data was tagged.
    let tagged: Bool

    static let user = OperationSource(fromUser: true, fromServer: false, queryID: nil, tagged: false)
    static let server = OperationSource(fromUser: false, fromServer: true, queryID: nil, tagged: false)
    static func taggedServer(_ queryID: String) -> OperationSource {
        OperationSource(fromUser: false, fromServer: true, queryID: queryID, tagged: true)
    }
}

/// A change applied to the sync tree (Firebase's `Operation`): a path relative to the sync
/// point it is applied to, narrowed child by child on the way down.
enum ViewOperation {
    /// Overwrite the node at `path`.
    case overwrite(OperationSource, path: Path, node: Node)
    /// Write each value of `children` at its path below `path`.
    case merge(OperationSource, path: Path, children: PathTrie<Node>)
    /// A user write at `path` was acknowledged or reverted; `affected` marks the written
    /// paths (its root for a set, each child for an update).
    case ackUserWrite(path: Path, affected: PathTrie<Bool>, revert: Bool)
    /// The server said the listen at `path` is complete.
    case listenComplete(OperationSource, path: Path)

    var source: OperationSource {
        switch self {
        case .overwrite(let s, _, _), .merge(let s, _, _), .listenComplete(let s, _): s
        case .ackUserWrite: .user
        }
    }

    var path: Path {
        switch self {
        case .overwrite(_, let p, _), .merge(_, let p, _), .ackUserWrite(let p, _, _), .listenComplete(_, let p): p
        }
    }

    /// The operation as seen from child `key` of its location, or nil when it does not
    /// concern that child.
    func forChild(_ key: ChildKey) -> ViewOperation? {
        switch self {
        case let .overwrite(source, path, node):
            if path.isRoot { return .overwrite(source, path: .root, node: node.child(key)) }
            return path.front == key ? .overwrite(source, path: path.popFront, node: node) : nil
        case let .merge(source, path, children):
            if path.isRoot {
                let sub = children.subtree(Path(keys: [key]))
                if sub.isEmpty { return nil }
                if let value = sub.value { return .overwrite(source, path: .root, node: value) }
                return .merge(source, path: .root, children: sub)
            }
            return path.front == key ? .merge(source, path: path.popFront, children: children) : nil
        case let .ackUserWrite(path, affected, revert):
            if path.isRoot {
                if affected.value != nil { return self }
                return .ackUserWrite(path: .root, affected: affected.subtree(Path(keys: [key])), revert: revert)
            }
            return path.front == key ? .ackUserWrite(path: path.popFront, affected: affected, revert: revert) : nil
        case let .listenComplete(source, path):
            if path.isRoot { return self }
            return path.front == key ? .listenComplete(source, path: path.popFront) : nil
        }
    }
}

extension ViewOperation {
    /// `node` — complete server data at the operation's location, read before the operation —
    /// with the operation's server data applied.
    ///
    /// The sync tree reads the complete server cache that views may refill limit windows from
    /// before it applies an operation; Firebase hands that pre-operation node to the views, so
    /// a merge that changes several children could refill a window with a child's old value.
    /// Applying the server data first hands them the data as it is after the operation.
    func applyingServerData(to node: Node) -> Node {
        switch self {
        case let .overwrite(source, path, value) where source.fromServer:
            return node.updating(path, with: value)
        case let .merge(source, path, children) where source.fromServer:
            var result = node
            children.forEach { relative, value in result = result.updating(path.appending(relative), with: value) }
            return result
        default:
            return node
        }
    }
}
