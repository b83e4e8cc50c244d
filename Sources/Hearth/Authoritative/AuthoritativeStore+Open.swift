// Opening the server's store: the newest checkpoint's tree and writer watermarks, then the log's
// events after it folded onto them — server data and watermarks only, as the server wrote them.

import HearthLog
import HearthModel

extension AuthoritativeStore {
    /// Opens (or creates) the store in `directory` and returns it with the database it holds:
    /// the newest checkpoint's tree with the log's events after it applied.
    ///
    /// A directory a ``Store`` wrote opens too: its server data and writer watermarks are the
    /// database; what only a client keeps (pending writes, tracked queries, pins, auth) is not
    /// server data and is left out.
    ///
    /// - Throws: ``StoreError/log(_:)`` when the store is locked by another process or damaged,
    ///   ``StoreError/invalidOption(_:)``, a corrupt checkpoint or record error — or
    ///   ``StoreError/corruptRecord(file:offset:lsn:reason:)`` for a pruned cache (a client's
    ///   cache is no database).
    @_spi(HearthInternals) public static func open(
        directory: String, options: Options = Options()
    ) throws(StoreError) -> Opened {
        try options.validate()
        var logOptions = Log.Options()
        logOptions.readOnly = options.readOnly
        logOptions.segmentSize = options.segmentSize
        logOptions.durability = options.durability
        logOptions.createIfMissing = options.createIfMissing
        logOptions.compressionLevel = options.logCompressionLevel
        logOptions.rawPayloadLimit = Store.rawRecordLimit
        let log: Log
        do { log = try Log.open(directory: directory, fileSystem: options.fileSystem, options: logOptions) } catch {
            throw .log(error)
        }
        do {
            var core = try readCheckpoint(log)
            try replayTail(log, into: &core)
            core.lastLSN = max(core.lastLSN, log.lastLSN)
            let data = core.latest
            let store = AuthoritativeStore(directory: directory, options: options, log: log, core: core)
            return Opened(store: store, data: data)
        } catch {
            try? log.close()
            throw error
        }
    }

    /// The state as of the log's checkpoint: its tree (with what each chunk encodes, for the
    /// next checkpoint to copy) and its writer watermarks.
    private static func readCheckpoint(_ log: Log) throws(StoreError) -> Core {
        var core = Core(
            writerWatermarks: [:], lastLSN: 0, checkpointLSN: 0, checkpointBodyBytes: 0, logBytesSinceCheckpoint: 0,
            latest: .empty)
        guard let checkpoint = log.checkpoint else { return core }
        let reader = try readingCheckpoint { () throws(CheckpointError) in try CheckpointReader(checkpoint) }
        if !reader.directory.chunks.isEmpty {
            let (cache, origins) = try readingCheckpoint { () throws(CheckpointError) in
                try reader.fullCacheWithOrigins()
            }
            core.latest = cache
            core.origins = origins
        }
        core.writerWatermarks = reader.directory.state.writerWatermarks
        core.checkpointLSN = checkpoint.lsn
        core.lastLSN = checkpoint.lsn
        core.checkpointBodyBytes = checkpoint.bodySize
        return core
    }

    /// Folds the log's events after the checkpoint onto `core`.
    private static func replayTail(_ log: Log, into core: inout Core) throws(StoreError) {
        do {
            try log.replay(after: core.checkpointLSN, knownTypes: [EventCodec.recordType]) { record in
                let events: [StoreEvent]
                do { events = try EventCodec.decode(record.payload) } catch {
                    throw StoreError.corruptRecord(
                        file: record.file, offset: record.offset, lsn: record.lsn, reason: "\(error)")
                }
                for e in events {
                    if case .cachePruned = e {
                        throw StoreError.corruptRecord(
                            file: record.file, offset: record.offset, lsn: record.lsn,
                            reason: "a pruned cache: a client's store, not a database")
                    }
                    apply(e, to: &core)
                }
                core.logBytesSinceCheckpoint += record.payload.count
                core.lastLSN = record.lsn
            }
        } catch let e as StoreError {
            throw e
        } catch let e as LogError {
            throw .log(e)
        } catch {
            throw .log(.invalidArgument("replay: \(error)"))
        }
    }

    /// Applies one event as ``StoreState/apply(_:)`` applies it to the server cache and the
    /// watermarks; every other event is a client's and changes no server data.
    static func apply(_ event: StoreEvent, to core: inout Core) {
        switch event {
        case .serverOverwrite, .serverMerge:
            core.latest = StoreState.applyingCacheEvent(event, to: core.latest)
        case .writerWatermark, .writerWatermarksRemoved:
            WriterWatermark.apply(event, to: &core.writerWatermarks)
        default:
            break
        }
    }
}
