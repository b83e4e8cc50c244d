// The public face of Hearth. Clients `import Hearth` and get the data model with it.
@_exported import HearthModel

/// Facts about this build of Hearth.
public enum HearthInfo {
    /// The library's semantic version.
    public static let version = "0.1.0"
}
