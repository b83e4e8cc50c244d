import Synchronization

extension Database {
    /// Whether ``setLoggingEnabled(_:)`` turned debug logging on.
    static let loggingEnabled = Atomic<Bool>(false)

    /// Turns debug logging on or off for every database — Firebase's `setLoggingEnabled(_:)`.
    /// With it on, each database also tells its ``Options/logHandler`` (default: standard
    /// error) what it does: connecting, connected and disconnected, purging writes. Its
    /// warnings go there either way. Off by default.
    public static func setLoggingEnabled(_ enabled: Bool) {
        loggingEnabled.store(enabled, ordering: .relaxed)
    }

    /// Where debug lines go: the log handler while logging is enabled, nowhere otherwise.
    static func debugLog(_ options: Options) -> @Sendable (String) -> Void {
        let log = logger(options)
        let forced = options.debugLogging
        return { text in if forced ?? loggingEnabled.load(ordering: .relaxed) { log(text) } }
    }
}
