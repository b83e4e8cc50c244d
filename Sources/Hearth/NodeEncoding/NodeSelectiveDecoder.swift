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
        try EncodedChildren(bytes).children(keeping: keys)
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
            try skipString(&r)
        case 0x07:
            let count = try r.count(limit: r.remaining / 3)
            guard count > 0 else { throw r.fail("children node without children") }
            for _ in 0..<count {
                let keyOffset = r.offset
                guard try skipString(&r) > 0 else { throw DecodeError(offset: keyOffset, reason: "empty child key") }
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
            try skipString(&r)
        case let t:
            throw DecodeError(offset: r.offset - 1, reason: "unknown priority tag 0x\(String(t, radix: 16))")
        }
    }

    /// Moves past a length-prefixed string, unvalidated; returns its length.
    @discardableResult
    private static func skipString(_ r: inout ByteReader) throws(DecodeError) -> Int {
        let n = try r.count(limit: Int.max)
        try r.skip(n)
        return n
    }
}

/// The children of one encoded children node, located but not decoded: each child's offset by
/// its key's bytes, so that reading a few children of a chunk several views share costs one
/// scan of the chunk, then a lookup and a decode per child.
struct EncodedChildren: Sendable {
    /// The encoded node.
    let bytes: [UInt8]
    /// Each child's value offset (and its key's offset, for errors) by its key's bytes.
    private let offsets: [KeyBytes: (key: Int, value: Int)]

    /// Locates the children of the node `bytes` encodes: a children node without a priority
    /// (a range chunk's encoding, as ``CheckpointReader`` checks) or the empty node. Checks
    /// the structure as ``NodeCodec/skip(from:depth:child:)`` does.
    /// - Throws: ``DecodeError`` for malformed bytes: truncated, unknown tags, a node that is
    ///   not a children node, trailing bytes.
    init(_ bytes: [UInt8]) throws(DecodeError) {
        self.bytes = bytes
        var r = ByteReader(bytes)
        var offsets: [KeyBytes: (key: Int, value: Int)] = [:]
        let tag = try r.u8()
        if tag != 0x00 {
            guard tag == 0x07 else {
                throw DecodeError(
                    offset: 0, reason: "tag 0x\(String(tag, radix: 16)) is not a children node without priority")
            }
            let count = try r.count(limit: r.remaining / 3)
            guard count > 0 else { throw r.fail("children node without children") }
            offsets.reserveCapacity(count)
            for _ in 0..<count {
                let keyOffset = r.offset
                let n = try r.count(limit: Int.max)
                guard n <= r.remaining else {
                    throw r.fail("string length \(n) exceeds remaining \(r.remaining) bytes")
                }
                guard n > 0 else { throw DecodeError(offset: keyOffset, reason: "empty child key") }
                let key = KeyBytes(try r.raw(n))
                offsets[key] = (keyOffset, r.offset)
                try NodeCodec.skip(from: &r, depth: 1, child: true)
            }
        }
        guard r.isAtEnd else { throw r.fail("\(r.remaining) trailing bytes after node") }
        self.offsets = offsets
    }

    /// How many children the node has.
    var count: Int { offsets.count }

    /// About the memory this keeps: the bytes and the offsets.
    var footprint: Int { bytes.count + offsets.count * 48 }

    /// The children whose keys are in `keys`, in key order, each decoded exactly as
    /// ``NodeCodec/decode(_:)`` decodes it.
    /// - Throws: ``DecodeError`` for a malformed kept child, or kept keys out of order.
    func children(keeping keys: Set<ChildKey>) throws(DecodeError) -> [(key: ChildKey, value: Node)] {
        var found: [(key: ChildKey, at: (key: Int, value: Int))] = []
        found.reserveCapacity(min(keys.count, offsets.count))
        for key in keys {
            if let at = offsets[KeyBytes(ArraySlice(key.string.utf8))] { found.append((key, at)) }
        }
        found.sort { $0.at.value < $1.at.value }
        var kept: [(key: ChildKey, value: Node)] = []
        kept.reserveCapacity(found.count)
        for (key, at) in found {
            if let last = kept.last, ChildKey.compare(last.key, key) >= 0 {
                throw DecodeError(
                    offset: at.key, reason: "child keys not strictly ascending (\(last.key) then \(key))")
            }
            var r = ByteReader(bytes, from: at.value)
            let child = try NodeCodec.decode(from: &r, depth: 1)
            guard !child.isEmpty else { throw r.fail("empty child \(key)") }
            kept.append((key, child))
        }
        return kept
    }
}

/// A key's UTF-8 bytes as a dictionary key, hashed and compared as one block of memory (an
/// `ArraySlice`'s own hashing goes byte by byte).
private struct KeyBytes: Hashable {
    let bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    static func == (a: KeyBytes, b: KeyBytes) -> Bool {
        a.bytes.count == b.bytes.count
            && a.bytes.withUnsafeBytes { x in b.bytes.withUnsafeBytes { y in x.elementsEqual(y) } }
    }

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
