@_spi(HearthInternals) import HearthWire

/// The synchronous half of checking a credential, a pure function of the credential, the
/// clock and the server's configuration: the credential's length, the server's own admin
/// credentials, a JWT's strict decoding and its claims. Only an HS256 signature is left to
/// check (by JWTKit, asynchronously); everything that parses client bytes is here, so that
/// the `FuzzToken` fuzzer runs exactly what the server runs.
///
/// What it accepts, and why (Firebase's "Verify ID tokens" rules and RFC 7519):
/// - At most ``maxCredentialBytes`` bytes: Firebase ID tokens are about 1 KB and their custom
///   claims at most 1,000 bytes, so 16 KiB leaves room without letting a client make the
///   server decode megabytes.
/// - The admin: `owner` in emulator mode (what firebase-admin sends to an emulator), and the
///   server's secret itself (Firebase's legacy database secret, `?auth=SECRET`), compared in
///   constant time. No claim makes an admin: `admin: true` is an ordinary custom claim that
///   rules read as `auth.token.admin`.
/// - A JWT is three base64url segments without padding, canonical (unused bits zero); header
///   and payload are UTF-8 JSON objects nested at most ``maxJSONDepth`` deep. `alg` is
///   `HS256` (the server must have a secret) or — in emulator mode only — `none`, whose
///   signature segment must be empty; a `crit` header is refused (no extension is understood).
/// - `exp` is required; `exp`, `iat`, `nbf` and `auth_time` are RFC 7519 NumericDates: finite
///   JSON numbers of seconds in 0 … ``maxNumericDate`` (9999-12-31T23:59:59Z), fractions
///   allowed (to the nearest millisecond). `iat` and `auth_time` may not be later than
///   now, and `nbf` not later than now, give or take ``clockSkewMs``; past `exp` a signed token
///   is expired. An unsigned token (emulator mode only) has no expiry, as in Firebase's emulator:
///   the JS SDK's `mockUserToken` (what `@firebase/rules-unit-testing` sends) carries `iat` 0 and
///   `exp` 3600, in 1970. Its claims are still checked as a signed token's, `exp` included.
/// - The user id is the first of `uid`, `sub` and `d.uid` present: a non-empty string of at
///   most ``maxUIDLength`` UTF-16 code units (Firebase's limit on a uid).
@_spi(HearthInternals) public struct TokenDecoder: Sendable {
    /// The longest credential accepted, in UTF-8 bytes.
    public static let maxCredentialBytes = 16 * 1024
    /// How deep a token's header and claims may nest arrays and objects.
    public static let maxJSONDepth = 16
    /// The latest NumericDate accepted, in seconds: 9999-12-31T23:59:59Z.
    public static let maxNumericDate: Double = 253_402_300_799
    /// How far `iat`, `auth_time` and `nbf` may be ahead of the server's clock (ms): clocks
    /// of the token's issuer and this server disagree a little.
    public static let clockSkewMs: Int64 = 300_000
    /// The longest user id, in UTF-16 code units (Firebase's limit on `uid` and `sub`).
    public static let maxUIDLength = 128

    let emulator: Bool
    let secret: [UInt8]?

    /// A decoder for a server with `secret` (nil: none), in emulator mode or not.
    public init(secret: String?, emulator: Bool) {
        self.emulator = emulator
        self.secret = secret.map { Array($0.utf8) }
    }

    /// What `credential` is at `now` (ms since the epoch), short of an HS256 signature.
    /// - Throws: ``TokenRefusal`` saying why the credential is not accepted.
    public func decode(_ credential: String, now: Int64) throws(TokenRefusal) -> DecodedCredential {
        let bytes = Array(credential.utf8)
        guard bytes.count <= Self.maxCredentialBytes else { throw .tooLong(bytes: bytes.count) }
        if emulator && bytes.elementsEqual("owner".utf8) { return .admin }
        if let secret, Self.constantTimeEqual(bytes, secret) { return .admin }
        let parts = bytes.split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .notJWT }
        let header = try Self.object(parts[0], .header)
        if header["crit"] != nil { throw .criticalHeader }
        let signed: Bool
        switch header["alg"] {
        case .string(let alg) where alg.utf8.elementsEqual("HS256".utf8):
            guard secret != nil else { throw .noSecret }
            guard let signature = Base64URL.decode(parts[2]) else { throw .badBase64(.signature) }
            guard signature.count == 32 else { throw .badSignatureLength(signature.count) }
            signed = true
        case .string(let alg) where alg.utf8.elementsEqual("none".utf8):
            guard emulator else { throw .unsignedOutsideEmulator }
            guard parts[2].isEmpty else { throw .unsignedWithSignature }
            signed = false
        case .string(let alg):
            // Quoted in the answer (and perhaps a log): printable ASCII only, and short.
            let shown = alg.unicodeScalars.prefix(32).map { (0x20..<0x7F).contains($0.value) ? Character($0) : "?" }
            throw .unsupportedAlgorithm(String(shown))
        case nil:
            throw .missingAlgorithm
        case .some:
            throw .algorithmNotAString
        }
        let claims = try Self.object(parts[1], .payload)
        return try Self.outcome(claims, signed: signed, now: now)
    }

    /// The user `claims` name, or expired, at `now`. Only a signed token expires: an unsigned
    /// one's user has no expiry (`expiresAt` nil), but its `exp` must be there and in range.
    static func outcome(_ claims: JSONValue, signed: Bool, now: Int64) throws(TokenRefusal) -> DecodedCredential {
        guard let expires = try numericDate(claims, "exp") else { throw .noExpiry }
        for name in ["iat", "auth_time"] {
            if let issued = try numericDate(claims, name), issued - clockSkewMs > now {
                throw .issuedInFuture(name)
            }
        }
        if let notBefore = try numericDate(claims, "nbf"), notBefore - clockSkewMs > now { throw .notYetValid }
        let uid = try userID(claims)
        guard signed else { return .user(Principal.User(uid: uid, claims: claims, expiresAt: nil), signed: false) }
        if expires <= now { return .expired(signed: true) }
        return .user(Principal.User(uid: uid, claims: claims, expiresAt: expires), signed: true)
    }

    /// The NumericDate claim `name` in ms since the epoch, nil when absent. In range, the
    /// product with 1000 is below 2^53 and within a few microseconds of the decimal value, so
    /// rounding to the nearest millisecond gives back exactly a value written to the ms.
    static func numericDate(_ claims: JSONValue, _ name: String) throws(TokenRefusal) -> Int64? {
        switch claims[name] {
        case nil: return nil
        case .number(let seconds)?:
            // NaN fails both comparisons; the parser never produces it, but no input may trap.
            guard seconds >= 0, seconds <= maxNumericDate else { throw .claimOutOfRange(name) }
            return Int64((seconds * 1000).rounded())
        case .integer?: throw .claimOutOfRange(name)  // beyond ±2^53
        case .some: throw .claimNotANumber(name)
        }
    }

    /// The user id: the first of `uid`, `sub` and `d.uid` (a legacy token's) present.
    static func userID(_ claims: JSONValue) throws(TokenRefusal) -> String {
        let named: (String, JSONValue)? =
            claims["uid"].map { ("uid", $0) } ?? claims["sub"].map { ("sub", $0) }
            ?? claims["d"]?["uid"].map { ("d.uid", $0) }
        guard let (name, value) = named else { throw .noUser }
        guard case .string(let uid) = value else { throw .userIDNotAString(name) }
        guard !uid.isEmpty else { throw .noUser }
        guard uid.utf16.count <= maxUIDLength else { throw .userIDTooLong(name) }
        return uid
    }

    /// A segment decoded as a JSON object.
    static func object(_ segment: ArraySlice<UInt8>, _ part: TokenRefusal.Part) throws(TokenRefusal) -> JSONValue {
        guard let bytes = Base64URL.decode(segment) else { throw .badBase64(part) }
        let value: JSONValue
        do { value = try JSONValue.parse(bytes, maxDepth: maxJSONDepth) } catch { throw .badJSON(part, error) }
        guard case .object = value else { throw .notAnObject(part) }
        return value
    }

    /// Whether `a` and `b` are equal, in a time that depends on their lengths only.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}

/// What a credential is before its signature is checked (``TokenDecoder/decode(_:now:)``).
@_spi(HearthInternals) public enum DecodedCredential: Sendable, Equatable {
    /// The server's own admin credential: bypasses the rules.
    case admin
    /// A token naming a user, valid at the time given; `signed`: an HS256 signature that must
    /// still verify (false only for an unsigned token in emulator mode, whose user has no expiry).
    case user(Principal.User, signed: Bool)
    /// A well-formed signed token past its `exp` (an unsigned one never expires); `signed` as
    /// for ``user(_:signed:)``.
    case expired(signed: Bool)
}

/// Strict base64url (RFC 4648 §5) without padding, as JWTs are encoded (RFC 7515 §2).
enum Base64URL {
    /// The bytes `text` encodes, or nil when it is not canonical base64url: a character outside
    /// the alphabet (padding included), a length of 1 mod 4, or nonzero unused bits.
    static func decode(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3 + 2)
        var pending: UInt32 = 0
        var bits = 0
        for character in text {
            guard let sextet = value(character) else { return nil }
            pending = pending << 6 | UInt32(sextet)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: pending >> UInt32(bits)))
                pending &= (1 << UInt32(bits)) - 1
            }
        }
        return pending == 0 ? out : nil
    }

    /// The 6-bit value of a base64url character.
    static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
