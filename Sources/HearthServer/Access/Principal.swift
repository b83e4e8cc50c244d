@_spi(HearthInternals) import HearthWire

/// Who a connection or request acts as.
public enum Principal: Sendable, Equatable {
    /// No credential (or one that expired or was revoked).
    case unauthenticated
    /// The admin: the server's secret itself presented as the credential (Firebase's legacy
    /// database secret) or, in emulator mode, firebase-admin's `owner`. Bypasses every check.
    /// No token makes an admin: a token's `admin` claim is one that rules may read.
    case admin
    /// A user, with the token's claims (`auth` in security rules) and when it expires.
    ///
    /// Boxed (`indirect`): a principal is a word, not the user's 70-odd bytes, in each of the
    /// core's connection records, most of which hold no user until they authenticate.
    indirect case user(User)

    /// An authenticated user: `uid` from the token's `uid` or `sub`, every claim as signed.
    public struct User: Sendable, Equatable {
        /// The user id.
        public let uid: String
        /// The token's claims (the security rules' `auth.token`).
        public let claims: JSONValue
        /// When the token expires (ms since the epoch), if it does.
        public let expiresAt: Int64?
        /// The security rules' `auth` variable: `{uid, provider, token}` for a token, or the
        /// object an admin's `auth_variable_override` gave.
        public let authVariable: JSONValue

        /// A user signed in with a token holding `claims`.
        public init(uid: String, claims: JSONValue, expiresAt: Int64?) {
            self.uid = uid
            self.claims = claims
            self.expiresAt = expiresAt
            let provider =
                claims["firebase"]?["sign_in_provider"]?.stringValue ?? claims["provider"]?.stringValue ?? "custom"
            self.authVariable = .object([
                JSONMember(key: "provider", value: .string(provider)),
                JSONMember(key: "token", value: claims),
                JSONMember(key: "uid", value: .string(uid)),
            ])
        }

        /// A user an admin acts as: `variable` is the whole `auth` variable.
        public init(overriddenBy variable: JSONValue) {
            self.uid = variable["uid"]?.stringValue ?? ""
            self.claims = variable["token"] ?? .object([])
            self.expiresAt = nil
            self.authVariable = variable
        }
    }

    /// When the principal's credential expires, if it does.
    public var expiresAt: Int64? {
        if case .user(let u) = self { return u.expiresAt }
        return nil
    }

    /// The principal an admin acting as `auth_variable_override` / `authvar` becomes:
    /// `null` is unauthenticated, an object is the `auth` variable as given.
    public static func override(_ json: JSONValue) -> Principal {
        guard case .object = json else { return .unauthenticated }
        return .user(User(overriddenBy: json))
    }
}

/// The outcome of checking a credential.
public enum TokenCheck: Sendable, Equatable {
    /// Valid: act as this principal.
    case valid(Principal)
    /// Well formed and correctly signed, but past its `exp`.
    case expired
    /// Not a token this server accepts, and why.
    case invalid(String)
}
