/// The name of one child of a node: one segment of a ``Path``.
///
/// Keys compare **exactly as the Firebase Realtime Database compares them** (`nameCompare`
/// in the JavaScript SDK, `FUtilities compareKey:toKey:` on iOS):
///
/// 1. keys that parse as 32-bit signed integers (an optional `-`, then decimal digits, leading
///    zeros allowed, value within `Int32`) come first, by numeric value; equal values are
///    ordered shorter string first (`"7"` < `"07"`, `"0"` < `"-0"`);
/// 2. every other key follows, ordered by its **UTF-16 code units** (JavaScript `<`).
///
/// Equality is exact: two keys are equal only when their code units are equal. This differs
/// from Swift's `String ==`, which treats canonically-equivalent strings (precomposed `é` and
/// `e` + combining acute) as equal while Firebase treats them as two different keys.
///
/// The sentinels `[MIN_NAME]` and `[MAX_NAME]` used by query bounds are not keys; see
/// ``BoundKey``.
public struct ChildKey: Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The key's text, exactly as given.
    public let string: String

    /// The key's value when it is integer-like (see the type's documentation), else `nil`.
    public let integerValue: Int32?

    /// Creates a key without validating it. Use ``Path`` parsing or ``ChildKey/validated(_:)``
    /// for input that may contain forbidden characters.
    public init(_ string: String) {
        var s = string
        s.makeContiguousUTF8()
        self.string = s
        self.integerValue = s.withUTF8 { ChildKey.parseInteger($0) }
    }

    /// Creates a key from a string literal (unvalidated; for tests and constants).
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// Creates a key after checking it against Firebase's key rules.
    ///
    /// - Throws: ``PathError`` naming the key when it is empty, longer than
    ///   ``ChildKey/maxUTF8Length`` bytes, or contains `.` `#` `$` `[` `]` `/` or an ASCII
    ///   control character.
    public static func validated(_ string: String) throws(PathError) -> ChildKey {
        try validate(string)
        return ChildKey(string)
    }

    /// The most UTF-8 bytes a key may hold (Firebase's documented limit).
    public static let maxUTF8Length = 768

    /// Checks a key against Firebase's rules. See ``validated(_:)``.
    public static func validate(_ string: String) throws(PathError) {
        if string.isEmpty { throw .emptyKey }
        // Native strings (every key ChildKey makes): one scan of the contiguous bytes against
        // a bit mask. Iterating `String.UTF8View` and switching on each byte was 5.7% of the
        // instructions of applying the fill's server events (every child key of every write
        // is checked).
        let scanned = string.utf8.withContiguousStorageIfAvailable { bytes -> UInt8? in
            for byte in bytes where isForbidden(byte) { return byte }
            return nil
        }
        if let scanned {
            if let byte = scanned {
                throw .invalidCharacter(key: string, character: Character(Unicode.Scalar(byte)))
            }
            if string.utf8.count > maxUTF8Length { throw .keyTooLong(key: string, utf8Length: string.utf8.count) }
            return
        }
        var count = 0
        for byte in string.utf8 {
            count += 1
            if isForbidden(byte) { throw .invalidCharacter(key: string, character: Character(Unicode.Scalar(byte))) }
        }
        if count > maxUTF8Length { throw .keyTooLong(key: string, utf8Length: count) }
    }

    /// Bytes a key may not hold, as bits: this mask for 0x00…0x3F (the controls 0x00…0x1F,
    /// `#` `$` `.` `/`), ``forbiddenMask1`` for 0x40…0x7F (`[` `]` and DEL). Every byte from
    /// 0x80 up is part of a multi-byte character, which keys may hold.
    private static let forbiddenMask0: UInt64 =
        0xFFFF_FFFF | 1 << 0x23 | 1 << 0x24 | 1 << 0x2E | 1 << 0x2F
    /// See ``forbiddenMask0``.
    private static let forbiddenMask1: UInt64 = 1 << (0x5B - 0x40) | 1 << (0x5D - 0x40) | 1 << (0x7F - 0x40)

    /// Whether a key may not hold `byte` (the rule of ``validate(_:)``).
    @inline(__always)
    static func isForbidden(_ byte: UInt8) -> Bool {
        if byte < 0x40 { return forbiddenMask0 >> byte & 1 != 0 }
        if byte < 0x80 { return forbiddenMask1 >> (byte - 0x40) & 1 != 0 }
        return false
    }

    /// Whether this key is one of the metadata names Firebase gives a meaning to
    /// (`.priority`, `.value`, `.sv`, `.info`), which are never ordinary children.
    public var isMetadata: Bool { string.utf8.first == UInt8(ascii: ".") }

    public var description: String { string }

    /// Parses `^-?[0-9]+$` whose value fits in `Int32` and which has at most 10 significant
    /// digits after any leading zeros (the JavaScript SDK's `^-?(0*)\d{1,10}$` test).
    ///
    /// Over the key's contiguous UTF-8 bytes: every key made is parsed once, and decoding a
    /// node makes one per child — iterating `String.UTF8View`'s slices costs ~10% of decoding
    /// the pending writes replayed at open. Most keys that are not integers fail at their first
    /// or second byte (push ids start with `-` and a letter).
    static func parseInteger(_ utf8: UnsafeBufferPointer<UInt8>) -> Int32? {
        var i = 0
        let n = utf8.count
        var negative = false
        if i < n, utf8[i] == UInt8(ascii: "-") {
            negative = true
            i = 1
        }
        guard i < n else { return nil }
        var value: Int64 = 0
        var significant = 0
        while i < n {
            let digit = utf8[i] &- UInt8(ascii: "0")
            guard digit <= 9 else { return nil }
            if significant > 0 || digit != 0 { significant += 1 }
            if significant > 10 { return nil }
            value = value * 10 + Int64(digit)
            i += 1
        }
        if negative { value = -value }
        guard value >= Int64(Int32.min), value <= Int64(Int32.max) else { return nil }
        return Int32(value)
    }
}

extension ChildKey: Hashable {
    public static func == (lhs: ChildKey, rhs: ChildKey) -> Bool {
        lhs.string.hasSameUTF8(as: rhs.string)
    }

    public func hash(into hasher: inout Hasher) {
        var s = string
        s.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

extension ChildKey: Comparable {
    public static func < (lhs: ChildKey, rhs: ChildKey) -> Bool {
        ChildKey.compare(lhs, rhs) < 0
    }

    /// Firebase's key order as a three-way comparison: negative, zero or positive.
    ///
    /// Zero only for equal keys. Firebase's own comparison answers zero for distinct
    /// integer-like keys of equal value and equal length (`"-0"` and `"00"`); Hearth breaks
    /// that tie by code units so that the order stays total, which a sorted map relies on.
    public static func compare(_ a: ChildKey, _ b: ChildKey) -> Int {
        switch (a.integerValue, b.integerValue) {
        case let (x?, y?):
            if x != y { return x < y ? -1 : 1 }
            let la = a.string.utf8.count, lb = b.string.utf8.count
            if la != lb { return la < lb ? -1 : 1 }
            return compareUTF16(a.string, b.string)
        case (.some, nil):
            return -1
        case (nil, .some):
            return 1
        case (nil, nil):
            return compareUTF16(a.string, b.string)
        }
    }

    /// Compares two strings by UTF-16 code units, as JavaScript's `<` does, without
    /// transcoding: UTF-8 byte order equals code-point order, which differs from UTF-16
    /// order only between U+E000…U+FFFF and supplementary code points (which UTF-16 encodes
    /// as surrogates D800…DFFF, below E000). So compare bytes, and at the first difference
    /// decode both code points and compare them with that one correction.
    public static func compareUTF16(_ a: String, _ b: String) -> Int {
        // Native strings are contiguous UTF-8 (ChildKey makes sure), so this is the fast path.
        if let r = a.utf8.withContiguousStorageIfAvailable({ pa in
            b.utf8.withContiguousStorageIfAvailable { pb in compareUTF16(pa, pb) }
        }), let r {
            return r
        }
        var a = a, b = b
        return a.withUTF8 { pa in
            b.withUTF8 { pb in compareUTF16(pa, pb) }
        }
    }

    static func compareUTF16(_ pa: UnsafeBufferPointer<UInt8>, _ pb: UnsafeBufferPointer<UInt8>) -> Int {
        let n = Swift.min(pa.count, pb.count)
        var i = 0
        while i < n && pa[i] == pb[i] { i += 1 }
        if i == n {
            return pa.count == pb.count ? 0 : (pa.count < pb.count ? -1 : 1)
        }
        // Both differ at byte i. Back up to the start of the code point containing i
        // (continuation bytes are 10xxxxxx); the prefix before it is shared.
        var start = i
        while start > 0 && (pa[start] & 0xC0) == 0x80 { start -= 1 }
        let ca = decodeScalar(pa, at: start)
        let cb = decodeScalar(pb, at: start)
        let ka = utf16SortWeight(ca), kb = utf16SortWeight(cb)
        if ka != kb { return ka < kb ? -1 : 1 }
        // Same code point cannot differ in bytes for valid UTF-8; fall back to bytes.
        return pa[i] < pb[i] ? -1 : 1
    }

    /// Maps a code point to a weight whose order is UTF-16 code-unit order.
    @inline(__always)
    static func utf16SortWeight(_ c: UInt32) -> UInt32 {
        // Supplementary code points (≥ U+10000) are surrogate pairs starting D800…DBFF in
        // UTF-16 and so sort before U+E000…U+FFFF; lift that range above all of Unicode.
        (c >= 0xE000 && c <= 0xFFFF) ? c + 0x110000 : c
    }

    @inline(__always)
    static func decodeScalar(_ p: UnsafeBufferPointer<UInt8>, at i: Int) -> UInt32 {
        let b0 = UInt32(p[i])
        if b0 < 0x80 { return b0 }
        func cont(_ k: Int) -> UInt32 { i + k < p.count ? UInt32(p[i + k] & 0x3F) : 0 }
        if b0 < 0xE0 { return ((b0 & 0x1F) << 6) | cont(1) }
        if b0 < 0xF0 { return ((b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2) }
        return ((b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3)
    }
}

/// A key in a query bound: a real key, or one of Firebase's sentinels that sort before
/// (`[MIN_NAME]`) or after (`[MAX_NAME]`) every key.
public enum BoundKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// `[MIN_NAME]`: before every key.
    case min
    /// An ordinary key.
    case key(ChildKey)
    /// `[MAX_NAME]`: after every key.
    case max

    /// The sentinel's wire spelling, `[MIN_NAME]`.
    public static let minName = "[MIN_NAME]"
    /// The sentinel's wire spelling, `[MAX_NAME]`.
    public static let maxName = "[MAX_NAME]"

    /// Reads a bound key from its wire spelling, mapping the sentinel strings.
    public init(wire: String) {
        switch wire {
        case BoundKey.minName: self = .min
        case BoundKey.maxName: self = .max
        default: self = .key(ChildKey(wire))
        }
    }

    /// The wire spelling: the key, or `[MIN_NAME]` / `[MAX_NAME]`.
    public var wire: String {
        switch self {
        case .min: BoundKey.minName
        case .key(let k): k.string
        case .max: BoundKey.maxName
        }
    }

    public var description: String { wire }

    /// Three-way comparison against a real key.
    public func compare(to key: ChildKey) -> Int {
        switch self {
        case .min: -1
        case .max: 1
        case .key(let k): ChildKey.compare(k, key)
        }
    }

    public static func < (lhs: BoundKey, rhs: BoundKey) -> Bool {
        switch (lhs, rhs) {
        case (.min, .min), (.max, .max): false
        case (.min, _), (_, .max): true
        case (_, .min), (.max, _): false
        case let (.key(a), .key(b)): a < b
        }
    }
}
