// RulesAuth: who is asking — the `auth` variable of rule expressions.

import HearthModel

/// The identity a request is evaluated for: rules see it as the `auth` variable.
///
/// An unauthenticated request passes `nil` wherever a `RulesAuth?` is taken (`auth == null`
/// in rules). A signed-in user is `{"uid": …, "provider": …, "token": {claims}}`, as Firebase
/// builds it from an ID token; ``init(variable:)`` takes any object instead, which is what
/// Firebase does with the admin SDK's `databaseAuthVariableOverride` (REST
/// `auth_variable_override`). ``admin`` bypasses every rule, as Firebase's service-account
/// credentials do.
public struct RulesAuth: Sendable, Hashable {
    /// The members of the `auth` object rules see: `auth.uid` reads the member `uid`, and
    /// a member that is absent reads as `null`.
    public let variable: [JSONMember]

    /// Whether rules are bypassed (an admin credential). Rules never see this flag.
    public let isAdmin: Bool

    /// A signed-in user: `auth` is `{"uid": uid, "provider": provider, "token": token}`.
    ///
    /// - Parameters:
    ///   - uid: `auth.uid`, the user's id.
    ///   - provider: `auth.provider`, the sign-in method (`password`, `anonymous`,
    ///     `google.com`, `custom`, …).
    ///   - token: `auth.token`, the ID token's claims as a JSON object (`email`,
    ///     `email_verified`, `firebase.identities`, custom claims, …). Missing claims read as
    ///     `null`.
    public init(uid: String, provider: String = "custom", token: JSONValue = .object([])) {
        self.variable = [
            JSONMember(key: "uid", value: .string(uid)),
            JSONMember(key: "provider", value: .string(provider)),
            JSONMember(key: "token", value: token),
        ]
        self.isAdmin = false
    }

    /// An `auth` variable given as a whole object, such as the admin SDK's
    /// `databaseAuthVariableOverride` (`{"uid": "my-service-worker"}`): rules see exactly
    /// these members. (An override of `null` means unauthenticated: pass `nil` instead.)
    public init(variable: [JSONMember]) {
        self.variable = variable
        self.isAdmin = false
    }

    private init(admin: Void) {
        self.variable = []
        self.isAdmin = true
    }

    /// Admin access: every read and write is allowed without evaluating rules, and the
    /// decision says so.
    public static let admin = RulesAuth(admin: ())

    /// The whole `auth` object as JSON.
    public var json: JSONValue { .object(variable) }

    /// `auth.uid` when it is a string, else `nil`.
    public var uid: String? {
        if case .string(let s)? = member("uid") { return s }
        return nil
    }

    /// `auth.provider` when it is a string, else `nil`.
    public var provider: String? {
        if case .string(let s)? = member("provider") { return s }
        return nil
    }

    /// `auth.token`, or `nil` when the object has none.
    public var token: JSONValue? { member("token") }

    /// The member named `name` (compared by exact UTF-8 bytes), or `nil`.
    func member(_ name: String) -> JSONValue? {
        variable.first { $0.key.utf8.elementsEqual(name.utf8) }?.value
    }
}
