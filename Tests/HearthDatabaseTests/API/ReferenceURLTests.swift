import Foundation
import Hearth
import Testing
@testable import HearthDatabase

/// `Database.reference(fromURL:)`, `sdkVersion()` and a reference's `description` as
/// firebase-ios-sdk's `DatabaseAPITests.swift` calls them.
@Suite struct ReferenceURLTests {
    func open(_ url: String = "https://demo.firebaseio.com") throws -> Database {
        var options = Database.Options()
        options.connectAtOpen = false
        options.emulatorHost = nil
        return try Database(url: url, options: options)
    }

    @Test func referenceFromURLNamesThePath() throws {
        let db = try open()
        defer { try? db.close() }
        let ref: DatabaseReference = db.reference(fromURL: "https://demo.firebaseio.com/users/ada%20l")
        #expect(ref == db.reference(withPath: "users/ada l"))
        #expect(db.reference(fromURL: "https://demo.firebaseio.com") == db.reference())
        #expect(db.reference(fromURL: "https://demo.firebaseio.com/") == db.reference())
        #expect(db.reference(fromURL: "https://DEMO.firebaseio.com/a?ns=demo") == db.reference(withPath: "a"))
        // A reference's own url names it again.
        let deep = db.reference(withPath: "a/é ü/-Nx")
        #expect(db.reference(fromURL: deep.url) == deep)
        #expect(try db.reference(checkingURL: deep.url) == deep)
    }

    @Test func anotherDatabasesURLIsAnError() throws {
        let db = try open()
        defer { try? db.close() }
        #expect(throws: DatabaseError.self) { try db.reference(checkingURL: "https://other.firebaseio.com/a") }
        #expect(throws: DatabaseError.self) { try db.reference(checkingURL: "not a url") }
        #expect(throws: DatabaseError.self) { try db.reference(checkingURL: "https://demo.firebaseio.com/a.b") }
        #expect(throws: DatabaseError.self) { try db.reference(checkingURL: "https://demo.firebaseio.com/a%2Fb") }
        // Firebase's form never throws: the reference reports the error.
        let bad = db.reference(fromURL: "https://other.firebaseio.com/a")
        #expect(bad.invalid != nil)
        #expect(throws: DatabaseError.self) { try bad.setValue(1 as DatabaseValue) }
    }

    @Test func descriptionIsTheURL() throws {
        let db = try open()
        defer { try? db.close() }
        let ref = db.reference(withPath: "users/ada")
        #expect(ref.description == ref.url)
        #expect("\(ref)" == ref.url)
        if ProcessInfo.processInfo.environment["FIREBASE_DATABASE_EMULATOR_HOST"] == nil {
            #expect(ref.description == "https://demo.firebaseio.com/users/ada")
        }
        #expect(ref.pathString == "/users/ada")
        #expect(db.reference().pathString == "/")
    }

    /// The package's one version: a release `X.Y.Z`, or between releases the next one with a
    /// `-dev` suffix — the same `hearth --version` prints.
    @Test func sdkVersionIsThePackagesVersion() {
        let version: String = Database.sdkVersion()
        #expect(version == HearthInfo.version)
        let release = version.hasSuffix("-dev") ? String(version.dropLast(4)) : version
        #expect(release.split(separator: ".").count == 3)
        #expect(release.split(separator: ".").allSatisfy { Int($0) != nil })
    }
}
