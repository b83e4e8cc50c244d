import Dispatch
import Hearth
import HearthModel

// Writes, Firebase's shape: each has a completion form (returns at once with the write's
// durable id; the block runs when the server answers) and an `async` form (returns when the
// server answered). Both save the write in the store and raise local events at once, without
// waiting for a sync; the database's own queue makes the write durable at the database's
// durability before it is sent (Threading.md). Offline, the write waits in the store (across
// restarts) and is sent when the connection comes.
//
// Errors known before anything is written (an invalid path or value, a write under `.info`, a
// closed database, a failed store) are thrown; nothing was written then.
extension DatabaseReference {
    /// Replaces the data here with `value` (`.null` removes it), with an optional priority.
    @discardableResult
    public func setValue(
        _ value: DatabaseValue, andPriority priority: DatabaseValue? = nil, on queue: DispatchQueue? = nil,
        withCompletionBlock block: (@Sendable (DatabaseError?, DatabaseReference) -> Void)? = nil
    ) throws(DatabaseError) -> WriteID {
        try database.saveWrite(
            .set(try valueNode(value, priority: priority)), at: self, queue: queue, completion: completion(block))
    }

    /// Replaces the data here with `value` and waits for the server's answer.
    /// - Throws: ``DatabaseError`` — what the server refused it with, or why it could not be
    ///   written.
    public func setValue(_ value: DatabaseValue, andPriority priority: DatabaseValue? = nil) async throws(DatabaseError)
    {
        let node = try valueNode(value, priority: priority)
        try await awaitServer { (done: @escaping @Sendable (DatabaseError?) -> Void) throws(DatabaseError) in
            _ = try database.saveWrite(.set(node), at: self, queue: nil, completion: done)
        }
    }

    /// Replaces the data here with an `Encodable` value (Firebase's `setValue(from:)`).
    @discardableResult
    public func setValue(
        from value: some Encodable, on queue: DispatchQueue? = nil,
        withCompletionBlock block: (@Sendable (DatabaseError?, DatabaseReference) -> Void)? = nil
    ) throws(DatabaseError) -> WriteID {
        try database.saveWrite(
            .set(try node(encoding: value, at: path)), at: self, queue: queue, completion: completion(block))
    }

    /// Replaces the data here with an `Encodable` value and waits for the server's answer.
    public func setValue(from value: some Encodable) async throws(DatabaseError) {
        let node = try node(encoding: value, at: path)
        try await awaitServer { (done: @escaping @Sendable (DatabaseError?) -> Void) throws(DatabaseError) in
            _ = try database.saveWrite(.set(node), at: self, queue: nil, completion: done)
        }
    }

    /// Writes several children at once (keys are paths relative to here; a `.null` value
    /// removes), atomically (Firebase's `updateChildValues`). Paths are kept apart exactly, as
    /// keys are. A literal picks Firebase's untyped form (a `[AnyHashable: Any]`, whose keys
    /// `String ==` compares); write `[…] as DatabaseValue.Object` for keys that differ only in
    /// Unicode normalization, and pass a `[String: DatabaseValue]` as
    /// `DatabaseValue.Object(dictionary)`.
    @discardableResult
    public func updateChildValues(
        _ values: DatabaseValue.Object, on queue: DispatchQueue? = nil,
        withCompletionBlock block: (@Sendable (DatabaseError?, DatabaseReference) -> Void)? = nil
    ) throws(DatabaseError) -> WriteID {
        try database.saveWrite(
            .update(try childUpdates(from: values, at: path)), at: self, queue: queue, completion: completion(block))
    }

    /// ``updateChildValues(_:on:withCompletionBlock:)`` that waits for the server's answer.
    public func updateChildValues(_ values: DatabaseValue.Object) async throws(DatabaseError) {
        let children = try childUpdates(from: values, at: path)
        try await awaitServer { (done: @escaping @Sendable (DatabaseError?) -> Void) throws(DatabaseError) in
            _ = try database.saveWrite(.update(children), at: self, queue: nil, completion: done)
        }
    }

    /// Removes the data here (a set of `null`).
    @discardableResult
    public func removeValue(
        on queue: DispatchQueue? = nil,
        withCompletionBlock block: (@Sendable (DatabaseError?, DatabaseReference) -> Void)? = nil
    ) throws(DatabaseError) -> WriteID {
        try setValue(.null, on: queue, withCompletionBlock: block)
    }

    /// Removes the data here and waits for the server's answer.
    @discardableResult
    public func removeValue() async throws(DatabaseError) -> DatabaseReference {
        try await setValue(.null)
        return self
    }

    /// Sets the priority of the data here (a write at `.priority`, as Firebase does); `.null`
    /// clears it.
    @discardableResult
    public func setPriority(
        _ priority: DatabaseValue, on queue: DispatchQueue? = nil,
        withCompletionBlock block: (@Sendable (DatabaseError?, DatabaseReference) -> Void)? = nil
    ) throws(DatabaseError) -> WriteID {
        let leaf = try priorityNode(priority)
        let target = DatabaseReference(database: database, path: path.child(ChildKey(".priority")), invalid: invalid)
        return try database.saveWrite(.set(leaf), at: target, queue: queue, completion: completion(block))
    }

    /// A child with a new push id as its key: time-ordered by the server's clock (estimated
    /// offline from the last known offset), collision-resistant, Firebase's alphabet and
    /// layout. Nothing is written.
    public func childByAutoId() -> DatabaseReference {
        DatabaseReference(database: database, path: path.child(ChildKey(database.nextPushID())), invalid: invalid)
    }

    // MARK: - Helpers

    /// `value` as a node at this location, with `priority` (validated as Firebase validates
    /// them).
    func valueNode(_ value: DatabaseValue, priority: DatabaseValue?) throws(DatabaseError) -> Node {
        let n = try node(from: value, at: path)
        guard let priority else { return n }
        switch try priorityNode(priority).leafValue {
        case .string(let s)?: return n.withPriority(.string(s))
        case let leaf?: return n.withPriority(leaf.doubleValue.map(Priority.number))
        case nil: return n.withPriority(nil)
        }
    }

    private func priorityNode(_ priority: DatabaseValue) throws(DatabaseError) -> Node {
        switch priority {
        case .null: return .empty
        case .string(let s): return .string(s)
        case .int(let i): return Node(.integer(exactly: i))
        case .double(let d) where d.isFinite: return .number(d)
        default: throw .invalidValue("a priority must be a string, a finite number, or null (at \(pathString))")
        }
    }
}
