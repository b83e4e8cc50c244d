import ArgumentParser
import Hearth

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The tool's exit codes (Hearth's DocC article "The hearth tool").
enum ExitCodes {
    /// Everything went fine.
    static let ok: Int32 = 0
    /// The store is damaged, or an operation failed.
    static let failure: Int32 = 1
    /// The command line was wrong.
    static let usage: Int32 = 2
}

/// A failure the tool reports itself: a one-line message and an exit code.
struct ToolError: Error, CustomStringConvertible {
    let message: String
    let code: Int32

    /// The store is damaged or an operation failed (exit 1).
    static func failed(_ message: String) -> ToolError { ToolError(message: message, code: ExitCodes.failure) }
    /// A usage error found after parsing (exit 2).
    static func usage(_ message: String) -> ToolError { ToolError(message: message, code: ExitCodes.usage) }
    /// The output already said what happened; exit with `code` without another message.
    static func silent(_ code: Int32) -> ToolError { ToolError(message: "", code: code) }

    var description: String { message }
}

extension ExitCodes {
    /// What every error the tool reports starts with, whichever subcommand and layer found it
    /// (the exit code tells a usage error from a failure; notes start with `hearth: note: `).
    static let errorPrefix = "hearth: error: "

    /// Maps any error escaping a command to its exit code, writing its one-line message (or,
    /// for a command line ArgumentParser refused, that line and the usage text) to stderr. The
    /// only place errors become exit codes.
    static func report(_ error: any Error) -> Int32 {
        switch error {
        case let e as ToolError:
            if !e.message.isEmpty { Output.stderr(errorPrefix + e.message) }
            return e.code
        case let e as StoreError:
            Output.stderr(errorPrefix + describe(e))
            return failure
        case let e as LogError:
            Output.stderr(errorPrefix + describe(.log(e)))
            return failure
        default:
            // ArgumentParser: help and --version exit 0 (printed on stdout); parse and
            // validation errors are usage errors, exit 2 (ArgumentParser would use 64).
            let code = HearthCommand.exitCode(for: error)
            if code == .success { HearthCommand.exit(withError: error) }
            if code == .validationFailure {
                Output.stderr(prefixed(HearthCommand.fullMessage(for: error)))
                return usage
            }
            let message = HearthCommand.message(for: error)
            if !message.isEmpty { Output.stderr(prefixed(message)) }
            return code.rawValue == 0 ? failure : code.rawValue
        }
    }

    /// ArgumentParser's message with the tool's prefix in place of its own `Error: `.
    static func prefixed(_ message: String) -> String {
        errorPrefix + (message.hasPrefix("Error: ") ? message.dropFirst("Error: ".count) : message[...])
    }

    /// A one-line description of a store error that names the file and offset when known.
    static func describe(_ e: StoreError) -> String {
        var text = e.description.replacingNewlines()
        if case .log(let l) = e, let file = l.file {
            if let offset = l.offset {
                if !text.contains(file) { text += " (file \(file), offset \(offset))" }
            } else if !text.contains(file) {
                text += " (file \(file))"
            }
        }
        if e.isCorruption { text = "store is damaged: " + text }
        return text
    }
}

extension String {
    /// The text on one line (newlines become spaces).
    func replacingNewlines() -> String {
        String(map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}
