// SimulatedFileSystem+State: the simulation's data — inodes with volatile and durable content and the
// writes in between, the directory operations not yet synced, injected faults and the counters.
import HearthLog
import HearthModel
import Synchronization

extension SimulatedFileSystem {
    typealias Inode = SimInode

    enum DirOp {
        case link(String, Int)
        case unlink(String)
        case rename(String, String, Int)
    }

    struct Fault {
        var operation: FileOperation
        var code: FileSystemError.Code
        var sticky: Bool
        var skip: Int
        var pathContains: String?
    }

    struct State {
        var rng: SeededRandom
        var inodes: [Int: Inode] = [:]
        var nextInode = 1
        var names: [String: Int] = [:]
        var durableNames: [String: Int] = [:]
        var dirs: Set<String> = []
        var dirOps: [(dir: String, op: DirOp)] = []
        var locks: Set<String> = []
        var epoch = 0
        var calls = 0
        var crashAfter: Int?
        var crashed = false
        var syncs = 0
        var directorySyncs = 0
        var faults: [Fault] = []
        /// The number of the one call ``failCall(afterCalls:_:)`` fails, and with what.
        var failAt: (call: Int, code: FileSystemError.Code)?
        var failedCalls: [(operation: FileOperation, path: String)] = []
        /// The cut ``cutBeforeNextRead(pathContains:to:)`` asked for, until a read makes it.
        var cutBeforeRead: (pathContains: String, size: UInt64)?
        var peakStoredBytes = 0
        var peakFiles: [String: Int] = [:]

        /// The bytes of every file that has a name now (what `du` would count).
        func storedBytes() -> Int {
            var seen = Set<Int>(), total = 0
            for id in names.values where seen.insert(id).inserted { total += inodes[id]?.data.count ?? 0 }
            return total
        }

        mutating func notePeak() {
            let now = storedBytes()
            guard now > peakStoredBytes else { return }
            peakStoredBytes = now
            peakFiles = names.reduce(into: [:]) { $0[$1.key] = inodes[$1.value]?.data.count ?? 0 }
        }
    }
}

enum Pending {
    case write(UInt64, [UInt8])
    case truncate(UInt64)
}

/// One simulated file: volatile content, durable content, and the operations in between.
struct SimInode {
    var data: [UInt8] = []
    var durable: [UInt8] = []
    var pending: [Pending] = []
    /// The ranges of `data` no write has filled since this boot: skipped by a write past the end,
    /// or added by a truncate that grew the file. A real file system allocates them on first
    /// write, so `SimulatedFile.overwrite(_:at:)` must not touch them. (A power cut's image
    /// starts without: nothing overwrites there before it writes again.)
    var holes: [Range<UInt64>] = []

    var size: UInt64 { UInt64(data.count) }

    /// Whether `range` lies inside the file and in no hole.
    func holdsWritten(_ range: Range<UInt64>) -> Bool {
        range.upperBound <= size && !holes.contains { $0.overlaps(range) }
    }

    /// Drops `range` from the holes (it was written).
    private mutating func fill(_ range: Range<UInt64>) {
        guard !range.isEmpty, holes.contains(where: { $0.overlaps(range) }) else { return }
        holes = holes.flatMap { h -> [Range<UInt64>] in
            guard h.overlaps(range) else { return [h] }
            return [
                h.lowerBound..<max(h.lowerBound, range.lowerBound), min(h.upperBound, range.upperBound)..<h.upperBound,
            ]
            .filter { !$0.isEmpty }
        }
    }

    func read(_ offset: UInt64, _ count: Int) -> [UInt8] {
        let o = Int(min(offset, UInt64(data.count)))
        return Array(data[o..<min(data.count, o + count)])
    }

    mutating func write(_ bytes: [UInt8], _ offset: UInt64) {
        if offset > size { holes.append(size..<offset) }
        fill(offset..<offset + UInt64(bytes.count))
        SimulatedFileSystem.write(&data, bytes, at: offset)
        pending.append(.write(offset, bytes))
    }

    mutating func truncate(_ size: UInt64) {
        if size > self.size {
            holes.append(self.size..<size)
        } else {
            holes = holes.compactMap { $0.lowerBound < size ? $0.lowerBound..<min($0.upperBound, size) : nil }
        }
        SimulatedFileSystem.truncate(&data, to: size)
        pending.append(.truncate(size))
    }

    mutating func sync() {
        durable = data
        pending = []
    }
}
