// An in-memory file system that models the page cache, so tests can cut the power.
//
// Model (after LevelDB's FaultInjectionTestEnv, SQLite's crash VFS and LazyFS):
// - Each file (inode) has its volatile content (what reads see) and its durable content (as of its last
//   successful sync), plus the ordered list of writes and truncates since that sync.
// - Each directory's entries are volatile until the directory is synced: creates, renames and unlinks
//   are queued per directory and become durable at syncDirectory. A file's own sync does NOT make its
//   name durable (the strict POSIX reading; ext4 is kinder, other file systems are not).
// - Every call counts as one I/O call. `crash(afterCalls: n)` lets calls 1...n run and makes call n+1
//   and every later call throw `.crashed` (the process died). `powerCut(mode:)` then replaces the state
//   by the image a machine would find after rebooting, chosen by the mode and the seeded generator.
// - Faults: any call kind can be made to fail with EIO/ENOSPC (or any code), once or from then on.
//   A failed call has no effect.
//
// Deterministic: the same seed and the same sequence of calls give the same images.
//
// The pieces: this file (the class, its state and the test controls), +PowerCut (power cuts and their
// modes), +FileSystem (the FileSystem calls and the bookkeeping every call goes through), +State (the
// simulation's data: inodes, pending writes, directory operations, faults), SimulatedFile (handles, locks).
import HearthLog
import HearthModel
import Synchronization

/// A deterministic, thread-safe, in-memory file system with power cuts and fault injection.
public final class SimulatedFileSystem: FileSystem {
    let state: Mutex<State>
    let syncDelayNanos = Atomic<UInt64>(0)
    let overwrites = Atomic<Int>(0)

    /// Extra latency of every file sync (slept outside the simulation's lock), to model a real device
    /// in concurrency tests. Default zero.
    public var syncDelay: Duration {
        get { .nanoseconds(Int64(syncDelayNanos.load(ordering: .relaxed))) }
        set { syncDelayNanos.store(newValue.nanoseconds, ordering: .relaxed) }
    }

    let syncDelayFilter = Mutex<String?>(nil)

    /// When set, only syncs of files whose path contains it take ``syncDelay`` (a slow
    /// checkpoint beside a fast log, say). Default `nil`: every file sync does.
    public var syncDelayPathContains: String? {
        get { syncDelayFilter.withLock { $0 } }
        set { syncDelayFilter.withLock { $0 = newValue } }
    }

    let syncHold = Atomic<Bool>(false)

    /// Holds every file sync that ``syncDelayPathContains`` selects (every one when it is
    /// `nil`) until ``releaseSyncs()``: a checkpoint that cannot finish for as long as a test
    /// needs, whatever the machine's load — where a delay would only make it likely.
    public func holdSyncs() { syncHold.store(true, ordering: .relaxed) }

    /// Lets held syncs (``holdSyncs()``) go on, and later ones run without waiting.
    public func releaseSyncs() { syncHold.store(false, ordering: .relaxed) }

    func sleepForSync(path: String) {
        let ns = syncDelayNanos.load(ordering: .relaxed)
        guard ns > 0 || syncHold.load(ordering: .relaxed) else { return }
        if let filter = syncDelayPathContains, !path.contains(filter) { return }
        while syncHold.load(ordering: .relaxed) { sleepNanos(1_000_000) }
        if ns > 0 { sleepNanos(ns) }
    }

    /// Creates an empty file system whose random choices (power cuts, salts, garbage) follow `seed`.
    public init(seed: UInt64) {
        state = Mutex(State(rng: SeededRandom(seed: seed)))
    }

    // MARK: Test controls

    /// The bytes in all named files now (an unlinked file no longer counts).
    public var storedBytes: Int { state.withLock { $0.storedBytes() } }

    /// The most bytes ever held by named files at once, checked after every write, truncate and
    /// rename — the disk footprint as a continuous sampler would see it, at every instant.
    public var peakStoredBytes: Int { state.withLock { $0.peakStoredBytes } }

    /// The named files and their sizes at the moment of ``peakStoredBytes``.
    public var filesAtPeak: [String: Int] { state.withLock { $0.peakFiles } }

    /// Starts ``peakStoredBytes`` again from what is stored now.
    public func resetPeakStoredBytes() { state.withLock { $0.peakStoredBytes = $0.storedBytes() } }

    /// Number of I/O calls made so far (since creation or the last power cut).
    public var callCount: Int { state.withLock { $0.calls } }
    /// Number of successful file syncs (fdatasync) so far. Never reset.
    public var syncCount: Int { state.withLock { $0.syncs } }
    /// Number of successful overwrites (`StoreFile.overwrite(_:at:)`, each also one write
    /// call) so far. Never reset.
    public var overwriteCount: Int { overwrites.load(ordering: .relaxed) }
    /// Number of successful directory syncs so far. Never reset.
    public var directorySyncCount: Int { state.withLock { $0.directorySyncs } }
    /// Whether the simulated process has crashed (a `crash(afterCalls:)` point was reached).
    public var hasCrashed: Bool { state.withLock { $0.crashed } }

    /// Lets calls up to number `n` (counted from now, 1-based) run; the next one and all later ones
    /// throw `.crashed`. `nil` removes the crash point.
    public func crash(afterCalls n: Int?) {
        state.withLock { s in
            s.crashAfter = n.map { s.calls + $0 }
        }
    }

    /// Makes calls of kind `operation` fail with `code`: the next one (after skipping `skip` matching
    /// calls) or, if `sticky`, every one from then on. `pathContains` restricts it to matching paths.
    public func injectFault(
        _ operation: FileOperation, _ code: FileSystemError.Code, sticky: Bool = false,
        skip: Int = 0, pathContains: String? = nil
    ) {
        state.withLock {
            $0.faults.append(
                Fault(
                    operation: operation, code: code, sticky: sticky, skip: skip,
                    pathContains: pathContains))
        }
    }

    /// Makes exactly one call fail with `code`, whatever its kind: the one after the next `n` calls
    /// (counted from now, as ``crash(afterCalls:)`` counts), so that a loop over `n` fails each
    /// call of an operation in turn. It fails as an injected fault does (no effect); later calls
    /// run normally.
    public func failCall(afterCalls n: Int, _ code: FileSystemError.Code) {
        state.withLock { $0.failAt = ($0.calls + n + 1, code) }
    }

    /// The calls that injected faults (``injectFault(_:_:sticky:skip:pathContains:)``,
    /// ``failCall(afterCalls:_:)``) made fail, in order: their kind and path. Emptied by
    /// ``clearFaults()`` and by a power cut.
    public var failedCalls: [(operation: FileOperation, path: String)] { state.withLock { $0.failedCalls } }

    /// Makes the next read of a file whose path contains `pathContains` first cut that file to
    /// `size` bytes (a truncate, not counted as a call), as a writer in another process does
    /// between a lock-free reader's `size()` and its `read`: a roll cutting off the zeros
    /// preallocated after the active segment's last record. Only the first matching read cuts.
    public func cutBeforeNextRead(pathContains: String, to size: UInt64) {
        state.withLock { $0.cutBeforeRead = (pathContains, size) }
    }

    /// Removes all injected faults (and a cut ``cutBeforeNextRead(pathContains:to:)`` has not made).
    public func clearFaults() {
        state.withLock {
            $0.faults.removeAll()
            $0.failAt = nil
            $0.failedCalls = []
            $0.cutBeforeRead = nil
        }
    }

    /// The names in a directory (volatile view), without counting an I/O call.
    public func fileNames(in dir: String) -> [String] {
        state.withLock { s in
            s.names.keys.filter { Self.parent($0) == Self.normalize(dir) }.map { Self.base($0) }.sorted()
        }
    }

    /// The current (volatile) content of a file, without counting an I/O call.
    public func contents(of path: String) -> [UInt8]? {
        state.withLock { s in s.names[Self.normalize(path)].flatMap { s.inodes[$0]?.data } }
    }

    /// Replaces a file's content, volatile and durable at once (bit rot), without counting a call.
    public func setContents(of path: String, to bytes: [UInt8]) {
        state.withLock { s in
            guard let id = s.names[Self.normalize(path)] else { return }
            s.inodes[id] = Inode(data: bytes, durable: bytes, pending: [])
        }
    }
}
