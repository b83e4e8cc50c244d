import HearthModel

// Reading the value each child of an encoded children node is ordered by, without building the
// children: a window by child over 100,000 cached children with no order index of that ordering
// needs every child's `ts`, not every child (CheckpointReader+ScanWindow.swift). Each child is
// scanned as bytes (NodeSelectiveDecoder.swift's `skip`) and only the value at the ordering's
// path is decoded. It sits with the checkpoint's readers, not the node codec, because what it
// yields is the order index's stored form of each value (CheckpointFormat+OrderIndex.swift).

extension NodeCodec {
    /// The children of the children node encoded in `bytes`, in key order, each with the value
    /// `index` orders it by as an order index stores it (``CheckpointFormat/storedIndexValue(_:)``):
    /// for ``QueryIndex/child(_:)`` only the node at the path is decoded; for ``QueryIndex/value``
    /// only a leaf (a child with children is stored as one marker value); for
    /// ``QueryIndex/priority`` the child is decoded.
    ///
    /// `bytes` must hold one children node without a priority (a range chunk's encoding) or the
    /// empty node. Checks the keys (not empty, strictly ascending) and the structure as
    /// ``skip(from:depth:child:)`` does; the decoded values as ``decode(_:)`` does.
    /// - Throws: ``DecodeError`` for malformed bytes.
    static func indexedChildren(
        _ bytes: [UInt8], by index: QueryIndex
    ) throws(DecodeError) -> [(key: ChildKey, value: Node)] {
        var r = ByteReader(bytes)
        let tag = try r.u8()
        if tag == 0x00 {
            guard r.isAtEnd else { throw r.fail("\(r.remaining) trailing bytes after node") }
            return []
        }
        guard tag == 0x07 else {
            throw DecodeError(
                offset: 0, reason: "tag 0x\(String(tag, radix: 16)) is not a children node without priority")
        }
        let count = try r.count(limit: r.remaining / 3)
        guard count > 0 else { throw r.fail("children node without children") }
        var recent = RecentKeys()
        var out: [(key: ChildKey, value: Node)] = []
        out.reserveCapacity(count)
        var last: ChildKey?
        for _ in 0..<count {
            let keyOffset = r.offset
            let key = try r.key(&recent)
            guard !key.string.isEmpty else { throw DecodeError(offset: keyOffset, reason: "empty child key") }
            if let last, ChildKey.compare(last, key) >= 0 {
                throw DecodeError(offset: keyOffset, reason: "child keys not strictly ascending (\(last) then \(key))")
            }
            last = key
            let start = r.offset
            try skip(from: &r, depth: 1, child: true)
            var child = ByteReader(bytes, from: start, end: r.offset)
            out.append((key, try storedIndexedValue(from: &child, depth: 1, by: index)))
        }
        guard r.isAtEnd else { throw r.fail("\(r.remaining) trailing bytes after node") }
        return out
    }

    /// The stored indexed value of the node `r` starts at (already skipped once, so its
    /// structure is sound).
    private static func storedIndexedValue(
        from r: inout ByteReader, depth: Int, by index: QueryIndex
    ) throws(DecodeError) -> Node {
        switch index {
        case .key:
            return .empty
        case .priority:
            return CheckpointFormat.storedIndexValue(index.indexedValue(of: try decode(from: &r, depth: depth)))
        case .value:
            return try storedValue(from: &r, depth: depth)
        case .child(let path):
            var depth = depth
            for key in path.keys {
                let tag = try r.u8()
                // A leaf (or, never for a child, the empty node) has no child at `key`.
                guard tag & ~priorityFlag == 0x07 else { return .empty }
                let count = try r.count(limit: r.remaining / 3)
                var found = false
                for _ in 0..<count {
                    let n = try r.count(limit: Int.max)
                    let name = try r.raw(n)
                    if name.elementsEqual(key.string.utf8) {
                        found = true
                        break
                    }
                    try skip(from: &r, depth: depth + 1, child: true)
                }
                guard found else { return .empty }
                depth += 1
            }
            return try storedValue(from: &r, depth: depth)
        }
    }

    /// ``CheckpointFormat/storedIndexValue(_:)`` of the node `r` starts at: a leaf decoded
    /// without its priority, a node with children as the marker, without decoding them.
    private static func storedValue(from r: inout ByteReader, depth: Int) throws(DecodeError) -> Node {
        var peek = r
        if try peek.u8() & ~priorityFlag == 0x07 { return CheckpointFormat.storedObject }
        return CheckpointFormat.storedIndexValue(try decode(from: &r, depth: depth))
    }
}
