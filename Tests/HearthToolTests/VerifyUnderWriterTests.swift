// `hearth verify` is a lock-free read-only check a monitoring job runs on a live store: a
// segment deleted because a newer checkpoint covers it is not damage. Here a
// real `hearth apply` process writes under a 1 MiB cap (so it checkpoints and drops segments
// all the time) while `hearth verify` runs 60 times (and `hearth dump` 20 times); neither may
// report damage.
import Foundation
import Hearth
import Testing

@Suite struct VerifyUnderWriterTests {
    @Test(arguments: [["verify"], ["dump", "--json"]])
    func readOnlyChecksDoNotCryWolfWhileAnotherProcessCheckpoints(command: [String]) throws {
        let binary = try #require(Tool.binary, Tool.missingMessage)
        let store = TempStore()
        #expect(try Tool.apply(store.path, [#"{"op":"serverSet","path":"x","value":1}"#]).status == 0)
        // The writer: an endless stream of serverSets (overwriting 5,000 keys), fed by a pipe.
        let writer = Process()
        writer.executableURL = binary
        writer.arguments = ["apply", store.path, "--cache-size", "1048576", "--durability", "buffered"]
        let input = Pipe()
        writer.standardInput = input
        writer.standardOutput = FileHandle.nullDevice
        writer.standardError = FileHandle.nullDevice
        try writer.run()
        let feeding = DispatchQueue(label: "feed")
        final class Stop: @unchecked Sendable { var stop = false; let lock = NSLock() }
        let stop = Stop()
        let handle = input.fileHandleForWriting
        feeding.async {
            var i = 0
            let value = String(repeating: "abcdefghij", count: 8)
            while !(stop.lock.withLock { stop.stop }) {
                var chunk = ""
                for _ in 0..<500 {
                    chunk += #"{"op":"serverSet","path":"d/k\#(i % 5000)","value":"\#(value)\#(i)"}"# + "\n"
                    i += 1
                }
                handle.write(Data(chunk.utf8))
            }
            try? handle.close()
        }
        defer {
            stop.lock.withLock { stop.stop = true }
            feeding.sync {}
            writer.waitUntilExit()
        }
        Thread.sleep(forTimeInterval: 0.5)
        var alarms: [String] = []
        let runs = command[0] == "verify" ? 60 : 20
        for _ in 0..<runs {
            let r = try Tool.run([command[0], store.path] + command.dropFirst())
            let said = r.stdout.split(separator: "\n").first.map(String.init) ?? ""
            if said.hasPrefix("DAMAGED") || r.stderr.contains("store is damaged") { alarms.append(said + r.stderr) }
        }
        #expect(
            alarms.isEmpty,
            "\(command[0]) reported damage on a healthy store \(alarms.count) times of \(runs): \(alarms.prefix(2))")
    }
}
