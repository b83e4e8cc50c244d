import ArgumentParser
@_spi(HearthInternals) import Hearth

/// `hearth state STORE`: the whole materialized state.
struct StateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state",
        abstract: "Print the whole materialized state (the auth token redacted).",
        discussion: """
            Opens the store (taking its lock; recovery may truncate a torn tail and maintenance may \
            run, pruning nothing a cap could keep: the cap is the opener's); with --read-only, or \
            when the directory is not writable or another process holds the store, reads it \
            without the lock and writes nothing.
            """
    )

    @Argument(help: "The store directory.")
    var store: String

    @Flag(help: "Print the state as one JSON object.")
    var json = false

    @Flag(name: .customLong("show-secrets"), help: "Show the auth token instead of redacting it.")
    var showSecrets = false

    @Flag(
        name: .customLong("read-only"),
        help:
            "Read without the lock and write nothing (automatic when the directory is not writable or another process holds the store)."
    )
    var readOnly = false

    func run() throws {
        let store = try StoreAccess.openForReading(self.store, readOnly: readOnly)
        let state = try store.state()
        try store.close()
        let out = Output()
        let j = Render.state(state, showSecrets: showSecrets)
        if json {
            out.json(j)
            return
        }
        out.line("server cache: " + (j["serverCache"] ?? .null).serialized())
        for (title, key) in [
            ("pending writes", "pendingWrites"), ("tracked queries", "trackedQueries"), ("pins", "pins"),
            ("transactions", "transactions"), ("onDisconnect operations", "onDisconnect"),
            ("untracked cache entries", "untracked"),
        ] {
            let items = j[key]?.arrayValue ?? []
            out.line("\(title): \(items.count)")
            for item in items { out.line("  " + item.serialized()) }
        }
        out.line("auth: " + (j["auth"] ?? .null).serialized())
        out.line("server time offset: \((j["serverTimeOffsetMs"] ?? .null).serialized()) ms")
        out.line("last ids: " + (j["lastIDs"] ?? .null).serialized())
    }
}
