// ConnectToken: the auth token `hearth connect` hands its database, replaced by the `auth` command.
import Synchronization

/// The token `hearth connect` gives its database's token provider; the `auth` command
/// replaces it.
final class ConnectToken: Sendable {
    private let token: Mutex<String?>
    init(_ token: String?) { self.token = Mutex(token) }
    var current: String? {
        get { token.withLock { $0 } }
        set { token.withLock { $0 = newValue } }
    }
}
