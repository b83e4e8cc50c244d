import Foundation
import JWTKit

/// Tokens for tests: HS256 ones signed by JWTKit, unsigned ones as Firebase's emulator
/// accepts them.
enum JWTFixtures {
    struct Claims: JWTPayload {
        var sub: String?
        var uid: String?
        var exp: Int64?
        var iat: Int64?
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    static func b64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func hs256(secret: String, _ claims: Claims) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return try await keys.sign(claims)
    }

    /// A token whose payload is exactly the JSON text `claims` (numbers no Codable type
    /// writes, such as `1e300`), signed HS256 with `secret` by JWTKit's signer.
    static func hs256(secret: String, claims: String) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        let input = "\(b64url(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8))).\(b64url(Data(claims.utf8)))"
        let signature = try await keys.getKey().sign(Array(input.utf8))
        return input + "." + b64url(Data(signature))
    }

    static func unsigned(_ claims: String) -> String {
        "\(b64url(Data(#"{"alg":"none","typ":"JWT"}"#.utf8))).\(b64url(Data(claims.utf8)))."
    }
}
