import HearthModel

/// Collects the child changes of one operation on one view, merging several changes to the
/// same child into the one net change (Firebase's `ChildChangeAccumulator`):
///
/// | earlier   | later     | result                         |
/// |-----------|-----------|--------------------------------|
/// | removed   | added     | changed(old: removed, new: added) |
/// | added     | removed   | nothing                        |
/// | changed   | removed   | removed(the changed's old node)  |
/// | added     | changed   | added(the new node)            |
/// | changed   | changed   | changed(first old, last new)   |
///
/// Invariant: every stored change is a child change, at most one per key; the net changes
/// turn the cache before the operation into the cache after it (which the view relies on to
/// keep its order index in step).
final class ChildChangeAccumulator {
    private var changes: [ChildKey: Change] = [:]
    /// Keys in first-tracked order (may hold keys whose change was cancelled).
    private var order: [ChildKey] = []

    /// Records a child change, merging it with an earlier change of the same child.
    func track(_ change: Change) {
        guard let key = change.childKey else {
            assertionFailure("only child changes are tracked")
            return
        }
        guard let earlier = changes[key] else {
            changes[key] = change
            order.append(key)
            return
        }
        switch (earlier.kind, change.kind) {
        case (.childRemoved, .childAdded):
            changes[key] = .changed(key, new: change.node, old: earlier.node)
        case (.childAdded, .childRemoved):
            changes[key] = nil
        case (.childChanged, .childRemoved):
            changes[key] = .removed(key, earlier.oldNode ?? earlier.node)
        case (.childAdded, .childChanged):
            changes[key] = .added(key, change.node)
        case (.childChanged, .childChanged):
            changes[key] = .changed(key, new: change.node, old: earlier.oldNode ?? earlier.node)
        default:
            // The filters never produce another sequence; keep the later change if one did.
            assertionFailure("illegal change sequence for \(key): \(earlier.kind) then \(change.kind)")
            changes[key] = change
        }
    }

    /// The net changes, in the order their keys were first tracked.
    var netChanges: [Change] {
        var seen = Set<ChildKey>()
        var out: [Change] = []
        out.reserveCapacity(changes.count)
        for key in order where seen.insert(key).inserted {
            if let c = changes[key] { out.append(c) }
        }
        return out
    }
}
