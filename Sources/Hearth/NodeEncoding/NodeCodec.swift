import HearthLog
import HearthModel

/// Binary encoding of ``Node`` values (FORMAT.md §"Node encoding").
///
/// A node is one tag byte, then its body:
///
/// | tag | node | body |
/// |---|---|---|
/// | 0x00 | empty (null) | — |
/// | 0x01 / 0x02 | false / true | — |
/// | 0x03 | number | 8-byte little-endian IEEE-754 double |
/// | 0x04 | string | varint length, UTF-8 bytes |
/// | 0x05 | `{".sv":"timestamp"}` | — |
/// | 0x06 | `{".sv":{"increment":n}}` | 8-byte double |
/// | 0x07 | children | varint count, then count × (key as string, node), keys strictly ascending in Firebase key order |
/// | 0x08 | integer beyond ±2^53 | 8-byte little-endian two's-complement Int64 (node format 2) |
///
/// Tag bit 0x40 on a non-empty node means a priority follows the body: 0x03 + double or
/// 0x04 + string. Decoding rejects unknown tags, empty, unsorted or duplicate keys, empty children,
/// nesting deeper than ``NodeCodec/maxDepth``, and lengths beyond the input.
enum NodeCodec {
    /// The deepest nesting decoded (data is at most 32 levels below the root; twice that
    /// leaves room for paths inside events while still bounding recursion).
    static let maxDepth = 64

    static let priorityFlag: UInt8 = 0x40

    /// Children nodes less deep than this are built as they are decoded (ChildMap's builder);
    /// deeper ones gather their children in an array first. The builder recurses log2(count)
    /// times per children node, and the next level decodes inside that recursion: at every
    /// level of a node nested 63 deep and thousands wide, that would double the stack the
    /// decode needs (`DecodeStackTests`; a thread of 512 KiB, Apple's default for secondary
    /// threads, would not suffice in a debug build). Real data is wide near a chunk's or a
    /// record's root, where the builder saves the array's copies.
    static let builderDepth = 8

    static func encode(_ node: Node, into w: inout ByteWriter) {
        var found = Inspection()
        encode(node, into: &w, levelsLeft: Int.max, &found)
    }

    /// `node`'s encoding when it is at most `limit` bytes long, else nil — having written at
    /// most about `limit` bytes: the walk stops at the first node that starts past `limit`,
    /// and a string that would end past it is not copied. What a checkpoint asks of a node
    /// that may fit in one chunk (``CheckpointEncoder``): a node too large costs it at most
    /// `limit` bytes of encoding thrown away.
    static func encode(_ node: Node, upTo limit: Int) -> [UInt8]? {
        var w = ByteWriter(capacity: 256)
        var found = Inspection(limit: limit)
        encode(node, into: &w, levelsLeft: Int.max, &found)
        return found.overLimit || w.bytes.count > limit ? nil : w.bytes
    }

    /// What an inspecting encode found in a user write's data: a server value (the views
    /// resolve those), and nesting beyond the depth limit (the write is then refused, and the
    /// bytes written are incomplete).
    struct Inspection: Equatable {
        var serverValue = false
        var tooDeep = false
        /// The encoding's length past which it stops (``encode(_:upTo:)``); `Int.max` when it
        /// never does.
        var limit = Int.max
        /// The encoding passed ``limit`` (the bytes written are incomplete).
        var overLimit = false
    }

    /// Encodes `node` and inspects it in the same walk: whether it holds a server value, and
    /// whether it nests deeper than `Node.nestingExceeds(maxDepth)` allows (a children node
    /// more than `maxDepth` levels down; the encoding stops there). ``Store/saveWrite(_:at:durability:)`` encodes every write
    /// before its lock, and the data's first walk pays the cache misses of nodes built on
    /// another thread: one walk instead of two.
    static func encode(_ node: Node, into w: inout ByteWriter, inspecting found: inout Inspection) {
        encode(node, into: &w, levelsLeft: maxDepth, &found)
    }

    /// `levelsLeft`: how many more levels of children nodes may follow (``maxDepth`` at a
    /// write's root, `Int.max` where the data was checked when it was written).
    private static func encode(_ node: Node, into w: inout ByteWriter, levelsLeft: Int, _ found: inout Inspection) {
        if found.tooDeep || found.overLimit { return }
        if w.bytes.count > found.limit {
            found.overLimit = true
            return
        }
        // One match per node (`Node.Storage`): the accessors would copy each part out.
        switch node.storage {
        case .empty:
            w.u8(0x00)
        case .leaf(let leaf, let priority):
            let flag: UInt8 = priority == nil ? 0 : priorityFlag
            switch leaf {
            case .bool(let b): w.u8((b ? 0x02 : 0x01) | flag)
            case .number(let n): w.u8(0x03 | flag); w.double(n)
            case .integer(let i) where i.magnitude <= 1 << 53:
                // Not canonical (``LeafValue/integer(exactly:)``), but `.integer` is public:
                // write the one representation the decoder accepts.
                w.u8(0x03 | flag); w.double(Double(i))
            case .integer(let i): w.u8(0x08 | flag); w.u64(UInt64(bitPattern: i))
            case .string(let s):
                if found.limit != .max && w.bytes.count + s.utf8.count > found.limit {
                    found.overLimit = true
                    return
                }
                w.u8(0x04 | flag); w.string(s)
            case .serverValue(.timestamp):
                found.serverValue = true
                w.u8(0x05 | flag)
            case .serverValue(.increment(let n)):
                found.serverValue = true
                w.u8(0x06 | flag); w.double(n)
            }
            encode(priority, into: &w)
        case .children(let children, let priority):
            // As `Node.nestingExceeds`: children below the last level allowed are too deep.
            guard levelsLeft > 0 else {
                found.tooDeep = true
                return
            }
            w.u8(0x07 | (priority == nil ? 0 : priorityFlag))
            w.varint(children.count)
            children.forEachPair { key, child in
                w.string(key.string)
                encode(child, into: &w, levelsLeft: levelsLeft &- 1, &found)
            }
            encode(priority, into: &w)
        }
    }

    /// A node's priority after its body (nothing when it has none).
    private static func encode(_ priority: Priority?, into w: inout ByteWriter) {
        switch priority {
        case .number(let n)?: w.u8(0x03); w.double(n)
        case .string(let s)?: w.u8(0x04); w.string(s)
        case nil: break
        }
    }

    /// The number of bytes ``encode(_:into:)`` writes for `node`, computed without writing.
    static func encodedSize(_ node: Node) -> Int {
        var size = 1
        switch node.leafValue {
        case .bool?, .serverValue(.timestamp)?: break
        case .number?, .integer?, .serverValue(.increment)?: size += 8
        case .string(let s)?: size += stringSize(s)
        case nil:
            let children = node.children
            guard !children.isEmpty else { return 1 }
            size += varintSize(UInt64(children.count))
            children.forEachPair { key, child in size += stringSize(key.string) + encodedSize(child) }
        }
        return size + prioritySize(node.priority)
    }

    /// The bytes a node with `count` children and `priority` takes beyond its children's keys
    /// and encodings: its tag, the count and the priority (what ``encodedSize(_:)`` adds to them).
    static func childrenNodeOverhead(count: Int, priority: Priority?) -> Int {
        1 + varintSize(UInt64(count)) + prioritySize(priority)
    }

    /// The bytes `priority` takes in a node's encoding.
    @inline(__always)
    static func prioritySize(_ priority: Priority?) -> Int {
        switch priority {
        case .number?: 9
        case .string(let s)?: 1 + stringSize(s)
        case nil: 0
        }
    }

    static func stringSize(_ s: String) -> Int {
        let n = s.utf8.count
        return varintSize(UInt64(n)) + n
    }

    static func varintSize(_ v: UInt64) -> Int {
        var v = v, n = 1
        while v >= 0x80 { v >>= 7; n += 1 }
        return n
    }

    /// Writes a children node from its children's encodings (keys ascending, as in `node`'s
    /// own encoding): the same bytes ``encode(_:into:)`` writes for that node.
    static func encodeChildren(
        _ parts: [(key: ChildKey, bytes: [UInt8])], priority: Priority?, into w: inout ByteWriter
    ) {
        guard !parts.isEmpty else {
            w.u8(0x00)
            return
        }
        w.u8(0x07 | (priority == nil ? 0 : priorityFlag))
        w.varint(parts.count)
        for part in parts {
            w.string(part.key.string)
            w.raw(part.bytes)
        }
        switch priority {
        case .number(let n)?: w.u8(0x03); w.double(n)
        case .string(let s)?: w.u8(0x04); w.string(s)
        case nil: break
        }
    }

    static func encode(_ node: Node) -> [UInt8] {
        var w = ByteWriter(capacity: 256)
        encode(node, into: &w)
        return w.bytes
    }

    static func decode(from r: inout ByteReader, depth: Int = 0) throws(DecodeError) -> Node {
        var recent = RecentKeys()
        return try decode(from: &r, depth: depth, &recent)
    }

    /// `recent`: the keys this decode made, reused for children with the same key bytes.
    private static func decode(
        from r: inout ByteReader, depth: Int, _ recent: inout RecentKeys
    ) throws(DecodeError) -> Node {
        guard depth <= maxDepth else { throw r.fail("node nested deeper than \(maxDepth) levels") }
        let tag = try r.u8()
        let hasPriority = tag & priorityFlag != 0
        let node: Node
        switch tag & ~priorityFlag {
        case 0x00:
            guard !hasPriority else { throw r.fail("empty node with a priority") }
            return .empty
        case 0x01: node = .bool(false)
        case 0x02: node = .bool(true)
        case 0x03:
            let n = try r.double()
            guard n.isFinite else { throw r.fail("non-finite number") }
            node = .number(n)
        case 0x04: node = .string(try r.string())
        case 0x08:
            let i = Int64(bitPattern: try r.u64())
            // One representation per value: an integer a double holds exactly is a 0x03.
            guard i.magnitude > 1 << 53 else { throw r.fail("integer \(i) must be encoded as a number (0x03)") }
            node = Node(.integer(i))
        case 0x05: node = Node(.serverValue(.timestamp))
        case 0x06:
            let n = try r.double()
            guard n.isFinite else { throw r.fail("non-finite increment") }
            node = Node(.serverValue(.increment(n)))
        case 0x07:
            // Every child takes at least 2 bytes (an empty key is invalid, so ≥ 1 length byte
            // + ≥ 1 key byte + ≥ 1 tag byte), which bounds the count by the input left.
            let count = try r.count(limit: r.remaining / 3)
            guard count > 0 else { throw r.fail("children node without children") }
            var last: ChildKey?
            if depth < builderDepth {
                // Each child becomes a tree node as it is decoded (ChildMap's builder asks for
                // them in key order).
                node = Node(
                    children: try ChildMap(count: count) { () throws(DecodeError) in
                        try decodeChild(from: &r, depth: depth, &recent, after: &last)
                    })
            } else {
                var pairs: [(key: ChildKey, value: Node)] = []
                pairs.reserveCapacity(count)
                for _ in 0..<count { pairs.append(try decodeChild(from: &r, depth: depth, &recent, after: &last)) }
                node = Node(children: ChildMap(sortedPairs: pairs))
            }
        default:
            throw DecodeError(offset: r.offset - 1, reason: "unknown node tag 0x\(String(tag, radix: 16))")
        }
        guard hasPriority else { return node }
        switch try r.u8() {
        case 0x03:
            let p = try r.double()
            guard p.isFinite else { throw r.fail("non-finite priority") }
            return node.withPriority(.number(p))
        case 0x04:
            return node.withPriority(.string(try r.string()))
        case let t:
            throw DecodeError(offset: r.offset - 1, reason: "unknown priority tag 0x\(String(t, radix: 16))")
        }
    }

    /// One child of a children node at `depth`: its key (not empty, after `last`, which it
    /// becomes) and its node.
    @inline(__always)
    private static func decodeChild(
        from r: inout ByteReader, depth: Int, _ recent: inout RecentKeys, after last: inout ChildKey?
    ) throws(DecodeError) -> (key: ChildKey, value: Node) {
        let keyOffset = r.offset
        let key = try r.key(&recent)
        // Keys are never empty (Firebase's key rules; the count bound relies on it too).
        // Without this check `{"": …}` decoded into a node no valid write can produce and no
        // path can address.
        guard !key.string.isEmpty else { throw DecodeError(offset: keyOffset, reason: "empty child key") }
        if let last, ChildKey.compare(last, key) >= 0 {
            throw DecodeError(offset: keyOffset, reason: "child keys not strictly ascending (\(last) then \(key))")
        }
        let child = try decode(from: &r, depth: depth + 1, &recent)
        guard !child.isEmpty else { throw r.fail("empty child \(key)") }
        last = key
        return (key, child)
    }

    static func decode(_ bytes: [UInt8]) throws(DecodeError) -> Node {
        var r = ByteReader(bytes)
        let node = try decode(from: &r)
        guard r.isAtEnd else { throw r.fail("\(r.remaining) trailing bytes after node") }
        return node
    }
}
