import ArgumentParser
import Hearth

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opening stores and parsing command-line values, shared by the subcommands.
enum StoreAccess {
    /// Opens the store in `directory` the way every opening command does: recovery runs,
    /// maintenance runs inline (so nothing happens in the background while the tool reads),
    /// and the whole cache is loaded before this returns.
    static func open(
        _ directory: String, create: Bool = false, durability: Durability = .full, cacheSizeBytes: Int? = nil
    ) throws -> Store {
        var options = toolOptions(cacheSizeBytes: cacheSizeBytes)
        options.createIfMissing = create
        options.durability = durability
        return try open(directory, options: options)
    }

    /// Opens the store in `directory` for a command that only reads it, with maintenance that
    /// prunes nothing the store's own cap could have kept.
    ///
    /// The cap is not stored: it is the option of whoever opens the store, and pruning runs at
    /// open. A store an app ran with a 100 MiB cap, opened with the default 10 MiB one to be
    /// read, would lose most of its cache to a `get`. So without `cacheSizeBytes` a reading
    /// command opens with the largest cap a store can have and no limit on inactive queries:
    /// recovery and checkpoints still run, pruning only past what any cap allows.
    static func openToRead(_ directory: String, cacheSizeBytes: Int?) throws -> Store {
        var options = toolOptions(cacheSizeBytes: cacheSizeBytes ?? Store.maximumCacheSize)
        if cacheSizeBytes == nil { options.maxInactiveQueries = Int.max }
        return try open(directory, options: options)
    }

    /// The options every command opens a store with: never created, maintenance inline, the
    /// whole cache loaded at open.
    private static func toolOptions(cacheSizeBytes: Int?) -> Store.Options {
        var options = Store.Options()
        options.createIfMissing = false
        options.backgroundMaintenance = false
        options.lazyCacheLoad = false
        if let cacheSizeBytes { options.cacheSizeBytes = cacheSizeBytes }
        return options
    }

    /// Opens the store, noting on stderr a torn tail recovery cut off (or, read-only, left in
    /// place); a missing store is named as such.
    private static func open(_ directory: String, options: Store.Options) throws -> Store {
        do {
            let store = try Store.open(directory: directory, options: options)
            if let torn = store.recovery.truncatedTail {
                // A record cut short by a crash was dropped: the store is consistent, but its
                // last write is gone — say so rather than silently answer one record earlier.
                Output.stderr(
                    "hearth: note: recovery dropped a torn tail: \(torn.bytes) bytes at \(torn.file):\(torn.offset) (a write interrupted by a crash; everything before it is intact)"
                )
            }
            if let torn = store.recovery.ignoredTornTail {
                Output.stderr(
                    "hearth: note: read-only: ignored a torn tail of \(torn.bytes) bytes at \(torn.file):\(torn.offset) (a write in progress or interrupted by a crash; not truncated, not read)"
                )
            }
            return store
        } catch {
            if case .log(.storeMissing) = error { throw missingStore(directory) }
            throw error
        }
    }

    /// Opens the store in `directory` for a reading command (`get`, `stats`, `state`).
    ///
    /// With `readOnly`, or — automatically, with a note on stderr — when the directory is not
    /// writable or another process holds the store's lock, the store is opened read-only
    /// (``Store/Options/readOnly``): no lock, nothing written, the last consistent state read
    /// from the MANIFEST, the checkpoint and the segments. Otherwise as ``openToRead(_:cacheSizeBytes:)``.
    static func openForReading(_ directory: String, readOnly: Bool, cacheSizeBytes: Int? = nil) throws -> Store {
        if readOnly { return try openReadOnly(directory, cacheSizeBytes: cacheSizeBytes) }
        if access(directory, F_OK) == 0, access(directory, W_OK | X_OK) != 0 {
            let why = String(cString: strerror(errno))
            Output.stderr(
                "hearth: note: \(directory) is not writable (\(why)); reading the store read-only (no lock, nothing written)"
            )
            return try openReadOnly(directory, cacheSizeBytes: cacheSizeBytes)
        }
        do {
            return try openToRead(directory, cacheSizeBytes: cacheSizeBytes)
        } catch let error as StoreError {
            switch error {
            case .log(.storeLocked):
                Output.stderr(
                    "hearth: note: another process has the store open (it holds the lock); reading its last consistent state read-only — commits that process makes meanwhile may be missing"
                )
            case .log(.io(let e)) where e.code == .permissionDenied || e.code == .other(EROFS):
                Output.stderr(
                    "hearth: note: the store cannot be written (\(e)); reading it read-only (no lock, nothing written)")
            default:
                throw error
            }
            return try openReadOnly(directory, cacheSizeBytes: cacheSizeBytes)
        }
    }

    /// Opens the store read-only, noting on stderr a torn tail it left in place.
    static func openReadOnly(_ directory: String, cacheSizeBytes: Int? = nil) throws -> Store {
        var options = toolOptions(cacheSizeBytes: cacheSizeBytes)
        options.readOnly = true
        return try open(directory, options: options)
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
        do { return try ToolQuery.spec(json) } catch {
            throw ValidationError("invalid --query: \(error)")
        }
    }

    /// Closes the store, reporting a failure.
    static func close(_ store: Store) throws {
        try store.close()
    }
}
