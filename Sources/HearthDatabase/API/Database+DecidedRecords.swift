// The decided record of an outcome kept in the store: a named transaction's or a plain write's
// status, and the error it ended with, in the record's local-result field (FORMAT.md §11.4); and
// the plain writes' records an earlier run left, read back at open.

import Hearth
import HearthModel

extension Database {
    /// The record of a decided transaction: its status and the local-result field's content.
    static func decidedRecord(committed: Bool, error: DatabaseError?) -> (QueuedTransaction.Status, Node) {
        if committed { return (.committed, .empty) }
        guard let error else { return (.aborted, .empty) }
        return (.aborted, .string(JSONValue.array(errorFields(error).map { .string($0) }).serialized()))
    }

    /// The outcome a decided record holds (nil for one not decided).
    static func outcome(of tx: QueuedTransaction) -> TransactionOutcome? {
        switch tx.status {
        case .committed: return TransactionOutcome(id: tx.id, committed: true, error: nil)
        case .aborted: return TransactionOutcome(id: tx.id, committed: false, error: reason(of: tx))
        case .queued, .sent, .needsRetry, .writeApplied, .writeRefused: return nil
        }
    }

    /// The error a decided record holds in its local-result field (nil when it holds none).
    static func reason(of tx: QueuedTransaction) -> DatabaseError? {
        guard case .string(let text)? = tx.localResult.leafValue else { return nil }
        if case .array(let items)? = try? JSONValue.parse(text) {
            let error = decodeError(
                items.compactMap { item -> String? in
                    if case .string(let s) = item { return s }
                    return nil
                })
            if let error { return error }
        }
        return .storage("\(tx.status.isWriteOutcome ? "write outcome" : "transaction") \(tx.id) ended: \(text)")
    }

    /// An error as a kind and its strings (FORMAT.md §11.4, transaction status 4).
    private static func errorFields(_ error: DatabaseError) -> [String] {
        switch error {
        case .invalidPath(let s): ["invalidPath", s]
        case .invalidQuery(let s): ["invalidQuery", s]
        case .invalidValue(let s): ["invalidValue", s]
        case .decodingFailed(let s): ["decodingFailed", s]
        case .permissionDenied(let s): ["permissionDenied", s]
        case let .serverError(status, message): ["serverError", status, message]
        case .offline: ["offline"]
        case .closed: ["closed"]
        case .storage(let s): ["storage", s]
        case .alreadyInUse(let s): ["alreadyInUse", s]
        case .eventBufferFull(let limit): ["eventBufferFull", String(limit)]
        }
    }

    private static func decodeError(_ f: [String]) -> DatabaseError? {
        switch (f.first ?? "", f.count) {
        case ("invalidPath", 2): .invalidPath(f[1])
        case ("invalidQuery", 2): .invalidQuery(f[1])
        case ("invalidValue", 2): .invalidValue(f[1])
        case ("decodingFailed", 2): .decodingFailed(f[1])
        case ("permissionDenied", 2): .permissionDenied(f[1])
        case ("serverError", 3): .serverError(status: f[1], message: f[2])
        case ("offline", 1): .offline
        case ("closed", 1): .closed
        case ("storage", 2): .storage(f[1])
        case ("alreadyInUse", 2): .alreadyInUse(f[1])
        case ("eventBufferFull", 2): Int(f[1]).map { DatabaseError.eventBufferFull(limit: $0) }
        default: nil
        }
    }

    /// At open: the outcomes of writes an earlier run had kept in the store (decided, their
    /// handlers not all returned), in the order they were decided. A write's outcome record
    /// that names no write id (its argument not an integer: no version of Hearth writes one,
    /// so a damaged or foreign store) can never be delivered: it is removed here, with a
    /// warning, rather than kept forever.
    static func keptWriteResults(
        _ store: Store, warn: (String) -> Void
    ) throws(StoreError) -> [KeptOutcome<WriteResult>] {
        var kept: [KeptOutcome<WriteResult>] = []
        var unreadable: [Int64] = []
        for tx in store.transactions() where tx.status.isWriteOutcome {
            if let result = writeResult(of: tx) {
                kept.append(KeptOutcome(record: tx.id, value: result))
            } else {
                unreadable.append(tx.id)
            }
        }
        if !unreadable.isEmpty {
            try store.commit(durability: .buffered) { (b: inout StoreBatch) throws(StoreError) in
                for id in unreadable { try b.completeTransaction(id) }
            }
            warn("removed \(unreadable.count) write outcome record(s) naming no write id: \(unreadable)")
        }
        return kept
    }

    /// The write result a decided write's record holds (nil for any other record).
    package static func writeResult(of tx: QueuedTransaction) -> WriteResult? {
        guard tx.status.isWriteOutcome else { return nil }
        let id: Int64
        switch tx.argument.leafValue {
        case .number(let n)?:
            guard let exact = Int64(exactly: n) else { return nil }
            id = exact
        case .integer(let i)?: id = i
        default: return nil
        }
        return WriteResult(id: WriteID(rawValue: id), error: tx.status == .writeApplied ? nil : reason(of: tx))
    }
}
