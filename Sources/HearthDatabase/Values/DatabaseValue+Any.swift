import Foundation

// Firebase's untyped values (`Any?`) read as typed ones, by the rules of Firebase's
// `FSnapshotUtilities nodeFrom:` and `FValidation`: the conversion keeps the structure
// (`.value`, `.priority` and `.sv` keys pass through to the typed validation, which gives them
// their meaning), and refuses what no `DatabaseValue` can hold.

extension DatabaseValue {
    /// The value an untyped Firebase value denotes, converted as Firebase converts one:
    /// - `nil`, `NSNull()` (and a `nil` optional at any depth) are ``null``;
    /// - an `NSNumber` that is a boolean (`CFBoolean`: `true as NSNumber`, `NSNumber(value:
    ///   false)`) is ``bool(_:)``; any other `NSNumber` is a number, so `NSNumber(value: 1)` is
    ///   the number 1, never `true`; `Bool` is ``bool(_:)``;
    /// - every Swift integer width is ``int(_:)`` (a `UInt64` beyond `Int64.max`, and a `UInt`,
    ///   become ``double(_:)`` when they do not fit); `Double`, `Float` and `CGFloat` are
    ///   ``double(_:)`` (`Float(0.1)` is the double nearest it, as `NSNumber.doubleValue`
    ///   gives);
    /// - `String`, `Substring` and `NSString` are ``string(_:)``;
    /// - arrays (`[Any]`, `NSArray`) are ``array(_:)``; dictionaries (`[String: Any]`,
    ///   `[AnyHashable: Any]`, `NSDictionary`) are ``object(_:)``, keys exactly as given, so
    ///   `".value"`, `".priority"` and `".sv"` keep Firebase's meanings when the value is
    ///   written;
    /// - a ``DatabaseValue`` or ``DatabaseValue/Object`` is itself.
    ///
    /// What the write then checks (NaN or infinite numbers, invalid keys, depth beyond 32) is
    /// checked when the value is written, where the path is known.
    ///
    /// - Throws: ``DatabaseError/invalidValue(_:)`` for a dictionary key that is not a string,
    ///   or a value of any other type (a `Date`, a struct: encode those with
    ///   `setValue(from:)`).
    public init(any value: Any?) throws(DatabaseError) {
        self = try DatabaseValue.converting(value, depth: 0)
    }

    /// Nesting at which conversion stops; deeper than anything a write accepts (32 levels),
    /// so that a cyclic or absurd structure fails with an error rather than the stack.
    private static let conversionDepthLimit = 1000

    private static func converting(_ value: Any?, depth: Int) throws(DatabaseError) -> DatabaseValue {
        guard depth <= conversionDepthLimit else {
            throw .invalidValue("data nested deeper than \(conversionDepthLimit) levels")
        }
        guard let value = unwrapped(value) else { return .null }
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber { return DatabaseValue(number: number) }
        switch value {
        case is NSNull: return .null
        case let v as DatabaseValue: return v
        case let v as DatabaseValue.Object: return .object(v)
        case let v as Bool: return .bool(v)
        case let v as Int: return .int(Int64(v))
        case let v as Int8: return .int(Int64(v))
        case let v as Int16: return .int(Int64(v))
        case let v as Int32: return .int(Int64(v))
        case let v as Int64: return .int(v)
        case let v as UInt: return Int64(exactly: v).map(DatabaseValue.int) ?? .double(Double(v))
        case let v as UInt8: return .int(Int64(v))
        case let v as UInt16: return .int(Int64(v))
        case let v as UInt32: return .int(Int64(v))
        case let v as UInt64: return Int64(exactly: v).map(DatabaseValue.int) ?? .double(Double(v))
        case let v as Double: return .double(v)
        case let v as Float: return .double(Double(v))
        case let v as CGFloat: return .double(Double(v))
        case let v as String: return .string(v)
        case let v as Substring: return .string(String(v))
        case let v as [Any]:
            var elements: [DatabaseValue] = []
            elements.reserveCapacity(v.count)
            for element in v { elements.append(try converting(element, depth: depth + 1)) }
            return .array(elements)
        case let v as [AnyHashable: Any]:
            var members: [(key: String, value: DatabaseValue)] = []
            members.reserveCapacity(v.count)
            for (key, element) in v {
                guard let k = key.base as? String else {
                    throw .invalidValue(
                        "a key must be a string, not \(type(of: key.base)) (\(key.base)): keys are paths")
                }
                members.append((k, try converting(element, depth: depth + 1)))
            }
            return .object(Object(members))
        default:
            throw .invalidValue(
                "cannot store a value of type \(type(of: value)): only NSNumber, Bool, numbers, String, "
                    + "NSNull, arrays and [String: Any] dictionaries (encode other types with setValue(from:))")
        }
    }

    /// `value` with any optional wrapping removed (`Optional<Optional<Int>>.some(nil)` is nil).
    private static func unwrapped(_ value: Any?) -> Any? {
        guard let value else { return nil }
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        guard let inner = mirror.children.first?.value else { return nil }
        return unwrapped(inner)
    }

    /// An `NSNumber` as Firebase reads one: a `CFBoolean` is a boolean, everything else a
    /// number (an integer when its type is an integer type).
    init(number: NSNumber) {
        if DatabaseValue.isBoolean(number) {
            self = .bool(number.boolValue)
            return
        }
        switch String(cString: number.objCType) {
        case "c", "s", "i", "l", "q", "C", "S", "I", "L":
            self = .int(number.int64Value)
        case "Q":
            self = Int64(exactly: number.uint64Value).map(DatabaseValue.int) ?? .double(number.doubleValue)
        default:
            self = .double(number.doubleValue)
        }
    }

    /// Whether `number` is a `CFBoolean` (what `true as NSNumber` and `NSNumber(value:
    /// false)` are) rather than a number that happens to be 0 or 1.
    static func isBoolean(_ number: NSNumber) -> Bool {
        #if canImport(Darwin)
        return CFGetTypeID(number) == CFBooleanGetTypeID()
        #else
        // swift-corelibs-foundation gives booleans their own subclass, as CoreFoundation does.
        return String(describing: type(of: number)) == "__NSCFBoolean"
        #endif
    }
}
