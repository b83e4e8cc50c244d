// SimulatedFileSystem+PowerCut: what a power cut keeps (the modes, torn-write sizes and fills) and the
// reboot image it leaves.
import HearthLog
import Synchronization

extension SimulatedFileSystem {
    /// How much of a torn write's tail is lost: whole 512-byte sectors or whole 4 KiB pages.
    public enum TearSize: Int, Sendable, CaseIterable {
        /// 512-byte sectors.
        case sector = 512
        /// 4 KiB pages.
        case page = 4096
    }

    /// What the torn part of a write contains after the power cut.
    public enum TearFill: Sendable, CaseIterable {
        /// Zero bytes (a file extended but never written, delayed allocation).
        case zeros
        /// Random bytes (sectors trashed mid-write).
        case garbage
    }

    /// What a power cut keeps.
    public enum PowerCutMode: Sendable, Equatable, CustomStringConvertible {
        /// The process dies but the machine does not: everything written survives.
        case processCrash
        /// Every file reverts to its last sync; creates, renames and unlinks not followed by a
        /// directory sync are lost.
        case dropAllUnsynced
        /// Each unsynced write or truncate survives or not at random (so later writes can survive
        /// earlier ones, and a file cut but not synced can come back at its old size); a random
        /// prefix of the un-synced directory operations survives.
        case dropRandomUnsynced
        /// All unsynced writes survive except each file's last one, which is torn at a `size`
        /// boundary: its tail is filled per `fill`. Directory operations survive.
        case tearLastWrite(TearSize, TearFill)
        /// All data survives, but creates, renames and unlinks not followed by a directory sync are lost.
        case loseUnsyncedMetadata

        /// Every mode, for crash matrices.
        public static let all: [PowerCutMode] = [
            .processCrash, .dropAllUnsynced, .dropRandomUnsynced,
            .tearLastWrite(.sector, .zeros), .tearLastWrite(.sector, .garbage),
            .tearLastWrite(.page, .zeros), .tearLastWrite(.page, .garbage),
            .loseUnsyncedMetadata,
        ]

        /// A short name for test output.
        public var description: String {
            switch self {
            case .processCrash: "processCrash"
            case .dropAllUnsynced: "dropAllUnsynced"
            case .dropRandomUnsynced: "dropRandomUnsynced"
            case let .tearLastWrite(s, f): "tearLastWrite(\(s.rawValue),\(f))"
            case .loseUnsyncedMetadata: "loseUnsyncedMetadata"
            }
        }
    }

    /// Replaces the state by what a reboot would find, per `mode`. Open handles and locks from before
    /// become invalid; the crash point and faults are cleared; the call counter restarts at zero.
    public func powerCut(mode: PowerCutMode) {
        state.withLock { s in
            // 1. The namespace that survives.
            var names: [String: Int]
            switch mode {
            case .processCrash, .tearLastWrite:
                names = s.names
            case .dropAllUnsynced, .loseUnsyncedMetadata:
                names = s.durableNames
            case .dropRandomUnsynced:
                names = s.durableNames
                let keep = s.dirOps.isEmpty ? 0 : Int(s.rng.next() % UInt64(s.dirOps.count + 1))
                for (_, op) in s.dirOps.prefix(keep) { Self.apply(op, to: &names) }
            }
            // 2. The content of every surviving file.
            var inodes: [Int: Inode] = [:]
            for id in Set(names.values) {
                guard let node = s.inodes[id] else { continue }
                var content: [UInt8]
                switch mode {
                case .processCrash, .loseUnsyncedMetadata:
                    content = node.data
                case .dropAllUnsynced:
                    content = node.durable
                case .dropRandomUnsynced:
                    content = node.durable
                    for p in node.pending {
                        switch p {
                        case let .truncate(n): if s.rng.next() & 1 == 0 { Self.truncate(&content, to: n) }
                        case let .write(o, b): if s.rng.next() & 1 == 0 { Self.write(&content, b, at: o) }
                        }
                    }
                case let .tearLastWrite(size, fill):
                    content = node.durable
                    let lastWrite = node.pending.lastIndex { if case .write = $0 { true } else { false } }
                    for (i, p) in node.pending.enumerated() {
                        switch p {
                        case let .truncate(n): Self.truncate(&content, to: n)
                        case let .write(o, b):
                            if i != lastWrite { Self.write(&content, b, at: o); continue }
                            // Cut at a boundary strictly inside the write if there is one, else at its start.
                            let g = UInt64(size.rawValue)
                            let end = o + UInt64(b.count)
                            var cuts: [UInt64] = []
                            var k = (o / g + 1) * g
                            while k < end, cuts.count < 4096 { cuts.append(k); k += g }
                            let cut = cuts.isEmpty ? o : cuts[Int(s.rng.next() % UInt64(cuts.count))]
                            var torn = b
                            for j in Int(cut - o)..<b.count {
                                torn[j] = fill == .zeros ? 0 : UInt8(truncatingIfNeeded: s.rng.next())
                            }
                            Self.write(&content, torn, at: o)
                        }
                    }
                }
                inodes[id] = Inode(data: content, durable: content, pending: [])
            }
            s.inodes = inodes
            s.names = names
            s.durableNames = names
            s.dirOps = []
            s.locks = []
            s.epoch += 1
            s.calls = 0
            s.crashAfter = nil
            s.crashed = false
            s.faults = []
            s.failAt = nil
            s.failedCalls = []
        }
    }
}
