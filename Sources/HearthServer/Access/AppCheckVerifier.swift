@_spi(HearthInternals) import HearthWire

/// Checks App Check tokens for `hearth serve --app-check-key-file` (a test mode of Firebase's
/// App Check enforcement): a token is valid when it is a JWT signed HS256 with the key, with an
/// `exp` in the future and an app id in `sub` — the path auth tokens take
/// (``FirebaseTokenVerifier``: `TokenDecoder`'s bounds and strict parsing, then JWTKit's
/// signature check), with no admin: the key itself is not a token.
public struct AppCheckVerifier: TokenVerifier {
    let tokens: FirebaseTokenVerifier

    /// A verifier for tokens signed with `key`.
    /// - Throws: ``FirebaseTokenVerifier/WeakSecret`` for a key shorter than
    ///   ``FirebaseTokenVerifier/minimumSecretBytes``.
    public init(key: String) async throws(FirebaseTokenVerifier.WeakSecret) {
        tokens = try await FirebaseTokenVerifier(secret: key, emulator: false)
    }

    /// `.valid` with the app as a user (its `sub`, and the token's expiry), `.expired`, or
    /// `.invalid` with the reason.
    public func check(_ credential: String, now: Int64) async -> TokenCheck {
        switch await tokens.check(credential, now: now) {
        case .valid(.user(let app)): .valid(.user(app))
        case .valid: .invalid("not an App Check token")
        case .expired: .expired
        case .invalid(let why): .invalid(why)
        }
    }
}
