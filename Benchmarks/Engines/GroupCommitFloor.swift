// The floor of durable writes from N threads: perfect group commit into a preallocated file.
//
// Each writer hands its record to the group being formed and waits; the writer whose record
// completes the group (one from every writer still writing) writes the whole group with one
// `pwrite` and one `fdatasync`, then releases every waiter. That is the fewest syncs N writers
// with one write in flight each can make (one per N writes), and the least work per group: each
// record copied once into the group's buffer, no framing, no checksum. The file's bytes are written (zeros) and synced before the
// timed part, as an engine that preallocates its segment does, so that no group's sync changes
// the file's size or converts an unwritten extent (either is a metadata change, a second device
// write per sync on ext4).
import Foundation

public final class GroupCommitFloor: @unchecked Sendable {
    private let fd: Int32
    private let capacity: Int
    /// Guards every field below, and is what waiters sleep on.
    private let condition = NSCondition()
    /// Writers that have not called ``finish()`` yet: a group is complete with one record each.
    private var writers: Int
    /// The bytes of the group being formed, and how many records they are.
    private var pending: [UInt8] = []
    private var pendingRecords = 0
    /// Groups written and synced so far; a waiter's group is done once this passes the value it saw.
    private var completed = 0
    /// Where the next group goes in the file.
    private var offset = 0
    private var failure: String?

    /// Creates `file` holding `capacity` zero bytes (rounded up to a page), synced together with
    /// its directory, for `writers` threads to commit into.
    public init(file: String, capacity: Int, writers: Int) throws {
        precondition(writers > 0, "a group has at least one writer")
        let page = 4096
        self.capacity = (capacity + page - 1) / page * page
        self.writers = writers
        fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw EngineError.corrupt("open \(file): errno \(errno)") }
        do {
            let zeros = [UInt8](repeating: 0, count: 1 << 20)
            var at = 0
            while at < self.capacity {
                let n = min(zeros.count, self.capacity - at)
                guard pwrite(fd, zeros, n, off_t(at)) == n else { throw EngineError.corrupt("preallocate \(file): errno \(errno)") }
                at += n
            }
            guard fsync(fd) == 0 else { throw EngineError.corrupt("fsync \(file): errno \(errno)") }
            let dir = open((file as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY)
            guard dir >= 0 else { throw EngineError.corrupt("open the directory of \(file): errno \(errno)") }
            defer { close(dir) }
            guard fsync(dir) == 0 else { throw EngineError.corrupt("fsync the directory of \(file): errno \(errno)") }
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(fd) }

    /// Hands `record` to the group being formed and returns once the group is written and synced.
    public func commit(_ record: [UInt8]) throws {
        condition.lock()
        defer { condition.unlock() }
        if let failure { throw EngineError.corrupt(failure) }
        pending += record
        pendingRecords += 1
        let group = completed
        if pendingRecords >= writers {
            lead()
        } else {
            while completed == group && failure == nil { condition.wait() }
        }
        if let failure { throw EngineError.corrupt(failure) }
    }

    /// Called by a writer after its last commit: the groups after it are one record smaller.
    public func finish() {
        condition.lock()
        defer { condition.unlock() }
        writers -= 1
        if pendingRecords > 0 && pendingRecords >= writers { lead() }
    }

    /// How many groups were synced (one per `writers` commits when every writer makes as many).
    public var groups: Int { condition.withLock { completed } }

    /// [locked] Writes and syncs the pending group with the lock released, then wakes its waiters.
    private func lead() {
        var group: [UInt8] = []
        group.reserveCapacity(pending.capacity)
        swap(&group, &pending)
        pendingRecords = 0
        let at = offset
        offset += group.count
        condition.unlock()
        var error: String?
        if at + group.count > capacity {
            error = "the group at \(at) passes the preallocated \(capacity) bytes"
        } else if pwrite(fd, group, group.count, off_t(at)) != group.count {
            error = "pwrite of \(group.count) bytes at \(at): errno \(errno)"
        } else if fdatasync(fd) != 0 {
            error = "fdatasync: errno \(errno)"
        }
        condition.lock()
        if let error { failure = error }
        completed += 1
        condition.broadcast()
    }
}
