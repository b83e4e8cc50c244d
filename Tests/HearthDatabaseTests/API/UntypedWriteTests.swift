import Foundation
import Hearth
import HearthModel
import Testing
@testable import HearthDatabase

/// Firebase's untyped writes (`Any?`, `[AnyHashable: Any]`), called as firebase-ios-sdk's
/// `DatabaseAPITests.swift` calls them — compiling this file is half the test — against a
/// server.
@Suite("Untyped writes", .serialized)
struct UntypedWriteTests {
    func open(_ server: TransportTestServer, log: Collected<String>? = nil) throws -> Database {
        var o = Database.Options()
        o.durability = .buffered
        if let log { o.logHandler = { log.add($0) } }
        return try Database(url: "ws://127.0.0.1:\(server.server.port)?ns=any", options: o)
    }

    /// The synchronous forms, as Firebase's API inventory calls them (none needs `try`).
    func callSynchronousForms(_ ref: DatabaseReference, done: Collected<String>) throws {
        let value: Any? = "value"
        let priority: Any? = "priority"
        let priorityAny: Any = "priority"
        var values = [AnyHashable: Any]()
        values["u/a"] = 1
        values["u/b"] = "two"

        ref.child("a").setValue(value)
        ref.child("b").setValue(value) { optionalError, databaseReference in
            let /* optionalError */ _: Error? = optionalError
            let /* databaseReference */ _: DatabaseReference = databaseReference
            done.add("b \(optionalError == nil)")
        }
        ref.child("d").setValue(value, andPriority: priority)
        ref.child("e").setValue(value, andPriority: priority) { optionalError, _ in
            done.add("e \(optionalError == nil)")
        }
        ref.child("g").setValue(1)
        ref.child("g").setPriority(priority)
        ref.child("h").setValue(2)
        ref.child("h").setPriority(priority) { optionalError, _ in done.add("h \(optionalError == nil)") }
        ref.updateChildValues(values)
        ref.child("v").updateChildValues(values) { optionalError, _ in done.add("v \(optionalError == nil)") }

        ref.child("od1").onDisconnectSetValue(value)
        ref.child("od2").onDisconnectSetValue(value) { optionalError, _ in done.add("od2 \(optionalError == nil)") }
        ref.child("od3").onDisconnectSetValue(value, andPriority: priorityAny)
        ref.child("od4").onDisconnectSetValue(value, andPriority: priority) { optionalError, _ in
            done.add("od4 \(optionalError == nil)")
        }
        ref.child("od5").onDisconnectUpdateChildValues(values)
        ref.child("od6").onDisconnectUpdateChildValues(values) { optionalError, _ in
            done.add("od6 \(optionalError == nil)")
        }

        // Literals and untyped values, without ambiguity.
        ref.child("l/int").setValue(5)
        ref.child("l/string").setValue("x")
        ref.child("l/object").setValue(["a": 1])
        ref.child("l/null").setValue(nil)
        let someAny: Any = ["k": true, "n": NSNumber(value: 1)] as [String: Any]
        ref.child("l/any").setValue(someAny)
        ref.child("l/array").setValue([1, 2, 3])
        ref.child("l/mixed").setValue(["name": "Ada", "at": ServerValue.timestamp()])

        // The typed forms stay typed, and throw.
        let typed: DatabaseValue = 7
        try ref.child("t1").setValue(typed)
    }

    @Test func everyFormCompilesAndWrites() async throws {
        let server = try await TransportTestServer()
        let db = try open(server)
        let ref = db.reference(withPath: "forms")
        let done = Collected<String>()
        try callSynchronousForms(ref, done: done)

        let value: Any? = "value"
        let priority: Any? = "priority"
        let values: [AnyHashable: Any] = ["w/a": true]
        var databaseReference: DatabaseReference = try await ref.child("c").setValue(value)
        #expect(databaseReference.key == "c")
        databaseReference = try await ref.child("f").setValue(value, andPriority: priority)
        try await ref.child("i").setValue(3)
        databaseReference = try await ref.child("i").setPriority(priority)
        databaseReference = try await ref.updateChildValues(values)
        databaseReference = try await ref.child("od7").onDisconnectSetValue(value)
        let typed: DatabaseValue = 7
        try await ref.child("t2").setValue(typed)

        #expect(await eventually { done.all.count == 7 && db.pendingWriteIDs.isEmpty })
        #expect(done.all.allSatisfy { $0.hasSuffix(" true") }, "\(done.all)")
        let expected = #"""
            {"a":"value","b":"value","c":"value",
             "d":{".value":"value",".priority":"priority"},"e":{".value":"value",".priority":"priority"},
             "f":{".value":"value",".priority":"priority"},"g":{".value":1,".priority":"priority"},
             "h":{".value":2,".priority":"priority"},"i":{".value":3,".priority":"priority"},
             "u":{"a":1,"b":"two"},"v":{"u":{"a":1,"b":"two"}},"w":{"a":true},
             "l":{"int":5,"string":"x","object":{"a":1},"any":{"k":true,"n":1},"array":{"0":1,"1":2,"2":3}},
             "t1":7,"t2":7}
            """#
        var stored = try server.store.value(at: "forms")
        let at = stored.child(at: "l/mixed/at")
        #expect(at.leafValue?.doubleValue.map { $0 > 1.6e12 } == true, "the server resolved the timestamp")
        #expect(stored.child(at: "l/mixed/name") == .string("Ada"))
        stored = stored.updating("l/mixed", with: .empty)
        #expect(stored == (try Node(jsonText: expected)))
        try db.close()
        try await server.stop()
    }

    /// Invalid input through the synchronous forms (none throws).
    func callInvalidForms(_ ref: DatabaseReference, errors: Collected<String>) {
        ref.setValue(Double.nan) { error, _ in errors.add("\(error.map { "\($0)" } ?? "nil")") }
        ref.setValue(["a.b": 1]) { error, _ in errors.add("\(error.map { "\($0)" } ?? "nil")") }
        ref.setValue(Date())
        ref.setValue(1, andPriority: true) { error, _ in errors.add("\(error.map { "\($0)" } ?? "nil")") }
        ref.updateChildValues([1: "x"]) { error, _ in errors.add("\(error.map { "\($0)" } ?? "nil")") }
        ref.setPriority(["no": 1])
    }

    /// Invalid input is a programming error Firebase raises: here nothing is written, the
    /// reason is logged and goes to the completion block; the `async` forms throw it.
    @Test func invalidInputWritesNothingAndReportsTheError() async throws {
        let server = try await TransportTestServer()
        let log = Collected<String>()
        let db = try open(server, log: log)
        db.goOffline()
        let ref = db.reference(withPath: "bad")
        let errors = Collected<String>()
        callInvalidForms(ref, errors: errors)
        await #expect(throws: DatabaseError.self) { try await ref.setValue(Float.infinity) }
        #expect(await eventually { errors.all.count == 4 })
        #expect(errors.all.allSatisfy { $0.hasPrefix("invalid") }, "\(errors.all)")
        #expect(log.all.count == 6, "\(log.all)")
        #expect(log.all.allSatisfy { $0.contains("wrote nothing") })
        #expect(db.pendingWriteIDs.isEmpty, "nothing was written")
        #expect(try db.store.value(at: "bad") == .empty)
        try db.close()
        try await server.stop()
    }
}
