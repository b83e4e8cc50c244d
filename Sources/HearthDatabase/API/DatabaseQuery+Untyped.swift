import Foundation

// Firebase's query bounds as its Swift API spells them: `Any?` values and `UInt` limits, for
// code written against Firebase (`queryStarting(atValue: lastSeen)` with `lastSeen: Any?`).
// Each converts its argument with ``DatabaseValue/init(any:)`` and then means exactly what the
// typed form means; a value that does not convert gives a query that reports
// ``DatabaseError/invalidQuery(_:)`` from `observe` and `getData`, as every refused builder
// does, where Firebase raises an exception. A `DatabaseValue` argument chooses the typed forms;
// a literal (`queryEqual(toValue: "a")`) chooses these, to the same effect.
extension DatabaseQueryConvertible {
    /// ``DatabaseQuery/queryStarting(atValue:)`` for an untyped value.
    public func queryStarting(atValue value: Any?) -> DatabaseQuery {
        untyped(value, "queryStarting(atValue:)") { $0.queryStarting(atValue: $1) }
    }

    /// ``DatabaseQuery/queryStarting(atValue:childKey:)`` for an untyped value.
    public func queryStarting(atValue value: Any?, childKey: String?) -> DatabaseQuery {
        untyped(value, "queryStarting(atValue:childKey:)") { $0.queryStarting(atValue: $1, childKey: childKey) }
    }

    /// ``DatabaseQuery/queryStarting(afterValue:)`` for an untyped value.
    public func queryStarting(afterValue value: Any?) -> DatabaseQuery {
        untyped(value, "queryStarting(afterValue:)") { $0.queryStarting(afterValue: $1) }
    }

    /// ``DatabaseQuery/queryStarting(afterValue:childKey:)`` for an untyped value.
    public func queryStarting(afterValue value: Any?, childKey: String?) -> DatabaseQuery {
        untyped(value, "queryStarting(afterValue:childKey:)") { $0.queryStarting(afterValue: $1, childKey: childKey) }
    }

    /// ``DatabaseQuery/queryEnding(atValue:)`` for an untyped value.
    public func queryEnding(atValue value: Any?) -> DatabaseQuery {
        untyped(value, "queryEnding(atValue:)") { $0.queryEnding(atValue: $1) }
    }

    /// ``DatabaseQuery/queryEnding(atValue:childKey:)`` for an untyped value.
    public func queryEnding(atValue value: Any?, childKey: String?) -> DatabaseQuery {
        untyped(value, "queryEnding(atValue:childKey:)") { $0.queryEnding(atValue: $1, childKey: childKey) }
    }

    /// ``DatabaseQuery/queryEnding(beforeValue:)`` for an untyped value.
    public func queryEnding(beforeValue value: Any?) -> DatabaseQuery {
        untyped(value, "queryEnding(beforeValue:)") { $0.queryEnding(beforeValue: $1) }
    }

    /// ``DatabaseQuery/queryEnding(beforeValue:childKey:)`` for an untyped value.
    public func queryEnding(beforeValue value: Any?, childKey: String?) -> DatabaseQuery {
        untyped(value, "queryEnding(beforeValue:childKey:)") { $0.queryEnding(beforeValue: $1, childKey: childKey) }
    }

    /// ``DatabaseQuery/queryEqual(toValue:)`` for an untyped value.
    public func queryEqual(toValue value: Any?) -> DatabaseQuery {
        untyped(value, "queryEqual(toValue:)") { $0.queryEqual(toValue: $1) }
    }

    /// ``DatabaseQuery/queryEqual(toValue:childKey:)`` for an untyped value.
    public func queryEqual(toValue value: Any?, childKey: String?) -> DatabaseQuery {
        untyped(value, "queryEqual(toValue:childKey:)") { $0.queryEqual(toValue: $1, childKey: childKey) }
    }

    /// ``DatabaseQuery/queryLimited(toFirst:)`` with Firebase's `UInt` limit.
    public func queryLimited(toFirst limit: UInt) -> DatabaseQuery {
        guard let limit = Int(exactly: limit) else {
            return databaseQuery.failing("queryLimited(toFirst:): \(limit) is not a valid limit")
        }
        return databaseQuery.queryLimited(toFirst: limit)
    }

    /// ``DatabaseQuery/queryLimited(toLast:)`` with Firebase's `UInt` limit.
    public func queryLimited(toLast limit: UInt) -> DatabaseQuery {
        guard let limit = Int(exactly: limit) else {
            return databaseQuery.failing("queryLimited(toLast:): \(limit) is not a valid limit")
        }
        return databaseQuery.queryLimited(toLast: limit)
    }

    /// The query `build` makes from the converted value, or one refused with why the value
    /// does not convert.
    private func untyped(
        _ value: Any?, _ method: String, _ build: (DatabaseQuery, DatabaseValue) -> DatabaseQuery
    ) -> DatabaseQuery {
        let query = databaseQuery
        if query.invalid != nil { return query }
        do {
            return build(query, try DatabaseValue(any: value))
        } catch {
            return query.failing("\(method): \(error)")
        }
    }
}
