import HearthModel

/// A raw change to a view's event cache, before it becomes ``ViewEvent``s.
///
/// Child changes carry the child's key and node (for a removal, the removed node); a changed
/// child also carries its previous node, which decides whether a `child_moved` accompanies it.
struct Change {
    /// What happened.
    enum Kind {
        case childAdded
        case childRemoved
        case childChanged
        case childMoved
        case value
    }

    let kind: Kind
    /// The child (nil only for ``Kind/value``).
    let childKey: ChildKey?
    /// The child's (new) node, or the view's node for ``Kind/value``.
    let node: Node
    /// The child's previous node (``Kind/childChanged`` only).
    let oldNode: Node?

    static func added(_ key: ChildKey, _ node: Node) -> Change {
        Change(kind: .childAdded, childKey: key, node: node, oldNode: nil)
    }

    static func removed(_ key: ChildKey, _ node: Node) -> Change {
        Change(kind: .childRemoved, childKey: key, node: node, oldNode: nil)
    }

    static func changed(_ key: ChildKey, new: Node, old: Node) -> Change {
        Change(kind: .childChanged, childKey: key, node: new, oldNode: old)
    }

    static func moved(_ key: ChildKey, _ node: Node) -> Change {
        Change(kind: .childMoved, childKey: key, node: node, oldNode: nil)
    }

    static func value(_ node: Node) -> Change {
        Change(kind: .value, childKey: nil, node: node, oldNode: nil)
    }
}
