import HearthModel

/// One pending user write as the view engine holds it.
struct WriteRecord {
    let writeID: Int64
    let path: Path
    /// What the write does: a set, or an update of children relative to ``path`` (the
    /// pending write's own operation; see ViewOperation.swift for why there is one).
    let operation: PendingWrite.Operation
    /// Whether the write shows in events (`false` for hidden writes such as transactions
    /// applied without local events).
    let visible: Bool

    /// Whether the write touches `path` (covers it, or for a merge one child covers it).
    func covers(_ other: Path) -> Bool {
        switch operation {
        case .set: path.contains(other)
        case .update(let children): children.contains { path.appending($0.path).contains(other) }
        }
    }
}

/// The pending user writes, in write-id order, and the overlay of the visible ones (Firebase's
/// `WriteTree`). Views read server data through it: the event cache is the server cache with
/// the visible writes on top.
///
/// Invariants: write ids strictly increase along ``allWrites``; ``visibleWrites`` is the
/// layering of exactly the visible records of ``allWrites``, in order.
///
/// A write older than the newest may be added (a store restores the pending writes it was
/// opened with region by region, after newer ones: see ``UnrestoredWrites``), provided it
/// overlaps no write already held — then layering it last or in id order is the same overlay.
final class WriteTree {
    /// The overlay of the visible writes.
    private(set) var visibleWrites = CompoundWrite.empty
    /// Every pending write, oldest first (sorted on first use after an older write was added).
    var allWrites: ArraySlice<WriteRecord> {
        sortIfNeeded()
        return records[head...]
    }
    /// The records from ``head`` on are the pending writes; those before it were removed from
    /// the front (acks arrive oldest first), and are dropped once they are half the array —
    /// so removing the oldest write is O(1) amortized, not a shift of every other one.
    private var records: [WriteRecord] = []
    private var head = 0
    private var sorted = true
    private var lastWriteID: Int64 = -1
    /// The paths the visible writes touch (``WriteIndex``): with it, removing a write that
    /// overlaps no other — the common case, writes on distinct children — costs O(depth), not
    /// a walk over every pending write (which made draining N acks O(N²)).
    private var indexed = WriteIndex()

    private func sortIfNeeded() {
        if !sorted {
            records[head...].sort { $0.writeID < $1.writeID }
            sorted = true
        }
    }

    private func add(_ record: WriteRecord) {
        if record.writeID <= lastWriteID { sorted = false }
        records.append(record)
        lastWriteID = max(lastWriteID, record.writeID)
        if record.visible { index(record, by: 1) }
    }

    /// Calls `body` with each path a write is indexed by: its own, and for a merge each child's.
    private static func forEachPath(of record: WriteRecord, _ body: (Path) -> Void) {
        body(record.path)
        if case .update(let children) = record.operation {
            for child in children { body(record.path.appending(child.path)) }
        }
    }

    private func index(_ record: WriteRecord, by delta: Int) {
        assert(delta == 1 || delta == -1, "a write is indexed once")
        WriteTree.forEachPath(of: record) { delta > 0 ? indexed.add($0) : indexed.remove($0) }
    }

    /// Whether some indexed visible write touches a path at, above or below one of
    /// `record`'s (call after removing `record` from the index).
    private func overlapsIndexed(_ record: WriteRecord) -> Bool {
        var overlaps = false
        WriteTree.forEachPath(of: record) { overlaps = overlaps || indexed.overlaps($0) }
        return overlaps
    }

    /// Records a set. An id below the newest must belong to a write that overlaps none held.
    func addOverwrite(_ path: Path, _ node: Node, writeID: Int64, visible: Bool) {
        add(WriteRecord(writeID: writeID, path: path, operation: .set(node), visible: visible))
        if visible { visibleWrites.addWrite(path, node) }
    }

    /// Records an update (always visible); ids as for ``addOverwrite(_:_:writeID:visible:)``.
    func addMerge(_ path: Path, _ children: [ChildUpdate], writeID: Int64) {
        add(WriteRecord(writeID: writeID, path: path, operation: .update(children), visible: true))
        visibleWrites.addWrites(path, children)
    }

    /// The pending write with `writeID`. O(log n): ids increase along ``allWrites``.
    func write(_ writeID: Int64) -> WriteRecord? {
        position(of: writeID).map { records[$0] }
    }

    private func position(of writeID: Int64) -> Int? {
        sortIfNeeded()
        let allWrites = records
        var lo = head, hi = allWrites.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if allWrites[mid].writeID < writeID { lo = mid + 1 } else { hi = mid }
        }
        return lo < allWrites.count && allWrites[lo].writeID == writeID ? lo : nil
    }

    /// Removes a write (acknowledged or reverted). Returns whether it was visible and not
    /// shadowed by a later write — i.e. whether views must re-evaluate the affected paths.
    func removeWrite(_ writeID: Int64) -> Bool {
        guard let position = position(of: writeID) else { return false }
        let removed = records[position]
        // Its place among the pending writes: those after it are later writes.
        let at = position - head
        if position == head {
            head += 1
            if head > 64 && head * 2 > records.count {
                records.removeFirst(head)
                head = 0
            }
        } else {
            records.remove(at: position)
        }
        if removed.visible { index(removed, by: -1) }
        guard removed.visible else { return false }
        if !overlapsIndexed(removed) {
            // No other visible write at, above or below it: nothing shadows it, nothing lies
            // below it — the loop below would conclude the same.
            removeFromOverlay(removed)
            return true
        }
        let allWrites = Array(records[head...])
        var stillVisible = removed.visible
        var overlapsOthers = false
        var i = allWrites.count - 1
        while stillVisible && i >= 0 {
            let other = allWrites[i]
            if other.visible {
                if i >= at && other.covers(removed.path) {
                    // A later write shadows the removed one: nothing changes for views.
                    stillVisible = false
                } else if removed.path.contains(other.path) {
                    // An earlier write lies below the removed one: rebuild the overlay.
                    overlapsOthers = true
                }
            }
            i -= 1
        }
        guard stillVisible else { return false }
        if overlapsOthers {
            visibleWrites = WriteTree.layer(allWrites[...], at: .root) { $0.visible }
        } else {
            removeFromOverlay(removed)
        }
        return true
    }

    private func removeFromOverlay(_ removed: WriteRecord) {
        switch removed.operation {
        case .set:
            visibleWrites.removeWrite(removed.path)
        case .update(let children):
            for child in children { visibleWrites.removeWrite(removed.path.appending(child.path)) }
        }
    }

    /// The overlay of the records passing `include`, as seen from `root`.
    static func layer(_ writes: ArraySlice<WriteRecord>, at root: Path, include: (WriteRecord) -> Bool) -> CompoundWrite
    {
        var result = CompoundWrite.empty
        for write in writes where include(write) {
            switch write.operation {
            case .set(let node):
                if let relative = root.relativePath(to: write.path) {
                    result = result.addingWrite(relative, node)
                } else if let relative = write.path.relativePath(to: root) {
                    result = result.addingWrite(.root, node.child(at: relative))
                }
            case .update(let children):
                if let relative = root.relativePath(to: write.path) {
                    result = result.addingWrites(relative, children)
                } else if let relative = write.path.relativePath(to: root) {
                    if relative.isRoot {
                        result = result.addingWrites(.root, children)
                    } else if let front = relative.front {
                        // Firebase looks the merge up by its first key only (merge keys are
                        // single keys there); a deeper merge path is matched on its first key.
                        for child in children where child.path.front == front {
                            let rest = relative.popFront
                            if let within = child.path.popFront.relativePath(to: rest) {
                                result = result.addingWrite(.root, child.node.child(at: within))
                            } else if let above = rest.relativePath(to: child.path.popFront) {
                                result = result.addingWrite(above, child.node)
                            }
                        }
                    }
                }
            }
        }
        return result
    }

    // MARK: - Reads (relative to a location: see ``WriteTreeRef``)

    /// The complete event node at `treePath`: a covering write, or the server node with the
    /// writes below applied; nil when neither is known.
    func calcCompleteEventCache(_ treePath: Path, completeServerCache: Node?) -> Node? {
        visibleWrites.completeEventCache(at: treePath, completeServerCache: completeServerCache)
    }

    /// The complete event children at `treePath` given the complete server children: each
    /// with the writes below it applied, plus children written completely.
    func calcCompleteEventChildren(_ treePath: Path, completeServerChildren: Node) -> Node {
        var children = ChildMap()
        if let topLevel = visibleWrites.completeNode(at: treePath) {
            if !topLevel.isLeaf { children = topLevel.children }
            return Node(children: children)
        }
        let merge = visibleWrites.childCompoundWrite(treePath)
        if merge.isEmpty {
            return Node(children: completeServerChildren.children)
        }
        for (key, child) in completeServerChildren.children {
            children = children.setting(key, to: merge.childCompoundWrite(Path(keys: [key])).apply(to: child))
        }
        for (key, child) in merge.completeChildren {
            children = children.setting(key, to: child)
        }
        return Node(children: children)
    }

    /// The event value at `treePath/childPath` after the server changed it: nil when a write
    /// shadows it, otherwise the server value with the writes below applied.
    func calcEventCacheAfterServerOverwrite(_ treePath: Path, childPath: Path, existingServerSnap: Node) -> Node? {
        let path = treePath.appending(childPath)
        if visibleWrites.hasCompleteWrite(path) { return nil }
        let childMerge = visibleWrites.childCompoundWrite(path)
        let server = existingServerSnap.child(at: childPath)
        return childMerge.isEmpty ? server : childMerge.apply(to: server)
    }

    /// The write covering `path` completely, if any.
    func shadowingWrite(_ path: Path) -> Node? {
        visibleWrites.completeNode(at: path)
    }

    /// The complete child `key` at `treePath`: a covering write, or the server child (when
    /// known) with the writes below applied.
    func calcCompleteChild(_ treePath: Path, _ key: ChildKey, serverNode: Node, serverCompleteForChild: Bool) -> Node? {
        let path = treePath.child(key)
        if let shadowing = visibleWrites.completeNode(at: path) { return shadowing }
        if serverCompleteForChild {
            return visibleWrites.childCompoundWrite(path).apply(to: serverNode.child(key))
        }
        return nil
    }

    /// The first child strictly after `post` (or before it, when `reverse`) in `index` order
    /// among the complete children at `treePath` (server data with writes applied).
    ///
    /// `indexedServer`, when given, is `completeServerData` already indexed by `index` (the
    /// view's own server cache). Without writes below `treePath` that makes this O(log n);
    /// otherwise it is a linear scan.
    func calcNextChild(
        _ treePath: Path, completeServerData: Node?, indexedServer: IndexedNode?,
        after post: IndexPost, reverse: Bool, index: QueryIndex
    ) -> (key: ChildKey, value: Node)? {
        let merge = visibleWrites.childCompoundWrite(treePath)
        let toIterate: Node
        if let shadowing = merge.completeNode(at: .root) {
            toIterate = shadowing
        } else if let completeServerData {
            if merge.isEmpty, let indexedServer, indexedServer.index == index {
                let it = indexedServer.children(from: post, reverse: reverse)
                while let c = it.next() {
                    if index.compare(post, child: c.key, c.value) != 0 { return c }
                }
                return nil
            }
            toIterate = merge.apply(to: completeServerData)
        } else {
            return nil
        }
        if toIterate.isLeaf || toIterate.isEmpty { return nil }
        var best: (key: ChildKey, value: Node)?
        for c in toIterate.children {
            let toPost = index.compare(post, child: c.key, c.value)
            guard reverse ? toPost > 0 : toPost < 0 else { continue }
            if let b = best {
                let cb = index.compare(c, b)
                if reverse ? cb > 0 : cb < 0 { best = c }
            } else {
                best = c
            }
        }
        return best
    }
}

/// A ``WriteTree`` seen from one location (Firebase's `WriteTreeRef`): the reads a view makes,
/// relative to its path.
struct WriteTreeRef {
    /// The location.
    let treePath: Path
    /// The shared write tree.
    let writeTree: WriteTree

    /// The reference for a child location.
    func child(_ key: ChildKey) -> WriteTreeRef {
        WriteTreeRef(treePath: treePath.child(key), writeTree: writeTree)
    }

    func calcCompleteEventCache(_ completeServerCache: Node?) -> Node? {
        writeTree.calcCompleteEventCache(treePath, completeServerCache: completeServerCache)
    }

    func calcCompleteEventChildren(_ completeServerChildren: Node) -> Node {
        writeTree.calcCompleteEventChildren(treePath, completeServerChildren: completeServerChildren)
    }

    func calcEventCacheAfterServerOverwrite(_ path: Path, existingServerSnap: Node) -> Node? {
        writeTree.calcEventCacheAfterServerOverwrite(treePath, childPath: path, existingServerSnap: existingServerSnap)
    }

    func shadowingWrite(_ path: Path) -> Node? {
        writeTree.shadowingWrite(treePath.appending(path))
    }

    func calcCompleteChild(_ key: ChildKey, serverCache: CacheNode) -> Node? {
        writeTree.calcCompleteChild(
            treePath, key, serverNode: serverCache.node, serverCompleteForChild: serverCache.isCompleteForChild(key))
    }

    func calcCompleteChild(_ key: ChildKey, completeServerNode: Node) -> Node? {
        writeTree.calcCompleteChild(treePath, key, serverNode: completeServerNode, serverCompleteForChild: true)
    }

    func calcNextChild(
        completeServerData: Node?, indexedServer: IndexedNode?, after post: IndexPost, reverse: Bool, index: QueryIndex
    ) -> (key: ChildKey, value: Node)? {
        writeTree.calcNextChild(
            treePath, completeServerData: completeServerData, indexedServer: indexedServer, after: post,
            reverse: reverse, index: index)
    }
}
