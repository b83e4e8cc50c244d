// The public face of Hearth. Clients `import Hearth` and get the data model and the log's
// public types (durability tiers, LSNs, the file-system seam) with it.
@_exported import HearthLog
@_exported import HearthModel

/// Facts about this build of Hearth.
public enum HearthInfo {
    /// The library's semantic version.
    public static let version = "0.1.0"
}
