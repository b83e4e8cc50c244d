import Foundation
import HearthModel

// Pieces shared by NodeEncoder and NodeDecoder.

/// A coding key for array indices and dictionary keys that the coded type did not define.
struct NodeCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }

    init(index: Int) { self.init(intValue: index) }

    /// The key `super` that `superEncoder()` / `superDecoder()` use, as Foundation's coders do.
    static let superKey = NodeCodingKey(stringValue: "super")
}

/// A coding path as a slash-separated string for error messages (`/` for the top level).
func describe(_ codingPath: [any CodingKey]) -> String {
    codingPath.isEmpty ? "/" : codingPath.map(\.stringValue).joined(separator: "/")
}

/// Collections that a missing or null node decodes as empty: Firebase stores an empty array or
/// dictionary as nothing at all, so a struct written with `tags: []` must read back.
protocol EmptyCollectionDecodable {
    /// The empty collection.
    static var emptyCollection: Self { get }
}

extension Array: EmptyCollectionDecodable where Element: Decodable {
    static var emptyCollection: [Element] { [] }
}

extension Dictionary: EmptyCollectionDecodable where Key: Decodable, Value: Decodable {
    static var emptyCollection: [Key: Value] { [:] }
}

extension Set: EmptyCollectionDecodable where Element: Decodable {
    static var emptyCollection: Set<Element> { [] }
}

extension NodeDecodingCore {
    /// Two distinct keys of `node`'s children that Swift's `String ==` finds equal (they differ
    /// only in Unicode normalization), or `nil` when there are none.
    static func keysStringMerges(_ node: Node) -> (ChildKey, ChildKey)? {
        guard node.childCount > 1 else { return nil }
        var seen: [String: ChildKey] = [:]
        seen.reserveCapacity(node.childCount)
        for (key, _) in node.children {
            if let other = seen.updateValue(key, forKey: key.string) { return (other, key) }
        }
        return nil
    }
}

/// Dictionaries keyed by `String`: `init(from:)` keeps one value per `String`, so keys that
/// differ only in Unicode normalization cannot all be decoded into one.
protocol StringKeyedDictionary {}

extension Dictionary: StringKeyedDictionary where Key == String {}

/// A key quoted with its Unicode scalars, which tell apart keys that print alike.
func scalars(_ key: ChildKey) -> String {
    let codes = key.string.unicodeScalars.map { scalar in
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
    return "\"\(key.string)\" (\(codes.joined(separator: " ")))"
}

/// How a node is described in decoding errors.
func kind(of node: Node) -> String {
    switch node.leafValue {
    case nil: node.isEmpty ? "null" : "an object"
    case .bool?: "a boolean"
    case .number?, .integer?: "a number"
    case .string?: "a string"
    case .serverValue?: "an unresolved server value"
    }
}
