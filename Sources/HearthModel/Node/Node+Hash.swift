extension Node {
    /// Firebase's node hash: standard base64 of SHA-1 over the node's canonical string, or
    /// `""` for the empty node. Bit-exact with the SDKs and the server (transactions and
    /// listens send it), so a client can compare it with the server's.
    ///
    /// The canonical string:
    /// - leaf: `priority:<P>:` when it has a priority, then `<type>:<value>` where type is
    ///   `number`, `string` or `boolean`; numbers are the 16 lowercase hex digits of the
    ///   big-endian IEEE-754 double, strings are raw, booleans `true`/`false`;
    /// - children: `priority:<P>:` when it has a priority, then for every child in priority
    ///   order (priority, then key) whose hash is non-empty, `:<key>:<child hash>`;
    /// - `<P>` is `number:<hex>` or `string:<raw>`.
    ///
    /// Server-value placeholders hash as their `.sv` JSON text under type `object`; they never
    /// reach the server unresolved, so no server hash exists to match.
    public var hash: String {
        let text = hashText()
        return text.isEmpty ? "" : Base64.encode(SHA1.hash(Array(text.utf8)))
    }

    /// The canonical string the hash is taken over (empty for the empty node).
    func hashText() -> String {
        switch storage {
        case .empty:
            return ""
        case let .leaf(value, priority):
            var s = ""
            if let priority { s += "priority:" + Node.priorityHashText(priority) + ":" }
            switch value {
            case .number(let n): s += "number:" + Node.ieee754Hex(n)
            // Firebase's LongNode hashes its value as a double (`doubleToHashString((double) v)`).
            case .integer(let i): s += "number:" + Node.ieee754Hex(Double(i))
            case .string(let str): s += "string:" + str
            case .bool(let b): s += b ? "boolean:true" : "boolean:false"
            case .serverValue: s += "object:" + value.json.serialized()
            }
            return s
        case let .children(map, priority):
            var s = ""
            if let priority { s += "priority:" + Node.priorityHashText(priority) + ":" }
            for (key, child) in Node.priorityOrdered(map) {
                let h = child.hash
                if !h.isEmpty { s += ":" + key.string + ":" + h }
            }
            return s
        }
    }

    /// The children in priority-index order. When no child has a priority this is key order,
    /// which the map already has, so nothing is sorted.
    static func priorityOrdered(_ map: ChildMap) -> [(key: ChildKey, value: Node)] {
        let pairs = Array(map)
        guard pairs.contains(where: { $0.value.priority != nil }) else { return pairs }
        // The priority index's order (QueryIndex.priority): by priority, then by key.
        return pairs.sorted {
            let c = Node.compareForOrdering($0.value.priorityNode, $1.value.priorityNode)
            return c != 0 ? c < 0 : ChildKey.compare($0.key, $1.key) < 0
        }
    }

    static func priorityHashText(_ p: Priority) -> String {
        switch p {
        case .number(let n): "number:" + ieee754Hex(n)
        case .string(let s): "string:" + s
        }
    }

    /// The 16 lowercase hex digits of a double's big-endian IEEE-754 bits.
    static func ieee754Hex(_ d: Double) -> String {
        let hex = String(d.bitPattern, radix: 16, uppercase: false)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
