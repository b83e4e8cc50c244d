// A read without the store's lock — a read-only open, `Log.verify`, `hearth verify` — may meet a
// writer at work: a checkpoint replaces the MANIFEST and deletes the files it covers, and a roll
// cuts the active segment's preallocated zeros before the new MANIFEST names the next segment. A
// pass that fails because of that has not found damage; it is read again, by this one loop, at
// most `Scanner.rescanAttempts` times, after which the last outcome stands.

/// Runs a read of a store without its lock again while a writer explains its failure.
package enum Rescan {
    /// How one pass ended.
    package enum Verdict: Sendable {
        /// Its outcome stands: a success, or a failure to report as it is.
        case stands
        /// It failed with this log error, or with `nil` (damage the caller judged, or a failure
        /// that is not the log's): read again if the MANIFEST moved on while it ran, or if the
        /// error is a file shrinking under the reader.
        case failed(LogError?)
    }

    /// The outcome of `pass`, run again while `verdict` calls it failed and a writer explains
    /// the failure (``Scanner/worthRescanning(_:since:_:_:)``).
    package static func retrying<Outcome>(
        directory: String, fileSystem: any FileSystem, _ pass: () -> Outcome, verdict: (Outcome) -> Verdict
    ) -> Outcome {
        var attempt = 0
        while true {
            attempt += 1
            let before = Scanner.manifestGeneration(directory, fileSystem)
            let outcome = pass()
            guard case .failed(let error) = verdict(outcome), attempt < Scanner.rescanAttempts,
                Scanner.worthRescanning(error, since: before, directory, fileSystem)
            else { return outcome }
        }
    }

    /// `pass`'s result, run again while it throws an error a writer explains.
    package static func retrying<T>(
        directory: String, fileSystem: any FileSystem, _ pass: () throws(LogError) -> T
    ) throws(LogError) -> T {
        try retrying(directory: directory, fileSystem: fileSystem) {
            Result { () throws(LogError) in try pass() }
        } verdict: { outcome in
            if case .failure(let error) = outcome { .failed(error) } else { .stands }
        }.get()
    }
}
