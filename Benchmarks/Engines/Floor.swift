// The machine's floor: the least any engine could do for the same bytes: append them to a
// file, and zlib deflate/inflate them (the durable writes' floor: GroupCommitFloor.swift).
import CZlib
import Foundation

public enum Floor {
    /// Appends `records` to a new file, then calls fdatasync once. Returns the time each
    /// record's write took, in seconds. (The durable floor, one sync per group, is
    /// ``GroupCommitFloor``.)
    public static func append(_ records: [[UInt8]], file: String) throws -> [Double] {
        let fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0o644)
        guard fd >= 0 else { throw EngineError.corrupt("open \(file)") }
        defer { close(fd) }
        var latencies: [Double] = []
        latencies.reserveCapacity(records.count)
        let clock = ContinuousClock()
        for r in records {
            let t0 = clock.now
            let n = r.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n == r.count else { throw EngineError.corrupt("short write") }
            latencies.append(seconds(clock.now - t0))
        }
        fdatasync(fd)
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
