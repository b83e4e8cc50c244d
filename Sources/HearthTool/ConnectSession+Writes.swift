// ConnectSession+Writes: the lines a write or a transaction prints (`saved`, `ack`, `transaction`) and the
// update functions a `transaction` command can name.
import Dispatch
import Hearth
import HearthDatabase
import Synchronization

extension ConnectSession {
    /// Prints a write's `saved` line (it is in the store, durable at the chosen tier).
    func saved(_ op: String, _ ref: DatabaseReference, _ id: WriteID, echo: JSONValue?) {
        if let echo { state.withLock { $0.echoes[id.rawValue] = echo } }
        var fields = [
            JSONMember(key: "op", value: .string(op)), JSONMember(key: "path", value: .string(ref.pathString)),
        ]
        if op == "push" { fields.append(JSONMember(key: "key", value: .string(ref.key ?? ""))) }
        fields.append(JSONMember(key: "writeId", value: .integer(exactly: id.rawValue)))
        out.emit("saved", fields, echo: echo)
    }

    /// Prints a write's `ack` line: the server's answer, for writes of this run and of earlier
    /// ones alike.
    func written(_ result: WriteResult) {
        let (echo, restored) = state.withLock { s in
            (s.echoes.removeValue(forKey: result.id.rawValue), s.restored.remove(result.id.rawValue) != nil)
        }
        var fields = [
            JSONMember(key: "writeId", value: .integer(exactly: result.id.rawValue)),
            JSONMember(key: "ok", value: .bool(result.error == nil)),
        ]
        if let e = result.error { fields.append(JSONMember(key: "error", value: .string(e.description))) }
        if restored { fields.append(JSONMember(key: "restored", value: true)) }
        out.emit("ack", fields, echo: echo)
    }

    /// Prints a named transaction's outcome (this run's and earlier runs' alike).
    func transacted(_ outcome: TransactionOutcome) {
        let echo = state.withLock { $0.transactionEchoes.removeValue(forKey: outcome.id) }
        var fields = [
            JSONMember(key: "transactionId", value: .integer(exactly: outcome.id)),
            JSONMember(key: "committed", value: .bool(outcome.committed)),
        ]
        if let e = outcome.error { fields.append(JSONMember(key: "error", value: .string(e.description))) }
        out.emit("transaction", fields, echo: echo)
    }

    /// The update functions `transaction` can name: `increment` (by the argument, default
    /// 1), `append` (the argument as the next element of a list), `max` (the larger of the
    /// value and the argument).
    static let transactionFunctions: [String: TransactionFunction] = [
        "increment": { current, argument in
            if let a = argument.doubleValue,
                a != a.rounded() || (current.doubleValue.map { $0 != $0.rounded() } ?? false)
            {
                return .success(withValue: .double((current.doubleValue ?? 0) + a))
            }
            return .success(withValue: .int((current.int64Value ?? 0) &+ (argument.int64Value ?? 1)))
        },
        "append": { current, argument in
            var list = current.arrayValue ?? []
            list.append(argument)
            return .success(withValue: .array(list))
        },
        "max": { current, argument in
            guard let a = argument.doubleValue else { return .abort() }
            if let c = current.doubleValue, c >= a { return .abort() }
            return .success(withValue: argument)
        },
    ]
}
