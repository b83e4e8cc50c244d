// JSONValue.parse: the public entry points of the strict JSON parser (String or UTF-8 bytes, a depth
// limit); the parsing itself is JSONParser.

extension JSONValue {
    /// The default nesting limit for arrays and objects.
    public static let defaultMaxDepth = 512

    /// Parses a complete JSON text (RFC 8259, strict).
    ///
    /// Surrounding whitespace is allowed; anything else after the value is an error.
    /// Rejected: trailing commas, leading zeros, `+1`, `.5`, `1.`, NaN/Infinity, numbers that
    /// overflow `Double`, unescaped control characters, invalid escapes, lone surrogates,
    /// duplicate object keys (compared byte-for-byte), nesting deeper than `maxDepth`.
    ///
    /// The parser is iterative: it uses no recursion, so no input can overflow the stack.
    /// - Parameters:
    ///   - text: The JSON text.
    ///   - maxDepth: How many arrays/objects may be nested (`[[1]]` has depth 2; scalars 0).
    ///     Parsing itself never recurses, but writing, comparing and freeing a value recurse
    ///     once per level, so keep this modest (the default suits Firebase's 32-level limit).
    /// - Throws: ``JSONError`` describing the first problem found.
    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONError) -> JSONValue {
        var text = text
        let result = text.withUTF8 { buffer in
            parse(buffer: buffer, maxDepth: maxDepth, trustedUTF8: true)
        }
        return try result.get()
    }

    /// Parses a complete JSON text given as UTF-8 bytes; see the `String` overload.
    ///
    /// Contiguous collections (`[UInt8]`, `String.UTF8View`, buffers, ...) are parsed in place;
    /// others are copied once. The bytes are validated as UTF-8.
    /// - Throws: ``JSONError`` describing the first problem found.
    public static func parse(
        _ bytes: some Collection<UInt8>, maxDepth: Int = defaultMaxDepth
    ) throws(JSONError) -> JSONValue {
        if let result = bytes.withContiguousStorageIfAvailable({ buffer in
            parse(buffer: buffer, maxDepth: maxDepth, trustedUTF8: false)
        }) {
            return try result.get()
        }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { buffer in
            parse(buffer: buffer, maxDepth: maxDepth, trustedUTF8: false)
        }.get()
    }

    private static func parse(
        buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int, trustedUTF8: Bool
    ) -> Result<JSONValue, JSONError> {
        var parser = JSONParser(bytes: buffer, maxDepth: max(0, maxDepth), trustedUTF8: trustedUTF8)
        return Result { () throws(JSONError) -> JSONValue in try parser.parseDocument() }
    }
}
