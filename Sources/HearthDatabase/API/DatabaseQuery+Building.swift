import HearthModel

// Firebase's query builders. Each returns a new query; a call Firebase would refuse (with an
// exception) gives a query that reports ``DatabaseError/invalidQuery(_:)`` from `observe` and
// `getData` instead, so chains need no `try`. The first refusal in a chain is the one reported.
//
// The rules are Firebase's (`FIRDatabaseQuery.m`, `Reference_impl.ts`): one ordering per query;
// one start (`queryStarting…` or `queryEqual`), one end (`queryEnding…` or `queryEqual`), one
// limit; bounds are null, a boolean, a number or a string (never an object, array or server
// value); ordering by key takes string bounds and no child key; ordering by priority takes
// null, number or string bounds; limits are 1…2,147,483,647. An ordering chosen after the
// bounds re-checks them, as Firebase does.

extension DatabaseReference {
    /// The query that reads this whole location (priority order, no bounds, no limit).
    var query: DatabaseQuery { DatabaseQuery(ref: self, spec: .default) }

    /// A query at this location ordered by key. See ``DatabaseQuery/queryOrderedByKey()``.
    public func queryOrderedByKey() -> DatabaseQuery { query.queryOrderedByKey() }
    /// A query at this location ordered by value. See ``DatabaseQuery/queryOrderedByValue()``.
    public func queryOrderedByValue() -> DatabaseQuery { query.queryOrderedByValue() }
    /// A query at this location ordered by priority. See
    /// ``DatabaseQuery/queryOrderedByPriority()``.
    public func queryOrderedByPriority() -> DatabaseQuery { query.queryOrderedByPriority() }
    /// A query at this location ordered by a child's value. See
    /// ``DatabaseQuery/queryOrdered(byChild:)``.
    public func queryOrdered(byChild path: String) -> DatabaseQuery { query.queryOrdered(byChild: path) }
    /// A query at this location starting at a value. See
    /// ``DatabaseQuery/queryStarting(atValue:)``.
    public func queryStarting(atValue value: DatabaseValue) -> DatabaseQuery { query.queryStarting(atValue: value) }
    /// A query at this location starting at a value and key. See
    /// ``DatabaseQuery/queryStarting(atValue:childKey:)``.
    public func queryStarting(atValue value: DatabaseValue, childKey: String?) -> DatabaseQuery {
        query.queryStarting(atValue: value, childKey: childKey)
    }
    /// A query at this location starting after a value. See
    /// ``DatabaseQuery/queryStarting(afterValue:)``.
    public func queryStarting(afterValue value: DatabaseValue) -> DatabaseQuery {
        query.queryStarting(afterValue: value)
    }
    /// A query at this location starting after a value and key. See
    /// ``DatabaseQuery/queryStarting(afterValue:childKey:)``.
    public func queryStarting(afterValue value: DatabaseValue, childKey: String?) -> DatabaseQuery {
        query.queryStarting(afterValue: value, childKey: childKey)
    }
    /// A query at this location ending at a value. See ``DatabaseQuery/queryEnding(atValue:)``.
    public func queryEnding(atValue value: DatabaseValue) -> DatabaseQuery { query.queryEnding(atValue: value) }
    /// A query at this location ending at a value and key. See
    /// ``DatabaseQuery/queryEnding(atValue:childKey:)``.
    public func queryEnding(atValue value: DatabaseValue, childKey: String?) -> DatabaseQuery {
        query.queryEnding(atValue: value, childKey: childKey)
    }
    /// A query at this location ending before a value. See
    /// ``DatabaseQuery/queryEnding(beforeValue:)``.
    public func queryEnding(beforeValue value: DatabaseValue) -> DatabaseQuery { query.queryEnding(beforeValue: value) }
    /// A query at this location ending before a value and key. See
    /// ``DatabaseQuery/queryEnding(beforeValue:childKey:)``.
    public func queryEnding(beforeValue value: DatabaseValue, childKey: String?) -> DatabaseQuery {
        query.queryEnding(beforeValue: value, childKey: childKey)
    }
    /// A query at this location for one value. See ``DatabaseQuery/queryEqual(toValue:)``.
    public func queryEqual(toValue value: DatabaseValue) -> DatabaseQuery { query.queryEqual(toValue: value) }
    /// A query at this location for one value and key. See
    /// ``DatabaseQuery/queryEqual(toValue:childKey:)``.
    public func queryEqual(toValue value: DatabaseValue, childKey: String?) -> DatabaseQuery {
        query.queryEqual(toValue: value, childKey: childKey)
    }
    /// A query at this location keeping the first children. See
    /// ``DatabaseQuery/queryLimited(toFirst:)``.
    public func queryLimited(toFirst limit: Int) -> DatabaseQuery { query.queryLimited(toFirst: limit) }
    /// A query at this location keeping the last children. See
    /// ``DatabaseQuery/queryLimited(toLast:)``.
    public func queryLimited(toLast limit: Int) -> DatabaseQuery { query.queryLimited(toLast: limit) }
}

extension DatabaseQuery {
    // MARK: Orderings

    /// This query ordered by key (Firebase's `orderByKey`). Bounds must then be strings,
    /// without a child key.
    public func queryOrderedByKey() -> DatabaseQuery { ordering(.key, method: "queryOrderedByKey") }

    /// This query ordered by the children's values: null, false, true, numbers, strings, then
    /// objects; ties by key.
    public func queryOrderedByValue() -> DatabaseQuery { ordering(.value, method: "queryOrderedByValue") }

    /// This query ordered by priority (the default order, chosen explicitly). Bounds must then
    /// be null, numbers or strings.
    public func queryOrderedByPriority() -> DatabaseQuery { ordering(.priority, method: "queryOrderedByPriority") }

    /// This query ordered by the value at `path` under each child (a missing one sorts as
    /// null). `path` is slash-separated and may not be empty, `.key`/`$key`, `.value`/`$value`
    /// or `.priority`/`$priority` (use the dedicated orderings).
    public func queryOrdered(byChild path: String) -> DatabaseQuery {
        let method = "queryOrdered(byChild:)"
        if invalid != nil { return self }
        switch path {
        case "$key", ".key":
            return failing("\(method): \(path) is invalid; use queryOrderedByKey() instead")
        case "$priority", ".priority":
            return failing("\(method): \(path) is invalid; use queryOrderedByPriority() instead")
        case "$value", ".value":
            return failing("\(method): \(path) is invalid; use queryOrderedByValue() instead")
        default:
            break
        }
        let childPath: Path
        do {
            childPath = try QuerySpec.parseChildPath(path)
        } catch {
            return failing("\(method): \(error)")
        }
        return ordering(.child(childPath), method: method)
    }

    // MARK: Bounds

    /// This query starting at children whose ordered value is at least `value` (Firebase's
    /// `startAt`).
    public func queryStarting(atValue value: DatabaseValue) -> DatabaseQuery {
        bounding(value, childKey: nil, method: "queryStarting(atValue:)") { spec, node, key throws(QueryError) in
            try spec.startAt(node, key: key)
        }
    }

    /// This query starting at the child whose ordered value is `value` and key is at least
    /// `childKey` (not allowed when ordering by key).
    public func queryStarting(atValue value: DatabaseValue, childKey: String?) -> DatabaseQuery {
        bounding(value, childKey: childKey, method: "queryStarting(atValue:childKey:)") {
            spec, node, key throws(QueryError) in
            try spec.startAt(node, key: key)
        }
    }

    /// This query starting after children whose ordered value is `value` (Firebase's
    /// `startAfter`).
    public func queryStarting(afterValue value: DatabaseValue) -> DatabaseQuery {
        bounding(value, childKey: nil, method: "queryStarting(afterValue:)") { spec, node, key throws(QueryError) in
            try spec.startAfter(node, key: key)
        }
    }

    /// This query starting after the child whose ordered value is `value` and key is
    /// `childKey` (not allowed when ordering by key).
    public func queryStarting(afterValue value: DatabaseValue, childKey: String?) -> DatabaseQuery {
        bounding(value, childKey: childKey, method: "queryStarting(afterValue:childKey:)") {
            spec, node, key throws(QueryError) in
            try spec.startAfter(node, key: key)
        }
    }

    /// This query ending at children whose ordered value is at most `value` (Firebase's
    /// `endAt`).
    public func queryEnding(atValue value: DatabaseValue) -> DatabaseQuery {
        bounding(value, childKey: nil, method: "queryEnding(atValue:)") { spec, node, key throws(QueryError) in
            try spec.endAt(node, key: key)
        }
    }

    /// This query ending at the child whose ordered value is `value` and key is at most
    /// `childKey` (not allowed when ordering by key).
    public func queryEnding(atValue value: DatabaseValue, childKey: String?) -> DatabaseQuery {
        bounding(value, childKey: childKey, method: "queryEnding(atValue:childKey:)") {
            spec, node, key throws(QueryError) in
            try spec.endAt(node, key: key)
        }
    }

    /// This query ending before children whose ordered value is `value` (Firebase's
    /// `endBefore`).
    public func queryEnding(beforeValue value: DatabaseValue) -> DatabaseQuery {
        bounding(value, childKey: nil, method: "queryEnding(beforeValue:)") { spec, node, key throws(QueryError) in
            try spec.endBefore(node, key: key)
        }
    }

    /// This query ending before the child whose ordered value is `value` and key is
    /// `childKey` (not allowed when ordering by key).
    public func queryEnding(beforeValue value: DatabaseValue, childKey: String?) -> DatabaseQuery {
        bounding(value, childKey: childKey, method: "queryEnding(beforeValue:childKey:)") {
            spec, node, key throws(QueryError) in
            try spec.endBefore(node, key: key)
        }
    }

    /// This query limited to children whose ordered value is `value` (Firebase's `equalTo`):
    /// both a start and an end, so it excludes every other bound.
    public func queryEqual(toValue value: DatabaseValue) -> DatabaseQuery {
        bounding(value, childKey: nil, method: "queryEqual(toValue:)") { spec, node, key throws(QueryError) in
            try spec.equalTo(node, key: key)
        }
    }

    /// This query limited to the child whose ordered value is `value` and key is `childKey`
    /// (not allowed when ordering by key).
    public func queryEqual(toValue value: DatabaseValue, childKey: String?) -> DatabaseQuery {
        bounding(value, childKey: childKey, method: "queryEqual(toValue:childKey:)") {
            spec, node, key throws(QueryError) in
            try spec.equalTo(node, key: key)
        }
    }

    // MARK: Limits

    /// This query keeping only the first `limit` children in its order (1…2,147,483,647).
    public func queryLimited(toFirst limit: Int) -> DatabaseQuery {
        changing("queryLimited(toFirst:)") { spec throws(QueryError) in try spec.limitToFirst(limit) }
    }

    /// This query keeping only the last `limit` children in its order (1…2,147,483,647).
    public func queryLimited(toLast limit: Int) -> DatabaseQuery {
        changing("queryLimited(toLast:)") { spec throws(QueryError) in try spec.limitToLast(limit) }
    }

    // MARK: - Building blocks

    /// This query, refused with `message`.
    func failing(_ message: String) -> DatabaseQuery {
        DatabaseQuery(ref: ref, spec: spec, invalid: .invalidQuery(message), orderByCalled: orderByCalled)
    }

    /// This query with its parameters changed by `change`, or refused with what it threw.
    private func changing(
        _ method: String, orderByCalled: Bool? = nil, _ change: (QuerySpec) throws(QueryError) -> QuerySpec
    ) -> DatabaseQuery {
        if invalid != nil { return self }
        do {
            return DatabaseQuery(ref: ref, spec: try change(spec), orderByCalled: orderByCalled ?? self.orderByCalled)
        } catch {
            return failing("\(method): \(error)")
        }
    }

    /// This query with a bound set by `apply` from `value` and `childKey`.
    private func bounding(
        _ value: DatabaseValue, childKey: String?, method: String,
        _ apply: (QuerySpec, Node, ChildKey?) throws(QueryError) -> QuerySpec
    ) -> DatabaseQuery {
        if invalid != nil { return self }
        let node: Node
        switch value {
        case .null: node = .empty
        case .bool(let b): node = Node(.bool(b))
        case .int(let i): node = Node(.integer(exactly: i))
        case .double(let d):
            guard d.isFinite else { return failing("\(method): the value must be a finite number, got \(d)") }
            node = Node(.number(d))
        case .string(let s): node = Node(.string(s))
        case .array, .object, .serverValue:
            return failing("\(method): you can only pass null, a boolean, a number or a string")
        }
        return changing(method) { spec throws(QueryError) in try apply(spec, node, childKey.map { ChildKey($0) }) }
    }

    /// This query ordered by `index`: refused if an ordering was already chosen; its bounds and
    /// limit are applied again under the new ordering, which checks them as Firebase does.
    private func ordering(_ index: QueryIndex, method: String) -> DatabaseQuery {
        if invalid != nil { return self }
        if orderByCalled { return failing("\(method): you cannot use more than one queryOrdered… call") }
        return changing(method, orderByCalled: true) { old throws(QueryError) in
            var spec = QuerySpec(orderBy: index)
            if let start = old.start {
                let key: ChildKey? = if case .key(let k) = start.key { k } else { nil }
                // A start at [MAX_NAME] is what startAfter(value) without a key makes.
                spec =
                    start.exclusive || start.key == .max
                    ? try spec.startAfter(start.value, key: key) : try spec.startAt(start.value, key: key)
            }
            if let end = old.end {
                let key: ChildKey? = if case .key(let k) = end.key { k } else { nil }
                // An end at [MIN_NAME] is what endBefore(value) without a key makes.
                spec =
                    end.exclusive || end.key == .min
                    ? try spec.endBefore(end.value, key: key) : try spec.endAt(end.value, key: key)
            }
            switch old.limit {
            case .first(let n)?: spec = try spec.limitToFirst(n)
            case .last(let n)?: spec = try spec.limitToLast(n)
            case nil: break
            }
            return spec
        }
    }
}
