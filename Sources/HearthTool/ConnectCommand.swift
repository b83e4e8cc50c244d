import ArgumentParser
import Foundation
import Hearth

/// `hearth connect STORE URL`: a sync client (HearthDatabase) on a store directory, driven by
/// JSON-line commands on stdin, reporting every event, ack and connection change as JSON lines.
struct ConnectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connect",
        abstract:
            "A sync client on a store: JSON-line commands on stdin, every event, ack and connection change as a JSON line on stdout.",
        discussion: """
            URL: http://HOST:PORT?ns=NS (or https://, ws://, wss://), e.g. the database \
            URL a `hearth serve` prints. The store keeps pending writes, cached data and \
            keepSynced queries across runs.

            Commands, one JSON object per line (P a path, V a JSON value, Q a query; any
            command may carry "id", echoed in its replies):
              {"op":"set","path":P,"value":V,"priority":PRI}   (priority optional)
              {"op":"update","path":P,"values":{"rel/path":V,…}}
              {"op":"remove","path":P}
              {"op":"push","path":P,"value":V}   (no value: only a new key)
              {"op":"keepSynced","path":P,"query":Q,"on":true|false}
              {"op":"listen","path":P,"query":Q,"events":[E,…],"tag":T}
              {"op":"unlisten","tag":T}
              {"op":"get","path":P,"query":Q}
              {"op":"goOffline"}  {"op":"goOnline"}  {"op":"pending"}
              {"op":"auth","token":TOKEN|null}   (reconnects with it)
              {"op":"appCheck","token":TOKEN|null}   (sent at once, and on every connection)
              {"op":"transaction","path":P,"function":F,"argument":V}
                  a registered update function, kept in the store and re-run
                  after a restart until it commits
              {"op":"onDisconnect","path":P,"action":A,"value":V,"values":{…}}
                  A: set (value), update (values), remove, cancel
              {"op":"quit"}
            Q: {"orderBy":"$key"|"$value"|"$priority"|"child/path"|{"child":"a/b"},
                "startAt"|"startAfter"|"endAt"|"endBefore"|"equalTo":
                    V or {"value":V,"key":K},
                "limitToFirst"|"limitToLast":N}   (absent: the whole location)
               "key", "value", "priority" are the orderings, as in every hearth
               command; a child named value is {"child":"value"}.
            E: value (default), child_added, child_changed, child_removed,
               child_moved. Without "tag", one is generated.
            F: increment (adds the argument, default 1), append (adds it as the
               next element of a list), max (keeps the larger).

            Output, one JSON object per line, "type" first, flushed at once:
              ready {store,url,pendingWrites,online}
              connected {connected}   (every .info/connected change)
              saved {op,path,key?,writeId,id?}   (in the store, at --durability)
              ack {writeId,ok,error?,restored?,id?}   (the server's answer;
                  restored: a write of an earlier run)
              listening {tag,path,events}   cancelled {tag,error}
              event {tag,event,path,key,prev?,exists,value,priority?,keys?}
              get {path,exists,value,priority?,keys?,id?}
              pushed {path,key}   ok {op,…}   pending {writeIds}
              queued {op,path,function,transactionId} or {op,path,action}
              transaction {transactionId,committed,error?}
              onDisconnect {path,action,ok,error?}
              error {line,op?,error,id?}   closed {pendingWrites}
            A bad line prints an error line and the client goes on. At the end of \
            input or quit the database is closed (unacknowledged writes stay in the \
            store for the next run); exit code 0; 1 if the store cannot be opened, \
            2 for a bad URL or flag.
            """
    )

    @Argument(help: "The client's store directory (created if missing).")
    var store: String

    @Argument(help: "The database URL, e.g. http://127.0.0.1:9000?ns=default (what `hearth serve` prints).")
    var url: String

    @Option(
        name: .customLong("token-file"),
        help: ArgumentHelp("A file holding the initial auth token (the `auth` command replaces it).", valueName: "FILE")
    )
    var tokenFile: String?

    @Option(
        name: .customLong("app-check-token-file"),
        help: ArgumentHelp(
            "A file holding the initial App Check token (the `appCheck` command replaces it).", valueName: "FILE")
    )
    var appCheckTokenFile: String?

    @Option(help: "How durable a write is when its `saved` line is printed.")
    var durability: ApplyCommand.Tier = .full

    @Option(
        name: .customLong("cache-size"),
        help: ArgumentHelp("The store's size cap, 1 MiB … 100 MiB (default 10 MiB).", valueName: "BYTES"))
    var cacheSize: Int?

    @Flag(help: "Start offline (until a goOnline command).")
    var offline = false

    func validate() throws {
        try ApplyCommand.validateCacheSize(cacheSize)
    }

    /// The token in `file` (surrounding white space removed), `nil` without a file.
    static func readToken(_ file: String?, _ what: String) throws -> String? {
        guard let file else { return nil }
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw ValidationError("cannot read the \(what) file \(file)")
        }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if token.isEmpty { throw ValidationError("the \(what) file \(file) is empty") }
        return token
    }

    func run() throws {
        let token = try Self.readToken(tokenFile, "token")
        let appCheck = try Self.readToken(appCheckTokenFile, "App Check token")
        let session = try ConnectSession(
            store: store, url: url, token: token, appCheckToken: appCheck, durability: durability.durability,
            cacheSize: cacheSize)
        session.start(online: !offline)
        session.run(LineReader(fd: 0))
    }
}
