@_spi(HearthInternals) import HearthWire

/// Why a credential is refused: the reason an `invalid_token` answer (REST: 401) carries.
/// Every description is short, printable ASCII but for the 32 characters it may quote of the
/// credential's `alg`, themselves printable ASCII (others shown as `?`).
@_spi(HearthInternals) public enum TokenRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// A segment of a JWT.
    public enum Part: String, Sendable {
        /// The first segment.
        case header
        /// The second segment, the claims.
        case payload
        /// The third segment.
        case signature
    }

    /// Longer than ``TokenDecoder/maxCredentialBytes``.
    case tooLong(bytes: Int)
    /// Not three dot-separated segments (and not an admin credential).
    case notJWT
    /// A segment that is not canonical unpadded base64url.
    case badBase64(Part)
    /// A segment that is not a UTF-8 JSON text nested at most ``TokenDecoder/maxJSONDepth``.
    case badJSON(Part, JSONError)
    /// A header or payload that is JSON but not an object.
    case notAnObject(Part)
    /// No `alg` in the header.
    case missingAlgorithm
    /// An `alg` that is not a string.
    case algorithmNotAString
    /// An `alg` other than HS256 and (in emulator mode) none: its first 32 characters, those
    /// outside printable ASCII shown as `?`.
    case unsupportedAlgorithm(String)
    /// A `crit` header: an extension this server does not understand (RFC 7515 §4.1.11).
    case criticalHeader
    /// `alg: none` outside emulator mode.
    case unsignedOutsideEmulator
    /// `alg: none` with a signature segment that is not empty.
    case unsignedWithSignature
    /// An HS256 token on a server without a secret.
    case noSecret
    /// An HS256 signature that is not 32 bytes.
    case badSignatureLength(Int)
    /// An HS256 signature that does not verify with the server's secret.
    case badSignature
    /// A NumericDate claim that is not a JSON number.
    case claimNotANumber(String)
    /// A NumericDate claim outside 0 … ``TokenDecoder/maxNumericDate`` seconds.
    case claimOutOfRange(String)
    /// No `exp` claim.
    case noExpiry
    /// `iat` or `auth_time` later than now (beyond the allowed clock skew).
    case issuedInFuture(String)
    /// `nbf` later than now (beyond the allowed clock skew).
    case notYetValid
    /// No user id (`uid`, `sub` or `d.uid`), or an empty one.
    case noUser
    /// The user id claim (named) is not a string.
    case userIDNotAString(String)
    /// The user id claim (named) is longer than ``TokenDecoder/maxUIDLength``.
    case userIDTooLong(String)

    public var description: String {
        switch self {
        case .tooLong(let bytes):
            "the credential is \(bytes) bytes; at most \(TokenDecoder.maxCredentialBytes) are accepted"
        case .notJWT: "not a JWT"
        case .badBase64(let part): "the token's \(part.rawValue) is not base64url without padding"
        case .badJSON(let part, .invalidUTF8): "the token's \(part.rawValue) is not UTF-8"
        case .badJSON(let part, .tooDeep):
            "the token's \(part.rawValue) nests deeper than \(TokenDecoder.maxJSONDepth) levels"
        case .badJSON(let part, let error):
            "the token's \(part.rawValue) is not JSON (at byte \(error.offset.map { String($0) } ?? "end"))"
        case .notAnObject(let part): "the token's \(part.rawValue) is not a JSON object"
        case .missingAlgorithm: "the token has no algorithm"
        case .algorithmNotAString: "the token's algorithm is not a string"
        case .unsupportedAlgorithm(let alg): "algorithm \(alg) is not accepted (HS256, or none in emulator mode)"
        case .criticalHeader: "the token has critical header parameters (crit), which this server does not support"
        case .unsignedOutsideEmulator: "unsigned tokens are accepted only in emulator mode"
        case .unsignedWithSignature: "an unsigned token (alg none) must have an empty signature"
        case .noSecret: "this server has no secret to verify signed tokens"
        case .badSignatureLength(let n): "an HS256 signature is 32 bytes, not \(n)"
        case .badSignature: "the token's signature does not verify"
        case .claimNotANumber(let name): "the token's \(name) is not a number"
        case .claimOutOfRange(let name):
            "the token's \(name) is not a time from 0 to \(Int(TokenDecoder.maxNumericDate)) seconds"
        case .noExpiry: "the token has no expiry (exp)"
        case .issuedInFuture(let name): "the token's \(name) is in the future"
        case .notYetValid: "the token is not valid yet (nbf)"
        case .noUser: "the token names no user (uid or sub)"
        case .userIDNotAString(let name): "the token's \(name) is not a string"
        case .userIDTooLong(let name): "the token's \(name) is longer than \(TokenDecoder.maxUIDLength) characters"
        }
    }
}
