// SimulatedFileSystem+FileSystem: the FileSystem calls (directories, opens, renames, unlinks, locks) and the
// bookkeeping every call goes through (the call count, the crash point, injected faults, paths).
import HearthLog
import Synchronization

extension SimulatedFileSystem {
    // MARK: FileSystem

    /// See `FileSystem.createDirectory(_:)`. Directories are durable as soon as they exist.
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

    /// See `FileSystem.directoryExists(_:)`.
    public func directoryExists(_ path: String) -> Bool {
        state.withLock { $0.dirs.contains(Self.normalize(path)) }
    }

    /// See `FileSystem.listDirectory(_:)`.
    public func listDirectory(_ path: String) throws(FileSystemError) -> [String] {
        try state.withLock { (s: inout State) throws(FileSystemError) -> [String] in
            try Self.enter(&s, .listDirectory, path)
            let dir = Self.normalize(path)
            guard s.dirs.contains(dir) else { throw FileSystemError(.notFound, .listDirectory, path) }
            return s.names.keys.filter { Self.parent($0) == dir }.map { Self.base($0) }.sorted()
        }
    }

    /// See `FileSystem.open(_:mode:)`.
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
                    s.inodes[id]!.holes = []
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

    /// See `FileSystem.rename(from:to:)`.
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

    /// See `FileSystem.unlink(_:)`.
    public func unlink(_ path: String) throws(FileSystemError) {
        try state.withLock { (s: inout State) throws(FileSystemError) in
            try Self.enter(&s, .unlink, path)
            let p = Self.normalize(path)
            guard s.names[p] != nil else { throw FileSystemError(.notFound, .unlink, path) }
            s.names[p] = nil
            s.dirOps.append((Self.parent(p), .unlink(p)))
        }
    }

    /// See `FileSystem.syncDirectory(_:)`.
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

    /// See `FileSystem.lockFile(_:)`.
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

    /// See `FileSystem.randomUInt64()`. Drawn from the seeded generator.
    public func randomUInt64() -> UInt64 { state.withLock { $0.rng.next() } }

    // MARK: Handle operations (called by SimulatedFile)

    func fileOp<T: Sendable>(
        _ op: FileOperation, _ path: String, _ inode: Int, _ epoch: Int,
        _ body: (inout Inode) throws(FileSystemError) -> T
    ) throws(FileSystemError) -> T {
        try state.withLock { (s: inout State) throws(FileSystemError) -> T in
            try Self.enter(&s, op, path)
            guard s.epoch == epoch, var node = s.inodes[inode] else {
                throw FileSystemError(.badHandle, op, path)
            }
            if op == .read, let cut = s.cutBeforeRead, path.contains(cut.pathContains) {
                node.truncate(cut.size)
                s.cutBeforeRead = nil
            }
            let r = try body(&node)
            if op == .sync { s.syncs += 1 }
            s.inodes[inode] = node
            if op == .write || op == .truncate { s.notePeak() }
            return r
        }
    }

    func release(lock path: String, epoch: Int) {
        state.withLock { s in if s.epoch == epoch { s.locks.remove(path) } }
    }

    // MARK: Helpers

    /// Counts the call, applies the crash point and any matching fault.
    static func enter(_ s: inout State, _ op: FileOperation, _ path: String) throws(FileSystemError) {
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

    static func apply(_ op: DirOp, to names: inout [String: Int]) {
        switch op {
        case let .link(p, id): names[p] = id
        case let .unlink(p): names[p] = nil
        case let .rename(f, t, id):
            // Only move the entry if the source still names the same file in this image.
            if names[f] == id { names[f] = nil }
            names[t] = id
        }
    }

    static func write(_ content: inout [UInt8], _ bytes: [UInt8], at offset: UInt64) {
        let o = Int(offset)
        if content.count < o + bytes.count {
            content.append(contentsOf: repeatElement(0, count: o + bytes.count - content.count))
        }
        content.replaceSubrange(o..<o + bytes.count, with: bytes)
    }

    static func truncate(_ content: inout [UInt8], to size: UInt64) {
        let n = Int(size)
        if content.count > n {
            content.removeSubrange(n...)
        } else {
            content.append(contentsOf: repeatElement(0, count: n - content.count))
        }
    }

    static func normalize(_ p: String) -> String {
        var parts: [Substring] = []
        for c in p.split(separator: "/") where c != "." { parts.append(c) }
        return "/" + parts.joined(separator: "/")
    }

    static func parent(_ p: String) -> String {
        guard let i = p.lastIndex(of: "/") else { return "/" }
        let d = String(p[..<i])
        return d.isEmpty ? "/" : d
    }

    static func base(_ p: String) -> String {
        guard let i = p.lastIndex(of: "/") else { return p }
        return String(p[p.index(after: i)...])
    }
}
