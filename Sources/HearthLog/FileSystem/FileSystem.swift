// The file-system seam. Every byte the log reads or writes goes through these two protocols, so the
// same log code runs on the real POSIX file system and on SimulatedFileSystem (crash and fault tests).
//
// Paths are plain strings joined with "/". The log only ever uses one directory (the store) and
// plain file names inside it.

/// Which kind of call failed, or which kind of call a fault is injected into.
public enum FileOperation: String, Sendable, Hashable, CaseIterable {
    /// `mkdir` of the store directory.
    case createDirectory
    /// Listing a directory's entries.
    case listDirectory
    /// Opening an existing file.
    case open
    /// Creating a new file.
    case create
    /// Reading bytes at an offset.
    case read
    /// Writing bytes at an offset.
    case write
    /// `fsync`/`fdatasync` of a file.
    case sync
    /// Truncating a file.
    case truncate
    /// Asking a file's size.
    case size
    /// Closing a file.
    case close
    /// Renaming a file inside a directory.
    case rename
    /// Removing a file.
    case unlink
    /// `fsync` of a directory, making its entries durable.
    case syncDirectory
    /// Taking the store's lock file.
    case lock
}

/// An error from the file-system seam: the operation, the path, and an errno-like code.
public struct FileSystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The errno-like cause.
    public enum Code: Sendable, Equatable, CustomStringConvertible {
        /// EIO: the device failed.
        case ioError
        /// ENOSPC: no space left on the device.
        case noSpace
        /// ENOENT.
        case notFound
        /// EEXIST.
        case alreadyExists
        /// EWOULDBLOCK on an exclusive lock: someone else holds it.
        case wouldBlock
        /// EACCES / EPERM.
        case permissionDenied
        /// The simulated process has crashed: every call fails until a power cut resets the simulation.
        case crashed
        /// The handle was closed, or belongs to a simulated boot before the last power cut.
        case badHandle
        /// Any other errno value.
        case other(Int32)

        /// A short name, e.g. "EIO".
        public var description: String {
            switch self {
            case .ioError: "EIO"
            case .noSpace: "ENOSPC"
            case .notFound: "ENOENT"
            case .alreadyExists: "EEXIST"
            case .wouldBlock: "EWOULDBLOCK"
            case .permissionDenied: "EACCES"
            case .crashed: "simulated crash"
            case .badHandle: "bad handle"
            // ENOTDIR and EISDIR have the same numbers on Linux and Apple platforms.
            case .other(20): "ENOTDIR: a component of the path is not a directory"
            case .other(21): "EISDIR: is a directory"
            case let .other(e): "errno \(e)"
            }
        }
    }

    /// The errno-like cause.
    public var code: Code
    /// The call that failed.
    public var operation: FileOperation
    /// The file or directory it was applied to.
    public var path: String

    /// Creates an error value.
    public init(_ code: Code, _ operation: FileOperation, _ path: String) {
        self.code = code
        self.operation = operation
        self.path = path
    }

    /// "write(/dir/seg-…): EIO".
    public var description: String { "\(operation.rawValue)(\(path)): \(code)" }
}

/// How to open a file.
public enum OpenMode: Sendable, Equatable {
    /// Read only; the file must exist.
    case readOnly
    /// Read and write; the file must exist.
    case readWrite
    /// Read and write; create the file with permissions 0600, or truncate it to zero if it exists.
    case createTruncate
}

/// An open file. Offsets are absolute (pread/pwrite style); there is no file position.
public protocol StoreFile: AnyObject, Sendable {
    /// The path it was opened with.
    var path: String { get }
    /// Reads up to `count` bytes at `offset`; fewer only at end of file (never a short read otherwise).
    func read(at offset: UInt64, count: Int) throws(FileSystemError) -> [UInt8]
    /// Writes all of `bytes` at `offset` (extending the file if needed), or throws.
    func write(_ bytes: [UInt8], at offset: UInt64) throws(FileSystemError)
    /// Writes all of `bytes` at `offset` over bytes the file already holds, or throws: what
    /// ``write(_:at:)`` does, for a range that ends at or before the file's current size and
    /// lies in no hole (every byte of it was written before). Such an overwrite needs no new
    /// disk space and changes no size, so a file may copy it through a shared memory mapping
    /// instead of a system call (``POSIXFileSystem`` on Linux, on ext4, XFS and tmpfs); the
    /// bytes are then in the operating system's page cache when this returns, as after
    /// ``write(_:at:)``, and ``sync()`` makes them durable the same way.
    ///
    /// - Precondition: the range is inside bytes the file holds. The real file system does not
    ///   check it (a mapped page past the end of the file is a `SIGBUS`); the simulated one does.
    func overwrite(_ bytes: [UInt8], at offset: UInt64) throws(FileSystemError)
    /// The current size in bytes.
    func size() throws(FileSystemError) -> UInt64
    /// Sets the size (ftruncate).
    func truncate(to size: UInt64) throws(FileSystemError)
    /// Makes the file's data durable: fdatasync on Linux, F_FULLFSYNC on Apple platforms.
    func sync() throws(FileSystemError)
    /// Closes the handle. Further calls throw `badHandle`.
    func close() throws(FileSystemError)
}

extension StoreFile {
    /// ``write(_:at:)``: a file without a cheaper way to overwrite.
    public func overwrite(_ bytes: [UInt8], at offset: UInt64) throws(FileSystemError) {
        try write(bytes, at: offset)
    }
}

/// An exclusive lock on a store, held until released (or until the process dies).
public protocol StoreLock: AnyObject, Sendable {
    /// Releases the lock. Idempotent.
    func release()
}

/// The file-system operations the log needs.
public protocol FileSystem: Sendable {
    /// Creates `path` (and missing parents) with permissions 0700; succeeds if it already exists.
    func createDirectory(_ path: String) throws(FileSystemError)
    /// Whether `path` names an existing directory.
    func directoryExists(_ path: String) -> Bool
    /// The names (not paths) of the entries of a directory, excluding "." and "..".
    func listDirectory(_ path: String) throws(FileSystemError) -> [String]
    /// Opens (or creates, with permissions 0600) a file.
    func open(_ path: String, mode: OpenMode) throws(FileSystemError) -> any StoreFile
    /// Atomically renames a file, replacing any existing file at `to`.
    func rename(from: String, to: String) throws(FileSystemError)
    /// Removes a file.
    func unlink(_ path: String) throws(FileSystemError)
    /// Makes the directory's entries (creates, renames, unlinks) durable (fsync of the directory).
    func syncDirectory(_ path: String) throws(FileSystemError)
    /// Creates `path` (0600) if needed and takes an exclusive, non-blocking lock on it
    /// (`flock(LOCK_EX|LOCK_NB)`). Throws `wouldBlock` when another holder has it.
    func lockFile(_ path: String) throws(FileSystemError) -> any StoreLock
    /// 64 random bits (segment salts). Deterministic in the simulated file system.
    func randomUInt64() -> UInt64
}

/// Joins a directory and a file name.
@inline(__always) func joinPath(_ dir: String, _ name: String) -> String {
    dir.hasSuffix("/") ? dir + name : dir + "/" + name
}
