// Preallocation: zero bytes written ahead of the active segment's tail, so that most group
// syncs change no file size. On a file system that writes the inode on every fdatasync that
// changes the size (ext4 without a journal writes it synchronously), an append that grows the
// file costs a second device write per sync; an overwrite of bytes already written and synced
// costs only its data pages. Real zero bytes, not fallocate: an unwritten extent's conversion
// to written is a metadata change too.
//
// The format allows it (FORMAT.md §4.2): zero bytes after the last record of the LAST segment are
// the normal end of the log. So the zeros are cut off before a segment is sealed (roll) and at
// close; after a crash, recovery cuts them off (RecoveryReport.preallocatedTail).
// Fields and lock discipline: see LogCore.swift.

extension LogCore {
    /// The least a preallocation step writes ahead of a group's end.
    static let minPreallocationStep: UInt64 = 64 << 10
    /// The most a preallocation step writes ahead of a group's end.
    static let maxPreallocationStep: UInt64 = 1 << 20

    /// How far past `end` to preallocate in a segment holding `used` bytes of records: a quarter
    /// of them, between 64 KiB and 1 MiB — so that a small store pays at most 64 KiB (until it
    /// is closed) and a busy one extends its file at most once every quarter of its size.
    static func preallocationStep(used: UInt64) -> UInt64 {
        min(max(used / 4, minPreallocationStep), maxPreallocationStep)
    }

    /// [leader] Makes sure zero bytes follow the active segment's records through `end` (the
    /// end of the group about to be written), writing the next step of them if not: page-aligned,
    /// never past the segment size. The group's sync makes them durable with the group.
    ///
    /// A failed write is not an error of the group: the zeros hold no data, and whatever part of
    /// them reached the file is a valid tail. `preallocatedEnd` covers the range all the same, so
    /// that a roll or close cuts off whatever the write left; groups up to there just append
    /// (growing the file as they would without preallocation), and the next step tries again.
    func preallocate(through end: UInt64) {
        guard let a = active else { return }
        if preallocatedEnd > 0 { recordsEnd.withLock { $0 = (a.header.number, end) } }
        guard end > preallocatedEnd else { return }
        let limit = UInt64(settings.segmentSize)
        guard end < limit else { return }  // the segment is full after this group: a roll comes next
        let page: UInt64 = 4096
        let step = Self.preallocationStep(used: end - UInt64(Layout.segmentHeaderSize))
        let target = min((end + step + page - 1) / page * page, limit)
        guard target > end else { return }
        recordsEnd.withLock { $0 = (a.header.number, end) }
        preallocatedEnd = target
        overwritable = 0..<0
        do throws(FileSystemError) {
            try a.file.write([UInt8](repeating: 0, count: Int(target - end)), at: end)
            // Not the group's own range: the group ends at `end`, and whatever of it lies past
            // the last step's zeros is a hole until the group's write fills it.
            overwritable = end..<target
        } catch {}
    }

    /// [close] Cuts the zeros preallocated past the active segment's last record off again, so
    /// that a closed store's files hold only records. Best effort, and not synced: every record
    /// is already synced, and a zero tail the cut leaves (it failed, or its size change is lost
    /// in a power cut) is itself a valid end of the log, which the next open cuts again. A sync
    /// here would make close wait for a metadata write that keeps nothing durable.
    func trimPreallocation() {
        guard let a = active, preallocatedEnd > a.offset else { return }
        do throws(FileSystemError) {
            try a.file.truncate(to: a.offset)
            preallocatedEnd = 0
            overwritable = 0..<0
        } catch {}
    }
}
