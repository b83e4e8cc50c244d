// Overwrites through a shared memory mapping (Linux): the active segment's records are copied into
// a `MAP_SHARED` window of the file instead of being written with pwrite(2), over the zero bytes
// preallocated ahead of them (LogCore+Preallocate.swift). A store is in the page cache either way,
// where a process crash cannot lose it and fdatasync(2) finds it (Linux's page cache is one: a
// write fault marks the page dirty in the file's mapping, and fdatasync writes every dirty page of
// the file, mapped or not); what the mapping saves is the system call, ~2.5 µs a commit.
//
// Only over bytes the file already holds (StoreFile.overwrite), and only on file systems that
// overwrite in place: a store to a mapped page past the end of the file, or to a page the file
// system must find new space for and cannot (ENOSPC), is a SIGBUS, not an error. ext4, XFS and
// tmpfs write an overwrite where the bytes are; copy-on-write file systems (Btrfs, F2FS, ZFS,
// bcachefs) allocate anew at the first store after each writeback, so a full disk there would
// end the process: on them, and on any file system not named here, the log writes instead. The
// log overwrites only zeros it wrote itself moments before, in the same segment, so the pages are
// allocated and almost always resident. What is left is a page evicted and then unreadable (EIO)
// when the store reads it back: a SIGBUS where pwrite would have failed with EIO. A device
// failing reads of what it wrote seconds ago is one no store survives in good order; the
// mapping trades that report for the system call.
#if os(Linux)
import CFileSystemKind
import Glibc
import Synchronization

/// A window of one file mapped shared for writing; remapped when an overwrite falls outside it.
final class SharedWindow: Sendable {
    /// Windows are this long and aligned to it (a multiple of every page size Linux uses).
    static let size: UInt64 = 1 << 20

    private struct Mapping {
        var base: UInt64
        var length: Int
        /// The mapping's address (an integer: the state a `Mutex` holds is `Sendable`).
        var address: UInt
    }

    private let fd: Int32
    private let mapping = Mutex<Mapping?>(nil)

    private init(fd: Int32) { self.fd = fd }

    /// A window for the open file `fd` when its file system overwrites in place, else nil.
    static func forFile(fd: Int32) -> SharedWindow? {
        overwritesInPlace(magic: hearth_file_system_magic(fd)) ? SharedWindow(fd: fd) : nil
    }

    /// Whether the file system with this `statfs.f_type` magic writes an overwrite where the
    /// bytes are, needing no new space: ext2/3/4, XFS, tmpfs.
    static func overwritesInPlace(magic: UInt64) -> Bool {
        switch magic {
        case 0xEF53, 0x5846_5342, 0x0102_1994: true
        default: false
        }
    }

    deinit { unmap() }

    /// Copies `bytes` to `offset` of the file through the window, mapping the window that holds
    /// them first if needed. False when that mapping failed (nothing was copied: the caller
    /// writes instead).
    func copy(_ bytes: [UInt8], to offset: UInt64) -> Bool {
        mapping.withLock { current -> Bool in
            let end = offset + UInt64(bytes.count)
            if current.map({ offset < $0.base || end > $0.base + UInt64($0.length) }) ?? true {
                Self.unmap(&current)
                let base = offset / Self.size * Self.size
                let length = (end - base + Self.size - 1) / Self.size * Self.size
                let p = mmap(nil, Int(length), PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(base))
                guard let p, p != UnsafeMutableRawPointer(bitPattern: -1) else { return false }
                current = Mapping(base: base, length: Int(length), address: UInt(bitPattern: p))
            }
            guard let m = current, let dst = UnsafeMutableRawPointer(bitPattern: m.address + UInt(offset - m.base))
            else { return false }
            bytes.withUnsafeBytes { src in
                if let s = src.baseAddress { dst.copyMemory(from: s, byteCount: src.count) }
            }
            return true
        }
    }

    /// Unmaps the window (a file's close; idempotent).
    func unmap() { mapping.withLock { Self.unmap(&$0) } }

    private static func unmap(_ m: inout Mapping?) {
        if let old = m, let p = UnsafeMutableRawPointer(bitPattern: old.address) { _ = munmap(p, old.length) }
        m = nil
    }
}
#endif
