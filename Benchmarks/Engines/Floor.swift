// The machine's floor: the least any engine could do for the same bytes: append them to a
// file and fdatasync, and zlib deflate/inflate them.
import CZlib
import Foundation

public enum Floor {
    /// Appends `records` to a new file, calling fdatasync after every `group` records (1: one
    /// sync per write; 16: what perfect group commit of 16 writers would do). Returns the
    /// latency of each record (the time until the sync that covers it returned), in seconds.
    public static func appendSync(_ records: [[UInt8]], group: Int, file: String, syncEachGroup: Bool = true) throws -> [Double] {
        let fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0o644)
        guard fd >= 0 else { throw EngineError.corrupt("open \(file)") }
        defer { close(fd) }
        var latencies: [Double] = []
        latencies.reserveCapacity(records.count)
        let clock = ContinuousClock()
        var i = 0
        while i < records.count {
            let end = min(records.count, i + group)
            let t0 = clock.now
            for r in records[i..<end] {
                let n = r.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                guard n == r.count else { throw EngineError.corrupt("short write") }
            }
            if syncEachGroup { fdatasync(fd) }
            let dt = seconds(clock.now - t0)
            for _ in i..<end { latencies.append(dt) }
            i = end
        }
        if !syncEachGroup { fdatasync(fd) }
        return latencies
    }

    /// zlib (level 6, Hearth's default) over `data` in `chunk`-byte pieces: the compressed
    /// pieces and the seconds it took.
    public static func deflate(_ data: [UInt8], chunk: Int = 64 << 10, level: Int32 = 6) -> (pieces: [([UInt8], Int)], seconds: Double) {
        let clock = ContinuousClock()
        let t0 = clock.now
        var pieces: [([UInt8], Int)] = []
        var i = 0
        while i < data.count {
            let end = min(data.count, i + chunk)
            var outLen = compressBound(uLong(end - i))
            var out = [UInt8](repeating: 0, count: Int(outLen))
            data.withUnsafeBufferPointer { src in
                _ = compress2(&out, &outLen, src.baseAddress! + i, uLong(end - i), level)
            }
            out.removeLast(out.count - Int(outLen))
            pieces.append((out, end - i))
            i = end
        }
        return (pieces, seconds(clock.now - t0))
    }

    /// Inflates `pieces`; returns the seconds it took.
    public static func inflate(_ pieces: [([UInt8], Int)]) -> Double {
        let clock = ContinuousClock()
        let t0 = clock.now
        var out = [UInt8](repeating: 0, count: pieces.map(\.1).max() ?? 0)
        for (p, raw) in pieces {
            var outLen = uLong(raw)
            _ = uncompress(&out, &outLen, p, uLong(p.count))
        }
        return seconds(clock.now - t0)
    }
}

public func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}
