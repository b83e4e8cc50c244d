import Foundation

// FirebaseDatabaseSwift's Codable members: reads and writes through a configured
// Database.Decoder / Database.Encoder.

extension Database {
    /// Firebase's `Database.Encoder`: encodes `Encodable` values with key, date, data and
    /// float strategies (see ``DatabaseEncoder``).
    public typealias Encoder = DatabaseEncoder
    /// Firebase's `Database.Decoder`: decodes `Decodable` values with key, date, data and
    /// float strategies (see ``DatabaseDecoder``).
    public typealias Decoder = DatabaseDecoder
}

extension DataSnapshot {
    /// The data decoded as `T` by `decoder` and its strategies (Firebase's
    /// `data(as:decoder:)`); ``data(as:)`` uses Firebase's defaults.
    ///
    /// - Throws: ``DatabaseError/decodingFailed(_:)`` naming the coding path, for example when
    ///   the location holds no data and `T` is not optional.
    public func data<T: Decodable>(as type: T.Type, decoder: Database.Decoder) throws(DatabaseError) -> T {
        try NodeDecoder(options: decoder.options).decode(T.self, from: node)
    }
}

extension DatabaseReference {
    /// Replaces the data here with `value` encoded by `encoder` and its strategies (Firebase's
    /// `setValue(from:encoder:completion:)`). Returns at once, as every write does; `completion`
    /// runs on the database's callback queue when the server answers, with `nil` or the
    /// ``DatabaseError``.
    ///
    /// - Throws: ``DatabaseError/invalidValue(_:)`` for a value that cannot be encoded or
    ///   written (nothing is written then; Firebase's throws the encoding error and raises on
    ///   an invalid value).
    @discardableResult
    public func setValue<T: Encodable>(
        from value: T, encoder: Database.Encoder,
        completion: (@Sendable ((any Error)?) -> Void)? = nil
    ) throws(DatabaseError) -> WriteID {
        var block: (@Sendable (DatabaseError?, DatabaseReference) -> Void)? = nil
        if let completion { block = { error, _ in completion(error) } }
        return try database.saveWrite(
            .set(try node(encoding: value, at: path, options: encoder.options)), at: self, queue: nil,
            completion: self.completion(block))
    }

    /// Replaces the data here with `value` encoded by `encoder`, and waits for the server's
    /// answer.
    public func setValue<T: Encodable>(from value: T, encoder: Database.Encoder) async throws(DatabaseError) {
        let node = try node(encoding: value, at: path, options: encoder.options)
        try await awaitServer { (done: @escaping @Sendable (DatabaseError?) -> Void) throws(DatabaseError) in
            _ = try database.saveWrite(.set(node), at: self, queue: nil, completion: done)
        }
    }
}
