// The real file system, through the C library (Glibc on Linux, Darwin on Apple platforms).
//
// Durability calls: StoreFile.sync() is fdatasync(2) on Linux and fcntl(F_FULLFSYNC) on Apple platforms
// (plain fsync there only reaches the drive's volatile cache), falling back to fsync if F_FULLFSYNC is
// not supported by the file system. syncDirectory() opens the directory O_RDONLY and fsyncs it.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
#if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
import Foundation  // data protection attributes only; the engine itself needs only zlib
#endif

/// The operating system's file system.
public struct POSIXFileSystem: FileSystem {
    /// Creates the (stateless) POSIX file system.
    public init() {}

    static func code(_ e: Int32) -> FileSystemError.Code {
        switch e {
        case EIO: .ioError
        case ENOSPC: .noSpace
        case ENOENT: .notFound
        case EEXIST: .alreadyExists
        case EWOULDBLOCK: .wouldBlock
        case EACCES, EPERM: .permissionDenied
        default: .other(e)
        }
    }

    static func fail(_ op: FileOperation, _ path: String) -> FileSystemError {
        FileSystemError(code(errno), op, path)
    }

    /// See ``FileSystem/createDirectory(_:)``.
    public func createDirectory(_ path: String) throws(FileSystemError) {
        if directoryExists(path) { return }
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += part
            if !directoryExists(prefix) {
                if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                    throw Self.fail(.createDirectory, prefix)
                }
                Self.protect(prefix)
            }
            prefix += "/"
        }
    }

    /// See ``FileSystem/directoryExists(_:)``.
    public func directoryExists(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// See ``FileSystem/listDirectory(_:)``.
    public func listDirectory(_ path: String) throws(FileSystemError) -> [String] {
        guard let d = opendir(path) else { throw Self.fail(.listDirectory, path) }
        defer { closedir(d) }
        var names: [String] = []
        while let ent = readdir(d) {
            let name = withUnsafeBytes(of: ent.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// See ``FileSystem/open(_:mode:)``.
    public func open(_ path: String, mode: OpenMode) throws(FileSystemError) -> any StoreFile {
        let flags: Int32
        switch mode {
        case .readOnly: flags = O_RDONLY | O_CLOEXEC
        case .readWrite: flags = O_RDWR | O_CLOEXEC
        case .createTruncate: flags = O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC
        }
        let fd = Glue.open(path, flags, 0o600)
        if fd < 0 { throw Self.fail(mode == .createTruncate ? .create : .open, path) }
        if mode == .createTruncate { Self.protect(path) }
        return POSIXFile(fd: fd, path: path, writable: mode != .readOnly)
    }

    /// The data-protection class of the store's files and directories on iOS, tvOS, watchOS and
    /// visionOS: `completeUntilFirstUserAuthentication` (class C) — encrypted with a key the
    /// device holds only after the first unlock since boot, so an app syncing in the background
    /// can still open its store, while a device that was restarted and not unlocked cannot
    /// read it. Set on every file and directory the store creates; best effort (a file system
    /// without data protection ignores it). Elsewhere: nothing beyond modes 0700/0600.
    static func protect(_ path: String) {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        try? FileManager.default.setAttributes(
            [.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication], ofItemAtPath: path)
        #endif
    }

    /// See ``FileSystem/rename(from:to:)``.
    public func rename(from: String, to: String) throws(FileSystemError) {
        if Glue.rename(from, to) != 0 { throw Self.fail(.rename, from) }
    }

    /// See ``FileSystem/unlink(_:)``.
    public func unlink(_ path: String) throws(FileSystemError) {
        if Glue.unlink(path) != 0 { throw Self.fail(.unlink, path) }
    }

    /// See ``FileSystem/syncDirectory(_:)``.
    public func syncDirectory(_ path: String) throws(FileSystemError) {
        let fd = Glue.open(path, O_RDONLY | O_CLOEXEC, 0)
        if fd < 0 { throw Self.fail(.syncDirectory, path) }
        defer { _ = Glue.close(fd) }
        if Glue.fsync(fd) != 0 { throw Self.fail(.syncDirectory, path) }
    }

    /// See ``FileSystem/lockFile(_:)``.
    public func lockFile(_ path: String) throws(FileSystemError) -> any StoreLock {
        let fd = Glue.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if fd < 0 { throw Self.fail(.lock, path) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let e = Self.fail(.lock, path)
            _ = Glue.close(fd)
            throw e
        }
        return POSIXLock(fd: fd)
    }

    /// See ``FileSystem/randomUInt64()``.
    public func randomUInt64() -> UInt64 {
        var g = SystemRandomNumberGenerator()
        return g.next()
    }
}

/// Unqualified C names that clash with the protocol's method names.
private enum Glue {
    static func open(_ p: String, _ f: Int32, _ m: mode_t) -> Int32 {
        #if canImport(Glibc)
        Glibc.open(p, f, m)
        #elseif canImport(Musl)
        Musl.open(p, f, m)
        #else
        Darwin.open(p, f, m)
        #endif
    }
    static func rename(_ a: String, _ b: String) -> Int32 {
        #if canImport(Glibc)
        Glibc.rename(a, b)
        #elseif canImport(Musl)
        Musl.rename(a, b)
        #else
        Darwin.rename(a, b)
        #endif
    }
    static func unlink(_ p: String) -> Int32 {
        #if canImport(Glibc)
        Glibc.unlink(p)
        #elseif canImport(Musl)
        Musl.unlink(p)
        #else
        Darwin.unlink(p)
        #endif
    }
    static func close(_ fd: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.close(fd)
        #elseif canImport(Musl)
        Musl.close(fd)
        #else
        Darwin.close(fd)
        #endif
    }
    static func fsync(_ fd: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.fsync(fd)
        #elseif canImport(Musl)
        Musl.fsync(fd)
        #else
        Darwin.fsync(fd)
        #endif
    }
}

private final class POSIXLock: StoreLock {
    private let fd: Int32
    private let released = Atomic<Bool>(false)
    init(fd: Int32) { self.fd = fd }
    func release() {
        if released.exchange(true, ordering: .acquiringAndReleasing) { return }
        _ = flock(fd, LOCK_UN)
        _ = Glue.close(fd)
    }
    deinit { release() }
}

final class POSIXFile: StoreFile {
    let path: String
    private let fd: Int32
    private let closed = Atomic<Bool>(false)
    #if os(Linux)
    /// Where ``overwrite(_:at:)`` copies to (SharedWindow.swift); nil where it writes.
    private let window: SharedWindow?
    #endif

    init(fd: Int32, path: String, writable: Bool) {
        self.fd = fd
        self.path = path
        #if os(Linux)
        window = writable ? SharedWindow.forFile(fd: fd) : nil
        #endif
    }

    deinit { if !closed.load(ordering: .acquiring) { _ = Glue.close(fd) } }

    /// Whether ``overwrite(_:at:)`` copies through a shared mapping (tests).
    var mapsOverwrites: Bool {
        #if os(Linux)
        window != nil
        #else
        false
        #endif
    }

    private func check(_ op: FileOperation) throws(FileSystemError) {
        if closed.load(ordering: .acquiring) { throw FileSystemError(.badHandle, op, path) }
    }

    func read(at offset: UInt64, count: Int) throws(FileSystemError) -> [UInt8] {
        try check(.read)
        precondition(count >= 0)
        var out = [UInt8](repeating: 0, count: count)
        var done = 0
        var err: FileSystemError?
        out.withUnsafeMutableBytes { buf in
            while done < count {
                let n = pread(fd, buf.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n < 0 {
                    if errno == EINTR { continue }
                    err = POSIXFileSystem.fail(.read, path)
                    return
                }
                if n == 0 { return }  // end of file: the only way to return fewer bytes
                done += n
            }
        }
        if let err { throw err }
        if done < count { out.removeSubrange(done...) }
        return out
    }

    func write(_ bytes: [UInt8], at offset: UInt64) throws(FileSystemError) {
        try check(.write)
        var done = 0
        var err: FileSystemError?
        bytes.withUnsafeBytes { buf in
            while done < buf.count {
                let n = pwrite(fd, buf.baseAddress! + done, buf.count - done, off_t(offset) + off_t(done))
                if n < 0 {
                    if errno == EINTR { continue }
                    err = POSIXFileSystem.fail(.write, path)
                    return
                }
                done += n
            }
        }
        if let err { throw err }
    }

    func overwrite(_ bytes: [UInt8], at offset: UInt64) throws(FileSystemError) {
        #if os(Linux)
        try check(.write)
        if let window, window.copy(bytes, to: offset) { return }
        #endif
        try write(bytes, at: offset)
    }

    func size() throws(FileSystemError) -> UInt64 {
        try check(.size)
        var st = stat()
        if fstat(fd, &st) != 0 { throw POSIXFileSystem.fail(.size, path) }
        return UInt64(st.st_size)
    }

    func truncate(to size: UInt64) throws(FileSystemError) {
        try check(.truncate)
        if ftruncate(fd, off_t(size)) != 0 { throw POSIXFileSystem.fail(.truncate, path) }
    }

    func sync() throws(FileSystemError) {
        try check(.sync)
        #if canImport(Darwin)
        if fcntl(fd, F_FULLFSYNC) == -1 {
            // Some file systems (e.g. network ones) do not support F_FULLFSYNC.
            if Glue.fsync(fd) != 0 { throw POSIXFileSystem.fail(.sync, path) }
        }
        #else
        if fdatasync(fd) != 0 { throw POSIXFileSystem.fail(.sync, path) }
        #endif
    }

    func close() throws(FileSystemError) {
        if closed.exchange(true, ordering: .acquiringAndReleasing) { return }
        #if os(Linux)
        window?.unmap()
        #endif
        if Glue.close(fd) != 0 { throw POSIXFileSystem.fail(.close, path) }
    }
}
