// FuzzToken: credentials through the server's pure decode + claims step (`TokenDecoder`, everything
// the token check does but the HS256 signature) at a clock the input chooses.
//
// Input: a flags byte (bit 0 emulator mode, bit 1 the server has a secret, bit 2 a structured token,
// bit 3 any Int64 clock rather than one between 1970 and 2100), 8 bytes of clock, then either the
// raw credential (UTF-8, invalid bytes replaced as the network layer's String does) or the choices a
// `TokenBuilder` turns into one: an admin-like string, or a header and claims JSON built from the
// input — NumericDates near the clock or as number text, strings, nesting, padding — base64url
// encoded (or, on purpose, not).
//
// Checks: a value or a typed refusal, never a trap; the same answer twice; a signed user expires
// strictly after the clock and an unsigned one (emulator mode) never, as in Firebase's emulator; a
// user has a non-empty uid of at most 128 UTF-16 units, and is never the admin; the
// admin is exactly `owner` in emulator mode and the secret itself; an unsigned token is accepted only
// in emulator mode and a signed one only with a secret; a refusal's reason is short printable ASCII. For built
// tokens whose every member the builder understands, the outcome (user and expiry, expired, refused)
// must be the one the documented rules give.
@_spi(HearthInternals) import HearthServer
@_spi(HearthInternals) import HearthWire

extension FuzzServerChecks {
    static let tokenSecret = "fuzz-token-secret-at-least-32-bytes!"

    static func token(_ bytes: [UInt8]) {
        var input = Input(bytes)
        let flags = input.u8()
        let emulator = flags & 1 != 0, hasSecret = flags & 2 != 0
        let clock = input.u64()
        let now = flags & 8 != 0 ? Int64(bitPattern: clock) : Int64(clock % 4_102_444_800_000)
        var builder = TokenBuilder(now: now, emulator: emulator, hasSecret: hasSecret)
        let credential =
            flags & 4 != 0 ? builder.build(&input) : String(decoding: input.rest(), as: UTF8.self)
        let decoder = TokenDecoder(secret: hasSecret ? tokenSecret : nil, emulator: emulator)
        let result = Result { () throws(TokenRefusal) in try decoder.decode(credential, now: now) }
        let again = Result { () throws(TokenRefusal) in try decoder.decode(credential, now: now) }
        check(result == again, "two decodes of one credential differ: \(result) then \(again)")
        let bytes = Array(credential.utf8)
        let isAdmin = (emulator && bytes == Array("owner".utf8)) || (hasSecret && bytes == Array(tokenSecret.utf8))
        var context: String { "emulator \(emulator), secret \(hasSecret), now \(now), credential \(credential.prefix(300))" }
        switch result {
        case .success(.admin):
            check(isAdmin, "the admin from a credential that is not the admin's: \(context)")
        case .success(.user(let user, let signed)):
            check(!isAdmin, "the admin's credential decoded as a user: \(context)")
            check(
                user.expiresAt.map { signed && $0 > now } ?? !signed,
                "a user whose expiry \(String(describing: user.expiresAt)) is not after now, or unsigned and expiring: \(context)")
            check(!user.uid.isEmpty && user.uid.utf16.count <= TokenDecoder.maxUIDLength, "a bad uid \(user.uid): \(context)")
            check(user.authVariable["uid"] == .string(user.uid), "auth.uid is not the uid: \(context)")
            check(user.claims.objectMembers != nil, "claims that are not an object: \(context)")
            check(Principal.user(user) != .admin, "a user that is the admin: \(context)")
            check(signed ? hasSecret : emulator, "signed \(signed) accepted: \(context)")
            check(bytes.count <= TokenDecoder.maxCredentialBytes, "an overlong credential accepted: \(context)")
        case .success(.expired(let signed)):
            check(!isAdmin, "the admin's credential decoded as an expired token: \(context)")
            check(signed && hasSecret, "signed \(signed) decoded as expired (only a signed token expires): \(context)")
        case .failure(let refusal):
            check(!isAdmin, "the admin's credential refused (\(refusal)): \(context)")
            let reason = refusal.description
            check(!reason.isEmpty && reason.utf8.count <= 160, "a reason of \(reason.utf8.count) bytes: \(context)")
            check(reason.utf8.allSatisfy { (0x20..<0x7F).contains($0) }, "a reason not printable ASCII: \(context)")
        }
        if let expected = builder.expected {
            let outcome: TokenBuilder.Outcome
            switch result {
            case .success(.admin): outcome = .admin
            case .success(.user(let user, _)): outcome = .user(uid: user.uid, expiresAt: user.expiresAt)
            case .success(.expired): outcome = .expired
            case .failure: outcome = .refused
            }
            check(outcome == expected, "expected \(expected), got \(result): \(context)")
        }
    }

    /// Turns input bytes into a credential, and — when every part of it is one whose meaning the
    /// documented rules fix — the outcome those rules give (`expected`).
    struct TokenBuilder {
        /// A user's `expiresAt` is nil for an unsigned token: it never expires.
        enum Outcome: Equatable { case admin, user(uid: String, expiresAt: Int64?), expired, refused }

        let now: Int64
        let emulator: Bool
        let hasSecret: Bool
        var expected: Outcome?
        /// Whether the oracle still applies, and what it knows of the claims so far.
        var known = true
        var times: [String: Int64] = [:]
        var ids: [String: String] = [:]

        init(now: Int64, emulator: Bool, hasSecret: Bool) {
            self.now = now
            self.emulator = emulator
            self.hasSecret = hasSecret
        }

        static let keys = ["exp", "iat", "nbf", "auth_time", "uid", "sub", "d", "admin", "firebase", "name"]
        static let timeKeys: Set<String> = ["exp", "iat", "nbf", "auth_time"]

        mutating func build(_ input: inout Input) -> String {
            if input.below(4) == 0 { return adminLike(&input) }
            let header: String
            let headerChoice = input.below(6)
            switch headerChoice {
            case 0: header = #"{"alg":"none","typ":"JWT"}"#
            case 1: header = #"{"alg":"HS256","typ":"JWT"}"#
            case 2: header = #"{"alg":"none","crit":["exp"]}"#
            case 3: header = #"{"alg":\#(Self.jsonString(input.take(input.below(40))))}"#
            case 4: header = String(decoding: input.take(input.below(64)), as: UTF8.self)
            default: header = #"{"typ":"JWT"}"#
            }
            known = headerChoice <= 1
            var members: [String] = []
            var seen: Set<String> = []
            for _ in 0..<input.below(9) {
                let k = input.below(Self.keys.count + 1)
                let key = k < Self.keys.count ? Self.keys[k] : String(decoding: input.take(input.below(12)), as: UTF8.self)
                if k == Self.keys.count || !seen.insert(key).inserted { known = false }
                members.append("\(Self.jsonString(Array(key.utf8))):\(value(for: key, &input))")
            }
            let claims = "{" + members.joined(separator: ",") + "}"
            let signature: String
            var signatureBytes = 0
            switch input.below(4) {
            case 0: signature = ""
            case 1:
                let bytes = input.take(32)
                signature = Self.base64URL(bytes)
                signatureBytes = bytes.count
            case 2: signature = Self.base64URL(input.take(input.below(64))); known = false
            default: signature = String(decoding: input.take(input.below(16)), as: UTF8.self); known = false
            }
            let encoding = input.below(8)
            let encode: ([UInt8]) -> String =
                switch encoding {
                case 6: Self.paddedBase64
                case 7: { String(decoding: $0, as: UTF8.self) }
                default: Self.base64URL
                }
            if encoding >= 6 { known = false }
            if known { expected = outcome(headerChoice: headerChoice, signatureBytes: signatureBytes) }
            return encode(Array(header.utf8)) + "." + encode(Array(claims.utf8)) + "." + signature
        }

        /// A member's value; the oracle keeps only NumericDates written as integers near the
        /// clock, short string ids, and scalars under other names.
        mutating func value(for key: String, _ input: inout Input) -> String {
            let kind = input.below(9)
            let isTime = Self.timeKeys.contains(key), isID = key == "uid" || key == "sub"
            if isTime && kind != 0 || isID && kind != 6 || !isTime && !isID && ![3, 4, 6].contains(kind) {
                known = false
            }
            switch kind {
            case 0:
                let seconds = now / 1000 + Int64(Int16(bitPattern: input.u16()))
                times[key] = seconds
                return String(seconds)
            case 1:
                let alphabet = Array("0123456789.eE+-".utf8)
                let text = input.take(1 + input.below(24)).map { alphabet[Int($0) % alphabet.count] }
                return String(decoding: text, as: UTF8.self)
            case 2:
                let d = Double(bitPattern: input.u64())
                return d.isFinite ? "\(d)" : "1e999"
            case 3: return Self.jsonString(input.take(input.below(40)))
            case 4: return ["true", "false", "null"][input.below(3)]
            case 5:
                let depth = input.below(24)
                return String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            case 6:
                let id = "u\(input.u16())"
                ids[key] = id
                return "\"\(id)\""
            case 7: return "\"" + String(repeating: "x", count: Int(input.u16()) % 20_000) + "\""
            default: return #"{"uid":"u\#(input.u8())"}"#
            }
        }

        /// The outcome the documented rules give for a token the oracle understands.
        func outcome(headerChoice: Int, signatureBytes: Int) -> Outcome {
            if headerChoice == 0 && (!emulator || signatureBytes != 0) { return .refused }
            if headerChoice == 1 && (!hasSecret || signatureBytes != 32) { return .refused }
            guard let exp = times["exp"] else { return .refused }
            for seconds in times.values where !(0...Int64(TokenDecoder.maxNumericDate)).contains(seconds) {
                return .refused
            }
            for key in ["iat", "auth_time", "nbf"] {
                if let seconds = times[key], seconds * 1000 - TokenDecoder.clockSkewMs > now { return .refused }
            }
            guard let uid = ids["uid"] ?? ids["sub"] else { return .refused }
            if headerChoice == 0 { return .user(uid: uid, expiresAt: nil) }
            return exp * 1000 <= now ? .expired : .user(uid: uid, expiresAt: exp * 1000)
        }

        /// `owner`, the secret, or one of their near misses.
        mutating func adminLike(_ input: inout Input) -> String {
            let secret = FuzzServerChecks.tokenSecret
            let candidates = [
                "owner", secret, "Owner", "owner ", String(secret.dropLast()), secret + "!", "",
                String(secret.dropLast()) + String(UnicodeScalar(input.u8())),
            ]
            let credential = candidates[input.below(candidates.count)]
            let admin = (emulator && credential == "owner") || (hasSecret && credential == secret)
            expected = admin ? .admin : .refused
            return credential
        }

        static func jsonString(_ bytes: [UInt8]) -> String {
            var out = "\""
            for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case _ where scalar.value < 0x20: out += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }

        static func base64URL(_ bytes: [UInt8]) -> String {
            String(paddedBase64(bytes).compactMap { c -> Character? in
                c == "=" ? nil : c == "+" ? "-" : c == "/" ? "_" : c
            })
        }

        static func paddedBase64(_ bytes: [UInt8]) -> String {
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
            var out = ""
            var i = 0
            while i < bytes.count {
                let chunk = bytes[i..<min(i + 3, bytes.count)]
                let n = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
                for j in 0..<4 { out.append(j <= chunk.count ? alphabet[(n >> (18 - 6 * j)) & 63] : "=") }
                i += 3
            }
            return out
        }
    }

    /// The committed seeds: raw credentials (admin-like, valid and invalid tokens at a fixed clock)
    /// and structured inputs that reach each part of the builder.
    static func tokenSeeds() -> [(String, [UInt8])] {
        let clock: UInt64 = 1_700_000_000_000
        let now = (0..<8).map { UInt8(truncatingIfNeeded: clock >> (8 * UInt64($0))) }
        func raw(_ flags: UInt8, _ credential: String) -> [UInt8] { [flags] + now + Array(credential.utf8) }
        func b64(_ text: String) -> String { TokenBuilder.base64URL(Array(text.utf8)) }
        let none = b64(#"{"alg":"none","typ":"JWT"}"#), hs256 = b64(#"{"alg":"HS256","typ":"JWT"}"#)
        let sig = TokenBuilder.base64URL(Array(repeating: 7, count: 32))
        var seeds: [(String, [UInt8])] = [
            ("raw-owner-emulator", raw(1, "owner")),
            ("raw-owner-signed", raw(2, "owner")),
            ("raw-secret", raw(2, tokenSecret)),
            ("raw-unsigned-valid", raw(1, none + "." + b64(#"{"uid":"alice","exp":1700003600,"iat":1700000000}"#) + ".")),
            // createMockUserToken({sub: "alice"}) of the JS SDK, byte for byte: dated 1970, never expired.
            ("raw-unsigned-mock-user-token", raw(1, b64(#"{"alg":"none","type":"JWT"}"#) + "." + b64(#"{"iss":"https://securetoken.google.com/demo-project","aud":"demo-project","iat":0,"exp":3600,"auth_time":0,"sub":"alice","user_id":"alice","firebase":{"sign_in_provider":"custom","identities":{}}}"#) + ".")),
            ("raw-unsigned-admin-claim", raw(1, none + "." + b64(#"{"sub":"m","admin":true,"exp":1700003600}"#) + ".")),
            ("raw-unsigned-exp-1e300", raw(1, none + "." + b64(#"{"uid":"a","exp":1e300}"#) + ".")),
            ("raw-unsigned-exp-1e16", raw(1, none + "." + b64(#"{"uid":"a","exp":1e16}"#) + ".")),
            ("raw-unsigned-fraction", raw(1, none + "." + b64(#"{"uid":"a","exp":1700003600.25,"nbf":1.5}"#) + ".")),
            ("raw-signed-iat-future", raw(2, hs256 + "." + b64(#"{"sub":"a","exp":1700003600,"iat":1800000000}"#) + "." + sig)),
            ("raw-signed-legacy", raw(2, hs256 + "." + b64(#"{"v":0,"d":{"uid":"a"},"exp":1700003600}"#) + "." + sig)),
            ("raw-signed-deep", raw(2, hs256 + "." + b64(#"{"sub":"a","exp":1700003600,"x":[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]}"#) + "." + sig)),
            ("raw-padded", raw(1, none + "=." + b64(#"{"uid":"a","exp":1700003600}"#) + "=.")),
            ("raw-any-clock", raw(9, none + "." + b64(#"{"uid":"a","exp":253402300799,"iat":0}"#) + ".")),
        ]
        // Structured: flags 4|mode, the clock, then the builder's choices.
        let structured: [(String, UInt8, [UInt8])] = [
            ("built-admin-like", 7, [0, 1]),
            ("built-unsigned-user", 5, [1, 0, 3, 0, 0, 0x10, 0, 4, 6, 1, 0, 1, 0, 0x80, 0xFF, 0, 0]),
            ("built-signed-user", 6, [1, 1, 2, 5, 6, 7, 0, 0, 0, 0x10, 0, 1] + Array(repeating: 9, count: 32) + [0]),
            ("built-number-text", 5, [1, 0, 2, 0, 1, 5, 1, 2, 3, 4, 5, 6, 4, 6, 9, 0, 0, 0]),
            ("built-nested", 5, [1, 0, 3, 0, 0, 0x10, 0, 4, 6, 1, 0, 9, 5, 23, 0, 0]),
            ("built-raw-header", 7, [1, 4, 11] + Array(#"{"alg":"x"}"#.utf8) + [1, 0, 0, 1, 0, 0, 0]),
        ]
        for (name, flags, choices) in structured { seeds.append((name, [4 | flags] + now + choices)) }
        return seeds
    }
}
