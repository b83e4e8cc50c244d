// A value guarded by a plain pthread mutex (HearthLog's `Monitor`).
//
// The store's core is locked by every committer, reader and background task. Under many
// concurrent committers on few cores, `Synchronization.Mutex`'s slow path spins before it
// sleeps; with 16 durable writers on 2 cores that spinning took about 14% of the CPU
// (`perf`, Benchmarks writes16), time the writers then lacked. A default pthread mutex sleeps
// in the kernel at once when contended.
import HearthLog

/// A value that is read and written only under a pthread mutex.
///
/// `@unchecked Sendable`: every access to `value` happens inside ``withLock(_:)``, which holds
/// the monitor's mutex.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private var value: Value
    private let monitor = Monitor()

    init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value. Not reentrant: `body` must not call
    /// `withLock` on the same object.
    func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        monitor.lock()
        defer { monitor.unlock() }
        return try body(&value)
    }
}
