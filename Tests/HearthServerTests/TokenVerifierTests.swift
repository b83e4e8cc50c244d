@_spi(HearthInternals) import HearthServer
@_spi(HearthInternals) import HearthWire
import Testing

/// The whole token check, signature included, through the public verifier only (so these run
/// against any version of it): claims out of range are refused rather than trapping, a token's
/// `admin` claim is only a claim, and the admin is the server's own credential.
@Suite("Tokens: the verifier")
struct TokenVerifierTests {
    static let now: Int64 = 1_700_000_000_000
    static let secret = "a-secret-of-at-least-32-bytes-long!!"

    static func isInvalid(_ check: TokenCheck) -> Bool {
        if case .invalid = check { return true }
        return false
    }

    @Test("exp or iat far out of range (1e300, 1e16, -1) is an invalid token, signed or unsigned, not a crash")
    func outOfRangeClaims() async throws {
        let emulator = try await FirebaseTokenVerifier(secret: nil, emulator: true)
        let signed = try await FirebaseTokenVerifier(secret: Self.secret, emulator: false)
        for members in [#""exp":1e300"#, #""exp":1e16"#, #""exp":-1"#, #""exp":1800000000,"iat":1e300"#] {
            let claims = #"{"sub":"alice",\#(members)}"#
            #expect(Self.isInvalid(await emulator.check(JWTFixtures.unsigned(claims), now: Self.now)), "\(claims)")
            let token = try await JWTFixtures.hs256(secret: Self.secret, claims: claims)
            #expect(Self.isInvalid(await signed.check(token, now: Self.now)), "\(claims)")
        }
    }

    @Test("a signed token with admin: true is that user, with the claim for the rules; the secret is the admin")
    func adminClaimAndAdminCredential() async throws {
        let signed = try await FirebaseTokenVerifier(secret: Self.secret, emulator: false)
        let token = try await JWTFixtures.hs256(
            secret: Self.secret, claims: #"{"sub":"mallory","admin":true,"exp":1800000000}"#)
        guard case .valid(.user(let mallory)) = await signed.check(token, now: Self.now) else {
            Issue.record("expected the user mallory"); return
        }
        #expect(mallory.uid == "mallory" && mallory.claims["admin"] == .bool(true))
        #expect(await signed.check(Self.secret, now: Self.now) == .valid(.admin))
        #expect(Self.isInvalid(await signed.check("owner", now: Self.now)))
        #expect(Self.isInvalid(await signed.check(Self.secret + " ", now: Self.now)))
    }

    @Test("an expired token with a forged signature is invalid, not expired")
    func forgedExpired() async throws {
        let signed = try await FirebaseTokenVerifier(secret: Self.secret, emulator: false)
        let forged = try await JWTFixtures.hs256(
            secret: "another-secret-of-at-least-32-bytes", claims: #"{"sub":"alice","exp":1600000000}"#)
        #expect(await signed.check(forged, now: Self.now) == .invalid("the token's signature does not verify"))
        let genuine = try await JWTFixtures.hs256(secret: Self.secret, claims: #"{"sub":"alice","exp":1600000000}"#)
        #expect(await signed.check(genuine, now: Self.now) == .expired)
    }
}
