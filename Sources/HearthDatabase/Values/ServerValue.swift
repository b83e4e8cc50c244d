import Foundation

/// Placeholders the server fills in when it applies a write (Firebase's `ServerValue`), as
/// Firebase's untyped values: `[".sv": …]` dictionaries, so they go wherever Firebase's go —
/// `setValue(_:)`, `onDisconnectSetValue(_:)`, a `[String: Any]` — with no `try`:
///
/// ```swift
/// ref.child("lastSeen").setValue(ServerValue.timestamp())
/// ref.child("likes").setValue(ServerValue.increment(1))
/// ```
///
/// Typed code uses ``DatabaseValue/serverTimestamp`` and `DatabaseValue.increment(_:)`, which
/// mean the same.
///
/// Until the server answers, local reads see the placeholder resolved against the local clock
/// and the local value, as Firebase's clients do.
public enum ServerValue {
    /// The server's clock when it applies the write, in milliseconds since the Unix epoch.
    public static func timestamp() -> [AnyHashable: Any] { [".sv": "timestamp"] }

    /// The current number at the location plus `delta` (a location holding no number counts
    /// as 0), Firebase's `NSNumber` form: an integer `NSNumber` adds exactly, a floating-point
    /// one as a `Double`; a boolean one (`true as NSNumber`) counts as 1 or 0.
    public static func increment(_ delta: NSNumber) -> [AnyHashable: Any] {
        switch DatabaseValue(number: delta) {
        case .int(let i): increment(i)
        case .bool(let b): increment(Int64(b ? 1 : 0))
        default: increment(delta.doubleValue)
        }
    }

    /// The current number at the location plus `delta`.
    public static func increment(_ delta: Int64) -> [AnyHashable: Any] { [".sv": ["increment": delta]] }

    /// The current number at the location plus `delta` (so that `increment(1)` needs no type
    /// annotation).
    public static func increment(_ delta: Int) -> [AnyHashable: Any] { increment(Int64(delta)) }

    /// The current number at the location plus `delta`. A NaN or infinite delta is refused
    /// when written.
    public static func increment(_ delta: Double) -> [AnyHashable: Any] { [".sv": ["increment": delta]] }
}

extension DatabaseValue {
    /// The server's clock when it applies the write (``ServerValue/timestamp()``, typed).
    public static var serverTimestamp: DatabaseValue { .serverValue(.timestamp) }

    /// The current number at the location plus `delta` (`ServerValue.increment(_:)`, typed).
    public static func increment(_ delta: Int64) -> DatabaseValue { .serverValue(.increment(delta)) }

    /// The current number at the location plus `delta`, for an `Int` (a literal needs no
    /// annotation).
    public static func increment(_ delta: Int) -> DatabaseValue { .serverValue(.increment(Int64(delta))) }

    /// The current number at the location plus `delta`. A NaN or infinite delta is refused
    /// when written.
    public static func increment(_ delta: Double) -> DatabaseValue { .serverValue(.incrementDouble(delta)) }
}
