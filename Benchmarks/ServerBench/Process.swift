// `hearth serve` as a child process (the restart and memory figures): started on a data
// directory with `--port 0 --port-file`, and its memory read from /proc.
import Foundation

/// A running `hearth serve` child.
struct ServeProcess {
    let process: Process
    let port: Int
    var pid: Int32 { process.processIdentifier }

    /// Starts `hearth serve DIR --emulator` plus `extra` arguments and waits for its port file.
    static func start(directory: String, extra: [String] = []) throws -> ServeProcess {
        let portFile = directory + ".port"
        try? FileManager.default.removeItem(atPath: portFile)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: options.hearth)
        p.arguments = ["serve", directory, "--port", "0", "--port-file", portFile, "--emulator"] + extra
        p.standardError = FileHandle.nullDevice
        try p.run()
        while !FileManager.default.fileExists(atPath: portFile) { usleep(500) }
        var text = ""
        while Int(text) == nil {  // the file may be seen before its contents are written
            text = (try? String(contentsOfFile: portFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            if Int(text) == nil { usleep(500) }
        }
        return ServeProcess(process: p, port: Int(text)!)
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    /// `VmRSS` from /proc/PID/status and `Private_Dirty` from /proc/PID/smaps_rollup, in KiB.
    func memory() -> (rssKiB: Int, privateDirtyKiB: Int) {
        func field(_ file: String, _ name: String) -> Int {
            guard let s = try? String(contentsOfFile: "/proc/\(pid)/\(file)", encoding: .utf8) else { return -1 }
            for line in s.split(separator: "\n") where line.hasPrefix(name + ":") {
                return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? -1
            }
            return -1
        }
        return (field("status", "VmRSS"), field("smaps_rollup", "Private_Dirty"))
    }
}
