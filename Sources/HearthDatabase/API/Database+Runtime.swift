import Dispatch
import Foundation
import Hearth
import HearthModel
@_spi(HearthInternals) import HearthWire

extension Database {
    /// Runs one step of the core and does what it returns. Must run on ``work``.
    func step(allowClosed: Bool = false, _ body: (inout ClientCore, Int64) -> ClientOutput) {
        dispatchPrecondition(condition: .onQueue(work))
        let now = options.clock()
        let output: ClientOutput? = state.withLock { s in
            if s.closed && !allowClosed { return nil }
            let out = body(&s.core, now)
            s.core.assertInvariants()
            return out
        }
        guard let output else { return }
        apply(output)
        rescheduleTimer()
    }

    /// Does what an output says, in the order the core relies on: connections, then the
    /// commits (one store commit), then messages, then events.
    private func apply(_ out: ClientOutput) {
        if let id = out.close {
            let link: (any TransportConnection)? = state.withLock { s in
                guard let c = s.connection, c.id == id else { return nil }
                s.connection = nil
                return c.link
            }
            link?.close()
        }
        if let id = out.open { open(id) }
        if let request = out.fetchToken { fetchToken(request) }
        if let request = out.fetchAppCheckToken { fetchAppCheckToken(request) }
        let answers = plainWriteAnswers(out.events)
        if !out.commits.isEmpty { acknowledger.commit(out.commits, answering: answers) }
        if !out.messages.isEmpty {
            let link = state.withLock { s in s.connection.flatMap { $0.id == s.core.currentConnection ? $0.link : nil }
            }
            if let link { for m in out.messages { link.send(m) } }
        }
        for event in out.events { deliver(event, plainWrites: answers) }
    }

    /// The server's answers to plain writes among `events`, by write id: a transaction's write
    /// is answered to the transaction.
    private func plainWriteAnswers(_ events: [ClientEvent]) -> [Int64: DatabaseError?] {
        var answers: [Int64: DatabaseError?] = [:]
        guard events.contains(where: { if case .writeCompleted = $0 { true } else { false } }) else { return answers }
        state.withLock { s in
            for case let .writeCompleted(id, error) in events where !s.transactions.contains(id) {
                answers[id] = .some(error)
            }
        }
        return answers
    }

    private func open(_ id: ConnectionID) {
        let (session, host, endpoint) = state.withLock { ($0.core.lastSessionID, $0.core.host, $0.endpoint) }
        // The core accepts only hosts that parse (ServerEndpoint.isValidHost).
        let target = host.flatMap(endpoint.redirected(to:)) ?? endpoint
        Database.debugLog(options)("connecting to \(target.hostHeader)")
        let link = transport.connect(to: target, lastSessionID: session) { [weak self] event in
            self?.received(event, on: id)
        }
        let old: (any TransportConnection)? = state.withLock { s in
            defer { s.connection = (id, link) }
            return s.connection?.link
        }
        old?.close()
    }

    private func fetchToken(_ request: TokenFetch) {
        guard let provider = options.tokenProvider else { return }
        Task { [weak self] in
            do {
                let token = try await provider(request.force)
                let auth = token.map { AuthToken(token: $0, expiresAt: Database.expiry(ofJWT: $0) ?? Int64.max) }
                guard let self else { return }
                self.work.async {
                    self.step { (core, now) in core.tokenFetched(auth, fetch: request.number, now: now) }
                }
            } catch {
                guard let self else { return }
                self.work.async { self.step { (core, now) in core.tokenFetchFailed(fetch: request.number, now: now) } }
            }
        }
    }

    /// Asks the App Check provider (a thin adapter: the core decides what the answer means).
    private func fetchAppCheckToken(_ request: TokenFetch) {
        guard let provider = options.appCheckTokenProvider else { return }
        Task { [weak self] in
            let answer: Result<String?, any Error>
            do { answer = .success(try await provider(request.force)) } catch { answer = .failure(error) }
            guard let self else { return }
            self.work.async {
                self.step { (core, now) in
                    switch answer {
                    case .success(let token):
                        core.appCheckTokenFetched(token.map(Database.appCheckToken), fetch: request.number, now: now)
                    case .failure:
                        core.appCheckTokenFetchFailed(fetch: request.number, now: now)
                    }
                }
            }
        }
    }

    /// An App Check token with its expiry (a JWT's `exp`; never, for any other token).
    static func appCheckToken(_ token: String) -> AuthToken {
        AuthToken(token: token, expiresAt: expiry(ofJWT: token) ?? Int64.max)
    }

    /// The `exp` claim of a JWT, in ms (nil when the token is not a JWT with one).
    static func expiry(ofJWT token: String) -> Int64? {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var b64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.count % 4 != 0 { b64 += "=" }
        guard let data = Data(base64Encoded: b64), let text = String(data: data, encoding: .utf8),
            let json = try? JSONValue.parse(text), let exp = json["exp"]?.doubleValue, exp.isFinite, exp > 0, exp < 1e13
        else { return nil }
        return Int64(exp * 1000)
    }

    /// Delivers one core event to the app.
    private func deliver(_ event: ClientEvent, plainWrites: [Int64: DatabaseError?]) {
        switch event {
        case .connected(let up):
            Database.debugLog(options)(up ? "connected" : "disconnected")
            updateInfo { $0.connected = up }
        case .serverTimeOffset(let ms):
            updateInfo { $0.serverTimeOffset = ms }
        case .authenticated(let yes):
            updateInfo { $0.authenticated = yes }
        // Transactions continue off the sync queue (a retry takes the write lock and steps
        // the core, and ending one removes its listener), on one serial queue: answers are
        // handled, and outcomes reported, in the order the server gave them.
        case let .writeCompleted(id, error) where plainWrites.index(forKey: id) == nil:
            transactionSteps.async { [weak self] in
                self?.transactionAnswered(writeID: id, error: error, interrupted: false)
            }
        case .conditionalWriteInterrupted(let id):
            transactionSteps.async { [weak self] in
                self?.transactionAnswered(writeID: id, error: nil, interrupted: true)
            }
        case let .writeCompleted(id, error):
            acknowledger.reportWrite(id, error)
        case let .listenRevoked(location, error):
            revoke(location, error)
        case let .getCompleted(id, result):
            let waiter = state.withLock { $0.getWaiters.removeValue(forKey: id) }
            waiter?(result)
        case let .onDisconnectCompleted(id, error):
            let callback = onDisconnectCallbacks.withLock { $0.removeValue(forKey: id) }
            if let callback { callback.queue.async { callback.handler(error) } }
        case .writesPaused(let paused):
            let observers = pauseSignal.withLock { $0.set(paused) }
            for o in observers { o.queue.async { o.handler(paused) } }
        case .protocolWarning(let text), .notice(let text):
            Database.logger(options)(text)
        case .hostChanged(let host):
            keepHost(host)
        }
    }

    /// The server ended a listen: its observers are cancelled and removed (Firebase's
    /// behaviour), and keepSynced on it stops.
    private func revoke(_ location: QueryLocation, _ error: DatabaseError) {
        let removed: [Registration] = state.withLock { s in
            let handles = s.registrations.filter { ClientCore.wireLocation($0.value.location) == location }.map(\.key)
            s.pinned = s.pinned.filter { ClientCore.wireLocation($0) != location }
            return handles.compactMap { s.registrations.removeValue(forKey: $0) }
        }
        for r in removed {
            try? store.removeListener(r.token)
            if let cancel = r.cancel { r.queue.async { cancel(error) } }
        }
    }

    /// Points the timer at the core's next deadline.
    func rescheduleTimer() {
        let (deadline, closed) = state.withLock { ($0.core.nextDeadline, $0.closed) }
        state.withLock { s in
            s.timer?.cancel()
            s.timer = nil
            guard let deadline, !closed else { return }
            let delay = max(0, deadline - options.clock())
            let timer = DispatchSource.makeTimerSource(queue: work)
            timer.schedule(deadline: .now() + .milliseconds(Int(min(delay, 3_600_000))))
            timer.setEventHandler { [weak self] in self?.step { (core, now) in core.tick(now: now) } }
            timer.resume()
            s.timer = TimerSource(timer)
        }
    }
}

extension Database {
    /// A transport report: queued, and the queue drained on ``work`` in one step. The report
    /// that brings the inbox to its bound stops the connection's reading until a drain.
    func received(_ event: TransportEvent, on id: ConnectionID) {
        let (first, stopping) = inbox.withLock { inbox in
            let stopping = inbox.append(event, from: id)
            return (inbox.events.count == 1, stopping)
        }
        if first { work.async { [weak self] in self?.drainInbox() } }
        if let stopping { tell(stopping, reading: false) }
    }

    private func drainInbox() {
        let batch = inbox.withLock { $0.take() }
        step { (core, now) in
            var out = ClientOutput()
            for (id, event) in batch.events {
                switch event {
                case .opened: out.append(core.connectionOpened(id, now: now))
                case .message(let text): out.append(core.received(text, on: id, now: now))
                case .closed: out.append(core.connectionClosed(id, now: now))
                }
            }
            return out
        }
        let closedLinks: [ConnectionID] = batch.events.compactMap {
            if case .closed = $0.1 { return $0.0 } else { return nil }
        }
        state.withLock { s in
            if let c = s.connection, closedLinks.contains(c.id) { s.connection = nil }
        }
        if let resuming = inbox.withLock({ $0.handled(batch.bytes) }) { tell(resuming, reading: true) }
    }

    /// Tells connection `id` to stop or go on reading, as the inbox just decided, and then
    /// again until what it was told last is what the inbox says now.
    ///
    /// A stop decided on the transport's thread and a resume decided by a drain on ``work``
    /// reach the connection by separate calls, made outside the inbox's lock (a transport may
    /// deliver from inside `setReading`); both transports apply the calls in the order they were
    /// made. Without the check, a stop made after a resume it was decided before would leave
    /// the connection unread with nothing in the inbox to resume it. With it, whoever calls
    /// last has looked at the decision after its call, so the last call is the current one.
    /// Each further round follows another thread's change of the decision, and that thread
    /// checks again itself.
    private func tell(_ id: ConnectionID, reading: Bool) {
        var told = reading
        link(id)?.setReading(told)
        while true {
            let wanted = inbox.withLock { $0.stopped != id }
            guard wanted != told else { return }
            told = wanted
            link(id)?.setReading(told)
        }
    }

    /// The link of connection `id`, while it is the one open.
    private func link(_ id: ConnectionID) -> (any TransportConnection)? {
        state.withLock { s in s.connection.flatMap { $0.id == id ? $0.link : nil } }
    }
}
