import HearthLog
import HearthModel

// A one-write batch encoded in two steps, so that the costly part — the write's path and data —
// is encoded before the store's lock is taken, and only the write's id (known under the lock)
// is added under it. The bytes are exactly ``EventCodec/encode(_:)`` of the one
// `.writeSaved` event (FORMAT.md §"Event batches": no new bytes on disk).

extension EventCodec {
    /// A user write's path and operation, encoded as the tail of its `.writeSaved` event (all
    /// but the batch count, the tag and the id).
    struct WriteBody: Sendable {
        let bytes: [UInt8]
    }

    /// Encodes the part of a `.writeSaved` event that does not depend on the write's id.
    static func writeBody(_ operation: PendingWrite.Operation, at p: Path) -> WriteBody {
        var w = ByteWriter(capacity: 128)
        path(p, &w)
        switch operation {
        case .set(let node): w.u8(0); NodeCodec.encode(node, into: &w)
        case .update(let c): w.u8(1); children(c, &w)
        }
        return WriteBody(bytes: w.bytes)
    }

    /// ``writeBody(_:at:)`` of a user write whose paths are valid, inspecting its data in the
    /// same walk (``NodeCodec/encode(_:into:inspecting:)``): the body, whether the data holds
    /// a server value, or the path of the data nesting too deep (a merge's child by its full
    /// path), for which the body is incomplete and must not be used.
    static func inspectedWriteBody(
        _ operation: PendingWrite.Operation, at p: Path
    ) -> (body: WriteBody, serverValue: Bool, tooDeep: Path?) {
        var w = ByteWriter(capacity: 128)
        path(p, &w)
        var found = NodeCodec.Inspection()
        switch operation {
        case .set(let node):
            w.u8(0)
            NodeCodec.encode(node, into: &w, inspecting: &found)
            if found.tooDeep { return (WriteBody(bytes: []), false, p) }
        case .update(let c):
            w.u8(1)
            if let child = inspectedChildren(c, &w, &found) { return (WriteBody(bytes: []), false, p.appending(child)) }
        }
        return (WriteBody(bytes: w.bytes), found.serverValue, nil)
    }

    /// The batch of one `.writeSaved` event with id `id` and the encoded `body`: the same bytes
    /// as ``encode(_:)`` of that one event.
    static func writeSavedBatch(id: Int64, _ body: WriteBody) -> [UInt8] {
        var w = ByteWriter(capacity: body.bytes.count + 12)
        writeSavedHead(id: id, into: &w)
        w.bytes.append(contentsOf: body.bytes)
        return w.bytes
    }

    /// The head of ``writeSavedBatch(id:_:)`` — the batch count, the tag and the id — which
    /// followed by the body is that batch (the store queues the two as a `SplitPayload`, the
    /// body deflated before its lock).
    static func writeSavedHead(id: Int64) -> [UInt8] {
        var w = ByteWriter(capacity: 12)
        writeSavedHead(id: id, into: &w)
        return w.bytes
    }

    private static func writeSavedHead(id: Int64, into w: inout ByteWriter) {
        w.varint(1)
        writeSavedEventHead(id: id, into: &w)
    }

    /// Appends the `.writeSaved` event with id `id` and the encoded `body` (no batch count):
    /// the same bytes as ``encode(_:into:)`` of that event.
    static func encodeWriteSaved(id: Int64, body: [UInt8], into w: inout ByteWriter) {
        writeSavedEventHead(id: id, into: &w)
        w.raw(body)
    }

    /// The event's tag and id: what precedes its body, in a batch or in a write chunk.
    private static func writeSavedEventHead(id: Int64, into w: inout ByteWriter) {
        w.u8(Tag.writeSaved.rawValue)
        w.varint(UInt64(id))
    }
}
