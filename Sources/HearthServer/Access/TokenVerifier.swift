import Foundation
import HearthWire
import JWTKit

/// Checks credentials for the server (asynchronous: JWT signatures are verified by JWTKit).
public protocol TokenVerifier: Sendable {
    /// Checks `credential` (from `auth`/`gauth`, `?auth=` or `Authorization: Bearer`) at
    /// `now` (ms since the epoch).
    func check(_ credential: String, now: Int64) async -> TokenCheck
}

/// Firebase-style tokens: JWTs signed HS256 with the server's secret (`exp`, `iat` checked;
/// the user id from `uid` or `sub`; `admin: true` makes an admin), and — in emulator mode, as
/// Firebase's emulator accepts them — unsigned JWTs (`alg: none`) and the admin credential
/// `owner` that firebase-admin sends.
///
/// Signatures are verified by JWTKit (vapor/jwt-kit), a maintained JWT library; expiry is
/// checked here against the caller's clock, so that tests and the simulator control time.
public struct FirebaseTokenVerifier: TokenVerifier {
    let keys: JWTKeyCollection?
    let emulator: Bool

    /// The shortest secret accepted, in bytes: HS256 keys shorter than the hash (32 bytes)
    /// weaken it, and JWTKit refuses them.
    public static let minimumSecretBytes = 32

    /// A secret shorter than ``minimumSecretBytes``.
    public struct WeakSecret: Error, CustomStringConvertible {
        /// Its length in bytes.
        public let bytes: Int
        public var description: String {
            "the secret is \(bytes) bytes; HS256 needs at least \(FirebaseTokenVerifier.minimumSecretBytes) (e.g. `openssl rand -base64 48 > secret`)"
        }
    }

    /// A verifier. With no `secret`, only emulator credentials can be valid.
    /// - Throws: ``WeakSecret`` for a secret shorter than ``minimumSecretBytes``.
    public init(secret: String?, emulator: Bool) async throws(WeakSecret) {
        self.emulator = emulator
        if let secret {
            guard secret.utf8.count >= Self.minimumSecretBytes else { throw WeakSecret(bytes: secret.utf8.count) }
            let keys = JWTKeyCollection()
            await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
            self.keys = keys
        } else {
            self.keys = nil
        }
    }

    public func check(_ credential: String, now: Int64) async -> TokenCheck {
        if emulator && credential == "owner" { return .valid(.admin) }
        let parts = credential.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Self.decodeSegment(parts[0]), let claims = Self.decodeSegment(parts[1])
        else {
            return .invalid("not a JWT")
        }
        guard case .object = claims else { return .invalid("the token's payload is not a JSON object") }
        switch header["alg"]?.stringValue {
        case "none"?:
            guard emulator else { return .invalid("unsigned tokens are accepted only in emulator mode") }
        case "HS256"?:
            guard let keys else { return .invalid("this server has no secret to verify signed tokens") }
            do {
                _ = try await keys.verify(credential, as: SignatureOnly.self)
            } catch {
                return .invalid("the token's signature does not verify")
            }
        case let alg?:
            return .invalid("algorithm \(alg) is not accepted (HS256, or none in emulator mode)")
        case nil:
            return .invalid("the token has no algorithm")
        }
        return Self.principal(claims, now: now)
    }

    /// The principal for verified claims at `now`.
    static func principal(_ claims: JSONValue, now: Int64) -> TokenCheck {
        func seconds(_ name: String) -> Int64? { claims[name]?.doubleValue.map { Int64($0) } }
        var expires: Int64? = nil
        if let exp = seconds("exp") {
            if exp * 1000 <= now { return .expired }
            expires = exp * 1000
        }
        if let iat = seconds("iat"), iat * 1000 > now + 300_000 {
            return .invalid("the token was issued in the future (iat)")
        }
        if claims["admin"]?.boolValue == true { return .valid(.admin) }
        guard let uid = claims["uid"]?.stringValue ?? claims["sub"]?.stringValue ?? claims["d"]?["uid"]?.stringValue,
            !uid.isEmpty
        else {
            return .invalid("the token names no user (uid or sub)")
        }
        return .valid(.user(Principal.User(uid: uid, claims: claims, expiresAt: expires)))
    }

    /// A base64url JSON segment, or nil.
    static func decodeSegment(_ segment: Substring) -> JSONValue? {
        var s = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        guard let data = Data(base64Encoded: s), let text = String(data: data, encoding: .utf8) else { return nil }
        return try? JSONValue.parse(text)
    }
}

/// The payload type JWTKit decodes while verifying the signature; claims are read by us.
struct SignatureOnly: JWTPayload {
    init(from decoder: any Decoder) throws {}
    func encode(to encoder: any Encoder) throws {}
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
