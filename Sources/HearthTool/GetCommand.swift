import ArgumentParser
import Hearth

/// `hearth get STORE PATH`: the value at a path, optionally through a query.
struct GetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Print the value at PATH with pending writes overlaid (or the server cache alone).",
        discussion: """
            Values print in Firebase's export format (.value/.priority/.sv). With --query, prints \
            the query's window. Opens the store (taking its lock; recovery may truncate a torn tail; \
            nothing a cap could keep is pruned: the cap is the opener's); \
            with --read-only, or when the directory is not writable or another process holds the \
            store, reads it without the lock and writes nothing.

            Q, every field optional ({} is the default query; V a value, K a key):
              {"orderBy":"key"|"value"|"priority"|{"child":"a/b"} (or "$key", "$value",
                 "$priority", "a/b": the same syntax as hearth connect's),
               "startAt"|"startAfter"|"endAt"|"endBefore"|"equalTo":{"value":V,"key":K},
               "limitToFirst":N,"limitToLast":N}
            Output: the value as export JSON, then (with --query) keys: [...] in the \
            query's order, then complete: true|false (whether the local data is complete \
            for PATH and Q). --json: {"value":V,"complete":B}, with "keys" for a query and \
            "hash" with --hash.
            """
    )

    @Argument(help: "The store directory.")
    var store: String

    @Argument(help: "The database path, slash-separated (\"/\" is the root).")
    var path: String

    @Option(
        help: ArgumentHelp(
            "A query in Hearth's JSON form, e.g. '{\"orderBy\":\"value\",\"limitToLast\":4}'.", valueName: "Q"))
    var query: String?

    @Flag(help: "The server cache alone, without pending writes.")
    var server = false

    @Flag(help: "Print the node hash (Firebase's) of the value.")
    var hash = false

    @Flag(help: "Print the result as one JSON object.")
    var json = false

    @Flag(
        name: .customLong("read-only"),
        help:
            "Read without the lock and write nothing (automatic when the directory is not writable or another process holds the store)."
    )
    var readOnly = false

    func validate() throws {
        _ = try StoreAccess.path(path, option: "PATH")
        if let query { _ = try StoreAccess.query(query) }
    }

    func run() throws {
        let path = try StoreAccess.path(self.path, option: "PATH")
        let spec = try query.map(StoreAccess.query)
        let store = try StoreAccess.openForReading(self.store, readOnly: readOnly)
        let result = try store.query(spec ?? .default, at: path, includePending: !server)
        let value =
            spec == nil ? (server ? try store.serverValue(at: path) : try store.value(at: path)) : result.window.node
        try store.close()

        let out = Output()
        if json {
            var m: [JSONMember] = []
            if spec != nil {
                m.append(JSONMember(key: "keys", value: .array(result.window.keys.map { .string($0.string) })))
            }
            m.append(JSONMember(key: "value", value: value.exportJSON()))
            m.append(JSONMember(key: "complete", value: .bool(result.complete)))
            if hash { m.append(JSONMember(key: "hash", value: .string(value.hash))) }
            out.json(.object(m))
        } else if hash {
            out.line(value.hash)
        } else {
            out.line(value.exportJSONString())
            if spec != nil {
                out.line("keys: " + JSONValue.array(result.window.keys.map { .string($0.string) }).serialized())
            }
            out.line("complete: \(result.complete)")
        }
    }
}
