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
import HearthLog
import Synchronization

/// A deterministic, thread-safe, in-memory file system with power cuts and fault injection.
public final class SimulatedFileSystem: FileSystem {
    /// How much of a torn write's tail is lost: whole 512-byte sectors or whole 4 KiB pages.
    public enum TearSize: Int, Sendable, CaseIterable {
        /// 512-byte sectors.
        case sector = 512
        /// 4 KiB pages.
        case page = 4096
    }

    /// What the torn part of a write contains after the power cut.
    public enum TearFill: Sendable, CaseIterable {
        /// Zero bytes (a file extended but never written, delayed allocation).
        case zeros
        /// Random bytes (sectors trashed mid-write).
        case garbage
    }

    /// What a power cut keeps.
    public enum PowerCutMode: Sendable, Equatable, CustomStringConvertible {
        /// The process dies but the machine does not: everything written survives.
        case processCrash
        /// Every file reverts to its last sync; creates, renames and unlinks not followed by a
        /// directory sync are lost.
        case dropAllUnsynced
        /// Each unsynced write survives or not at random (so later writes can survive earlier ones);
        /// truncates survive; a random prefix of the un-synced directory operations survives.
        case dropRandomUnsynced
        /// All unsynced writes survive except each file's last one, which is torn at a `size`
        /// boundary: its tail is filled per `fill`. Directory operations survive.
        case tearLastWrite(TearSize, TearFill)
        /// All data survives, but creates, renames and unlinks not followed by a directory sync are lost.
        case loseUnsyncedMetadata

        /// Every mode, for crash matrices.
        public static let all: [PowerCutMode] = [
            .processCrash, .dropAllUnsynced, .dropRandomUnsynced,
            .tearLastWrite(.sector, .zeros), .tearLastWrite(.sector, .garbage),
            .tearLastWrite(.page, .zeros), .tearLastWrite(.page, .garbage),
            .loseUnsyncedMetadata,
        ]

        /// A short name for test output.
        public var description: String {
            switch self {
            case .processCrash: "processCrash"
            case .dropAllUnsynced: "dropAllUnsynced"
            case .dropRandomUnsynced: "dropRandomUnsynced"
            case let .tearLastWrite(s, f): "tearLastWrite(\(s.rawValue),\(f))"
            case .loseUnsyncedMetadata: "loseUnsyncedMetadata"
            }
        }
    }

    fileprivate typealias Inode = SimInode

    private enum DirOp {
        case link(String, Int)
        case unlink(String)
        case rename(String, String, Int)
    }

    private struct Fault {
        var operation: FileOperation
        var code: FileSystemError.Code
        var sticky: Bool
        var skip: Int
        var pathContains: String?
    }

    private struct State {
        var rng: SplitMix64
        var inodes: [Int: Inode] = [:]
        var nextInode = 1
        var names: [String: Int] = [:]
        var durableNames: [String: Int] = [:]
        var dirs: Set<String> = []
        var dirOps: [(dir: String, op: DirOp)] = []
        var locks: Set<String> = []
        var epoch = 0
        var calls = 0
        var crashAfter: Int?
        var crashed = false
        var syncs = 0
        var directorySyncs = 0
        var faults: [Fault] = []
        /// The number of the one call ``failCall(afterCalls:_:)`` fails, and with what.
        var failAt: (call: Int, code: FileSystemError.Code)?
        var failedCalls: [(operation: FileOperation, path: String)] = []
        var peakStoredBytes = 0
        var peakFiles: [String: Int] = [:]

        /// The bytes of every file that has a name now (what `du` would count).
        func storedBytes() -> Int {
            var seen = Set<Int>(), total = 0
            for id in names.values where seen.insert(id).inserted { total += inodes[id]?.data.count ?? 0 }
            return total
        }

        mutating func notePeak() {
            let now = storedBytes()
            guard now > peakStoredBytes else { return }
            peakStoredBytes = now
            peakFiles = names.reduce(into: [:]) { $0[$1.key] = inodes[$1.value]?.data.count ?? 0 }
        }
    }

    private let state: Mutex<State>
    private let syncDelayNanos = Atomic<UInt64>(0)

    /// Extra latency of every file sync (slept outside the simulation's lock), to model a real device
    /// in concurrency tests. Default zero.
    public var syncDelay: Duration {
        get { .nanoseconds(Int64(syncDelayNanos.load(ordering: .relaxed))) }
        set { syncDelayNanos.store(newValue.nanoseconds, ordering: .relaxed) }
    }

    fileprivate func sleepForSync() {
        let ns = syncDelayNanos.load(ordering: .relaxed)
        if ns > 0 { sleepNanos(ns) }
    }

    /// Creates an empty file system whose random choices (power cuts, salts, garbage) follow `seed`.
    public init(seed: UInt64) {
        state = Mutex(State(rng: SplitMix64(seed: seed)))
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
    public func injectFault(_ operation: FileOperation, _ code: FileSystemError.Code, sticky: Bool = false,
                            skip: Int = 0, pathContains: String? = nil) {
        state.withLock { $0.faults.append(Fault(operation: operation, code: code, sticky: sticky, skip: skip,
                                                pathContains: pathContains)) }
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

    /// Removes all injected faults.
    public func clearFaults() {
        state.withLock {
            $0.faults.removeAll()
            $0.failAt = nil
            $0.failedCalls = []
        }
    }

    /// Replaces the state by what a reboot would find, per `mode`. Open handles and locks from before
    /// become invalid; the crash point and faults are cleared; the call counter restarts at zero.
    public func powerCut(mode: PowerCutMode) {
        state.withLock { s in
            // 1. The namespace that survives.
            var names: [String: Int]
            switch mode {
            case .processCrash, .tearLastWrite:
                names = s.names
            case .dropAllUnsynced, .loseUnsyncedMetadata:
                names = s.durableNames
            case .dropRandomUnsynced:
                names = s.durableNames
                let keep = s.dirOps.isEmpty ? 0 : Int(s.rng.next() % UInt64(s.dirOps.count + 1))
                for (_, op) in s.dirOps.prefix(keep) { Self.apply(op, to: &names) }
            }
            // 2. The content of every surviving file.
            var inodes: [Int: Inode] = [:]
            for id in Set(names.values) {
                guard let node = s.inodes[id] else { continue }
                var content: [UInt8]
                switch mode {
                case .processCrash, .loseUnsyncedMetadata:
                    content = node.data
                case .dropAllUnsynced:
                    content = node.durable
                case .dropRandomUnsynced:
                    content = node.durable
                    for p in node.pending {
                        switch p {
                        case let .truncate(n): Self.truncate(&content, to: n)
                        case let .write(o, b): if s.rng.next() & 1 == 0 { Self.write(&content, b, at: o) }
                        }
                    }
                case let .tearLastWrite(size, fill):
                    content = node.durable
                    let lastWrite = node.pending.lastIndex { if case .write = $0 { true } else { false } }
                    for (i, p) in node.pending.enumerated() {
                        switch p {
                        case let .truncate(n): Self.truncate(&content, to: n)
                        case let .write(o, b):
                            if i != lastWrite { Self.write(&content, b, at: o); continue }
                            // Cut at a boundary strictly inside the write if there is one, else at its start.
                            let g = UInt64(size.rawValue)
                            let end = o + UInt64(b.count)
                            var cuts: [UInt64] = []
                            var k = (o / g + 1) * g
                            while k < end, cuts.count < 4096 { cuts.append(k); k += g }
                            let cut = cuts.isEmpty ? o : cuts[Int(s.rng.next() % UInt64(cuts.count))]
                            var torn = b
                            for j in Int(cut - o) ..< b.count {
                                torn[j] = fill == .zeros ? 0 : UInt8(truncatingIfNeeded: s.rng.next())
                            }
                            Self.write(&content, torn, at: o)
                        }
                    }
                }
                inodes[id] = Inode(data: content, durable: content, pending: [])
            }
            s.inodes = inodes
            s.names = names
            s.durableNames = names
            s.dirOps = []
            s.locks = []
            s.epoch += 1
            s.calls = 0
            s.crashAfter = nil
            s.crashed = false
            s.faults = []
            s.failAt = nil
            s.failedCalls = []
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

    // MARK: FileSystem

    /// See ``FileSystem/createDirectory(_:)``. Directories are durable as soon as they exist.
    public func createDirectory(_ path: String) throws(FileSystemError) {
        try state.withLock { (s: inout State) throws(FileSystemError) in
            try Self.enter(&s, .createDirectory, path)
            var prefix = ""
            for part in Self.normalize(path).split(separator: "/") {
                prefix += "/" + part
                s.dirs.insert(prefix)
            }
        }
    }

    /// See ``FileSystem/directoryExists(_:)``.
    public func directoryExists(_ path: String) -> Bool {
        state.withLock { $0.dirs.contains(Self.normalize(path)) }
    }

    /// See ``FileSystem/listDirectory(_:)``.
    public func listDirectory(_ path: String) throws(FileSystemError) -> [String] {
        try state.withLock { (s: inout State) throws(FileSystemError) -> [String] in
            try Self.enter(&s, .listDirectory, path)
            let dir = Self.normalize(path)
            guard s.dirs.contains(dir) else { throw FileSystemError(.notFound, .listDirectory, path) }
            return s.names.keys.filter { Self.parent($0) == dir }.map { Self.base($0) }.sorted()
        }
    }

    /// See ``FileSystem/open(_:mode:)``.
    public func open(_ path: String, mode: OpenMode) throws(FileSystemError) -> any StoreFile {
        let (id, epoch) = try state.withLock { (s: inout State) throws(FileSystemError) -> (Int, Int) in
            let p = Self.normalize(path)
            switch mode {
            case .readOnly, .readWrite:
                try Self.enter(&s, .open, path)
                guard let id = s.names[p] else { throw FileSystemError(.notFound, .open, path) }
                return (id, s.epoch)
            case .createTruncate:
                try Self.enter(&s, .create, path)
                guard s.dirs.contains(Self.parent(p)) else { throw FileSystemError(.notFound, .create, path) }
                if let id = s.names[p] {
                    s.inodes[id]!.data = []
                    s.inodes[id]!.pending.append(.truncate(0))
                    return (id, s.epoch)
                }
                let id = s.nextInode
                s.nextInode += 1
                s.inodes[id] = Inode()
                s.names[p] = id
                s.dirOps.append((Self.parent(p), .link(p, id)))
                return (id, s.epoch)
            }
        }
        return SimulatedFile(fs: self, inode: id, epoch: epoch, path: path, writable: mode != .readOnly)
    }

    /// See ``FileSystem/rename(from:to:)``.
    public func rename(from: String, to: String) throws(FileSystemError) {
        try state.withLock { (s: inout State) throws(FileSystemError) in
            try Self.enter(&s, .rename, from)
            let f = Self.normalize(from), t = Self.normalize(to)
            guard let id = s.names[f] else { throw FileSystemError(.notFound, .rename, from) }
            precondition(Self.parent(f) == Self.parent(t), "the simulation renames within one directory")
            s.names[f] = nil
            s.names[t] = id
            s.dirOps.append((Self.parent(f), .rename(f, t, id)))
            s.notePeak()
        }
    }

    /// See ``FileSystem/unlink(_:)``.
    public func unlink(_ path: String) throws(FileSystemError) {
        try state.withLock { (s: inout State) throws(FileSystemError) in
            try Self.enter(&s, .unlink, path)
            let p = Self.normalize(path)
            guard s.names[p] != nil else { throw FileSystemError(.notFound, .unlink, path) }
            s.names[p] = nil
            s.dirOps.append((Self.parent(p), .unlink(p)))
        }
    }

    /// See ``FileSystem/syncDirectory(_:)``.
    public func syncDirectory(_ path: String) throws(FileSystemError) {
        try state.withLock { (s: inout State) throws(FileSystemError) in
            try Self.enter(&s, .syncDirectory, path)
            let dir = Self.normalize(path)
            var durable = s.durableNames
            var rest: [(dir: String, op: DirOp)] = []
            for entry in s.dirOps {
                if entry.dir == dir { Self.apply(entry.op, to: &durable) } else { rest.append(entry) }
            }
            s.durableNames = durable
            s.dirOps = rest
            s.directorySyncs += 1
        }
    }

    /// See ``FileSystem/lockFile(_:)``.
    public func lockFile(_ path: String) throws(FileSystemError) -> any StoreLock {
        let epoch = try state.withLock { (s: inout State) throws(FileSystemError) -> Int in
            try Self.enter(&s, .lock, path)
            let p = Self.normalize(path)
            if s.locks.contains(p) { throw FileSystemError(.wouldBlock, .lock, path) }
            guard s.dirs.contains(Self.parent(p)) else { throw FileSystemError(.notFound, .lock, path) }
            if s.names[p] == nil {
                let id = s.nextInode
                s.nextInode += 1
                s.inodes[id] = Inode()
                s.names[p] = id
                s.dirOps.append((Self.parent(p), .link(p, id)))
            }
            s.locks.insert(p)
            return s.epoch
        }
        return SimulatedLock(fs: self, path: Self.normalize(path), epoch: epoch)
    }

    /// See ``FileSystem/randomUInt64()``. Drawn from the seeded generator.
    public func randomUInt64() -> UInt64 { state.withLock { $0.rng.next() } }

    // MARK: Handle operations (called by SimulatedFile)

    fileprivate func fileOp<T: Sendable>(_ op: FileOperation, _ path: String, _ inode: Int, _ epoch: Int,
                                         _ body: (inout Inode) throws(FileSystemError) -> T) throws(FileSystemError) -> T {
        try state.withLock { (s: inout State) throws(FileSystemError) -> T in
            try Self.enter(&s, op, path)
            guard s.epoch == epoch, var node = s.inodes[inode] else {
                throw FileSystemError(.badHandle, op, path)
            }
            let r = try body(&node)
            if op == .sync { s.syncs += 1 }
            s.inodes[inode] = node
            if op == .write || op == .truncate { s.notePeak() }
            return r
        }
    }

    fileprivate func release(lock path: String, epoch: Int) {
        state.withLock { s in if s.epoch == epoch { s.locks.remove(path) } }
    }

    // MARK: Helpers

    /// Counts the call, applies the crash point and any matching fault.
    private static func enter(_ s: inout State, _ op: FileOperation, _ path: String) throws(FileSystemError) {
        if s.crashed { throw FileSystemError(.crashed, op, path) }
        s.calls += 1
        if let n = s.crashAfter, s.calls > n {
            s.crashed = true
            throw FileSystemError(.crashed, op, path)
        }
        if let f = s.failAt, s.calls == f.call {
            s.failAt = nil
            s.failedCalls.append((op, path))
            throw FileSystemError(f.code, op, path)
        }
        for i in s.faults.indices where s.faults[i].operation == op {
            if let c = s.faults[i].pathContains, !path.contains(c) { continue }
            if s.faults[i].skip > 0 {
                s.faults[i].skip -= 1
                continue
            }
            let code = s.faults[i].code
            if !s.faults[i].sticky { s.faults.remove(at: i) }
            s.failedCalls.append((op, path))
            throw FileSystemError(code, op, path)
        }
    }

    private static func apply(_ op: DirOp, to names: inout [String: Int]) {
        switch op {
        case let .link(p, id): names[p] = id
        case let .unlink(p): names[p] = nil
        case let .rename(f, t, id):
            // Only move the entry if the source still names the same file in this image.
            if names[f] == id { names[f] = nil }
            names[t] = id
        }
    }

    fileprivate static func write(_ content: inout [UInt8], _ bytes: [UInt8], at offset: UInt64) {
        let o = Int(offset)
        if content.count < o + bytes.count {
            content.append(contentsOf: repeatElement(0, count: o + bytes.count - content.count))
        }
        content.replaceSubrange(o ..< o + bytes.count, with: bytes)
    }

    fileprivate static func truncate(_ content: inout [UInt8], to size: UInt64) {
        let n = Int(size)
        if content.count > n { content.removeSubrange(n...) } else {
            content.append(contentsOf: repeatElement(0, count: n - content.count))
        }
    }

    private static func normalize(_ p: String) -> String {
        var parts: [Substring] = []
        for c in p.split(separator: "/") where c != "." { parts.append(c) }
        return "/" + parts.joined(separator: "/")
    }

    private static func parent(_ p: String) -> String {
        guard let i = p.lastIndex(of: "/") else { return "/" }
        let d = String(p[..<i])
        return d.isEmpty ? "/" : d
    }

    private static func base(_ p: String) -> String {
        guard let i = p.lastIndex(of: "/") else { return p }
        return String(p[p.index(after: i)...])
    }
}

fileprivate enum Pending {
    case write(UInt64, [UInt8])
    case truncate(UInt64)
}

/// One simulated file: volatile content, durable content, and the operations in between.
fileprivate struct SimInode {
    var data: [UInt8] = []
    var durable: [UInt8] = []
    var pending: [Pending] = []

    var size: UInt64 { UInt64(data.count) }

    func read(_ offset: UInt64, _ count: Int) -> [UInt8] {
        let o = Int(min(offset, UInt64(data.count)))
        return Array(data[o ..< min(data.count, o + count)])
    }

    mutating func write(_ bytes: [UInt8], _ offset: UInt64) {
        SimulatedFileSystem.write(&data, bytes, at: offset)
        pending.append(.write(offset, bytes))
    }

    mutating func truncate(_ size: UInt64) {
        SimulatedFileSystem.truncate(&data, to: size)
        pending.append(.truncate(size))
    }

    mutating func sync() {
        durable = data
        pending = []
    }
}

private final class SimulatedLock: StoreLock {
    let fs: SimulatedFileSystem
    let path: String
    let epoch: Int
    private let released = Atomic<Bool>(false)
    init(fs: SimulatedFileSystem, path: String, epoch: Int) {
        self.fs = fs
        self.path = path
        self.epoch = epoch
    }
    func release() {
        if released.exchange(true, ordering: .acquiringAndReleasing) { return }
        fs.release(lock: path, epoch: epoch)
    }
}

private final class SimulatedFile: StoreFile {
    let fs: SimulatedFileSystem
    let inode: Int
    let epoch: Int
    let path: String
    let writable: Bool
    private let closed = Atomic<Bool>(false)

    init(fs: SimulatedFileSystem, inode: Int, epoch: Int, path: String, writable: Bool) {
        self.fs = fs
        self.inode = inode
        self.epoch = epoch
        self.path = path
        self.writable = writable
    }

    private func check(_ op: FileOperation) throws(FileSystemError) {
        if closed.load(ordering: .acquiring) { throw FileSystemError(.badHandle, op, path) }
        if op == .write || op == .truncate, !writable { throw FileSystemError(.permissionDenied, op, path) }
    }

    func read(at offset: UInt64, count: Int) throws(FileSystemError) -> [UInt8] {
        try check(.read)
        return try fs.fileOp(.read, path, inode, epoch) { (n: inout SimInode) in
            n.read(offset, count)
        }
    }

    func write(_ bytes: [UInt8], at offset: UInt64) throws(FileSystemError) {
        try check(.write)
        try fs.fileOp(.write, path, inode, epoch) { (n: inout SimInode) in
            n.write(bytes, offset)
        }
    }

    func size() throws(FileSystemError) -> UInt64 {
        try check(.size)
        return try fs.fileOp(.size, path, inode, epoch) { (n: inout SimInode) in n.size }
    }

    func truncate(to size: UInt64) throws(FileSystemError) {
        try check(.truncate)
        try fs.fileOp(.truncate, path, inode, epoch) { (n: inout SimInode) in n.truncate(size) }
    }

    func sync() throws(FileSystemError) {
        try check(.sync)
        try fs.fileOp(.sync, path, inode, epoch) { (n: inout SimInode) in n.sync() }
        fs.sleepForSync()
    }

    func close() throws(FileSystemError) {
        _ = closed.exchange(true, ordering: .acquiringAndReleasing)
    }
}
