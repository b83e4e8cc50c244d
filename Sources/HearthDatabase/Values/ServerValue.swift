/// Placeholders the server fills in when it applies a write (Firebase's `ServerValue`).
///
/// ```swift
/// ref.child("lastSeen").setValue(ServerValue.timestamp())
/// ref.child("likes").setValue(ServerValue.increment(1))
/// ```
///
/// Until the server answers, local reads see the placeholder resolved against the local clock
/// and the local value, as Firebase's clients do.
public enum ServerValue {
    /// The server's clock when it applies the write, in milliseconds since the Unix epoch.
    public static func timestamp() -> DatabaseValue { .serverValue(.timestamp) }

    /// The current number at the location plus `delta` (a location holding no number counts
    /// as 0).
    public static func increment(_ delta: Int64) -> DatabaseValue { .serverValue(.increment(delta)) }

    /// The current number at the location plus `delta` (so that `increment(1)` needs no type
    /// annotation).
    public static func increment(_ delta: Int) -> DatabaseValue { .serverValue(.increment(Int64(delta))) }

    /// The current number at the location plus `delta` (a location holding no number counts
    /// as 0). A NaN or infinite delta is refused when written.
    public static func increment(_ delta: Double) -> DatabaseValue { .serverValue(.incrementDouble(delta)) }
}
