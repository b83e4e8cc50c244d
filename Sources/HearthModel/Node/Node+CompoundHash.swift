// Node+CompoundHash: Firebase's range hashes of a node (firebase-ios-sdk `FCompoundHash.m`,
// firebase-android-sdk `snapshot/CompoundHash.java`), sent with a listen as `ch`.

/// A node's data cut into ranges of leaves, each with a hash: what a listen sends as `ch`
/// (`{"ps": posts, "hs": hashes}`) so that the server can answer with range merges that
/// replace only the ranges whose hash differs.
///
/// The leaves are taken in path order (``Path``'s `<`: key order, a node before its
/// descendants), a children node's priority as a leaf at `.priority` among its children.
/// Range `i` holds the leaves after `posts[i - 1]` (exclusive; unbounded for the first) up
/// to `posts[i]` (inclusive); the last range, after the last post, is always empty and its
/// hash is `""`. So `hashes.count == posts.count + 1`, and the empty node is `([], [""])`.
///
/// A range's hash is the padded base64 of SHA-1 over its text (UTF-8): `(`, then the keys
/// from the root to the deepest node holding both the previous post and the range's first
/// leaf, each as `"key":(`, then the range's leaves nested as `"key":(…)` joined by `,`, each
/// leaf as `priority:<P>:` (when it has a priority) and `<type>:<value>` with strings quoted
/// (`"` and `\` escaped by `\`), then every bracket closed. Bit-exact with the SDKs, with one
/// difference: the SDKs visit a children node's priority just before its first key that
/// sorts after `.priority` — never, when none does — and Hearth visits it at its place in
/// path order, the end when no key sorts after it, so a change of priority always changes a
/// hash. A server that skips it sees that range differ and re-sends it: more bytes, never
/// wrong data.
public struct CompoundHash: Sendable, Hashable {
    /// The last path of every range but the final empty one, in increasing order.
    public var posts: [Path]
    /// One hash per range: `posts.count + 1`, the last `""`.
    public var hashes: [String]

    /// The most ranges a `ch` from a client may name: a listen with more is answered with
    /// the whole data. Clients choose about `sqrt(size)/10` ranges (the SDKs' split), so
    /// 4,096 covers a location of about 1.6 GB.
    public static let maxRanges = 4096

    /// The SDKs' threshold: a listen sends a compound hash only when the estimated JSON size
    /// of its cached data exceeds 1,024 (`SIZE_THRESHOLD_FOR_COMPOUND_HASH`).
    public static let sizeThreshold = 1024

    /// Posts and hashes as given.
    /// - Precondition: `hashes.count == posts.count + 1`.
    public init(posts: [Path], hashes: [String]) {
        precondition(hashes.count == posts.count + 1, "a compound hash has one hash more than posts")
        self.posts = posts
        self.hashes = hashes
    }

    /// Posts and hashes from outside (a client's `ch`), or `nil` unless they make a compound
    /// hash: one hash more than posts, the last `""`, posts strictly increasing, at most
    /// ``maxRanges`` ranges. Hostile input goes through here, never through the precondition
    /// of ``init(posts:hashes:)``.
    public init?(validatingPosts posts: [Path], hashes: [String]) {
        guard hashes.count == posts.count + 1, hashes.count <= CompoundHash.maxRanges + 1, hashes.last == "",
            zip(posts, posts.dropFirst()).allSatisfy({ $0 < $1 })
        else { return nil }
        self.init(posts: posts, hashes: hashes)
    }

    /// The compound hash of `node` split as Firebase's SDKs split it: a range ends after the
    /// first leaf (not a priority) that brings its text past `max(512, √(100 × size))`
    /// UTF-16 code units, `size` being ``Node/estimatedJSONSize``.
    public init(of node: Node) {
        let threshold = max(512, Int(Double(node.estimatedJSONSize * 100).squareRoot()))
        self.init(of: node) { path, length in length > threshold && !path.isPriority }
    }

    /// The compound hash of `node`, ending a range after each leaf for which
    /// `split(leafPath, textLengthSoFar)` is true (the length in UTF-16 code units, as the
    /// SDKs measure it).
    public init(of node: Node, split: (Path, Int) -> Bool) {
        var posts: [Path] = []
        var hashes: [String] = []
        var writer: RangeText?
        var last = Path.root
        node.forEachHashLeaf(at: []) { keys, leaf in
            let path = Path(keys: keys)
            if writer == nil { writer = RangeText(after: posts.last, first: keys) }
            writer!.add(keys, leaf)
            last = path
            if split(path, writer!.length) {
                hashes.append(writer!.finish())
                posts.append(path)
                writer = nil
            }
        }
        if let w = writer {
            hashes.append(w.finish())
            posts.append(last)
        }
        hashes.append("")
        self.init(posts: posts, hashes: hashes)
    }

    /// The hashes of `node`'s data over this hash's ranges (the server's side): equal to
    /// ``hashes`` exactly in the ranges where `node` holds the same leaves as the node
    /// this hash was taken of. A range `node` holds no leaf in hashes as `""`.
    /// - Precondition: ``posts`` strictly increasing (``isWellFormed``).
    public func rangeHashes(of node: Node) -> [String] {
        assert(isWellFormed, "ranges are found by binary search over increasing posts")
        var out = [String](repeating: "", count: hashes.count)
        var current = -1
        var writer: RangeText?
        node.forEachHashLeaf(at: []) { keys, leaf in
            let path = Path(keys: keys)
            let range = rangeIndex(of: path)
            assert(range >= current, "leaves come in path order")
            if range != current {
                if let w = writer { out[current] = w.finish() }
                current = range
                writer = RangeText(after: range > 0 ? posts[range - 1] : nil, first: keys)
            }
            writer!.add(keys, leaf)
        }
        if let w = writer { out[current] = w.finish() }
        return out
    }

    /// Whether the posts increase strictly (a client's hash is checked before it is used).
    public var isWellFormed: Bool {
        hashes.count == posts.count + 1 && zip(posts, posts.dropFirst()).allSatisfy { $0 < $1 }
    }

    /// The range holding the leaf at `path`: the first `i` with `path <= posts[i]`.
    func rangeIndex(of path: Path) -> Int {
        var low = 0
        var high = posts.count
        while low < high {
            let mid = (low + high) / 2
            if posts[mid] < path { low = mid + 1 } else { high = mid }
        }
        return low
    }
}

/// The text of one range as it is built, with its length in UTF-16 code units.
struct RangeText {
    private var text = "("
    private(set) var length = 1
    private var open: [ChildKey]
    private var needsComma = false

    /// A range whose leaves follow the post `previous` (`nil` for the first range) and start
    /// at the leaf `first`: it opens the keys the two share.
    init(after previous: Path?, first: [ChildKey]) {
        var shared: [ChildKey] = []
        if let previous {
            for (a, b) in zip(previous.keys, first) {
                guard a == b else { break }
                shared.append(a)
            }
        }
        open = []
        for key in shared { append(key); write(":(") }
        open = shared
    }

    private mutating func write(_ s: String) {
        text += s
        length += s.utf16.count
    }

    private mutating func append(_ key: ChildKey) { write(RangeText.quoted(key.string)) }

    /// Adds the leaf at `keys` (after every leaf added so far in path order).
    mutating func add(_ keys: [ChildKey], _ leaf: Node) {
        var shared = 0
        while shared < open.count, shared < keys.count, open[shared] == keys[shared] { shared += 1 }
        while open.count > shared {
            write(")")
            open.removeLast()
            needsComma = true
        }
        for key in keys[shared...] {
            if needsComma { write(",") }
            append(key)
            write(":(")
            open.append(key)
            needsComma = false
        }
        write(RangeText.leafText(leaf))
        needsComma = true
    }

    /// The range's hash: its text closed.
    func finish() -> String {
        let closed = text + String(repeating: ")", count: open.count + 1)
        return Base64.encode(SHA1.hash(Array(closed.utf8)))
    }

    /// `"s"` with `\` and `"` escaped (the SDKs' hash version 2 of a string).
    static func quoted(_ s: String) -> String {
        var out = "\""
        for c in s.unicodeScalars {
            if c == "\\" || c == "\"" { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(c)
        }
        return out + "\""
    }

    /// A leaf as hash version 2 writes it.
    static func leafText(_ leaf: Node) -> String {
        var s = ""
        if let p = leaf.priority { s += "priority:" + leafText(Node(p.leafValue)) + ":" }
        switch leaf.leafValue {
        case .number(let n)?: s += "number:" + Node.ieee754Hex(n)
        case .integer(let i)?: s += "number:" + Node.ieee754Hex(Double(i))
        case .string(let str)?: s += "string:" + quoted(str)
        case .bool(let b)?: s += b ? "boolean:true" : "boolean:false"
        case .serverValue(let v)?: s += "object:" + LeafValue.serverValue(v).json.serialized()
        case nil: assertionFailure("only leaves are hashed as leaves")
        }
        return s
    }
}

extension Node {
    /// Calls `visit` with every leaf below this node in path order, a children node's
    /// priority as a leaf at `.priority` among its children (see ``CompoundHash``).
    func forEachHashLeaf(at keys: [ChildKey], _ visit: ([ChildKey], Node) -> Void) {
        switch storage {
        case .empty:
            return
        case .leaf:
            visit(keys, self)
        case let .children(map, priority):
            let priorityKey = ChildKey(".priority")
            var pending = priority
            for (key, child) in map {
                if let p = pending, priorityKey < key {
                    visit(keys + [priorityKey], Node(p.leafValue))
                    pending = nil
                }
                child.forEachHashLeaf(at: keys + [key], visit)
            }
            if let p = pending { visit(keys + [priorityKey], Node(p.leafValue)) }
        }
    }

    /// The SDKs' estimate of the node's JSON size (`estimateSerializedNodeSize`): 4 for null,
    /// 8 per number, 4 per boolean, a string's UTF-16 length plus 2; a priority on a leaf
    /// adds 24 and its own size; a children node 1 plus, per child (its priority counted as
    /// a child `.priority`), its key's UTF-16 length plus 4 plus its size.
    public var estimatedJSONSize: Int {
        switch storage {
        case .empty:
            return 4
        case let .leaf(value, priority):
            let size = Node.estimatedLeafSize(value)
            guard let priority else { return size }
            return 24 + size + Node.estimatedLeafSize(priority.leafValue)
        case let .children(map, priority):
            var sum = 1
            for (key, child) in map { sum += key.string.utf16.count + 4 + child.estimatedJSONSize }
            if let priority { sum += 9 + 4 + Node.estimatedLeafSize(priority.leafValue) }
            return sum
        }
    }

    private static func estimatedLeafSize(_ value: LeafValue) -> Int {
        switch value {
        case .number, .integer: 8
        case .bool: 4
        case .string(let s): 2 + s.utf16.count
        case .serverValue(let v): LeafValue.serverValue(v).json.serialized().utf16.count
        }
    }
}
