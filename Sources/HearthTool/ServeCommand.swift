import ArgumentParser
import Foundation
@_spi(HearthInternals) import Hearth
import HearthRules
@_spi(HearthInternals) import HearthServer
import Synchronization

/// `hearth serve DATA_DIR`: a Realtime Database server on one port.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract:
            "Serve a Realtime Database from a Hearth store: WebSocket protocol v5 at /.ws, REST and event streams at /<path>.json.",
        discussion: """
            The data directory is a Hearth store (created if missing) holding the whole database: \
            nothing is pruned, and every write is durable before it is acknowledged or pushed. \
            `hearth verify`, `dump` and `stats` work on it (stop the server before `get` or `apply`).

            Auth: JWTs signed HS256 with the secret in --secret-file (`exp` required; uid from \
            `uid` or `sub`; every claim, `admin` included, is what rules read as `auth.token`). \
            The admin, who bypasses rules, is the secret itself given as the credential \
            (`Authorization: Bearer SECRET`, `?auth=SECRET`, or a client's token), as Firebase's \
            legacy database secret; it may act as a user with `auth_variable_override`. \
            With --emulator, as Firebase's emulator and for local development only: everyone may \
            read and write (unless --rules is given), unsigned tokens (alg none) are accepted and never expire (their claims are still checked), and \
            `Bearer owner` is the admin. With --rules FILE, Firebase security rules decide for \
            everyone but the admin; a rules file with an error stops the server before it starts.

            Namespaces: each `ns` a request names (`/.ws?v=5&ns=NAME`, `/path.json?ns=NAME`) is a \
            database of its own — its own data, rules, sessions and onDisconnect operations — \
            kept in DATA_DIR/namespaces/NAME/ (a Hearth store) and opened when first named; a \
            request without `ns`, or naming --namespace, reaches the store in DATA_DIR itself. \
            The database URL printed at startup, http://HOST:PORT?ns=NAME with --namespace's NAME, \
            is what Firebase's clients and `hearth connect` take. \
            Each starts with the --rules file's rules; the admin reads and replaces a \
            namespace's rules with GET and PUT /.settings/rules.json?ns=NAME until the server stops.
            """
    )

    @Argument(help: "The data directory (a Hearth store).")
    var dataDirectory: String

    @Option(help: "The port (0 picks a free one).")
    var port: Int = 9000

    @Option(help: "The address to bind.")
    var host: String = "127.0.0.1"

    @Option(
        name: .customLong("secret-file"),
        help: ArgumentHelp(
            "A file holding the HS256 secret (at least 32 bytes) tokens are signed with; the secret itself is the admin credential.",
            valueName: "FILE"))
    var secretFile: String?

    @Option(
        name: .customLong("app-check-key-file"),
        help: ArgumentHelp(
            "Enforce App Check (a test mode of Firebase's enforcement): a file holding the HS256 key (at least 32 bytes) App Check tokens are signed with. A WebSocket client's reads and writes are refused until it sends a valid, unexpired token; an invalid one shuts its connection down.",
            valueName: "FILE"))
    var appCheckKeyFile: String?

    @Flag(
        help:
            "Emulator mode, for local development only: accept unsigned tokens and the admin credential `owner`; without --rules, allow everything."
    )
    var emulator = false

    @Option(
        help: ArgumentHelp(
            "A security rules file (Firebase's JSON format: comments, expressions over several lines and trailing commas allowed), enforced on every read, listen, write and onDisconnect.",
            valueName: "FILE"))
    var rules: String?

    @Option(
        name: .customLong("rules-step-budget"),
        help: ArgumentHelp(
            "The work one request's rules may take, in evaluation steps (about 30 ns each); a request that runs out is denied. Raise it for writes that validate more than about 20,000 nodes.",
            valueName: "STEPS"))
    var rulesStepBudget = RulesSet.Limits().evaluationSteps

    @Option(
        name: .customLong("idle-timeout"),
        help: ArgumentHelp(
            "Seconds of silence after which a WebSocket connection is closed and its onDisconnect operations run.",
            valueName: "SECONDS"))
    var idleTimeout: Int = 120

    @Option(
        name: .customLong("public-host"),
        help: ArgumentHelp(
            "The host (and port) clients are told to reconnect to, in every WebSocket hello; by default the Host they connected with.",
            valueName: "HOST[:PORT]"))
    var publicHost: String?

    @Option(
        help: ArgumentHelp(
            "The name of the database in DATA_DIR itself, which requests without `ns` reach: `ns=NAME` reaches it too.",
            valueName: "NAME"))
    var namespace = "default"

    @Option(
        name: .customLong("max-namespaces"),
        help: ArgumentHelp(
            "How many databases besides the default one may be open at once (each a store in DATA_DIR/namespaces/); a request naming one more is answered 503.",
            valueName: "N"))
    var maxNamespaces = Databases.defaultMaxNamespaces

    @Option(
        name: .customLong("redirect"),
        help: ArgumentHelp(
            "Send a namespace's WebSocket clients to the instance that serves it (a reset in place of the hello; clients keep the host for their next start); REST requests for it are answered 421. Repeat for more namespaces.",
            valueName: "NAMESPACE=HOST[:PORT]"))
    var redirect: [String] = []

    @Option(
        name: .customLong("port-file"),
        help: ArgumentHelp(
            "Write the bound port to this file once listening (for scripts using --port 0).", valueName: "FILE"))
    var portFile: String?

    @OptionGroup(title: "Limits")
    var limits: ServeLimitOptions

    /// The key in `file` (surrounding white space trimmed); `what` names the file in errors.
    static func readKey(_ file: String, _ what: String) throws -> String {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw ToolError.usage("cannot read \(what) \(file)")
        }
        let key = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !key.isEmpty else { throw ToolError.usage("\(what) \(file) is empty") }
        return key
    }

    func run() async throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port \(port) is not a port number (0…65535)") }
        guard idleTimeout > 0 else { throw ValidationError("--idle-timeout must be positive") }
        if let publicHost, ServerCore.reconnectHost(publicHost) == nil {
            throw ValidationError("--public-host \(publicHost) is not a host name or address with an optional port")
        }
        guard rulesStepBudget > 0 else { throw ValidationError("--rules-step-budget must be positive") }
        guard maxNamespaces >= 0 else { throw ValidationError("--max-namespaces must not be negative") }
        if !Databases.isValidName(namespace) {
            throw ValidationError("--namespace \(namespace): 1 to 63 lowercase letters, digits and '-'")
        }
        let redirects: Redirects
        do { redirects = try Redirects(arguments: redirect) } catch { throw ValidationError("--redirect: \(error)") }
        if redirects.host(for: namespace) != nil {
            throw ValidationError("--redirect: the namespace \(namespace) is the one DATA_DIR holds")
        }
        let secret = try secretFile.map { try Self.readKey($0, "the secret file") }
        var policy: (any AccessPolicy)? = nil
        var rulesText: String?
        var ruleLimits = RulesSet.Limits()
        ruleLimits.evaluationSteps = rulesStepBudget
        if let rules {
            let (set, text) = try Self.loadRules(file: rules, limits: ruleLimits)
            policy = RulesAccessPolicy(rules: set)
            rulesText = text
        }
        let verifier: FirebaseTokenVerifier
        do { verifier = try await FirebaseTokenVerifier(secret: secret, emulator: emulator) } catch {
            throw ToolError.usage("\(secretFile ?? "the secret file"): \(error)")
        }
        var appCheckVerifier: AppCheckVerifier?
        if let appCheckKeyFile {
            let key = try Self.readKey(appCheckKeyFile, "the App Check key file")
            do { appCheckVerifier = try await AppCheckVerifier(key: key) } catch {
                throw ToolError.usage("\(appCheckKeyFile): \(error)")
            }
        }
        // Everything that can refuse the command line, the port included, is checked before
        // the store is opened: a refused start leaves no store behind.
        let socket: BoundSocket
        do { socket = try BoundSocket.bind(host: host, port: port) } catch {
            if case .portInUse = error {
                throw ToolError.failed("\(error) (choose another --port, or --port 0 for a free one)")
            }
            throw ToolError.failed("\(error)")
        }
        var configuration = ServerConfiguration()
        configuration.emulator = emulator
        configuration.idleTimeoutMs = Int64(idleTimeout) * 1000
        configuration.publicHost = publicHost
        configuration.enforcesAppCheck = appCheckVerifier != nil
        limits.apply(to: &configuration)
        // Each database's store (the default one here, each namespace's in `namespaces/`), reopened
        // by its runtime after a failed commit (ServerRuntime.init(directory:...)).
        let policyInForce = policy, textInForce = rulesText, limitsInForce = ruleLimits, settings = configuration
        let appCheckInForce = appCheckVerifier
        @Sendable func runtime(in directory: String) throws(StoreError) -> ServerRuntime {
            try ServerRuntime(
                directory: directory, configuration: settings, verifier: verifier, appCheckVerifier: appCheckInForce,
                policy: policyInForce, rulesText: textInForce, rulesLimits: limitsInForce)
        }
        if emulator { FileHandle.standardError.write(Data((Self.emulatorWarning + "\n").utf8)) }
        let namespaces = (dataDirectory as NSString).appendingPathComponent("namespaces")
        let databases = Databases(
            primary: try runtime(in: dataDirectory), defaultName: namespace, maxNamespaces: maxNamespaces,
            redirects: redirects
        ) { name in
            // Each namespace is a store of its own; `namespaces/` is made on first use.
            try FileManager.default.createDirectory(atPath: namespaces, withIntermediateDirectories: true)
            let directory = (namespaces as NSString).appendingPathComponent(name)
            return try runtime(in: directory)
        }
        let fileLimit = NetworkServer.raiseFileDescriptorLimit()
        let server = try await NetworkServer.start(listening: socket, databases: databases, limits: limits.limits)
        if let portFile {
            try String(server.port).write(toFile: portFile, atomically: true, encoding: .utf8)
        }
        FileHandle.standardError.write(
            Data(
                "hearth serve: listening on \(host):\(server.port), database URL \(Self.databaseURL(host: host, port: server.port, namespace: namespace))\(emulator ? ", emulator mode" : "")\n"
                    .utf8))
        FileHandle.standardError.write(
            Data(
                "hearth serve: at most \(server.connectionLimit) connections at once (open-file limit \(fileLimit == Int.max ? "unlimited" : String(fileLimit)))\n"
                    .utf8))
        // A failed commit suspends writes (reads go on; writes are retried until one commits);
        // only a store that can no longer be opened at all stops the runtime, and the process
        // then exits with an error rather than linger refusing everything.
        let watchdog = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(500))
                if databases.all.contains(where: { $0.failure != nil }) { kill(getpid(), SIGTERM); return }
            }
        }
        let signals = StopSignals()
        await signals.wait()
        watchdog.cancel()
        FileHandle.standardError.write(Data("hearth serve: stopping\n".utf8))
        try await server.stop()
        for runtime in databases.all { try? runtime.currentStore?.close() }
        if let failure = databases.all.lazy.compactMap(\.failure).first {
            throw ToolError(
                message:
                    "\(failure); the store could not be opened again: restart the server when the disk is readable (recovery keeps every acknowledged write)",
                code: ExitCodes.failure)
        }
    }
}

extension ServeCommand {
    /// The rules file at `file`, parsed and checked. A file that cannot be read or is refused
    /// is a usage error (exit 2) whose one line names the file, line, column and rule — without
    /// the usage text ArgumentParser prints after a `ValidationError`, which would push that
    /// line out of sight.
    static func loadRules(file: String, limits: RulesSet.Limits) throws(ToolError) -> (RulesSet, text: String) {
        guard let bytes = FileManager.default.contents(atPath: file) else {
            throw .usage("cannot read the rules file \(file)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .usage("the rules file \(file) is not UTF-8")
        }
        do { return (try RulesSet.parse(source: text, limits: limits), text) } catch {
            throw .usage("the rules file is refused: \(error.located(in: file))")
        }
    }

    /// The URL of the database in DATA_DIR, in the form Firebase's clients take
    /// (`http://HOST:PORT?ns=NAME`; an IPv6 address in brackets).
    static func databaseURL(host: String, port: Int, namespace: String) -> String {
        "http://\(host.contains(":") ? "[\(host)]" : host):\(port)?ns=\(namespace)"
    }

    /// What emulator mode trusts, said once at startup on stderr: anyone who can reach the port
    /// can be any user and the admin.
    static let emulatorWarning =
        "hearth serve: emulator mode trusts unsigned tokens (anyone may claim any user) and the credential `owner` (the admin, past every rule): for local development only"
}

/// Waits for SIGINT or SIGTERM.
final class StopSignals: Sendable {
    func wait() async {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let queue = DispatchQueue(label: "hearth-signals")
            let once = OnceFlag()
            for sig in [SIGINT, SIGTERM] {
                let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
                source.setEventHandler {
                    if once.claim() { continuation.resume() }
                }
                source.resume()
                SignalSources.keep(source)
            }
        }
    }
}

final class OnceFlag: Sendable {
    let done = Atomic<Bool>(false)
    func claim() -> Bool { !done.exchange(true, ordering: .relaxed) }
}

/// Keeps the signal sources alive for the process's life (set once, from `wait`).
enum SignalSources {
    nonisolated(unsafe) static var sources: [any DispatchSourceSignal] = []
    static func keep(_ s: any DispatchSourceSignal) { sources.append(s) }
}
