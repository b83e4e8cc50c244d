import Foundation
@_spi(HearthInternals) @testable import HearthServer
@_spi(HearthInternals) import HearthWire
import Testing

/// The credential decoder, the synchronous half of the token check: every numeric claim a
/// finite NumericDate in range, the credential's length and nesting bounded, strict base64url
/// and UTF-8, `admin` a plain claim, and the admin only the server's own credentials.
@Suite("Tokens: the credential decoder")
struct TokenDecoderTests {
    static let now: Int64 = 1_700_000_000_000
    static let secret = "a-secret-of-at-least-32-bytes-long!!"
    static let emulator = TokenDecoder(secret: nil, emulator: true)
    static let signedOnly = TokenDecoder(secret: secret, emulator: false)

    /// An unsigned token with `claims`, decoded in emulator mode at `now`.
    static func decode(_ claims: String, now: Int64 = now) -> Result<DecodedCredential, TokenRefusal> {
        Result { () throws(TokenRefusal) in try emulator.decode(JWTFixtures.unsigned(claims), now: now) }
    }

    /// An HS256 token with `claims`, decoded with the secret at `now`. Its 32-byte signature is
    /// not checked here (JWTKit checks it after the decoder): only a signed token expires.
    static func decodeSigned(_ claims: String, now: Int64 = now) -> Result<DecodedCredential, TokenRefusal> {
        let token =
            JWTFixtures.b64url(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8)) + "."
            + JWTFixtures.b64url(Data(claims.utf8)) + "." + JWTFixtures.b64url(Data(repeating: 7, count: 32))
        return Result { () throws(TokenRefusal) in try signedOnly.decode(token, now: now) }
    }

    static func refusal(_ result: Result<DecodedCredential, TokenRefusal>) -> TokenRefusal? {
        if case .failure(let refusal) = result { return refusal }
        return nil
    }

    static func user(_ result: Result<DecodedCredential, TokenRefusal>) -> Principal.User? {
        if case .success(.user(let user, _)) = result { return user }
        return nil
    }

    @Test(
        "a NumericDate claim that is not a finite number of seconds in 0 … 253402300799 is refused with its name",
        arguments: [
            (#""exp":1e300"#, TokenRefusal.claimOutOfRange("exp")),
            (#""exp":1e16"#, .claimOutOfRange("exp")),
            (#""exp":-1"#, .claimOutOfRange("exp")),
            (#""exp":253402300800"#, .claimOutOfRange("exp")),
            (#""exp":9007199254740993"#, .claimOutOfRange("exp")),
            (#""exp":"1700000060""#, .claimNotANumber("exp")),
            (#""exp":"NaN""#, .claimNotANumber("exp")),
            (#""exp":"Infinity""#, .claimNotANumber("exp")),
            (#""exp":null"#, .claimNotANumber("exp")),
            (#""exp":true"#, .claimNotANumber("exp")),
            (#""exp":[1700000060]"#, .claimNotANumber("exp")),
            (#""exp":1700000060,"iat":1e300"#, .claimOutOfRange("iat")),
            (#""exp":1700000060,"nbf":-0.5"#, .claimOutOfRange("nbf")),
            (#""exp":1700000060,"auth_time":"yesterday""#, .claimNotANumber("auth_time")),
            (#""uid":"u""#, .noExpiry),
        ])
    func numericClaims(members: String, expected: TokenRefusal) {
        let claims = members.hasPrefix(#""uid""#) ? "{\(members)}" : #"{"uid":"u",\#(members)}"#
        #expect(Self.refusal(Self.decode(claims)) == expected, "\(claims)")
    }

    @Test("numbers JSON cannot hold (1e400, NaN) are refused by the JSON parser, typed")
    func unparsableNumbers() {
        for claims in [#"{"uid":"u","exp":1e400}"#, #"{"uid":"u","exp":NaN}"#, #"{"uid":"u","exp":01}"#] {
            guard case .badJSON(.payload, _)? = Self.refusal(Self.decode(claims)) else {
                Issue.record("\(claims) was not refused as JSON"); continue
            }
        }
    }

    @Test("fractional seconds are accepted (RFC 7519), to the nearest millisecond; the bounds are inclusive")
    func fractionsAndBounds() {
        #expect(Self.user(Self.decodeSigned(#"{"uid":"u","exp":1700000060.5678}"#))?.expiresAt == 1_700_000_060_568)
        #expect(Self.user(Self.decodeSigned(#"{"uid":"u","exp":253402300799}"#))?.expiresAt == 253_402_300_799_000)
        #expect(Self.user(Self.decode(#"{"uid":"u","exp":1.8e9,"iat":0,"nbf":0,"auth_time":0}"#)) != nil)
    }

    @Test("exp at now is expired, a millisecond later valid; iat, auth_time and nbf may lead the clock by 300 s")
    func timeChecks() throws {
        #expect(try Self.decodeSigned(#"{"uid":"u","exp":1700000000}"#).get() == .expired(signed: true))
        #expect(Self.user(Self.decodeSigned(#"{"uid":"u","exp":1700000000.001}"#))?.expiresAt == Self.now + 1)
        for name in ["iat", "auth_time", "nbf"] {
            #expect(Self.user(Self.decode(#"{"uid":"u","exp":1800000000,"\#(name)":1700000300}"#)) != nil)
            let refused = Self.refusal(Self.decode(#"{"uid":"u","exp":1800000000,"\#(name)":1700000300.001}"#))
            #expect(refused == (name == "nbf" ? TokenRefusal.notYetValid : TokenRefusal.issuedInFuture(name)))
        }
    }

    @Test(
        "emulator mode: the JS SDK's mockUserToken (unsigned, iat 0, exp 3600: 1970) is its user with no expiry; refused outside emulator mode"
    )
    func jsSDKMockUserToken() throws {
        // createMockUserToken({sub: "alice"}) in @firebase/util, byte for byte: what
        // connectDatabaseEmulator's mockUserToken and @firebase/rules-unit-testing send.
        let mock =
            JWTFixtures.b64url(Data(#"{"alg":"none","type":"JWT"}"#.utf8)) + "."
            + JWTFixtures.b64url(
                Data(
                    #"{"iss":"https://securetoken.google.com/demo-project","aud":"demo-project","iat":0,"exp":3600,"auth_time":0,"sub":"alice","user_id":"alice","firebase":{"sign_in_provider":"custom","identities":{}}}"#
                        .utf8)) + "."
        for now in [Self.now, 3_600_000, .max] {
            let decoded = try Self.emulator.decode(mock, now: now)
            guard case .user(let user, signed: false) = decoded else {
                Issue.record("at \(now): expected an unsigned user, got \(decoded)"); continue
            }
            #expect(user.uid == "alice" && user.expiresAt == nil)
            #expect(user.authVariable["token"]?["firebase"]?["sign_in_provider"] == .string("custom"))
        }
        for decoder in [Self.signedOnly, TokenDecoder(secret: nil, emulator: false)] {
            #expect(throws: TokenRefusal.unsignedOutsideEmulator) { try decoder.decode(mock, now: Self.now) }
        }
    }

    @Test(
        "unsigned tokens never expire, but every other bound on their claims holds; signed ones of the same times expire"
    )
    func unsignedTokensDoNotExpire() throws {
        for exp in ["0", "1700000000", "1800000000"] {
            let user = try #require(Self.user(Self.decode(#"{"uid":"u","exp":\#(exp)}"#)), "exp \(exp)")
            #expect(user.expiresAt == nil, "exp \(exp)")
        }
        #expect(try Self.decodeSigned(#"{"uid":"u","exp":0}"#).get() == .expired(signed: true))
        #expect(try Self.decodeSigned(#"{"sub":"alice","iat":0,"exp":3600}"#).get() == .expired(signed: true))
        let stillRefused: [(String, TokenRefusal)] = [
            (#"{"uid":"u"}"#, .noExpiry),
            (#"{"uid":"u","exp":1e300}"#, .claimOutOfRange("exp")),
            (#"{"uid":"u","exp":-1}"#, .claimOutOfRange("exp")),
            (#"{"uid":"u","exp":"0"}"#, .claimNotANumber("exp")),
            (#"{"uid":"u","exp":0,"iat":1700000300.001}"#, .issuedInFuture("iat")),
            (#"{"uid":"u","exp":0,"nbf":1800000000}"#, .notYetValid),
            (#"{"exp":0}"#, .noUser),
        ]
        for (claims, refusal) in stillRefused { #expect(Self.refusal(Self.decode(claims)) == refusal, "\(claims)") }
    }

    @Test("any clock, however extreme, gives a value or a refusal, never a trap")
    func extremeClocks() throws {
        let claims = #"{"uid":"u","exp":253402300799,"iat":253402300799,"nbf":0}"#
        #expect(try Self.decodeSigned(claims, now: .max).get() == .expired(signed: true))
        #expect(Self.refusal(Self.decode(claims, now: .min)) == .issuedInFuture("iat"))
        #expect(Self.refusal(Self.decode(#"{"uid":"u","exp":0}"#, now: .min)) == nil)
    }

    @Test("the credential is at most 16 KiB; the header and claims nest at most 16 levels")
    func bounds() {
        let padding = String(repeating: "x", count: 11_000)
        let big = JWTFixtures.unsigned(#"{"uid":"u","exp":1800000000,"pad":"\#(padding)"}"#)
        #expect(big.utf8.count <= TokenDecoder.maxCredentialBytes)
        #expect(throws: Never.self) { try Self.emulator.decode(big, now: Self.now) }
        let huge = String(repeating: "a", count: TokenDecoder.maxCredentialBytes + 1)
        #expect(throws: TokenRefusal.tooLong(bytes: 16_385)) { try Self.emulator.decode(huge, now: Self.now) }
        #expect(throws: TokenRefusal.notJWT) { try Self.emulator.decode(String(huge.dropLast()), now: Self.now) }
        func nested(_ levels: Int) -> String {
            #"{"uid":"u","exp":1800000000,"n":"# + String(repeating: "[", count: levels - 1)
                + String(repeating: "]", count: levels - 1) + "}"
        }
        #expect(Self.user(Self.decode(nested(16))) != nil)
        guard case .badJSON(.payload, .tooDeep)? = Self.refusal(Self.decode(nested(17))) else {
            Issue.record("17 levels accepted"); return
        }
        guard case .tooLong? = Self.refusal(Self.decode(nested(100_000))) else {
            Issue.record("100,000 levels not refused for length"); return
        }
    }

    @Test("base64url is strict: no padding, no + or /, no length of 1 mod 4, no stray bits")
    func strictBase64() throws {
        let good = JWTFixtures.unsigned(#"{"uid":"u","exp":1800000000}"#)
        #expect(Self.user(.success(try Self.emulator.decode(good, now: Self.now))) != nil)
        let parts = good.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let header = parts[0]
        let payload = JWTFixtures.b64url(Data(#"{"uid":"u","exp":1800000000,"a":1}"#.utf8))  // 1 mod 3 bytes
        #expect(payload.utf8.count % 4 == 2, "the payload needs a final partial group for this test")
        // The last character of a two-character group carries 4 unused bits: set the lowest.
        let strayBit = ["A": "B", "Q": "R", "g": "h", "w": "x"][String(payload.suffix(1))] ?? "?"
        let flipped = String(payload.dropLast()) + strayBit
        for segment in [payload + "==", "+" + payload.dropFirst(), "/" + payload.dropFirst(), flipped, "e", "ey J"] {
            #expect(
                throws: TokenRefusal.badBase64(.payload), "\(segment)",
                performing: { try Self.emulator.decode("\(header).\(segment).", now: Self.now) })
        }
    }

    @Test("a payload that is not UTF-8 is refused as such")
    func invalidUTF8() {
        let header = JWTFixtures.b64url(Data(#"{"alg":"none"}"#.utf8))
        let payload = JWTFixtures.b64url(Data(#"{"uid":"u"#.utf8) + Data([0xFF]) + Data(#"","exp":1800000000}"#.utf8))
        let refused = Self.refusal(
            Result { () throws(TokenRefusal) in
                try Self.emulator.decode("\(header).\(payload).", now: Self.now)
            })
        #expect(refused?.description == "the token's payload is not UTF-8")
    }

    @Test("the header: HS256 only with a secret, none only in emulator mode and unsigned, no crit")
    func headers() {
        func token(_ header: String, signature: String = "") -> String {
            "\(JWTFixtures.b64url(Data(header.utf8))).\(JWTFixtures.b64url(Data(#"{"uid":"u","exp":1800000000}"#.utf8))).\(signature)"
        }
        let sig32 = JWTFixtures.b64url(Data(repeating: 7, count: 32))
        let cases: [(TokenDecoder, String, TokenRefusal?)] = [
            (Self.signedOnly, token(#"{"alg":"none"}"#), .unsignedOutsideEmulator),
            (Self.emulator, token(#"{"alg":"none"}"#, signature: sig32), .unsignedWithSignature),
            (Self.emulator, token(#"{"alg":"HS256"}"#, signature: sig32), .noSecret),
            (Self.signedOnly, token(#"{"alg":"HS256"}"#, signature: sig32), nil),
            (Self.signedOnly, token(#"{"alg":"HS256"}"#, signature: "AAAA"), .badSignatureLength(3)),
            (Self.signedOnly, token(#"{"alg":"HS512"}"#, signature: sig32), .unsupportedAlgorithm("HS512")),
            (Self.signedOnly, token(#"{"alg":5}"#), .algorithmNotAString),
            (Self.signedOnly, token(#"{"typ":"JWT"}"#), .missingAlgorithm),
            (Self.signedOnly, token(#"{"alg":"HS256","crit":["exp"]}"#, signature: sig32), .criticalHeader),
            (Self.signedOnly, token(#"["HS256"]"#), .notAnObject(.header)),
            (Self.signedOnly, "a.b", .notJWT),
            (Self.signedOnly, "a.b.c.d", .notJWT),
        ]
        for (decoder, credential, expected) in cases {
            let result = Result { () throws(TokenRefusal) in try decoder.decode(credential, now: Self.now) }
            #expect(Self.refusal(result) == expected, "\(credential)")
        }
    }

    @Test("admin: true is a claim the rules see, never the admin")
    func adminIsAPlainClaim() throws {
        let user = try #require(Self.user(Self.decode(#"{"uid":"mallory","exp":1800000000,"admin":true}"#)))
        #expect(user.uid == "mallory" && user.claims["admin"] == .bool(true))
        #expect(user.authVariable["token"]?["admin"] == .bool(true))
        #expect(Principal.user(user) != .admin)
    }

    @Test("the admin: owner in emulator mode, the secret itself in either mode, nothing near them")
    func adminCredentials() throws {
        let emulatorWithSecret = TokenDecoder(secret: Self.secret, emulator: true)
        #expect(try Self.emulator.decode("owner", now: Self.now) == .admin)
        #expect(try emulatorWithSecret.decode(Self.secret, now: Self.now) == .admin)
        #expect(try Self.signedOnly.decode(Self.secret, now: Self.now) == .admin)
        let near = [
            "OWNER", "owner ", String(Self.secret.dropLast()), Self.secret + "!", String(Self.secret.dropLast()) + "?",
        ]
        for credential in near + ["owner"] {
            #expect(throws: TokenRefusal.notJWT, "\(credential)") {
                try Self.signedOnly.decode(credential, now: Self.now)
            }
        }
    }

    @Test("the user id: uid, else sub, else a legacy token's d.uid; a non-empty string of at most 128 characters")
    func userIDs() {
        let cases: [(String, String?, TokenRefusal?)] = [
            (#""uid":"a","sub":"b""#, "a", nil),
            (#""sub":"b""#, "b", nil),
            (#""d":{"uid":"c"}"#, "c", nil),
            (#""uid":5,"sub":"b""#, nil, .userIDNotAString("uid")),
            (#""uid":"""#, nil, .noUser),
            (#""name":"x""#, nil, .noUser),
            (#""sub":"\#(String(repeating: "é", count: 128))""#, String(repeating: "é", count: 128), nil),
            (#""sub":"\#(String(repeating: "x", count: 129))""#, nil, .userIDTooLong("sub")),
            (#""uid":"\#(String(repeating: "😀", count: 65))""#, nil, .userIDTooLong("uid")),
        ]
        for (members, uid, refusal) in cases {
            let result = Self.decode(#"{"exp":1800000000,\#(members)}"#)
            #expect(Self.user(result)?.uid == uid && Self.refusal(result) == refusal, "\(members)")
        }
    }

    @Test("a refusal's reason is short printable ASCII: at most 32 characters of the credential come back")
    func shortReasons() {
        let control = JWTFixtures.b64url(Data(#"{"alg":"\n\u0000é\"x"}"#.utf8))
        let quoted = Result { () throws(TokenRefusal) in try Self.signedOnly.decode("\(control).e30.", now: Self.now) }
        #expect(Self.refusal(quoted) == .unsupportedAlgorithm("???\"x"))
        let alg = String(repeating: "A", count: 5_000)
        let header = JWTFixtures.b64url(Data(#"{"alg":"\#(alg)"}"#.utf8))
        let refused = Self.refusal(
            Result { () throws(TokenRefusal) in
                try Self.signedOnly.decode("\(header).e30.", now: Self.now)
            })
        #expect(refused == .unsupportedAlgorithm(String(alg.prefix(32))))
        #expect((refused?.description.utf8.count ?? .max) < 120)
    }
}
