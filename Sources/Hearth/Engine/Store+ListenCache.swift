import HearthModel

extension Store {
    /// What a listen at `location` holds of the server's data, and whether it is complete:
    /// the server cache of the store's view for the query when it has one (Firebase hashes the
    /// view's server cache for a listen, `syncTreeSetupListener_`), else the persisted cache by
    /// the persistence rules (``serverCache(for:)``).
    ///
    /// A client sends the hash of this with a listen and the server sends nothing when it
    /// matches, so it must describe what the listen's view shows: a view may hold more than
    /// the persisted rules give (its server cache came from a complete view above it), or less.
    /// - Throws: ``StoreError/corruptCheckpoint(file:offset:reason:)`` if a needed chunk is damaged.
    public func listenServerCache(for location: QueryLocation) throws(StoreError) -> (node: Node, complete: Bool)? {
        let view = try core.withLock { (core: inout Core) throws(StoreError) in
            // A view built from its window's chunks hashes the whole location, as it would have.
            try core.views.completeWindows(overlapping: location.path, core.persisted)
            return core.views.tree.serverCache(at: location.path, query: location.query)
        }
        if let view { return view }
        return try serverCache(for: location)
    }
}
