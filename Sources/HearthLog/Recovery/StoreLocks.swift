import Synchronization
// The store's lock as recovery takes it: registered per process, so that a second open of the same
// store in this process is told apart from another process holding it; and the no-lock of a
// read-only open.

/// The lock of a read-only log: none is taken.
final class NoLock: StoreLock {
    func release() {}
}

/// A store lock this process holds, registered by path while held, so that a second open of
/// the same store in this process is reported as such rather than as "locked by another
/// process" (an advisory file lock cannot tell the two apart).
final class RegisteredLock: StoreLock {
    /// How many locks this process holds per path. Counted, not a set: two file systems (the
    /// simulated ones of concurrent tests) may use the same path, and one releasing must not
    /// make the other's look free.
    private static let held = Mutex<[String: Int]>([:])
    private let inner: any StoreLock
    private let path: String
    private let released = Atomic<Bool>(false)

    init(_ inner: any StoreLock, path: String) {
        self.inner = inner
        self.path = path
        RegisteredLock.held.withLock { $0[path, default: 0] += 1 }
    }

    /// Whether this process holds the lock at `path` (as spelled when it was taken).
    static func isHeld(_ path: String) -> Bool { held.withLock { $0[path] != nil } }

    func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        inner.release()
        RegisteredLock.held.withLock { held in
            held[path, default: 1] -= 1
            if held[path] == 0 { held[path] = nil }
        }
    }
}
