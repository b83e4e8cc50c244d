/// Hearth's exactly-once extension to protocol v5: who wrote a `p`/`m` and which of its writes
/// it is, sent as `"w"` (writer id) and `"i"` (write id) in the request body.
///
/// A Hearth server advertises the extension in its hello (`"x": ["w"]`,
/// ``ServerMessage/writeIDsExtension``); a Hearth client stamps its writes only then, so it
/// speaks plain v5 to Firebase. The server keeps, per writer, the highest write id it applied
/// (durably, with the write) and answers a write whose id is not above it `ok` without
/// applying it again. A writer's ids strictly increase in the order it sends them.
@_spi(HearthInternals) public struct WriteStamp: Sendable, Hashable {
    /// The writer: a random id (1…``maxWriterLength`` bytes) a client takes each time it opens
    /// its store and writes, and keeps there with the writes it creates under it.
    @_spi(HearthInternals) public let writer: String
    /// The write's id: strictly increasing per writer, ≥ 1, below 2⁵³ (exact as a JSON number).
    @_spi(HearthInternals) public let id: Int64

    /// The longest writer id accepted, in UTF-8 bytes (the store's bound).
    @_spi(HearthInternals) public static let maxWriterLength = 256
    /// The largest write id: every id up to it is exact as a JSON number.
    @_spi(HearthInternals) public static let maxID: Int64 = 9_007_199_254_740_991

    /// The `d` of the `ok` that answers a recognised re-send, `{"seen":true}`: the server applied
    /// the write earlier and did not apply it again. Its data may have been superseded since
    /// (the client learns the current data from its listens), so the client must not take the
    /// write's value for the server's.
    @_spi(HearthInternals) public static let seenResponse: JSONValue = .object([
        JSONMember(key: "seen", value: .bool(true))
    ])

    /// Whether an `ok`'s `d` says the write was recognised as a re-send.
    @_spi(HearthInternals) public static func isSeen(_ data: JSONValue?) -> Bool { data?["seen"] == .bool(true) }

    /// A stamp.
    @_spi(HearthInternals) public init(writer: String, id: Int64) {
        self.writer = writer
        self.id = id
    }

    /// The stamp of a request body, `nil` when it has neither `w` nor `i`.
    /// - Throws: ``WireError/badRequest(action:reason:)`` when only one is present or either
    ///   is malformed.
    static func decode(action: String, body b: JSONValue) throws(WireError) -> WriteStamp? {
        let w = b["w"], i = b["i"]
        if (w == nil || w!.isNull) && (i == nil || i!.isNull) { return nil }
        guard let writer = w?.stringValue, !writer.isEmpty, writer.utf8.count <= maxWriterLength else {
            throw .badRequest(action: action, reason: "\"w\" must be a writer id of 1…\(maxWriterLength) bytes")
        }
        guard let d = i?.doubleValue, d == d.rounded(), d >= 1, d <= Double(maxID) else {
            throw .badRequest(action: action, reason: "\"i\" must be an integer write id in 1…\(maxID)")
        }
        return WriteStamp(writer: writer, id: Int64(d))
    }

    /// The body members: `w` and `i`.
    var members: [(String, JSONValue?)] { [("w", .string(writer)), ("i", .number(Double(id)))] }
}
