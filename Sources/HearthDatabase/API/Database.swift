import Hearth
import HearthModel

/// A realtime database: a server URL, a local store, and the connection between them.
///
/// (Skeleton: the runtime lands with the sync core.)
public final class Database: Sendable {
    init() {}

    /// A reference to the root of the database.
    public func reference() -> DatabaseReference { DatabaseReference(database: self, path: .root) }
}
