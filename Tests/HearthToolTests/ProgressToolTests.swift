// The progress bar of `dump` and `verify`: drawn only on stderr and only when
// stderr is a terminal, erased when done, and never on the same line as results — with stdout
// piped, stdout carries not a byte of it; with stdout and stderr on one terminal, every bar is
// erased before results are written. A pseudo-terminal stands in for the terminal.
import Foundation
import Hearth
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite(.enabled(if: Tool.binary != nil, Tool.missingMessage))
struct ProgressToolTests {
    /// A pseudo-terminal: the master end (read by the test) and the slave's path.
    final class PseudoTerminal: Sendable {
        let master: Int32
        let slavePath: String

        init?() {
            // posix_openpt & co. are hidden behind feature macros in the imported headers:
            // looked up by name (they are plain, non-variadic libc functions).
            typealias OpenPT = @convention(c) (Int32) -> Int32
            typealias OnFD = @convention(c) (Int32) -> Int32
            typealias PTSName = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
            guard let libc = dlopen(nil, RTLD_NOW),
                let openpt = dlsym(libc, "posix_openpt"), let grant = dlsym(libc, "grantpt"),
                let unlock = dlsym(libc, "unlockpt"), let name = dlsym(libc, "ptsname")
            else { return nil }
            let m = unsafeBitCast(openpt, to: OpenPT.self)(O_RDWR | O_NOCTTY)
            guard m >= 0 else { return nil }
            guard unsafeBitCast(grant, to: OnFD.self)(m) == 0, unsafeBitCast(unlock, to: OnFD.self)(m) == 0,
                let path = unsafeBitCast(name, to: PTSName.self)(m)
            else {
                close(m)
                return nil
            }
            master = m
            slavePath = String(cString: path)
        }

        deinit { close(master) }
    }

    /// Runs `hearth args…` with stderr (and, if `stdoutToo`, stdout) on a fresh pseudo-terminal
    /// and stdout otherwise to a pipe; returns stdout and everything the terminal received.
    static func runOnTerminal(_ args: [String], stdoutToo: Bool = false) throws -> (stdout: String, terminal: String)? {
        guard let pty = PseudoTerminal() else { return nil }
        let slave = open(pty.slavePath, O_RDWR | O_NOCTTY)
        guard slave >= 0 else { return nil }
        let process = Process()
        process.executableURL = Tool.binary!
        process.arguments = args
        var environment = ProcessInfo.processInfo.environment
        environment["HEARTH_PROGRESS_DELAY_MS"] = "0"  // draw at once: the test store is small
        process.environment = environment
        let terminalHandle = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        let pipe = Pipe()
        process.standardError = terminalHandle
        process.standardOutput = stdoutToo ? terminalHandle : pipe
        process.standardInput = FileHandle.nullDevice

        // The terminal is read while the tool writes (its buffer is small).
        let received = Mutex<[UInt8]>([])
        let done = DispatchSemaphore(value: 0)
        let master = pty.master
        Thread {
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
                if n <= 0 { break }  // EIO once every slave descriptor is closed
                received.withLock { $0 += buffer[0..<n] }
            }
            done.signal()
        }.start()
        try process.run()
        close(slave)
        let out = stdoutToo ? Data() : pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        done.wait()
        let bytes = received.withLock { $0 }
        return (
            String(decoding: out, as: UTF8.self),
            String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
        )
    }

    /// A store with a checkpoint and a long tail: enough output that `dump` flushes its
    /// results several times while the bar is up.
    static func makeStore(_ store: TempStore) throws {
        var lines = (0..<300).map {
            #"{"op":"serverSet","path":"a/k\#($0)","value":"\#(String(repeating: "x", count: 40))"}"#
        }
        lines.append(#"{"op":"compact"}"#)
        lines += (0..<1500).map { #"{"op":"serverSet","path":"b/k\#($0)","value":\#($0)}"# }
        let r = try Tool.apply(store.path, lines, ["--durability", "buffered"])
        #expect(r.status == 0, "\(r.stderr)")
    }

    static let erase = "\r\u{1B}[K"

    @Test func withStdoutPipedTheBarIsOnlyOnTheTerminal() throws {
        let store = TempStore()
        try Self.makeStore(store)
        for (command, phase) in [("dump", "records"), ("verify", "records")] {
            let reference = try Tool.run([command, store.path])
            #expect(
                reference.status == 0 && !reference.stdout.contains("\r") && reference.stderr.isEmpty, "\(reference)")
            guard let run = try Self.runOnTerminal([command, store.path]) else {
                print("skipped: no pseudo-terminal available")
                return
            }
            // stdout is exactly the piped results: not a byte of the bar.
            #expect(run.stdout == reference.stdout, "\(command): stdout differs when stderr is a terminal")
            #expect(!run.stdout.contains("\r") && !run.stdout.contains("\u{1B}") && !run.stdout.contains("%]"))
            // The terminal got the bar, in phases, and it was erased at the end.
            #expect(
                run.terminal.contains(Self.erase + "\(command): segments ["),
                "\(command): \(run.terminal.debugDescription)")
            #expect(
                run.terminal.contains(Self.erase + "\(command): \(phase) ["),
                "\(command): \(run.terminal.debugDescription)")
            #expect(
                run.terminal.hasSuffix(Self.erase),
                "\(command): the bar is not erased: \(run.terminal.debugDescription)")
        }
    }

    @Test func onOneTerminalResultsAndTheBarNeverShareALine() throws {
        let store = TempStore()
        try Self.makeStore(store)
        let reference = try Tool.run(["dump", store.path])
        #expect(reference.stdout.utf8.count > 3 << 16, "enough output for several flushes")
        guard let run = try Self.runOnTerminal(["dump", store.path], stdoutToo: true) else {
            print("skipped: no pseudo-terminal available")
            return
        }
        // Each bar starts with an erase and runs to the next erase (or to the end): what is left
        // when the bars and erases are taken out is exactly the results. A result written after
        // a bar on its line would be swallowed here, and the comparison fail.
        let bars = run.terminal.components(separatedBy: Self.erase)
        var results = bars[0]
        var drawn = 0
        for piece in bars.dropFirst() {
            if piece.hasPrefix("dump: ") {
                drawn += 1
                #expect(!piece.contains("\n"), "a result shares a line with the bar: \(piece.debugDescription)")
            } else {
                results += piece
            }
        }
        #expect(drawn >= 2, "the bar was drawn: \(drawn)")
        #expect(results == reference.stdout, "results on the terminal differ from the piped results")
    }
}
