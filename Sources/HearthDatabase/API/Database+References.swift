import Foundation
import Hearth
import HearthModel

extension Database {
    /// The version of Hearth's client — Firebase's `sdkVersion()`: the release it is, or
    /// between releases the next one with a `-dev` suffix (`HearthInfo.version` in Hearth, the one
    /// version of the package, as `hearth --version` prints it).
    public static func sdkVersion() -> String { HearthInfo.version }

    /// The reference a full URL names — Firebase's `reference(fromURL:)`:
    /// `https://demo.firebaseio.com/users/ada` is `users/ada` of the database `demo`, each key
    /// percent-decoded (`url` of a ``DatabaseReference`` gives such a URL).
    ///
    /// Firebase raises an exception for a URL of another database, or an invalid one. Here, as
    /// with ``DatabaseReference/child(_:)``, the call never throws nor crashes: such a URL gives
    /// a reference that reports the error from every operation;
    /// ``reference(checkingURL:)`` throws it instead.
    public func reference(fromURL url: String) -> DatabaseReference {
        do {
            return try reference(checkingURL: url)
        } catch {
            return DatabaseReference(database: self, path: .root, invalid: error)
        }
    }

    /// ``reference(fromURL:)`` reporting a bad URL as an error.
    ///
    /// The URL names this database when it names the same namespace (the host's first label,
    /// or `?ns=`): the database's own URL, or its emulator's.
    ///
    /// - Throws: ``DatabaseError/invalidValue(_:)`` for a URL that is not a database URL or
    ///   names another database; ``DatabaseError/invalidPath(_:)`` for a key the database
    ///   refuses.
    public func reference(checkingURL url: String) throws(DatabaseError) -> DatabaseReference {
        guard var components = URLComponents(string: url), components.host != nil else {
            throw .invalidValue("reference(fromURL:): \"\(url)\" is not a URL")
        }
        let encodedPath = components.percentEncodedPath
        components.percentEncodedPath = ""
        components.fragment = nil
        let other = try SharedDatabases.key(components.string ?? url)
        let own = endpoint
        guard other.namespace == own.namespace else {
            throw .invalidValue(
                "reference(fromURL:): \"\(url)\" names the database \"\(other.namespace)\", not this one (\"\(own.namespace)\")"
            )
        }
        var keys: [String] = []
        for segment in encodedPath.split(separator: "/") {
            guard let key = String(segment).removingPercentEncoding else {
                throw .invalidPath("reference(fromURL:): \"\(segment)\" is not percent-encoded UTF-8")
            }
            keys.append(key)
        }
        if keys.isEmpty { return reference() }
        // A decoded `/` would split a key in two: no key may hold one.
        if let bad = keys.first(where: { $0.contains("/") }) {
            throw .invalidPath("reference(fromURL:): the key \"\(bad)\" holds a \"/\"")
        }
        let ref = reference().child(keys.joined(separator: "/"))
        if let invalid = ref.invalid { throw invalid }
        return ref
    }
}
