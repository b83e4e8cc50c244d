/// Names one connection at the end that holds it: the client numbers its connection attempts,
/// the server's adapter its accepted WebSocket connections and event streams.
///
/// A protocol core keys what it knows of a connection by this id, so that a report about a
/// connection that has since closed (a message or a close arriving late) is recognised and
/// ignored. The numbers are local to one end and never sent on the wire.
@_spi(HearthInternals) public struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
    /// The number its end gave it.
    @_spi(HearthInternals) public let rawValue: UInt64

    /// The id numbered `rawValue`.
    @_spi(HearthInternals) public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    /// `conn#` and the number.
    @_spi(HearthInternals) public var description: String { "conn#\(rawValue)" }
}
