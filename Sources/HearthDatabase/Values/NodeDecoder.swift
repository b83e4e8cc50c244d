import Foundation
import HearthModel

/// Decodes `Decodable` values from nodes, as Firebase's `FirebaseDataDecoder` does with its
/// defaults: objects feed keyed containers, array-like children (Firebase's array heuristic,
/// gaps read as null) feed unkeyed containers, numbers decode into any integer type they fit
/// exactly and into `Float`/`Double`, `Date`, `Data`, keys and non-conforming floats per
/// ``options`` (Firebase's defaults: `Date`'s own form, base64, keys as they are, strings never
/// numbers), `URL` from a string, ``DatabaseValue`` as itself. Types are strict (a string never decodes as a
/// number). One leniency: a missing or null array, set or dictionary decodes as empty, since
/// the database stores an empty one as nothing. A `[String: V]` cannot hold two keys that
/// differ only in Unicode normalization (which the database keeps apart): decoding one from
/// such children fails, naming the keys, rather than dropping a child.
struct NodeDecoder {
    /// The strategies of a ``DatabaseDecoder``.
    struct Options {
        var key: DatabaseDecoder.KeyDecodingStrategy = .useDefaultKeys
        var date: DatabaseDecoder.DateDecodingStrategy = .deferredToDate
        var data: DatabaseDecoder.DataDecodingStrategy = .base64
        var nonConformingFloat: DatabaseDecoder.NonConformingFloatDecodingStrategy = .throw
        var userInfo: [CodingUserInfoKey: Any] = [:]
    }

    /// How values are read.
    var options = Options()

    /// `node` decoded as `T`.
    /// - Throws: ``DatabaseError/decodingFailed(_:)`` naming the coding path.
    func decode<T: Decodable>(_ type: T.Type, from node: Node) throws(DatabaseError) -> T {
        do {
            return try NodeDecodingCore(options: options).unbox(node, as: T.self, codingPath: [])
        } catch let error as DatabaseError {
            throw error
        } catch let error as DecodingError {
            throw .decodingFailed(Self.describe(error))
        } catch {
            throw .decodingFailed("\(error)")
        }
    }

    static func describe(_ error: DecodingError) -> String {
        switch error {
        case .typeMismatch(let type, let context):
            "type mismatch at \(HearthDatabase.describe(context.codingPath)): expected \(type): \(context.debugDescription)"
        case .valueNotFound(let type, let context):
            "no value at \(HearthDatabase.describe(context.codingPath)) for \(type): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            "missing key \"\(key.stringValue)\" at \(HearthDatabase.describe(context.codingPath)): \(context.debugDescription)"
        case .dataCorrupted(let context):
            "invalid data at \(HearthDatabase.describe(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            "\(error)"
        }
    }
}

/// The decoding rules, shared by every container of one decoding.
struct NodeDecodingCore {
    let options: NodeDecoder.Options

    /// `node` as `T`: primitives and Foundation types directly, everything else through
    /// `init(from:)`.
    func unbox<T: Decodable>(_ node: Node, as type: T.Type, codingPath: [any CodingKey]) throws -> T {
        if T.self == DatabaseValue.self, let value = DatabaseValue(node: node) as? T { return value }
        if node.isEmpty, let empty = (T.self as? any EmptyCollectionDecodable.Type)?.emptyCollection as? T {
            return empty
        }
        if let value = try primitive(node, as: T.self, codingPath: codingPath) { return value }
        if T.self is any StringKeyedDictionary.Type, let (a, b) = NodeDecodingCore.keysStringMerges(node) {
            // `Dictionary.init(from:)` stores by String key: one child would silently replace
            // the other.
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: codingPath,
                    debugDescription:
                        "the keys \(scalars(a)) and \(scalars(b)) are two children but one String key; decode a DatabaseValue to read both"
                ))
        }
        return try T(from: NodeDecoderImpl(core: self, node: node, codingPath: codingPath))
    }

    /// `node` as a primitive or special-cased type, or `nil` when `T` is not one.
    func primitive<T>(_ node: Node, as type: T.Type, codingPath: [any CodingKey]) throws -> T? {
        func context(_ message: String) -> DecodingError.Context {
            .init(codingPath: codingPath, debugDescription: message)
        }
        func leaf() throws -> LeafValue {
            guard let leaf = node.leafValue else {
                if node.isEmpty { throw DecodingError.valueNotFound(T.self, context("the value is null")) }
                throw DecodingError.typeMismatch(T.self, context("found an object"))
            }
            return leaf
        }
        func string() throws -> String {
            guard case .string(let s) = try leaf() else {
                throw DecodingError.typeMismatch(T.self, context("found \(kind(of: node))"))
            }
            return s
        }
        func double() throws -> Double {
            let value = try leaf()
            if case .string(let s) = value, let d = nonConforming(s) { return d }
            guard let d = value.doubleValue else {
                throw DecodingError.typeMismatch(T.self, context("found \(kind(of: node))"))
            }
            return d
        }
        func integer<I: FixedWidthInteger>(_: I.Type) throws -> I {
            let value = try leaf()
            switch value {
            case .integer(let i):
                guard let r = I(exactly: i) else {
                    throw DecodingError.dataCorrupted(context("\(i) does not fit in \(I.self)"))
                }
                return r
            case .number(let d):
                guard let r = I(exactly: d) else {
                    throw DecodingError.dataCorrupted(context("\(d) is not an integer that fits in \(I.self)"))
                }
                return r
            default:
                throw DecodingError.typeMismatch(T.self, context("found \(kind(of: node))"))
            }
        }

        let result: Any
        switch T.self {
        case is Bool.Type:
            guard case .bool(let b) = try leaf() else {
                throw DecodingError.typeMismatch(T.self, context("found \(kind(of: node))"))
            }
            result = b
        case is String.Type: result = try string()
        case is Double.Type: result = try double()
        case is Float.Type:
            let d = try double()
            // Infinities and NaN come only from the non-conforming float strategy's strings.
            guard !d.isFinite || d.magnitude <= Double(Float.greatestFiniteMagnitude) else {
                throw DecodingError.dataCorrupted(context("\(d) does not fit in Float"))
            }
            result = Float(d)
        case is Int.Type: result = try integer(Int.self)
        case is Int8.Type: result = try integer(Int8.self)
        case is Int16.Type: result = try integer(Int16.self)
        case is Int32.Type: result = try integer(Int32.self)
        case is Int64.Type: result = try integer(Int64.self)
        case is UInt.Type: result = try integer(UInt.self)
        case is UInt8.Type: result = try integer(UInt8.self)
        case is UInt16.Type: result = try integer(UInt16.self)
        case is UInt32.Type: result = try integer(UInt32.self)
        case is UInt64.Type: result = try integer(UInt64.self)
        case is Date.Type:
            switch options.date {
            case .deferredToDate: return nil
            case .secondsSince1970: result = Date(timeIntervalSince1970: try double())
            case .millisecondsSince1970: result = Date(timeIntervalSince1970: try double() / 1000)
            case .iso8601:
                let s = try string()
                guard let date = NodeEncodingCore.iso8601Formatter().date(from: s) else {
                    throw DecodingError.dataCorrupted(context("\"\(s)\" is not an ISO 8601 date"))
                }
                result = date
            case .formatted(let formatter):
                let s = try string()
                guard let date = formatter.date(from: s) else {
                    throw DecodingError.dataCorrupted(context("\"\(s)\" is not a date in the formatter's format"))
                }
                result = date
            case .custom(let decode):
                result = try decode(NodeDecoderImpl(core: self, node: node, codingPath: codingPath))
            }
        case is URL.Type:
            let s = try string()
            guard let url = URL(string: s) else {
                throw DecodingError.dataCorrupted(context("\"\(s)\" is not a valid URL"))
            }
            result = url
        case is Data.Type:
            switch options.data {
            case .deferredToData: return nil
            case .custom(let decode):
                return try decode(NodeDecoderImpl(core: self, node: node, codingPath: codingPath)) as? T
            case .base64: break
            }
            let s = try string()
            guard let data = Data(base64Encoded: s) else {
                throw DecodingError.dataCorrupted(context("the string is not valid base64"))
            }
            result = data
        case is Decimal.Type:
            let value = try leaf()
            switch value {
            case .integer(let i): result = Decimal(i)
            case .number(let d): result = Decimal(d)
            default: throw DecodingError.typeMismatch(T.self, context("found \(kind(of: node))"))
            }
        default:
            return nil
        }
        return result as? T
    }
}

/// The `Decoder` handed to `init(from:)`: reads one node.
struct NodeDecoderImpl: Decoder {
    let core: NodeDecodingCore
    let node: Node
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { core.options.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        if node.isEmpty {
            throw DecodingError.valueNotFound(
                [String: Any].self,
                .init(codingPath: codingPath, debugDescription: "expected an object but the value is null")
            )
        }
        if node.isLeaf {
            throw DecodingError.typeMismatch(
                [String: Any].self,
                .init(codingPath: codingPath, debugDescription: "expected an object but found \(kind(of: node))")
            )
        }
        return KeyedDecodingContainer(NodeKeyedDecodingContainer<Key>(core: core, node: node, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try NodeUnkeyedDecodingContainer(core: core, node: node, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        NodeSingleValueDecodingContainer(core: core, node: node, codingPath: codingPath)
    }
}

struct NodeKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let core: NodeDecodingCore
    let node: Node
    let codingPath: [any CodingKey]
    /// The children by coding key when the key strategy converts keys (`nil`: the children's
    /// own keys, compared exactly).
    let converted: [String: Node]?

    init(core: NodeDecodingCore, node: Node, codingPath: [any CodingKey]) {
        self.core = core
        self.node = node
        self.codingPath = codingPath
        self.converted = core.convertedChildren(node, codingPath: codingPath)
    }

    var allKeys: [Key] {
        if let converted { return converted.keys.compactMap { Key(stringValue: $0) } }
        return node.children.compactMap { Key(stringValue: $0.key.string) }
    }

    private func child(_ key: Key) -> Node {
        if let converted { return converted[key.stringValue] ?? .empty }
        return node.children[ChildKey(key.stringValue)] ?? .empty
    }

    func contains(_ key: Key) -> Bool { !child(key).isEmpty }

    func decodeNil(forKey key: Key) throws -> Bool { child(key).isEmpty }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let value = child(key)
        if value.isEmpty, T.self != DatabaseValue.self, !(T.self is any EmptyCollectionDecodable.Type) {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "no value for \"\(key.stringValue)\""))
        }
        return try core.unbox(value, as: T.self, codingPath: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try NodeDecoderImpl(core: core, node: child(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try NodeUnkeyedDecodingContainer(core: core, node: child(key), codingPath: codingPath + [key])
    }

    func superDecoder() throws -> any Decoder {
        NodeDecoderImpl(
            core: core, node: node.children[ChildKey("super")] ?? .empty,
            codingPath: codingPath + [NodeCodingKey.superKey])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        NodeDecoderImpl(core: core, node: child(key), codingPath: codingPath + [key])
    }
}

struct NodeUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let core: NodeDecodingCore
    let elements: [Node]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    /// The elements of an array-like node (Firebase's array heuristic; gaps are null).
    init(core: NodeDecodingCore, node: Node, codingPath: [any CodingKey]) throws {
        self.core = core
        self.codingPath = codingPath
        if node.isEmpty {
            elements = []
            return
        }
        if node.isLeaf {
            throw DecodingError.typeMismatch(
                [Any].self,
                .init(codingPath: codingPath, debugDescription: "expected an array but found \(kind(of: node))")
            )
        }
        guard let length = DatabaseValue.arrayLength(node.children) else {
            throw DecodingError.typeMismatch(
                [Any].self,
                .init(
                    codingPath: codingPath,
                    debugDescription: "expected an array but found an object whose keys are not array indices")
            )
        }
        var elements = [Node](repeating: .empty, count: length)
        for (key, child) in node.children {
            if let i = DatabaseValue.arrayIndex(key.string), i < length { elements[i] = child }
        }
        self.elements = elements
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private var currentPath: [any CodingKey] { codingPath + [NodeCodingKey(index: currentIndex)] }

    private func current<T>(_ type: T.Type) throws -> Node {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type, .init(codingPath: currentPath, debugDescription: "the array has no more elements"))
        }
        return elements[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        let isNull = try current(Never.self).isEmpty
        if isNull { currentIndex += 1 }
        return isNull
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let value = try core.unbox(try current(T.self), as: T.self, codingPath: currentPath)
        currentIndex += 1
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let container = try NodeDecoderImpl(core: core, node: try current(NestedKey.self), codingPath: currentPath)
            .container(keyedBy: type)
        currentIndex += 1
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let container = try NodeUnkeyedDecodingContainer(
            core: core, node: try current([Any].self), codingPath: currentPath)
        currentIndex += 1
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let decoder = NodeDecoderImpl(core: core, node: try current(Any.self), codingPath: currentPath)
        currentIndex += 1
        return decoder
    }
}

struct NodeSingleValueDecodingContainer: SingleValueDecodingContainer {
    let core: NodeDecodingCore
    let node: Node
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { node.isEmpty }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try core.unbox(node, as: T.self, codingPath: codingPath)
    }
}
