@_spi(HearthInternals) import Hearth
import HearthRules

extension ServerRuntime {
    /// A runtime over the server store in `directory` (created when missing), as `hearth serve`
    /// runs one: the store is opened with its default options (durability `.full`), and after a
    /// failed commit (a full disk) the runtime reopens it — read-only when it cannot be opened
    /// for writing yet — to serve reads from what it holds, and retries the writes.
    ///
    /// The embedder's way in: the store type itself is not public API (its format and
    /// checkpointing change with the engine). Serve it with ``NetworkServer`` through
    /// ``Databases``.
    /// - Parameters:
    ///   - directory: the store's directory.
    ///   - configuration: the core's limits and modes.
    ///   - verifier: checks credentials, off the lock.
    ///   - appCheckVerifier: checks App Check tokens when the configuration enforces App Check.
    ///   - policy: who may read and write what; ``DefaultAccessPolicy`` when nil.
    ///   - rulesText: the rules file `policy` was made from, which `GET /.settings/rules.json`
    ///     answers with.
    ///   - rulesLimits: the bounds rules replaced through `PUT /.settings/rules.json` load and
    ///     run within.
    public convenience init(
        directory: String, configuration: ServerConfiguration, verifier: any TokenVerifier,
        appCheckVerifier: (any TokenVerifier)? = nil, policy: (any AccessPolicy)? = nil,
        rulesText: String? = nil, rulesLimits: RulesSet.Limits = RulesSet.Limits()
    ) throws(StoreError) {
        let options = AuthoritativeStore.Options()
        let reopen: @Sendable (Bool) throws(StoreError) -> AuthoritativeStore.Opened = { readOnly in
            var again = options
            again.readOnly = readOnly
            return try AuthoritativeStore.open(directory: directory, options: again)
        }
        try self.init(
            store: try AuthoritativeStore.open(directory: directory, options: options), configuration: configuration,
            verifier: verifier, appCheckVerifier: appCheckVerifier, policy: policy, reopen: reopen,
            rulesText: rulesText, rulesLimits: rulesLimits)
    }
}
