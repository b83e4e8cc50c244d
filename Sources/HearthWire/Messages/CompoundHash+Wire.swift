// The wire forms of a listen's compound hash (`ch`) and of range merges (`rm`).

extension CompoundHash {
    /// `{"ps": [path, …], "hs": [hash, …]}`, paths with a leading `/` as the SDKs send them.
    @_spi(HearthInternals) public var wire: JSONValue {
        .object([
            JSONMember(key: "ps", value: .array(posts.map { .string("/" + $0.wireString) })),
            JSONMember(key: "hs", value: .array(hashes.map { .string($0) })),
        ])
    }

    /// The longest hash a range may carry: the 28 characters of a SHA-1 in padded base64.
    @_spi(HearthInternals) public static let maxHashLength = 28

    /// Decodes a listen's `ch` (hostile input): absent or `null` is none; more than
    /// `maxRanges` ranges is none (the listen is answered with the whole data).
    /// - Throws: ``WireError/badRequest(action:reason:)`` unless `ps` is an array of path
    ///   strings in strictly increasing path order and `hs` an array of one more string of
    ///   at most `maxHashLength` characters, the last `""`; ``WireError/invalidPath(_:)``
    ///   for a path that breaks the rules.
    static func decode(_ value: JSONValue?, action: String) throws(WireError) -> CompoundHash? {
        guard let value, !value.isNull else { return nil }
        func bad(_ why: String) -> WireError { .badRequest(action: action, reason: "\"ch\" " + why) }
        guard case .array(let ps)? = value["ps"], case .array(let hs)? = value["hs"] else {
            throw bad("must be {\"ps\": [paths], \"hs\": [hashes]}")
        }
        guard hs.count == ps.count + 1 else { throw bad("needs one hash more than paths") }
        if ps.count > maxRanges { return nil }
        var posts: [Path] = []
        posts.reserveCapacity(ps.count)
        for p in ps {
            guard let s = p.stringValue else { throw bad("paths must be strings") }
            let path = try wirePath(s)
            if let last = posts.last, !(last < path) { throw bad("paths must increase") }
            posts.append(path)
        }
        var hashes: [String] = []
        hashes.reserveCapacity(hs.count)
        for h in hs {
            guard let s = h.stringValue, s.utf8.count <= maxHashLength else {
                throw bad("hashes must be strings of at most \(maxHashLength) characters")
            }
            hashes.append(s)
        }
        guard let hash = CompoundHash(validatingPosts: posts, hashes: hashes) else {
            throw bad("must end with the empty hash")
        }
        return hash
    }
}

/// One range of an `rm` push, `{"s": start, "e": end, "m": data}` (an absent bound left
/// out): the data between `start` (exclusive) and `end` (inclusive) is now `data` (see
/// `RangeMerge`).
@_spi(HearthInternals) public struct WireRangeMerge: Sendable, Equatable {
    /// The exclusive lower bound, relative to the push's path (`nil`: unbounded).
    @_spi(HearthInternals) public var start: Path?
    /// The inclusive upper bound, relative to the push's path (`nil`: unbounded).
    @_spi(HearthInternals) public var end: Path?
    /// The range's data in export JSON, rooted at the push's path.
    @_spi(HearthInternals) public var data: JSONValue

    /// A range as given.
    @_spi(HearthInternals) public init(start: Path?, end: Path?, data: JSONValue) {
        self.start = start
        self.end = end
        self.data = data
    }

    /// The range of `merge`.
    @_spi(HearthInternals) public init(_ merge: RangeMerge) {
        self.init(start: merge.start, end: merge.end, data: merge.update.exportJSON())
    }

    var json: JSONValue {
        var members: [JSONMember] = []
        if let start { members.append(JSONMember(key: "s", value: .string(start.wireString))) }
        if let end { members.append(JSONMember(key: "e", value: .string(end.wireString))) }
        members.append(JSONMember(key: "m", value: data))
        return .object(members)
    }

    static func decode(_ value: JSONValue) throws(WireError) -> WireRangeMerge {
        guard case .object = value else { throw .badEnvelope("a range merge's ranges must be objects") }
        func bound(_ key: String) throws(WireError) -> Path? {
            guard let v = value[key], !v.isNull else { return nil }
            guard let s = v.stringValue else { throw .badEnvelope("a range's \"\(key)\" must be a path") }
            return try wirePath(s)
        }
        return WireRangeMerge(start: try bound("s"), end: try bound("e"), data: value["m"] ?? .null)
    }
}
