// RulesAuth: who is asking — the `auth` variable of rule expressions.

import HearthModel

/// The identity a request is evaluated for: rules see it as `auth`.
///
/// An unauthenticated request passes `nil` wherever a `RulesAuth?` is taken (`auth == null`
/// in rules). ``admin`` bypasses every rule, as Firebase's service-account credentials do.
public struct RulesAuth: Sendable, Hashable {
    /// `auth.uid`: the user's id.
    public var uid: String
    /// `auth.provider`: the sign-in method (`password`, `anonymous`, `google.com`, `custom`, ...).
    public var provider: String
    /// `auth.token`: the ID token's claims (a children node: `email`, `email_verified`,
    /// `firebase.identities`, custom claims, ...). Missing claims read as `null`.
    public var token: Node
    /// Whether rules are bypassed (an admin credential). Rules never see this flag.
    public var isAdmin: Bool

    /// An authenticated user.
    public init(uid: String, provider: String = "custom", token: Node = .empty) {
        self.uid = uid
        self.provider = provider
        self.token = token
        self.isAdmin = false
    }

    /// Admin access: every read and write is allowed without evaluating rules.
    public static let admin: RulesAuth = {
        var auth = RulesAuth(uid: "", provider: "admin")
        auth.isAdmin = true
        return auth
    }()
}
