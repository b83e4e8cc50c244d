/// A location in the database tree: a sequence of ``ChildKey``s from the root.
///
/// Paths print slash-separated without a leading slash (`a/b`); the root prints as `/`.
/// Parsing collapses empty segments, so `/a//b/` is `a/b`.
public struct Path: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The keys from the root down.
    public let keys: [ChildKey]

    /// The deepest a path may go (Firebase: 32 levels of child nodes).
    public static let maxDepth = 32

    /// The root location.
    public static let root = Path(keys: [])

    /// Creates a path from keys that are already known to be valid.
    public init(keys: [ChildKey]) {
        self.keys = keys
    }

    /// Parses and validates a slash-separated path.
    ///
    /// Each segment must be a valid key (see ``ChildKey/validate(_:)``), with two exceptions
    /// Firebase makes: `.info` may be the first segment (the read-only connection-state
    /// tree) and `.priority` may be the last (a node's priority). The depth may not exceed
    /// ``maxDepth``.
    ///
    /// - Throws: ``PathError`` naming the offending key and the path.
    public init(validating string: String) throws(PathError) {
        let segments = Path.segments(of: string)
        try Path.validate(segments, printed: string)
        self.keys = segments.map { ChildKey($0) }
        assert(keys.count <= Path.maxDepth, "a validated path is at most maxDepth keys deep")
    }

    /// Checks a path built from keys (``init(keys:)`` or a literal) against the rules of
    /// ``init(validating:)``.
    /// - Throws: ``PathError`` naming the offending key and the path.
    public func validate() throws(PathError) {
        // The printed path is built only for an error: every server event and write is
        // validated, and joining its keys cost more than checking them.
        // Over the keys themselves, not a lazy map of their strings: that copied each string
        // (a retain and release of its storage), a third of checking a server event's paths.
        if keys.count > Path.maxDepth { throw .tooDeep(path: description, depth: keys.count) }
        for i in keys.indices {
            try Path.validate(segment: keys[i].string, at: i, of: keys.count, printed: description)
        }
    }

    private static func validate(
        _ segments: some RandomAccessCollection<String>, printed: @autoclosure () -> String
    ) throws(PathError) {
        if segments.count > Path.maxDepth {
            throw .tooDeep(path: printed(), depth: segments.count)
        }
        for (i, segment) in segments.enumerated() {
            try validate(segment: segment, at: i, of: segments.count, printed: printed())
        }
    }

    /// Checks segment `i` of a path of `count` segments.
    private static func validate(
        segment: String, at i: Int, of count: Int, printed: @autoclosure () -> String
    ) throws(PathError) {
        // Only a key starting with "." can be a metadata name: the string comparisons are
        // skipped for every ordinary key.
        if segment.utf8.first == UInt8(ascii: ".") {
            if (segment == ".info" && i == 0) || (segment == ".priority" && i == count - 1) {
                // Allowed: the read-only `.info` tree, or the priority of the parent.
                return
            }
            if segment == ".priority" || segment == ".info" {
                throw .misplacedMetadataKey(key: segment, path: printed())
            }
        }
        do {
            try ChildKey.validate(segment)
        } catch {
            throw error.inPath(printed())
        }
    }

    /// Parses a path literal without validating its keys: literals are trusted constants.
    /// (Note that `Path("a/b")` with a literal argument is this initializer, by Swift's
    /// literal coercion; use ``init(validating:)`` for anything that comes from outside.)
    public init(stringLiteral value: String) {
        self.keys = Path.segments(of: value).map { ChildKey($0) }
    }

    /// The non-empty segments of `string` between slashes. Split on the scalar U+002F itself,
    /// as Firebase's SDKs split by code unit — not on Swift's characters: a slash followed by a
    /// combining mark (`"/\u{34C}"`) is one grapheme cluster, so a split on `Character("/")` kept
    /// it inside a key, and `a` + that key's path did not read back.
    package static func segments(of string: String) -> [String] {
        let segments = string.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true)
            .map { String(decoding: $0, as: UTF8.self) }
        assert(
            segments.allSatisfy { !$0.isEmpty && !$0.contains("/") },
            "a parsed path is normalised: no empty segment, no slash in a key")
        return segments
    }

    /// `a/b/c`, or `/` for the root.
    public var description: String {
        keys.isEmpty ? "/" : keys.map(\.string).joined(separator: "/")
    }

    /// Whether this is the root.
    public var isRoot: Bool { keys.isEmpty }

    /// The number of keys.
    public var depth: Int { keys.count }

    /// The first key, or `nil` at the root.
    public var front: ChildKey? { keys.first }

    /// The last key, or `nil` at the root.
    public var back: ChildKey? { keys.last }

    /// The path without its first key (the root stays the root).
    public var popFront: Path { Path(keys: Array(keys.dropFirst())) }

    /// The parent location, or `nil` at the root.
    public var parent: Path? { keys.isEmpty ? nil : Path(keys: Array(keys.dropLast())) }

    /// The child location under `key`.
    public func child(_ key: ChildKey) -> Path { Path(keys: keys + [key]) }

    /// This path followed by `other`.
    public func appending(_ other: Path) -> Path { Path(keys: keys + other.keys) }

    /// Whether `other` is this location or a location under it.
    public func contains(_ other: Path) -> Bool {
        guard other.keys.count >= keys.count else { return false }
        for i in keys.indices where keys[i] != other.keys[i] { return false }
        return true
    }

    /// The path of `other` relative to this one, when this one contains it; else `nil`.
    public func relativePath(to other: Path) -> Path? {
        guard contains(other) else { return nil }
        let relative = Path(keys: Array(other.keys[keys.count...]))
        assert(appending(relative) == other, "a path followed by the relative path of one it contains is that path")
        return relative
    }

    /// Whether this path lies under `.info`, which clients may read but never write.
    public var isInfo: Bool { keys.first?.string == ".info" }

    /// Whether this path ends in `.priority`.
    public var isPriority: Bool { keys.last?.string == ".priority" }

    /// Checks that the path may be written: not under `.info`.
    /// - Throws: ``PathError/notWritable(path:)``.
    public func validateWritable() throws(PathError) {
        if isInfo { throw .notWritable(path: description) }
    }
}

extension Path: Comparable {
    /// Orders paths key by key in Firebase key order; a path sorts before its descendants.
    public static func < (lhs: Path, rhs: Path) -> Bool {
        for (a, b) in zip(lhs.keys, rhs.keys) where a != b { return a < b }
        return lhs.keys.count < rhs.keys.count
    }
}

/// A key or path that breaks Firebase's rules. Every case names the offending key or path.
public enum PathError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A key was the empty string.
    case emptyKey
    /// A key holds `.` `#` `$` `[` `]` `/` or an ASCII control character.
    case invalidCharacter(key: String, character: Character, path: String? = nil)
    /// A key is longer than ``ChildKey/maxUTF8Length`` bytes of UTF-8.
    case keyTooLong(key: String, utf8Length: Int, path: String? = nil)
    /// A path is deeper than ``Path/maxDepth``.
    case tooDeep(path: String, depth: Int)
    /// `.priority` not at the end of a path, or `.info` not at its start.
    case misplacedMetadataKey(key: String, path: String)
    /// A write addressed the read-only `.info` tree.
    case notWritable(path: String)

    func inPath(_ path: String) -> PathError {
        switch self {
        case let .invalidCharacter(key, character, _): .invalidCharacter(key: key, character: character, path: path)
        case let .keyTooLong(key, length, _): .keyTooLong(key: key, utf8Length: length, path: path)
        default: self
        }
    }

    public var description: String {
        func at(_ path: String?) -> String { path.map { " in path \"\($0)\"" } ?? "" }
        switch self {
        case .emptyKey:
            return "invalid key: a key may not be empty"
        case let .invalidCharacter(key, character, path):
            let shown =
                character.unicodeScalars.first.map { $0.value < 0x20 || $0.value == 0x7F } == true
                ? "U+\(String(character.unicodeScalars.first!.value, radix: 16, uppercase: true))"
                : "'\(character)'"
            return
                "invalid key \"\(key)\"\(at(path)): keys may not contain . # $ [ ] / or control characters (found \(shown))"
        case let .keyTooLong(key, length, path):
            return
                "invalid key \"\(key.prefix(40))…\"\(at(path)): \(length) UTF-8 bytes, at most \(ChildKey.maxUTF8Length) allowed"
        case let .tooDeep(path, depth):
            return "invalid path \"\(path)\": \(depth) levels deep, at most \(Path.maxDepth) allowed"
        case let .misplacedMetadataKey(key, path):
            return "invalid path \"\(path)\": \"\(key)\" may only appear \(key == ".info" ? "first" : "last")"
        case let .notWritable(path):
            return "path \"\(path)\" is under .info and cannot be written"
        }
    }
}
