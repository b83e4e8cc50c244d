import ArgumentParser
import Dispatch
import Hearth
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `hearth`: offline inspection and maintenance of a Hearth store.
struct HearthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hearth",
        abstract: "Inspect and maintain Hearth stores (offline-first realtime-database persistence).",
        discussion: """
            Exit codes: 0 fine, 1 the store is damaged or an operation failed, 2 usage error.
            `dump` and `verify` only read; the other commands open the store (taking its lock and \
            running recovery, which may truncate a torn tail). `get`, `stats` and `state` read \
            without the lock and write nothing with --read-only, or when the directory is not \
            writable or another process holds the store. `salvage` repairs a damaged store, keeping its \
            longest valid prefix.
            """,
        version: HearthInfo.version,
        subcommands: [
            DumpCommand.self, VerifyCommand.self, StatsCommand.self, StateCommand.self,
            GetCommand.self, ApplyCommand.self, CompactCommand.self, SalvageCommand.self, DemoCommand.self,
            ServeCommand.self, ConnectCommand.self,
        ]
    )
}

@main
enum HearthMain {
    static func main() {
        if CommandLine.arguments.count <= 1 {
            // No subcommand: a usage error (ArgumentParser would print help and exit 0).
            Output.stderr(HearthCommand.helpMessage())
            exit(ExitCodes.usage)
        }
        let first = CommandLine.arguments[1]
        let names = HearthCommand.configuration.subcommands.map { $0._commandName } + ["help"]
        if !first.hasPrefix("-") && !names.contains(first) {
            Output.stderr(
                ExitCodes.errorPrefix + "unknown subcommand '\(first)' (one of: \(names.joined(separator: ", ")))")
            exit(ExitCodes.usage)
        }
        do {
            var command = try HearthCommand.parseAsRoot()
            if let serve = command as? ServeCommand {
                try runBlocking { try await serve.run() }
            } else if let demo = command as? DemoCommand {
                try runBlocking { try await demo.run() }
            } else {
                try command.run()
            }
        } catch {
            exit(ExitCodes.report(error))
        }
        exit(ExitCodes.ok)
    }
}

/// Runs async work from the synchronous main and waits for it.
func runBlocking(_ body: @escaping @Sendable () async throws -> Void) throws {
    let result = Mutex<Result<Void, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        do { try await body(); result.withLock { $0 = .success(()) } } catch {
            result.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    done.wait()
    try result.withLock { $0! }.get()
}
