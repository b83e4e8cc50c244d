import Logging
import Synchronization

extension Database {
    /// Whether ``setLoggingEnabled(_:)`` turned debug logging on.
    static let loggingEnabled = Atomic<Bool>(false)

    /// Turns debug logging on or off for every database — Firebase's `setLoggingEnabled(_:)`.
    /// With it on, each database logs what it does (connecting, connected and disconnected,
    /// purging writes) at `.debug` through its ``Options/logger``, whose level it lowers to
    /// `.debug` for those lines (or hands them to ``Options/logHandler``). Its warnings are
    /// logged either way. Off by default: then debug lines reach only a logger the app set to
    /// `.debug` itself.
    public static func setLoggingEnabled(_ enabled: Bool) {
        loggingEnabled.store(enabled, ordering: .relaxed)
    }

    /// Where warnings go: ``Options/logHandler``, or ``Options/logger`` at `.warning`.
    static func logger(_ options: Options) -> @Sendable (String) -> Void {
        if let handler = options.logHandler { return handler }
        let logger = options.logger
        return { text in logger.warning("\(text)") }
    }

    /// Where debug lines go: while logging is enabled, the log handler, or the logger at
    /// `.debug` with its level lowered to `.debug`; otherwise the logger at `.debug` (which
    /// drops them unless the app set its level that low), or nowhere with a handler.
    static func debugLog(_ options: Options) -> @Sendable (String) -> Void {
        let forced = options.debugLogging
        let handler = options.logHandler, logger = options.logger
        return { text in
            let enabled = forced ?? loggingEnabled.load(ordering: .relaxed)
            if let handler {
                if enabled { handler(text) }
                return
            }
            var l = logger
            if enabled, l.logLevel > .debug { l.logLevel = .debug }
            l.debug("\(text)")
        }
    }
}
