// A mutex with a condition variable (pthread), and a way to start a plain thread.
//
// `Synchronization.Mutex` has no condition variable, and the group-commit queue needs one: followers
// sleep until their leader has written (and synced) their records. Everything guarded by a Monitor is
// documented at the field that it guards.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// pthread mutex + condition variable. `@unchecked Sendable`: the pthread objects are the
/// synchronisation; they live at stable heap addresses for the lifetime of the monitor.
/// `package`: the engine guards its store core with one too (`Locked`).
package final class Monitor: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// The condition ``wait()`` and ``broadcast()`` use.
    private let own = Condition()

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let rc = pthread_mutex_init(mutex, nil)
        precondition(rc == 0, "pthread_mutex_init failed")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }
    package func unlock() { pthread_mutex_unlock(mutex) }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Waits for a broadcast. The monitor must be locked by the caller; spurious wake-ups happen,
    /// so every caller re-checks its condition in a loop.
    func wait() { wait(own) }

    /// Waits for a broadcast or until the monotonic clock reaches `deadline` (nanoseconds).
    func wait(untilMonotonic deadline: UInt64) { wait(own, untilMonotonic: deadline) }

    func broadcast() { own.broadcast() }

    /// Waits on `condition` (instead of the monitor's own condition variable) until it is
    /// signalled. The monitor must be locked by the caller; spurious wake-ups happen, so every
    /// caller re-checks its condition in a loop.
    func wait(_ condition: Condition) { pthread_cond_wait(condition.cond, mutex) }

    /// Waits on `condition` until it is signalled or the monotonic clock reaches `deadline`
    /// (nanoseconds).
    func wait(_ condition: Condition, untilMonotonic deadline: UInt64) {
        let now = monotonicNanos()
        if deadline <= now { return }
        #if canImport(Darwin)
        let delta = deadline - now
        var ts = timespec(tv_sec: Int(delta / 1_000_000_000), tv_nsec: Int(delta % 1_000_000_000))
        pthread_cond_timedwait_relative_np(condition.cond, mutex, &ts)
        #else
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        pthread_cond_timedwait(condition.cond, mutex, &ts)
        #endif
    }

    /// A condition variable of its own, used with one monitor's mutex (``wait(_:)``), so that a
    /// waker can wake exactly the threads a change concerns rather than every waiter (the
    /// group commit wakes each request's own thread, not all committers: see
    /// `LogCore.finish`).
    final class Condition: @unchecked Sendable {
        fileprivate let cond: UnsafeMutablePointer<pthread_cond_t>

        init() {
            cond = .allocate(capacity: 1)
            cond.initialize(to: pthread_cond_t())
            #if canImport(Darwin)
            let rc = pthread_cond_init(cond, nil)
            #else
            var attr = pthread_condattr_t()
            pthread_condattr_init(&attr)
            // Timed waits are measured on the monotonic clock, like monotonicNanos().
            pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
            let rc = pthread_cond_init(cond, &attr)
            pthread_condattr_destroy(&attr)
            #endif
            precondition(rc == 0, "pthread_cond_init failed")
        }

        deinit {
            pthread_cond_destroy(cond)
            cond.deallocate()
        }

        /// Wakes every thread waiting on this condition (cheap when none is: no system call).
        /// Call it with the monitor locked.
        func broadcast() { pthread_cond_broadcast(cond) }
    }
}

/// A joinable OS thread running a closure. Used for the `.batched` flusher and by tests that need
/// more concurrent writers than there are cores (Dispatch would cap them at the core count).
final class OSThread: @unchecked Sendable {
    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    #if canImport(Darwin)
    private var tid: pthread_t?
    #else
    private var tid = pthread_t()
    #endif
    private var joined = false

    /// Starts the thread. The closure runs exactly once.
    init(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        #if canImport(Darwin)
        let rc = pthread_create(
            &tid, nil,
            { raw in
                Unmanaged<Box>.fromOpaque(raw).takeRetainedValue().body()
                return nil
            }, box)
        #else
        let rc = pthread_create(
            &tid, nil,
            { raw in
                Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
                return nil
            }, box)
        #endif
        precondition(rc == 0, "pthread_create failed: \(rc)")
    }

    /// Waits for the thread to finish. Must be called exactly once, from another thread.
    func join() {
        precondition(!joined, "thread joined twice")
        joined = true
        #if canImport(Darwin)
        pthread_join(tid!, nil)
        #else
        pthread_join(tid, nil)
        #endif
    }
}
