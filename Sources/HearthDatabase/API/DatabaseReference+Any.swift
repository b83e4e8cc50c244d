import Dispatch
import Hearth
import HearthModel

// Firebase's untyped writes, as its Swift API spells them: values are `Any?`, converted by
// ``DatabaseValue/init(any:)``, and the calls do not throw. Firebase raises an exception for
// invalid input (a programming error). Here such a call writes nothing, logs the reason
// through ``Database/Options/logHandler`` and hands ``DatabaseError`` to the completion block
// (on the database's callback queue): the app neither crashes nor loses a write silently.
// The `async` forms throw that error instead, as Firebase's do. The typed forms
// (``DatabaseValue``, `setValue(from:)`) throw it at the call.
//
// Literals (`ref.setValue(5)`, `ref.setValue(["a": 1])`, `ref.setValue(nil)`) choose these
// forms, and mean the same as the typed forms would; an argument of type `DatabaseValue`
// chooses the typed forms.
extension DatabaseReference {
    /// Replaces the data here with an untyped value (Firebase's `setValue(_:)`); `nil` or
    /// `NSNull()` removes it. Invalid input writes nothing (see ``setValue(_:withCompletionBlock:)``).
    public func setValue(_ value: Any?) {
        untyped("setValue", nil) { (c) throws(DatabaseError) in
            try setValue(DatabaseValue(any: value), andPriority: nil, on: nil, withCompletionBlock: c)
        }
    }

    /// Replaces the data here with an untyped value; `block` runs when the server answers.
    ///
    /// Invalid input (a value ``DatabaseValue/init(any:)`` refuses, NaN, an invalid key, data
    /// deeper than 32 levels) writes nothing: the reason goes to
    /// ``Database/Options/logHandler`` and, as ``DatabaseError/invalidValue(_:)``, to `block`
    /// — where Firebase raises an exception.
    public func setValue(
        _ value: Any?, withCompletionBlock block: @escaping @Sendable (Error?, DatabaseReference) -> Void
    ) {
        untyped("setValue", block) { (c) throws(DatabaseError) in
            try setValue(DatabaseValue(any: value), andPriority: nil, on: nil, withCompletionBlock: c)
        }
    }

    /// Replaces the data here with an untyped value and waits for the server's answer.
    /// - Throws: ``DatabaseError``: the value is invalid (nothing was written), or the server
    ///   refused it.
    @discardableResult
    public func setValue(_ value: Any?) async throws(DatabaseError) -> DatabaseReference {
        let node = try valueNode(DatabaseValue(any: value), priority: nil)
        try await awaitServer { (done: @escaping @Sendable (DatabaseError?) -> Void) throws(DatabaseError) in
            _ = try database.saveWrite(.set(node), at: self, queue: nil, completion: done)
        }
        return self
    }

    /// Replaces the data here with an untyped value and priority (a string, a number or
    /// `nil`). Invalid input writes nothing (see ``setValue(_:withCompletionBlock:)``).
    public func setValue(_ value: Any?, andPriority priority: Any?) {
        untyped("setValue", nil) { (c) throws(DatabaseError) in
            try setValue(
                DatabaseValue(any: value), andPriority: DatabaseValue(any: priority), on: nil, withCompletionBlock: c)
        }
    }

    /// Replaces the data here with an untyped value and priority; `block` runs when the
    /// server answers, or at once with the error when the input is invalid.
    public func setValue(
        _ value: Any?, andPriority priority: Any?,
        withCompletionBlock block: @escaping @Sendable (Error?, DatabaseReference) -> Void
    ) {
        untyped("setValue", block) { (c) throws(DatabaseError) in
            try setValue(
                DatabaseValue(any: value), andPriority: DatabaseValue(any: priority), on: nil, withCompletionBlock: c)
        }
    }

    /// Replaces the data here with an untyped value and priority and waits for the server.
    @discardableResult
    public func setValue(_ value: Any?, andPriority priority: Any?) async throws(DatabaseError) -> DatabaseReference {
        let node = try valueNode(DatabaseValue(any: value), priority: DatabaseValue(any: priority))
        try await awaitServer { (done: @escaping @Sendable (DatabaseError?) -> Void) throws(DatabaseError) in
            _ = try database.saveWrite(.set(node), at: self, queue: nil, completion: done)
        }
        return self
    }

    /// Sets the priority here (a string, a number, or `nil` to clear it), untyped. Invalid
    /// input writes nothing (see ``setValue(_:withCompletionBlock:)``).
    public func setPriority(_ priority: Any?) {
        untyped("setPriority", nil) { (c) throws(DatabaseError) in
            try setPriority(DatabaseValue(any: priority), on: nil, withCompletionBlock: c)
        }
    }

    /// Sets the priority here, untyped; `block` runs when the server answers.
    public func setPriority(
        _ priority: Any?, withCompletionBlock block: @escaping @Sendable (Error?, DatabaseReference) -> Void
    ) {
        untyped("setPriority", block) { (c) throws(DatabaseError) in
            try setPriority(DatabaseValue(any: priority), on: nil, withCompletionBlock: c)
        }
    }

    /// Sets the priority here, untyped, and waits for the server's answer.
    @discardableResult
    public func setPriority(_ priority: Any?) async throws(DatabaseError) -> DatabaseReference {
        let value = try DatabaseValue(any: priority)
        try await awaitServer { (done: @escaping @Sendable (DatabaseError?) -> Void) throws(DatabaseError) in
            _ = try setPriority(value, on: nil) { error, _ in done(error) }
        }
        return self
    }

    /// Writes several children at once, untyped (Firebase's `updateChildValues(_:)`): keys
    /// are paths relative to here and must be strings; a `nil` or `NSNull()` value removes.
    /// Invalid input writes nothing (see ``setValue(_:withCompletionBlock:)``).
    public func updateChildValues(_ values: [AnyHashable: Any]) {
        untyped("updateChildValues", nil) { (c) throws(DatabaseError) in
            try updateChildValues(DatabaseValue.object(any: values), on: nil, withCompletionBlock: c)
        }
    }

    /// Writes several children at once, untyped; `block` runs when the server answers.
    public func updateChildValues(
        _ values: [AnyHashable: Any], withCompletionBlock block: @escaping @Sendable (Error?, DatabaseReference) -> Void
    ) {
        untyped("updateChildValues", block) { (c) throws(DatabaseError) in
            try updateChildValues(DatabaseValue.object(any: values), on: nil, withCompletionBlock: c)
        }
    }

    /// Writes several children at once, untyped, and waits for the server's answer.
    @discardableResult
    public func updateChildValues(_ values: [AnyHashable: Any]) async throws(DatabaseError) -> DatabaseReference {
        try await updateChildValues(DatabaseValue.object(any: values))
        return self
    }

    /// When this client disconnects, set the data here to an untyped value. Invalid input
    /// queues nothing (see ``setValue(_:withCompletionBlock:)``).
    public func onDisconnectSetValue(_ value: Any?) {
        untyped("onDisconnectSetValue", nil) { (c) throws(DatabaseError) in
            try onDisconnectSetValue(DatabaseValue(any: value), andPriority: nil, on: nil, withCompletionBlock: c)
        }
    }

    /// When this client disconnects, set the data here to an untyped value; `block` runs when
    /// the server holds the operation.
    public func onDisconnectSetValue(
        _ value: Any?, withCompletionBlock block: @escaping @Sendable (Error?, DatabaseReference) -> Void
    ) {
        untyped("onDisconnectSetValue", block) { (c) throws(DatabaseError) in
            try onDisconnectSetValue(DatabaseValue(any: value), andPriority: nil, on: nil, withCompletionBlock: c)
        }
    }

    /// When this client disconnects, set the data here to an untyped value and priority.
    public func onDisconnectSetValue(_ value: Any?, andPriority priority: Any?) {
        untyped("onDisconnectSetValue", nil) { (c) throws(DatabaseError) in
            try onDisconnectSetValue(
                DatabaseValue(any: value), andPriority: DatabaseValue(any: priority), on: nil, withCompletionBlock: c)
        }
    }

    /// When this client disconnects, set the data here to an untyped value and priority;
    /// `block` runs when the server holds the operation.
    public func onDisconnectSetValue(
        _ value: Any?, andPriority priority: Any?,
        withCompletionBlock block: @escaping @Sendable (Error?, DatabaseReference) -> Void
    ) {
        untyped("onDisconnectSetValue", block) { (c) throws(DatabaseError) in
            try onDisconnectSetValue(
                DatabaseValue(any: value), andPriority: DatabaseValue(any: priority), on: nil, withCompletionBlock: c)
        }
    }

    /// When this client disconnects, set the data here to an untyped value; waits until the
    /// server holds the operation.
    @discardableResult
    public func onDisconnectSetValue(_ value: Any?) async throws(DatabaseError) -> DatabaseReference {
        try await onDisconnectSetValue(DatabaseValue(any: value), andPriority: nil)
        return self
    }

    /// When this client disconnects, set the data here to an untyped value and priority;
    /// waits until the server holds the operation.
    @discardableResult
    public func onDisconnectSetValue(
        _ value: Any?, andPriority priority: Any?
    ) async throws(DatabaseError) -> DatabaseReference {
        try await onDisconnectSetValue(DatabaseValue(any: value), andPriority: DatabaseValue(any: priority))
        return self
    }

    /// When this client disconnects, write these untyped children (paths relative to here).
    public func onDisconnectUpdateChildValues(_ values: [AnyHashable: Any]) {
        untyped("onDisconnectUpdateChildValues", nil) { (c) throws(DatabaseError) in
            try onDisconnectUpdateChildValues(DatabaseValue.object(any: values), on: nil, withCompletionBlock: c)
        }
    }

    /// When this client disconnects, write these untyped children; `block` runs when the
    /// server holds the operation.
    public func onDisconnectUpdateChildValues(
        _ values: [AnyHashable: Any], withCompletionBlock block: @escaping @Sendable (Error?, DatabaseReference) -> Void
    ) {
        untyped("onDisconnectUpdateChildValues", block) { (c) throws(DatabaseError) in
            try onDisconnectUpdateChildValues(DatabaseValue.object(any: values), on: nil, withCompletionBlock: c)
        }
    }

    /// When this client disconnects, write these untyped children; waits until the server
    /// holds the operation.
    @discardableResult
    public func onDisconnectUpdateChildValues(
        _ values: [AnyHashable: Any]
    ) async throws(DatabaseError) -> DatabaseReference {
        try await onDisconnectUpdateChildValues(DatabaseValue.object(any: values))
        return self
    }

    // MARK: Firebase's forms of the calls without a value

    /// Removes the data here (Firebase's `removeValue()`): no `try`, as Firebase's; a refusal
    /// before anything is written (a write under `.info`) is logged, as for ``setValue(_:withCompletionBlock:)``.
    public func removeValue() {
        untyped("removeValue", nil) { (c) throws(DatabaseError) in _ = try removeValue(on: nil, withCompletionBlock: c)
        }
    }

    /// Removes the data here; `block` runs when the server answers (Firebase's
    /// `removeValue(completionBlock:)`).
    public func removeValue(completionBlock block: @escaping @Sendable (Error?, DatabaseReference) -> Void) {
        untyped("removeValue", block) { (c) throws(DatabaseError) in
            _ = try removeValue(on: nil, withCompletionBlock: c)
        }
    }

    /// When this client disconnects, remove the data here (Firebase's form, no `try`).
    public func onDisconnectRemoveValue() {
        untyped("onDisconnectRemoveValue", nil) { (c) throws(DatabaseError) in
            try onDisconnectRemoveValue(on: nil, withCompletionBlock: c)
        }
    }

    /// When this client disconnects, remove the data here; `block` runs when the server holds
    /// the operation (Firebase's `onDisconnectRemoveValue(completionBlock:)`).
    public func onDisconnectRemoveValue(completionBlock block: @escaping @Sendable (Error?, DatabaseReference) -> Void)
    {
        untyped("onDisconnectRemoveValue", block) { (c) throws(DatabaseError) in
            try onDisconnectRemoveValue(on: nil, withCompletionBlock: c)
        }
    }

    /// Cancels the onDisconnect operations set here and below (Firebase's form, no `try`).
    public func cancelDisconnectOperations() {
        untyped("cancelDisconnectOperations", nil) { (c) throws(DatabaseError) in
            try cancelDisconnectOperations(on: nil, withCompletionBlock: c)
        }
    }

    /// Cancels the onDisconnect operations set here and below; `block` runs when the server
    /// has cancelled them (Firebase's `cancelDisconnectOperations(completionBlock:)`).
    public func cancelDisconnectOperations(
        completionBlock block: @escaping @Sendable (Error?, DatabaseReference) -> Void
    ) {
        untyped("cancelDisconnectOperations", block) { (c) throws(DatabaseError) in
            try cancelDisconnectOperations(on: nil, withCompletionBlock: c)
        }
    }

    /// Runs an untyped write: when it is refused before anything is written, logs why and
    /// hands the error to `block` on the callback queue.
    private func untyped(
        _ operation: String, _ block: (@Sendable (Error?, DatabaseReference) -> Void)?,
        _ write: ((@Sendable (DatabaseError?, DatabaseReference) -> Void)?) throws(DatabaseError) -> Void
    ) {
        var completion: (@Sendable (DatabaseError?, DatabaseReference) -> Void)?
        if let block { completion = { error, ref in block(error, ref) } }
        do throws(DatabaseError) { try write(completion) } catch {
            Database.logger(database.options)("\(operation) at \(pathString) wrote nothing: \(error)")
            if let block {
                let ref = self
                database.callbacks.async { block(error, ref) }
            }
        }
    }
}

extension DatabaseValue {
    /// An `updateChildValues` argument: every key a string (a path), every value converted by
    /// ``init(any:)``.
    static func object(any values: [AnyHashable: Any]) throws(DatabaseError) -> Object {
        guard case .object(let o) = try DatabaseValue(any: values as Any) else { return Object() }
        return o
    }
}
