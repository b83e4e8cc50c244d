import Hearth
import HearthModel

extension ClientCore {
    /// Drops every write the server has not answered (Firebase's `purgeOutstandingWrites`):
    /// each is reverted in the store and completes with ``DatabaseError/writeCanceled``, in id
    /// order. A write already sent may still be applied by the server; its answer, when it
    /// comes, finds no write and is ignored, as Firebase ignores it. onDisconnect operations
    /// are kept.
    package mutating func purgeWrites(now: Int64) -> ClientOutput {
        var out = ClientOutput()
        for id in writes.keys.sorted() {
            writes[id] = nil
            writerIDs[id] = nil
            conditions[id] = nil
            out.commits.append(.revertWrite(id))
            out.events.append(.writeCompleted(id: id, error: .writeCanceled))
        }
        return out
    }
}
