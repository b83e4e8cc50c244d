import HearthModel

/// A set of complete overwrites at various paths, layered in order (Firebase's
/// `CompoundWrite`): the visible pending writes, as one overlay.
///
/// Invariant: no stored overwrite lies below another — adding a write below an existing one
/// folds it into that one; adding one above existing ones replaces them.
struct CompoundWrite: Sendable {
    /// The overwrites by location.
    private(set) var tree: PathTrie<Node>

    /// No writes.
    static let empty = CompoundWrite(tree: PathTrie())

    /// Whether there are no writes.
    var isEmpty: Bool { tree.isEmpty }

    /// The overlay with `node` written at `path`.
    func addingWrite(_ path: Path, _ node: Node) -> CompoundWrite {
        if path.isRoot { return CompoundWrite(tree: PathTrie(node)) }
        if let (at, value) = tree.rootMostValue(on: path), let relative = at.relativePath(to: path) {
            return CompoundWrite(tree: tree.setting(at, value.updating(relative, with: node)))
        }
        return CompoundWrite(tree: tree.settingTree(path, PathTrie(node)))
    }

    /// Writes `node` at `path` in place: ``addingWrite(_:_:)`` without copying the levels on
    /// the way when this overlay is held in one place (O(depth), not O(siblings)).
    mutating func addWrite(_ path: Path, _ node: Node) {
        if path.isRoot {
            tree = PathTrie(node)
            return
        }
        tree.writeRootMost(
            path, fold: { value, relative in value = value.updating(Path(keys: Array(relative)), with: node) },
            otherwise: { PathTrie(node) })
    }

    /// Writes every child of a merge below `path`, in place.
    mutating func addWrites(_ path: Path, _ children: [ChildUpdate]) {
        for child in children { addWrite(path.appending(child.path), child.node) }
    }

    /// Removes what is written at or below `path`, in place (see ``removingWrite(_:)``).
    mutating func removeWrite(_ path: Path) {
        if path.isRoot {
            self = .empty
        } else {
            tree.setTree(path, PathTrie())
        }
    }

    /// The overlay with every child of a merge written below `path`.
    func addingWrites(_ path: Path, _ children: [ChildUpdate]) -> CompoundWrite {
        var result = self
        for child in children { result = result.addingWrite(path.appending(child.path), child.node) }
        return result
    }

    /// The overlay without anything written at or below `path`. (Only valid when no write
    /// above `path` covers it, which the write tree checks.)
    func removingWrite(_ path: Path) -> CompoundWrite {
        if path.isRoot { return .empty }
        return CompoundWrite(tree: tree.settingTree(path, PathTrie()))
    }

    /// Whether a write covers `path` completely.
    func hasCompleteWrite(_ path: Path) -> Bool { completeNode(at: path) != nil }

    /// The node at `path` when a write covers it completely.
    func completeNode(at path: Path) -> Node? {
        guard let (at, value) = tree.rootMostValue(on: path), let relative = at.relativePath(to: path) else {
            return nil
        }
        return value.child(at: relative)
    }

    /// The complete children at the root of the overlay: a root write's children, or the
    /// immediate children written completely.
    var completeChildren: [(key: ChildKey, value: Node)] {
        if let root = tree.value {
            return root.isLeaf ? [] : Array(root.children)
        }
        var out: [(key: ChildKey, value: Node)] = []
        tree.forEachChildValue { out.append(($0, $1)) }
        return out
    }

    /// The overlay as seen from `path`.
    func childCompoundWrite(_ path: Path) -> CompoundWrite {
        if path.isRoot { return self }
        if let shadowing = completeNode(at: path) { return CompoundWrite(tree: PathTrie(shadowing)) }
        return CompoundWrite(tree: tree.subtree(path))
    }

    /// The complete event node at `path` (Firebase's `WriteTree.calcCompleteEventCache`): a
    /// write covering it, or `completeServerCache` with the writes below applied; nil when
    /// neither is known. This is the one answer to "pending writes over server data": the
    /// views, the store's reads and its queries all go through it.
    func completeEventCache(at path: Path, completeServerCache: Node?) -> Node? {
        if let shadowing = completeNode(at: path) { return shadowing }
        let merge = childCompoundWrite(path)
        if merge.isEmpty { return completeServerCache }
        if completeServerCache != nil || merge.hasCompleteWrite(.root) {
            return merge.apply(to: completeServerCache ?? .empty)
        }
        return nil
    }

    /// `node` with the overlay applied.
    func apply(to node: Node) -> Node {
        CompoundWrite.apply(tree, at: [], to: node)
    }

    private static func apply(_ tree: PathTrie<Node>, at prefix: [ChildKey], to node: Node) -> Node {
        if let value = tree.value { return node.updating(Path(keys: prefix), with: value) }
        var node = node
        var priorityWrite: Node?
        for (key, child) in tree.sortedChildren {
            if key.string == ".priority" {
                // A priority write is always a complete (leaf) write.
                priorityWrite = child.value
            } else {
                node = apply(child, at: prefix + [key], to: node)
            }
        }
        // Firebase applies a priority write only where there is data to carry it.
        if let priorityWrite, !node.child(at: Path(keys: prefix)).isEmpty {
            node = node.updating(Path(keys: prefix + [ChildKey(".priority")]), with: priorityWrite)
        }
        return node
    }
}
