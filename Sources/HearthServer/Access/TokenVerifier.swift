@_spi(HearthInternals) import HearthWire
import JWTKit

/// Checks credentials for the server (asynchronous: JWT signatures are verified by JWTKit).
public protocol TokenVerifier: Sendable {
    /// Checks `credential` (from `auth`/`gauth`, `?auth=` or `Authorization: Bearer`) at
    /// `now` (ms since the epoch).
    func check(_ credential: String, now: Int64) async -> TokenCheck
}

/// Firebase-style credentials: JWTs signed HS256 with the server's secret, and the server's
/// own admin credentials. Everything but the signature is `TokenDecoder`'s (synchronous,
/// fuzzed): the credential's length, strict base64url and JSON, `exp` (required), `iat`,
/// `nbf` and `auth_time` as NumericDates in range, the user id from `uid` or `sub`. A token's
/// claims — `admin: true` included — are only what rules see as `auth.token`; the admin, who
/// bypasses rules, is the secret itself presented as the credential (Firebase's legacy
/// database secret) and, in emulator mode, `owner` (what firebase-admin sends to an emulator).
/// Emulator mode also accepts unsigned JWTs (`alg: none`), as Firebase's emulator does.
///
/// Signatures are verified by JWTKit (vapor/jwt-kit), a maintained JWT library, after the
/// decoder has bounded and parsed the token; expiry is checked against the caller's clock, so
/// that tests and the simulator control time.
public struct FirebaseTokenVerifier: TokenVerifier {
    let keys: JWTKeyCollection?
    let decoder: TokenDecoder

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
        self.decoder = TokenDecoder(secret: secret, emulator: emulator)
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
        let decoded: DecodedCredential
        do { decoded = try decoder.decode(credential, now: now) } catch { return .invalid(error.description) }
        switch decoded {
        case .admin:
            return .valid(.admin)
        case .user(let user, let signed):
            guard await signatureVerifies(credential, signed: signed) else { return .invalid(badSignature) }
            return .valid(.user(user))
        case .expired(let signed):
            guard await signatureVerifies(credential, signed: signed) else { return .invalid(badSignature) }
            return .expired
        }
    }

    private var badSignature: String { TokenRefusal.badSignature.description }

    /// Whether an HS256 token's signature verifies with the secret (an unsigned one has none
    /// to check: the decoder accepts it only in emulator mode).
    private func signatureVerifies(_ credential: String, signed: Bool) async -> Bool {
        guard signed else { return true }
        guard let keys else { return false }
        do {
            _ = try await keys.verify(credential, as: SignatureOnly.self)
            return true
        } catch {
            return false
        }
    }
}

/// The payload type JWTKit decodes while verifying the signature; claims are read by us.
struct SignatureOnly: JWTPayload {
    init(from decoder: any Decoder) throws {}
    func encode(to encoder: any Encoder) throws {}
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
