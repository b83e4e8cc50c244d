import Foundation
import HearthModel

// The parts of encoding that a Database.Encoder's strategies decide.

extension NodeEncodingCore {
    /// Encodes `value` into `slot` when it is a `Date` or `Data` (whose form the strategies
    /// choose); `false` for any other type.
    func boxStrategic<T: Encodable>(_ value: T, into slot: EncodingSlot, codingPath: [any CodingKey]) throws -> Bool {
        let encoder = NodeEncoderImpl(core: self, slot: slot, codingPath: codingPath)
        if let date = value as? Date {
            switch options.date {
            case .deferredToDate: try date.encode(to: encoder)
            case .secondsSince1970: slot.content = .value(.number(date.timeIntervalSince1970))
            case .millisecondsSince1970: slot.content = .value(.number((date.timeIntervalSince1970 * 1000).rounded()))
            case .iso8601: slot.content = .value(.string(Self.iso8601Formatter().string(from: date)))
            case .formatted(let formatter): slot.content = .value(.string(formatter.string(from: date)))
            case .custom(let encode): try encode(date, encoder)
            }
            return true
        }
        if let data = value as? Data {
            switch options.data {
            case .deferredToData: try data.encode(to: encoder)
            case .base64: slot.content = .value(.string(data.base64EncodedString()))
            case .custom(let encode): try encode(data, encoder)
            }
            return true
        }
        return false
    }

    /// A NaN or infinite `value`, as the non-conforming float strategy writes it.
    func nonConforming(_ value: Double, codingPath: [any CodingKey]) throws -> DatabaseValue {
        guard case .convertToString(let positive, let negative, let nan) = options.nonConformingFloat else {
            throw EncodingError.invalidValue(
                value,
                .init(
                    codingPath: codingPath,
                    debugDescription:
                        "the database cannot store \(value) (set the encoder's nonConformingFloatEncodingStrategy to write it as a string)"
                ))
        }
        return .string(value.isNaN ? nan : value > 0 ? positive : negative)
    }

    /// The database key a coding key of a container at `codingPath` is written under.
    func databaseKey(_ key: some CodingKey, codingPath: [any CodingKey]) -> String {
        switch options.key {
        case .useDefaultKeys: key.stringValue
        case .convertToSnakeCase: CodingKeyCase.snakeCase(key.stringValue)
        case .custom(let convert): convert(codingPath + [key]).stringValue
        }
    }

    /// The formatter of the `.iso8601` strategies (internet date-time with time zone, as
    /// Foundation's JSON coders use).
    static func iso8601Formatter() -> ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = .withInternetDateTime
        return formatter
    }
}

/// Key case conversions of the key strategies, by Foundation's JSON coders' rules.
enum CodingKeyCase {
    /// camelCase as snake_case: an underscore before each word (an uppercase letter after a
    /// lowercase letter or digit, or the last of a run of capitals followed by a lowercase
    /// letter), everything lowercased: `myURLValue` is `my_url_value`.
    static func snakeCase(_ key: String) -> String {
        let chars = Array(key)
        var out = ""
        for (i, c) in chars.enumerated() {
            guard c.isUppercase else {
                out.append(c)
                continue
            }
            if i > 0 {
                let previous = chars[i - 1]
                let startsWord =
                    (!previous.isUppercase && previous != "_")
                    || (previous.isUppercase && i + 1 < chars.count && chars[i + 1].isLowercase)
                if startsWord { out.append("_") }
            }
            out += c.lowercased()
        }
        return out
    }

    /// snake_case as camelCase: leading and trailing underscores kept, the words between
    /// joined, the first lowercased and the others capitalized: `my_url_value` is `myUrlValue`.
    static func camelCase(_ key: String) -> String {
        guard let first = key.firstIndex(where: { $0 != "_" }) else { return key }
        guard let last = key.lastIndex(where: { $0 != "_" }) else { return key }
        let core = key[first...last]
        let words = core.split(separator: "_")
        guard words.count > 1 else { return key }
        let joined = ([words[0].lowercased()] + words.dropFirst().map { $0.capitalized }).joined()
        return String(key[..<first]) + joined + String(key[key.index(after: last)...])
    }
}

// The parts of decoding that a Database.Decoder's strategies decide.

extension NodeDecodingCore {
    /// The number a string stands for under the non-conforming float strategy, or `nil`.
    func nonConforming(_ s: String) -> Double? {
        guard case .convertFromString(let positive, let negative, let nan) = options.nonConformingFloat else {
            return nil
        }
        switch s {
        case positive: return .infinity
        case negative: return -.infinity
        case nan: return .nan
        default: return nil
        }
    }

    /// `node`'s children by the coding key each matches under the key strategy, or `nil` when
    /// keys are used as they are. Two children converting to one key keep the later in key
    /// order, as Foundation's JSON decoder keeps one.
    func convertedChildren(_ node: Node, codingPath: [any CodingKey]) -> [String: Node]? {
        let convert: (String) -> String
        switch options.key {
        case .useDefaultKeys: return nil
        case .convertFromSnakeCase: convert = CodingKeyCase.camelCase
        case .custom(let custom):
            convert = { custom(codingPath + [NodeCodingKey(stringValue: $0)]).stringValue }
        }
        var children: [String: Node] = [:]
        for (key, child) in node.children { children[convert(key.string)] = child }
        return children
    }
}
