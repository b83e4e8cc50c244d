// A value guarded by a plain pthread mutex.
//
// The store's core is locked by every committer, reader and background task. Under many
// concurrent committers on few cores, `Synchronization.Mutex`'s slow path spins before it
// sleeps; with 16 durable writers on 2 cores that spinning took about 14% of the CPU
// (`perf`, Benchmarks writes16), time the writers then lacked. A default pthread mutex sleeps
// in the kernel at once when contended.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value that is read and written only under a pthread mutex.
///
/// `@unchecked Sendable`: every access to `value` happens inside ``withLock(_:)``, which holds
/// the mutex; the mutex lives at a stable heap address for the object's lifetime.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let rc = pthread_mutex_init(mutex, nil)
        precondition(rc == 0, "pthread_mutex_init failed")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value. Not reentrant: `body` must not call
    /// `withLock` on the same object.
    func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
