// A full disk on a real (small) file system, through the `hearth` binary:
// writes until ENOSPC, then reads with the disk still full, then writes again once space is
// freed — and every acknowledged write is there. Needs `mount -t tmpfs` (root, a kernel that
// allows it); skips with a message elsewhere.
import Foundation
import Hearth
import Testing

@Suite struct FullDiskToolTests {
    static func sh(_ command: String) -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", command]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        do { try p.run() } catch { return -1 }
        p.waitUntilExit()
        return p.terminationStatus
    }

    @Test func aFullTmpfsDoesNotBrickTheStore() throws {
        try #require(Tool.binary != nil, Tool.missingMessage)
        let mount = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-tmpfs-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        defer {
            _ = Self.sh("umount '\(mount)'")
            try? FileManager.default.removeItem(atPath: mount)
        }
        guard Self.sh("mount -t tmpfs -o size=2m tmpfs '\(mount)'") == 0 else {
            print("skipped: `mount -t tmpfs` is not allowed here (needs root in a namespace that permits it)")
            return
        }
        let store = mount + "/s", filler = mount + "/filler"
        _ = Self.sh("dd if=/dev/zero of='\(filler)' bs=1k count=1700")
        var lines: [String] = []
        for i in 0..<30_000 {
            lines.append(
                #"{"op":"serverSet","path":"d/k\#(100_000 + i)","value":"\#(String(repeating: "v", count: 40))\#(i)"}"#)
        }
        let fill = try Tool.apply(store, lines, ["--cache-size", "104857600", "--durability", "buffered"])
        #expect(fill.status == 1, "the disk should have filled up: \(fill.stderr)")
        let acknowledged = try fill.jsonLines().filter { $0["ok"] == .bool(true) }.count
        #expect(acknowledged > 1000)
        // The disk is full: reads still work.
        let stats = try Tool.run(["stats", store])
        #expect(stats.status == 0, "\(stats)")
        let full = try Tool.run(["get", store, "d", "--json"])
        #expect(full.status == 0, "\(full)")
        if case .object(let members)? = try full.json()["value"] { #expect(members.count == acknowledged) }
        // Space freed: writes work again, and nothing acknowledged was lost.
        _ = Self.sh("rm -f '\(filler)'")
        let more = try Tool.apply(store, [#"{"op":"serverSet","path":"after","value":1}"#])
        #expect(more.status == 0, "\(more)")
        let after = try Tool.run(["get", store, "d", "--json"])
        if case .object(let members)? = try after.json()["value"] { #expect(members.count == acknowledged) }
        #expect(try Tool.run(["verify", store]).status == 0)
    }
}
