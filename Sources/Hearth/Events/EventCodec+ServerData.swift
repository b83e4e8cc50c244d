import HearthLog
import HearthModel

// One server-data event (`.serverOverwrite`, `.serverMerge`) encoded before the store's lock,
// its data's depth checked in the same walk, for the store's one-event server commits
// (``Store/applyServerOverwrite(_:at:durability:)``, ``Store/applyServerMerge(_:at:durability:)``):
// a batch validates the data in one walk and encodes it in another, under the lock. The bytes are
// exactly ``EventCodec/encode(_:)``'s for that event (FORMAT.md §"Event batches": no new bytes on
// disk).

extension EventCodec {
    /// `.serverOverwrite` or `.serverMerge` whose paths are valid, encoded as an event of a
    /// batch (what ``encode(_:into:)`` writes for it), with its data's nesting checked in the
    /// same walk (``NodeCodec/encode(_:into:inspecting:)``). Returns the bytes, or the path of
    /// the data nesting too deep (a merge's child by its full path) — then no bytes.
    static func inspectedServerEvent(_ event: StoreEvent) -> (bytes: [UInt8], tooDeep: Path?) {
        var w = ByteWriter(capacity: 128)
        var found = NodeCodec.Inspection()
        switch event {
        case let .serverOverwrite(p, node, at):
            w.u8(Tag.serverOverwrite.rawValue)
            path(p, &w)
            NodeCodec.encode(node, into: &w, inspecting: &found)
            if found.tooDeep { return ([], p) }
            w.zigzag(at)
        case let .serverMerge(p, c, at):
            w.u8(Tag.serverMerge.rawValue)
            path(p, &w)
            if let child = inspectedChildren(c, &w, &found) { return ([], p.appending(child)) }
            w.zigzag(at)
        default:
            preconditionFailure("inspectedServerEvent encodes server data only, not \(event)")
        }
        return (w.bytes, nil)
    }

    /// The batch of `events` whose first event's encoding is `first` (from
    /// ``inspectedServerEvent(_:)``): the same bytes as ``encode(_:)`` of `events`.
    static func encode(_ events: [StoreEvent], firstEncoded first: [UInt8]) -> [UInt8] {
        precondition(!events.isEmpty, "a batch with a first event")
        var w = ByteWriter(capacity: first.count + 16)
        w.varint(events.count)
        w.bytes.append(contentsOf: first)
        for e in events.dropFirst() { encode(e, into: &w) }
        return w.bytes
    }
}
