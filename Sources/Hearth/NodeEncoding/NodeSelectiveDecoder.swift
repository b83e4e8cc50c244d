import HearthModel

// Reading a few children out of an encoded children node without building the others: the
// views' rebuild at open needs 50 children of a 64 KiB cache chunk holding hundreds, and a
// profile query one child of a chunk of profiles. The encoding has no length prefixes
// (FORMAT.md §11.3), so the other children are still scanned, but as bytes: no node, no
// string, no child map is made for them.

extension NodeCodec {
    /// The children of the children node encoded in `bytes` whose keys are in `keys`, in key
    /// order, each decoded exactly as ``decode(_:)`` decodes it; the other children are
    /// skipped (``skip(from:depth:)``), their structure checked but not built.
    ///
    /// `bytes` must hold one children node without a priority (a range chunk's encoding, as
    /// ``CheckpointReader`` checks) or the empty node.
    ///
    /// What ``decode(_:)`` would reject, this rejects too, with these exceptions in the
    /// children it skips: invalid UTF-8 in their strings and keys, and the order of their keys
    /// (the chunk's checksum, verified before decoding, guards those bytes).
    /// - Throws: ``DecodeError`` for malformed bytes: truncated, unknown tags, a node that is
    ///   not a children node, a kept child out of order, trailing bytes.
    static func decodeChildren(
        _ bytes: [UInt8], keeping keys: Set<ChildKey>
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
        // The wanted keys by their UTF-8 bytes, so a skipped key is compared as bytes, never
        // made into a string.
        var wanted: [ArraySlice<UInt8>: ChildKey] = [:]
        wanted.reserveCapacity(keys.count)
        for key in keys { wanted[ArraySlice(key.string.utf8)] = key }
        let count = try r.count(limit: r.remaining / 3)
        guard count > 0 else { throw r.fail("children node without children") }
        var kept: [(key: ChildKey, value: Node)] = []
        kept.reserveCapacity(min(count, keys.count))
        for _ in 0..<count {
            let keyOffset = r.offset
            let keyBytes = try keyBytes(&r)
            if let key = wanted[keyBytes] {
                if let last = kept.last, ChildKey.compare(last.key, key) >= 0 {
                    throw DecodeError(
                        offset: keyOffset, reason: "child keys not strictly ascending (\(last.key) then \(key))")
                }
                let child = try decode(from: &r, depth: 1)
                guard !child.isEmpty else { throw r.fail("empty child \(key)") }
                kept.append((key, child))
            } else {
                try skip(from: &r, depth: 1, child: true)
            }
        }
        guard r.isAtEnd else { throw r.fail("\(r.remaining) trailing bytes after node") }
        return kept
    }

    /// Moves `r` past one encoded node, checking what ``decode(from:depth:)`` checks but the
    /// UTF-8 of strings and the order of keys, and building nothing. `child`: the node is a
    /// child, which may not be empty.
    static func skip(from r: inout ByteReader, depth: Int, child: Bool = false) throws(DecodeError) {
        guard depth <= maxDepth else { throw r.fail("node nested deeper than \(maxDepth) levels") }
        let tag = try r.u8()
        let hasPriority = tag & priorityFlag != 0
        switch tag & ~priorityFlag {
        case 0x00:
            guard !hasPriority else { throw r.fail("empty node with a priority") }
            if child { throw r.fail("empty child") }
            return
        case 0x01, 0x02, 0x05:
            break
        case 0x03:
            guard try r.double().isFinite else { throw r.fail("non-finite number") }
        case 0x06:
            guard try r.double().isFinite else { throw r.fail("non-finite increment") }
        case 0x08:
            let i = Int64(bitPattern: try r.u64())
            guard i.magnitude > 1 << 53 else { throw r.fail("integer \(i) must be encoded as a number (0x03)") }
        case 0x04:
            _ = try stringBytes(&r)
        case 0x07:
            let count = try r.count(limit: r.remaining / 3)
            guard count > 0 else { throw r.fail("children node without children") }
            for _ in 0..<count {
                _ = try keyBytes(&r)
                try skip(from: &r, depth: depth + 1, child: true)
            }
        default:
            throw DecodeError(offset: r.offset - 1, reason: "unknown node tag 0x\(String(tag, radix: 16))")
        }
        guard hasPriority else { return }
        switch try r.u8() {
        case 0x03:
            guard try r.double().isFinite else { throw r.fail("non-finite priority") }
        case 0x04:
            _ = try stringBytes(&r)
        case let t:
            throw DecodeError(offset: r.offset - 1, reason: "unknown priority tag 0x\(String(t, radix: 16))")
        }
    }

    /// A length-prefixed string's bytes, unvalidated.
    private static func stringBytes(_ r: inout ByteReader) throws(DecodeError) -> ArraySlice<UInt8> {
        let n = try r.count(limit: Int.max)
        guard n <= r.remaining else { throw r.fail("string length \(n) exceeds remaining \(r.remaining) bytes") }
        return try r.raw(n)
    }

    /// A child key's bytes (a non-empty string), unvalidated.
    private static func keyBytes(_ r: inout ByteReader) throws(DecodeError) -> ArraySlice<UInt8> {
        let keyOffset = r.offset
        let bytes = try stringBytes(&r)
        guard !bytes.isEmpty else { throw DecodeError(offset: keyOffset, reason: "empty child key") }
        return bytes
    }
}
