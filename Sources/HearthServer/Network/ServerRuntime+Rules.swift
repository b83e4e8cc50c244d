import HearthRules

// `/.settings/rules.json`: a database's security rules, read and replaced while it runs — the
// endpoint Firebase's emulator offers and its test tools (firebase-tools, the JS SDK's emulator
// test runner, `@firebase/rules-unit-testing`) install rules through.

extension ServerRuntime {
    /// The rules text the default policy amounts to: everyone may do everything in emulator
    /// mode, any authenticated user otherwise.
    static func defaultRulesText(emulator: Bool) -> String {
        emulator
            ? "{\"rules\":{\".read\":true,\".write\":true}}"
            : "{\"rules\":{\".read\":\"auth != null\",\".write\":\"auth != null\"}}"
    }

    /// Answers `GET` (the rules in force, as their text) or `PUT` (new rules, the body, checked
    /// as a rules file is and then in force for every later request; listens they refuse are
    /// revoked) on `/.settings/rules.json`. Only the admin may (401 otherwise; in emulator mode
    /// the admin is `Authorization: Bearer owner`). The rules live as long as the process:
    /// a restart goes back to `--rules`, as Firebase's emulator goes back to its rules file.
    func rulesSettings(_ request: RESTRequest, respond: @escaping @Sendable (RESTResponse) -> Void) {
        guard request.principal == .admin else {
            return respond(.error(401, "Unauthorized request: only the admin may read or replace the rules"))
        }
        switch request.method {
        case .get:
            let text = state.withLock { s in
                s.rulesText ?? Self.defaultRulesText(emulator: s.core.configuration.emulator)
            }
            respond(RESTResponse(status: 200, body: text))
        case .put:
            let text = request.body ?? ""
            let rules: RulesSet
            do { rules = try RulesSet.parse(source: text, limits: rulesLimits) } catch {
                return respond(.error(400, "The rules are not valid: \(error)"))
            }
            let now = clock()
            let replaced = state.withLock { s -> Bool in
                guard !s.stopped else { return false }
                let out = s.core.replacePolicy(RulesAccessPolicy(rules: rules), now: now)
                s.rulesText = text
                s.queue.append(.rest(out, .ready(RESTResponse(status: 200, body: "{\"status\":\"ok\"}")), respond))
                return true
            }
            guard replaced else { return respond(.error(503, "the server is stopping")) }
            wake.signal()
        default:
            respond(.error(405, "The rules are read with GET and replaced with PUT"))
        }
    }
}
