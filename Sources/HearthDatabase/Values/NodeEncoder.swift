import Foundation
import HearthModel

/// Encodes `Encodable` values as database values, as Firebase's `FirebaseDataEncoder` does:
/// keyed containers become objects, unkeyed containers arrays, `Optional` `nil` members are left
/// out, `Date`, `Data`, keys and NaN or infinite floats per ``options`` (Firebase's defaults:
/// `Date`'s own form, base64, keys as they are, refused), `URL` as its absolute string,
/// `Decimal` as a number, ``DatabaseValue`` as itself. Integers must fit in `Int64`.
struct NodeEncoder {
    /// The strategies of a ``DatabaseEncoder``.
    struct Options {
        var key: DatabaseEncoder.KeyEncodingStrategy = .useDefaultKeys
        var date: DatabaseEncoder.DateEncodingStrategy = .deferredToDate
        var data: DatabaseEncoder.DataEncodingStrategy = .base64
        var nonConformingFloat: DatabaseEncoder.NonConformingFloatEncodingStrategy = .throw
        var userInfo: [CodingUserInfoKey: Any] = [:]
    }

    /// How values are written.
    var options = Options()

    /// `value` as a database value (not yet validated as a write: see ``encode(_:at:)``).
    /// - Throws: ``DatabaseError/invalidValue(_:)`` naming the coding path.
    func encodeValue(_ value: some Encodable) throws(DatabaseError) -> DatabaseValue {
        let slot = EncodingSlot()
        do {
            try NodeEncodingCore(options: options).box(value, into: slot, codingPath: [])
        } catch let error as DatabaseError {
            throw error
        } catch let error as EncodingError {
            throw .invalidValue(Self.describe(error))
        } catch {
            throw .invalidValue("\(error)")
        }
        return slot.resolved
    }

    /// `value` as the node it denotes when written at `path`, validated as every write is
    /// (see ``node(from:at:)``).
    func encode(_ value: some Encodable, at path: Path) throws(DatabaseError) -> Node {
        try encodeValue(value).node(at: path)
    }

    static func describe(_ error: EncodingError) -> String {
        switch error {
        case .invalidValue(let value, let context):
            "cannot encode \(value) at \(HearthDatabase.describe(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            "\(error)"
        }
    }
}

/// Where an encoded value goes: filled in by exactly one container (or left unset, read as
/// null).
final class EncodingSlot {
    enum Content {
        case unset
        case value(DatabaseValue)
        case object(ObjectBox)
        case array(ArrayBox)
    }

    var content: Content = .unset

    /// The finished value.
    var resolved: DatabaseValue {
        switch content {
        case .unset: .null
        case .value(let v): v
        case .object(let box): .object(DatabaseValue.Object(members: box.members.mapValues(\.resolved)))
        case .array(let box): .array(box.elements.map(\.resolved))
        }
    }

    /// The object being filled here (replacing anything else written before).
    func object() -> ObjectBox {
        if case .object(let box) = content { return box }
        let box = ObjectBox()
        content = .object(box)
        return box
    }

    /// The array being filled here (replacing anything else written before).
    func array() -> ArrayBox {
        if case .array(let box) = content { return box }
        let box = ArrayBox()
        content = .array(box)
        return box
    }
}

/// An object under construction, keyed exactly as the database keys children (coding keys
/// that differ only in Unicode normalization are two members).
final class ObjectBox {
    var members: [ChildKey: EncodingSlot] = [:]

    /// The slot for `key`, created empty on first use.
    func slot(_ key: String) -> EncodingSlot {
        let key = ChildKey(key)
        if let slot = members[key] { return slot }
        let slot = EncodingSlot()
        members[key] = slot
        return slot
    }
}

/// An array under construction.
final class ArrayBox {
    var elements: [EncodingSlot] = []

    /// A new slot at the end.
    func append() -> EncodingSlot {
        let slot = EncodingSlot()
        elements.append(slot)
        return slot
    }
}

/// The encoding rules, shared by every container of one encoding.
struct NodeEncodingCore {
    let options: NodeEncoder.Options

    /// Encodes `value` into `slot`: primitives and Foundation types directly, everything else
    /// through its `encode(to:)`.
    func box<T: Encodable>(_ value: T, into slot: EncodingSlot, codingPath: [any CodingKey]) throws {
        if try boxStrategic(value, into: slot, codingPath: codingPath) { return }
        if let primitive = try primitive(value, codingPath: codingPath) {
            slot.content = .value(primitive)
            return
        }
        try value.encode(to: NodeEncoderImpl(core: self, slot: slot, codingPath: codingPath))
    }

    /// The database value of a primitive or special-cased type, or `nil` for other types.
    func primitive(_ value: Any, codingPath: [any CodingKey]) throws -> DatabaseValue? {
        func outOfRange(_ v: Any) -> EncodingError {
            .invalidValue(
                v, .init(codingPath: codingPath, debugDescription: "\(v) does not fit in a 64-bit signed integer"))
        }
        switch value {
        case let v as DatabaseValue: return v
        case let v as Bool: return .bool(v)
        case let v as String: return .string(v)
        case let v as Double:
            guard v.isFinite else { return try nonConforming(v, codingPath: codingPath) }
            return .double(v)
        case let v as Float:
            guard v.isFinite else { return try nonConforming(Double(v), codingPath: codingPath) }
            // Through the shortest decimal text, so 0.1 as Float is stored as 0.1.
            return .double(Double(String(v)) ?? Double(v))
        case let v as Int: return .int(Int64(v))
        case let v as Int8: return .int(Int64(v))
        case let v as Int16: return .int(Int64(v))
        case let v as Int32: return .int(Int64(v))
        case let v as Int64: return .int(v)
        case let v as UInt:
            guard let i = Int64(exactly: v) else { throw outOfRange(v) }
            return .int(i)
        case let v as UInt8: return .int(Int64(v))
        case let v as UInt16: return .int(Int64(v))
        case let v as UInt32: return .int(Int64(v))
        case let v as UInt64:
            guard let i = Int64(exactly: v) else { throw outOfRange(v) }
            return .int(i)
        case let v as URL: return .string(v.absoluteString)
        case let v as Decimal:
            let d = NSDecimalNumber(decimal: v).doubleValue
            guard d.isFinite else { return try nonConforming(d, codingPath: codingPath) }
            return .number(d)
        default: return nil
        }
    }
}

/// The `Encoder` handed to `encode(to:)`: writes into one slot.
struct NodeEncoderImpl: Encoder {
    let core: NodeEncodingCore
    let slot: EncodingSlot
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { core.options.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(NodeKeyedEncodingContainer<Key>(core: core, box: slot.object(), codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        NodeUnkeyedEncodingContainer(core: core, box: slot.array(), codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        NodeSingleValueEncodingContainer(core: core, slot: slot, codingPath: codingPath)
    }
}

struct NodeKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let core: NodeEncodingCore
    let box: ObjectBox
    let codingPath: [any CodingKey]

    /// The database key `key` is written under.
    private func name(_ key: Key) -> String { core.databaseKey(key, codingPath: codingPath) }

    mutating func encodeNil(forKey key: Key) throws {
        box.slot(name(key)).content = .value(.null)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try core.box(value, into: box.slot(name(key)), codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(
            NodeKeyedEncodingContainer<NestedKey>(
                core: core, box: box.slot(name(key)).object(), codingPath: codingPath + [key])
        )
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        NodeUnkeyedEncodingContainer(core: core, box: box.slot(name(key)).array(), codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        NodeEncoderImpl(
            core: core, slot: box.slot(NodeCodingKey.superKey.stringValue),
            codingPath: codingPath + [NodeCodingKey.superKey])
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        NodeEncoderImpl(core: core, slot: box.slot(name(key)), codingPath: codingPath + [key])
    }
}

struct NodeUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let core: NodeEncodingCore
    let box: ArrayBox
    let codingPath: [any CodingKey]
    var count: Int { box.elements.count }

    private var nextKey: NodeCodingKey { NodeCodingKey(index: box.elements.count) }

    mutating func encodeNil() throws {
        box.append().content = .value(.null)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let path = codingPath + [nextKey]
        try core.box(value, into: box.append(), codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let path = codingPath + [nextKey]
        return KeyedEncodingContainer(
            NodeKeyedEncodingContainer<NestedKey>(core: core, box: box.append().object(), codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = codingPath + [nextKey]
        return NodeUnkeyedEncodingContainer(core: core, box: box.append().array(), codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let path = codingPath + [nextKey]
        return NodeEncoderImpl(core: core, slot: box.append(), codingPath: path)
    }
}

struct NodeSingleValueEncodingContainer: SingleValueEncodingContainer {
    let core: NodeEncodingCore
    let slot: EncodingSlot
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws {
        slot.content = .value(.null)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try core.box(value, into: slot, codingPath: codingPath)
    }
}
