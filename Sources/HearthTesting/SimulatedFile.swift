// SimulatedFile and SimulatedLock: the handles SimulatedFileSystem gives out; each checks it is still open
// and that no power cut happened since (its epoch), then acts on the shared state.
import HearthLog
import Synchronization

final class SimulatedLock: StoreLock {
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

final class SimulatedFile: StoreFile {
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

    /// A write the simulation checks stays inside bytes the file holds, as the real file
    /// system's shared mapping needs (past the end of the file, or in a hole the file system
    /// then cannot allocate, a store is a `SIGBUS`): a log that overwrites anything but bytes
    /// it wrote stops the test here. Counted in ``SimulatedFileSystem/overwriteCount``.
    func overwrite(_ bytes: [UInt8], at offset: UInt64) throws(FileSystemError) {
        try check(.write)
        let path = path
        try fs.fileOp(.write, path, inode, epoch) { (n: inout SimInode) in
            precondition(
                n.holdsWritten(offset..<offset + UInt64(bytes.count)),
                "an overwrite of \(path) at \(offset) for \(bytes.count) bytes is not inside written bytes "
                    + "(size \(n.size), holes \(n.holes))")
            n.write(bytes, offset)
        }
        fs.overwrites.add(1, ordering: .relaxed)
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
        fs.sleepForSync(path: path)
    }

    func close() throws(FileSystemError) {
        _ = closed.exchange(true, ordering: .acquiringAndReleasing)
    }
}
