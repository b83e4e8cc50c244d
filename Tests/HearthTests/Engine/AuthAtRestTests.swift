import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth

/// What protects the auth token at rest (the article "The hearth tool", "The auth token at rest"):
/// the store's permissions, and that signing out followed by a compaction removes the token's
/// bytes from every file of the store.
@Suite struct AuthAtRestTests {
    static func storeBytes(_ dir: String) throws -> [[UInt8]] {
        try FileManager.default.contentsOfDirectory(atPath: dir).map {
            Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/" + $0)))
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i..<(i + needle.count)]) == needle { return true }
        }
        return false
    }

    @Test func signOutThenCompactionRemovesTheTokenFromDisk() throws {
        let dir = TempDir()
        let secret = Array("eyJ-a-very-secret-token-0123456789".utf8)
        let store = try Store.open(directory: dir.path, options: options())
        try store.commit { b in b.saveAuth(AuthToken(token: String(decoding: secret, as: UTF8.self), expiresAt: 1)) }
        try store.applyServerOverwrite(.number(1), at: "a")
        #expect(
            try Self.storeBytes(dir.path).contains { Self.contains($0, secret) },
            "the token is in the log (uncompressed, short record)")
        try store.commit { b in b.clearAuth() }
        _ = try store.compact()
        try store.close()
        #expect(
            !(try Self.storeBytes(dir.path).contains { Self.contains($0, secret) }),
            "sign-out + compaction left the token on disk")
        // The permissions that protect it meanwhile: 0700 directory, 0600 files.
        let dirMode = try FileManager.default.attributesOfItem(atPath: dir.path)[.posixPermissions] as? Int
        #expect(dirMode == 0o700)
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.path) {
            let mode =
                try FileManager.default.attributesOfItem(atPath: dir.path + "/" + name)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(name)")
        }
    }
}
