/// A message that does not follow protocol v5.
@_spi(HearthInternals) public enum WireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text is not JSON.
    case notJSON(String)
    /// The envelope is not `{"t":"d"|"c","d":{…}}`.
    case badEnvelope(String)
    /// A request's body is missing a field or has one of the wrong type.
    case badRequest(action: String, reason: String)
    /// A path that is not a valid Firebase path.
    case invalidPath(String)
    /// A query object that is not valid.
    case invalidQuery(String)

    @_spi(HearthInternals) public var description: String {
        switch self {
        case .notJSON(let why): "not JSON: \(why)"
        case .badEnvelope(let why): "not a protocol v5 message: \(why)"
        case let .badRequest(action, reason): "bad \"\(action)\" request: \(reason)"
        case .invalidPath(let why): "invalid path: \(why)"
        case .invalidQuery(let why): "invalid query: \(why)"
        }
    }
}

/// Parses a wire path: `"/a/b"`, `"a/b"`, `""` and `"/"` (the root).
/// - Throws: ``WireError/invalidPath(_:)``.
@_spi(HearthInternals) public func wirePath(_ string: String) throws(WireError) -> Path {
    do { return try Path(validating: string) } catch { throw .invalidPath(error.description) }
}

extension Path {
    /// The path as the wire sends it: keys joined by `/`, the root as `""`.
    @_spi(HearthInternals) public var wireString: String { keys.map(\.string).joined(separator: "/") }
}
