// The public face of Hearth. Clients `import Hearth` and get the store, the data model
// (paths, keys, nodes, JSON, queries) and exactly the log types the store's API names: the
// durability tiers, LSNs, the log's errors and recovery report, and the file-system seam.
//
// Everything else in HearthLog (framing, checksums, compression, the MANIFEST, recovery's
// scanner) and the engine's internals (event codec, sync tree, reducer) stay `package` or behind
// `@_spi(HearthInternals)` for the tool and the fuzzers. Test aids (the simulated file system,
// seeded randomness) live in the `HearthTesting` product, as swift-nio keeps NIOEmbedded apart.
@_exported import HearthModel
@_exported import enum HearthLog.Durability
@_exported import typealias HearthLog.LSN
@_exported import enum HearthLog.LogError
@_exported import struct HearthLog.RecoveryReport
@_exported import struct HearthLog.Damage
@_exported import protocol HearthLog.FileSystem
@_exported import protocol HearthLog.StoreFile
@_exported import protocol HearthLog.StoreLock
@_exported import struct HearthLog.POSIXFileSystem
@_exported import struct HearthLog.FileSystemError
@_exported import enum HearthLog.FileOperation

/// Facts about this build of Hearth.
public enum HearthInfo {
    /// The library's semantic version. Between releases `main` carries the next minor version
    /// as a pre-release (`-dev`): a build of `main` is never mistaken for the last release.
    public static let version = "0.3.0-dev"
}
