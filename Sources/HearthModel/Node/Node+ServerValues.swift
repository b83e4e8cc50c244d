// Server values: the placeholders a client writes (`{".sv": "timestamp"}`,
// `{".sv": {"increment": n}}`) and the one resolver every reader and writer uses — the server
// when it applies a write, the client when it estimates a pending write or folds in an ack — so
// that what a placeholder means is decided here and nowhere else.

/// A server-value placeholder, written by a client and resolved by the server (or locally,
/// when a pending write is read back offline).
public enum ServerValuePlaceholder: Sendable, Hashable, CustomStringConvertible {
    /// `{".sv": "timestamp"}`: the server's clock in milliseconds since the epoch.
    case timestamp
    /// `{".sv": {"increment": n}}`: the current numeric value plus `n`.
    case increment(Double)

    public var description: String {
        switch self {
        case .timestamp: "{\".sv\":\"timestamp\"}"
        case .increment(let n): "{\".sv\":{\"increment\":\(n)}}"
        }
    }

    /// The placeholder a `.sv` member's value names — `"timestamp"`, or `{"increment": n}` with a
    /// finite `n` — or `nil`.
    package init?(json: JSONValue) {
        if case .string("timestamp") = json {
            self = .timestamp
        } else if case .object(let members) = json, members.count == 1, members[0].key == "increment",
            let n = members[0].value.doubleValue, n.isFinite
        {
            self = .increment(n)
        } else {
            return nil
        }
    }

    /// The value this placeholder stands for when written over `existing` (the leaf at its
    /// location, `nil` when there is none; read only by an increment) at `serverNow`, the
    /// server's clock in ms since the epoch.
    package func resolved(over existing: @autoclosure () -> LeafValue?, serverNow: Double) -> LeafValue {
        switch self {
        case .timestamp: .number(serverNow.rounded(.down))
        case .increment(let delta): Self.increment(existing(), by: delta)
        }
    }

    /// Firebase's increment: the existing number plus `delta` — exact 64-bit integer arithmetic
    /// when both are integers and the sum does not overflow (as the Android SDK adds two
    /// `Long`s), a double otherwise — or `delta` when there is no number there.
    package static func increment(_ existing: LeafValue?, by delta: Double) -> LeafValue {
        guard let existing, let current = existing.doubleValue else { return .number(delta) }
        if let a = existing.exactInteger, let b = Int64(exactly: delta) {
            let (sum, overflow) = a.addingReportingOverflow(b)
            if !overflow { return .integer(exactly: sum) }
        }
        return .number(current + delta)
    }
}

extension Node {
    /// Whether a server-value placeholder is anywhere in this node.
    package var containsServerValue: Bool {
        if case .serverValue? = leafValue { return true }
        return children.containsValue(where: \.containsServerValue)
    }

    /// This node with every server-value placeholder resolved against `existing`, the value at
    /// the same location, at `serverNow` (the server's clock in ms since the epoch). A node
    /// without placeholders is returned as it is, sharing its storage.
    package func resolvingServerValues(over existing: Node, serverNow: Double) -> Node {
        switch leafValue {
        case .serverValue(let placeholder)?:
            return Node(placeholder.resolved(over: existing.leafValue, serverNow: serverNow), priority: priority)
        case .some:
            return self
        case nil:
            guard !isEmpty, children.contains(where: { $0.value.containsServerValue }) else { return self }
            var out = self
            for (key, child) in children where child.containsServerValue {
                out = out.updatingChild(
                    key, child.resolvingServerValues(over: existing.child(key), serverNow: serverNow))
            }
            return out
        }
    }
}
