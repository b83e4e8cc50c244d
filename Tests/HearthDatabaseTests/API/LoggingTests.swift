import Dispatch
import Logging
import Synchronization
import Testing
@testable import HearthDatabase

/// The database logs through swift-log: warnings at `.warning` on ``Database/Options/logger``,
/// debug lines at `.debug` — reaching a logger at `.info` only while logging is enabled
/// (Firebase's `setLoggingEnabled`) — and a ``Database/Options/logHandler`` takes both instead.
/// The per-database switch (`debugLogging`) stands in for the global one, which tests running in
/// parallel would share.
@Suite("Logging through swift-log")
struct LoggingTests {
    /// Every line a logger was given, with its level and label.
    final class Captured: Sendable {
        let lines = Mutex<[(level: Logger.Level, label: String, text: String)]>([])
        var all: [(level: Logger.Level, label: String, text: String)] { lines.withLock { $0 } }
    }

    struct CapturingHandler: LogHandler {
        let label: String
        let captured: Captured
        var logLevel: Logger.Level = .info
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            captured.lines.withLock { $0.append((event.level, label, "\(event.message)")) }
        }
    }

    func database(_ captured: Captured, debug: Bool?, handler: (@Sendable (String) -> Void)? = nil) throws -> Database {
        var o = Database.Options()
        o.connectAtOpen = false
        o.callbackQueue = DispatchQueue(label: "test.logging")
        o.logger = Logger(label: "test.logging") { CapturingHandler(label: $0, captured: captured) }
        o.logHandler = handler
        o.debugLogging = debug
        return try Database(url: "ws://127.0.0.1:9?ns=logging", options: o)
    }

    /// A warning (keepSynced refused under `.info`) goes to the logger at `.warning`; a debug
    /// line (purging writes) is not logged while debug logging is off and the logger is at
    /// `.info`.
    @Test func warningsReachTheLoggerAndDebugLinesWaitForTheSwitch() throws {
        let captured = Captured()
        let db = try database(captured, debug: false)
        db.reference(withPath: ".info/connected").keepSynced(true)
        db.purgeOutstandingWrites()
        let lines = captured.all
        #expect(lines.count == 1)
        #expect(lines.first?.level == .warning)
        #expect(lines.first?.label == "test.logging")
        #expect(lines.first?.text.contains("keepSynced(true)") == true)
        try db.close()
    }

    /// With debug logging on, a logger left at `.info` gets the debug lines at `.debug`.
    @Test func theSwitchLowersTheLevelForDebugLines() throws {
        let captured = Captured()
        let db = try database(captured, debug: true)
        db.purgeOutstandingWrites()
        let lines = captured.all
        #expect(lines.map(\.level) == [.debug])
        #expect(lines.first?.text == "purging outstanding writes")
        try db.close()
    }

    /// A log handler takes the warnings and, with the switch on, the debug lines; the logger
    /// gets nothing.
    @Test func aLogHandlerTakesEveryLineInstead() throws {
        let captured = Captured()
        let handled = Mutex<[String]>([])
        let db = try database(captured, debug: true) { text in handled.withLock { $0.append(text) } }
        db.reference(withPath: ".info/connected").keepSynced(true)
        db.purgeOutstandingWrites()
        #expect(captured.all.isEmpty)
        let texts = handled.withLock { $0 }
        #expect(texts.count == 2)
        #expect(texts.last == "purging outstanding writes")
        try db.close()
    }
}
