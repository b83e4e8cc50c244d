import ArgumentParser
import Hearth

/// Opening stores and parsing command-line values, shared by the subcommands.
enum StoreAccess {
    /// Opens the store in `directory` the way every opening command does: recovery runs,
    /// maintenance runs inline (so nothing happens in the background while the tool reads),
    /// and the whole cache is loaded before this returns.
    static func open(
        _ directory: String, create: Bool = false, durability: Durability = .full, cacheSizeBytes: Int? = nil
    ) throws -> Store {
        var options = Store.Options()
        options.createIfMissing = create
        options.durability = durability
        options.backgroundMaintenance = false
        options.lazyCacheLoad = false
        if let cacheSizeBytes { options.cacheSizeBytes = cacheSizeBytes }
        do {
            let store = try Store.open(directory: directory, options: options)
            if let torn = store.recovery.truncatedTail {
                // A record cut short by a crash was dropped: the store is consistent, but its
                // last write is gone — say so rather than silently answer one record earlier.
                Output.stderr("hearth: note: recovery dropped a torn tail: \(torn.bytes) bytes at \(torn.file):\(torn.offset) (a write interrupted by a crash; everything before it is intact)")
            }
            return store
        } catch {
            if case .log(.storeMissing) = error { throw missingStore(directory) }
            throw error
        }
    }

    static func missingStore(_ directory: String) -> ToolError {
        .failed("no store at \(directory): the directory does not exist or holds no Hearth store")
    }

    /// Parses a database path given on the command line (a bad one is a usage error).
    static func path(_ text: String, option: String) throws -> Path {
        do { return try Path(validating: text) } catch {
            throw ValidationError("invalid \(option) \"\(text)\": \(error)")
        }
    }

    /// Parses a query (Hearth's JSON query form) given on the command line.
    static func query(_ text: String) throws -> QuerySpec {
        let json: JSONValue
        do { json = try JSONValue.parse(text) } catch {
            throw ValidationError("invalid --query: not JSON: \(error)")
        }
        do { return try QuerySpec(json: json) } catch {
            throw ValidationError("invalid --query: \(error)")
        }
    }

    /// Closes the store, reporting a failure.
    static func close(_ store: Store) throws {
        try store.close()
    }
}
