import Hearth
import HearthModel
@_spi(HearthInternals) import HearthWire

// The app's listens and gets, the requests the core numbers and sends, and what the server
// answers and pushes.
extension ClientCore {
    // MARK: - The app's intents

    /// One more registration (an observer or a keepSynced pin) wants the query at `location`;
    /// the first one listens. Returns nothing to do when the listen exists already, or when
    /// the client holds ``Configuration/maxListens`` (the event says so).
    package mutating func listen(_ location: QueryLocation, now: Int64) -> ClientOutput {
        var out = ClientOutput()
        let key = ClientCore.wireLocation(location)
        if listens[key] != nil {
            listens[key]!.count += 1
            return out
        }
        guard listens.count < configuration.maxListens else {
            out.events.append(.listenRevoked(location, .invalidQuery("more than \(configuration.maxListens) listens")))
            return out
        }
        var tag: Int?
        if !key.query.loadsAllData {
            assert(tags[nextTag] == nil, "a tag names one query")
            tag = nextTag
            tags[nextTag] = key
            nextTag += 1
        }
        listens[key] = Listen(count: 1, tag: tag, order: nextListenOrder)
        nextListenOrder += 1
        assert(listens.count <= configuration.maxListens, "listens within their bound")
        if isConnected { sendListen(key, tag: tag, now: now, into: &out) }
        return out
    }

    /// A registration no longer wants the query at `location`; the last one unlistens.
    package mutating func unlisten(_ location: QueryLocation, now: Int64) -> ClientOutput {
        var out = ClientOutput()
        let key = ClientCore.wireLocation(location)
        guard var listen = listens[key] else { return out }
        listen.count -= 1
        guard listen.count <= 0 else {
            listens[key] = listen
            return out
        }
        assert(listen.count == 0, "a listen's listeners never count below zero")
        listens[key] = nil
        if let tag = listen.tag { tags[tag] = nil }
        if isConnected {
            send(.unlisten(path: key.path, query: key.query, tag: listen.tag), as: .unlisten, now: now, into: &out)
        }
        return out
    }

    /// Reads the query at `location` from the server once (`g`), as request `id`. Answered by
    /// a ``ClientEvent/getCompleted(id:_:)``: the data, or ``DatabaseError/offline`` when no
    /// connection comes within ``Configuration/getOfflineTimeoutMs``.
    package mutating func get(_ id: UInt64, at location: QueryLocation, now: Int64) -> ClientOutput {
        var out = ClientOutput()
        gets[id] = PendingGet(location: location, deadline: isConnected ? nil : now + configuration.getOfflineTimeoutMs)
        if isConnected { sendGet(id, now: now, into: &out) }
        return out
    }

    // MARK: - Sending

    mutating func send(_ request: ClientRequest, as kind: Request, now: Int64, into out: inout ClientOutput) {
        let number = nextRequest
        nextRequest += 1
        assert(requests[number] == nil, "a request number names one request")
        requests[number] = kind
        out.messages.append(request.message(number: number))
        lastSend = now
    }

    mutating func sendListen(_ location: QueryLocation, tag: Int?, now: Int64, into out: inout ClientOutput) {
        // One read of the cache for both hashes. As the SDKs: a compound hash only for cached
        // data over the size threshold.
        let simpleHash: String
        var compoundHash: CompoundHash? = nil
        if let cache {
            let node = cache(location)
            simpleHash = node?.hash ?? ""
            if let node, node.estimatedJSONSize > CompoundHash.sizeThreshold { compoundHash = CompoundHash(of: node) }
        } else {
            simpleHash = hash(location)
        }
        let request = ClientRequest.listen(
            path: location.path, query: location.query, tag: tag, hash: simpleHash, compoundHash: compoundHash)
        send(request, as: .listen(location), now: now, into: &out)
    }

    mutating func sendGet(_ id: UInt64, now: Int64, into out: inout ClientOutput) {
        guard let g = gets[id] else { return }
        gets[id]!.sent = true
        gets[id]!.deadline = nil
        send(.get(path: g.location.path, query: g.location.query), as: .get(id), now: now, into: &out)
    }

    // MARK: - What the server says

    /// A whole message arrived on connection `id`. Messages on an older connection are
    /// ignored; a message that does not decode is reported as a warning and skipped.
    package mutating func received(_ text: String, on id: ConnectionID, now: Int64) -> ClientOutput {
        var out = ClientOutput()
        guard currentConnection == id else { return out }
        let message: ServerMessage
        do { message = try ServerMessage.decode(text) } catch {
            out.events.append(.protocolWarning("undecodable message: \(error)"))
            return out
        }
        switch message {
        case let .hello(timestamp, host, sessionID, extensions):
            if case .connecting = phase {
                helloReceived(
                    id, timestamp: timestamp, host: host, sessionID: sessionID, extensions: extensions, now: now,
                    into: &out)
            }
        case let .response(number, status, data):
            guard let request = requests.removeValue(forKey: number) else {
                out.events.append(.protocolWarning("response to unknown request \(number)"))
                return out
            }
            responded(request, status: status, data: data, now: now, into: &out)
        case let .set(path, data, tag):
            dataPushed(path: path, tag: tag, into: &out) { location in
                [.taggedOverwrite(path, try Node(json: data, at: path), for: location)]
            } untagged: {
                [.serverOverwrite(path, try Node(json: data, at: path))]
            }
        case let .merge(path, data, tag):
            let children: () throws -> [ChildUpdate] = {
                try data.map { rel, json in ChildUpdate(path: rel, node: try Node(json: json, at: path.appending(rel)))
                }
            }
            dataPushed(path: path, tag: tag, into: &out) { location in
                [.taggedMerge(path, try children(), for: location)]
            } untagged: {
                [.serverMerge(path, try children())]
            }
        case let .rangeMerge(path, ranges, tag):
            guard !ranges.isEmpty else { break }  // as the SDKs: nothing to merge
            let cache = self.cache
            dataPushed(path: path, tag: tag, into: &out) { location -> [ClientCommit] in
                guard let node = try ClientCore.merged(ranges, at: path, into: cache?(location)) else { return [] }
                return [.taggedOverwrite(path, node, for: location)]
            } untagged: { () -> [ClientCommit] in
                let location = QueryLocation(path: path, query: .default)
                guard let node = try ClientCore.merged(ranges, at: path, into: cache?(location)) else { return [] }
                return [.serverOverwrite(path, node)]
            }
        case let .listenRevoked(path, query):
            let key = ClientCore.wireLocation(QueryLocation(path: path, query: query))
            revokeListen(key, error: .permissionDenied("the server revoked the listen at \(key)"), into: &out)
        case let .authRevoked(status, _):
            tokenRefused(status: status, now: now, into: &out)
        case .pong:
            break
        case .shutdown, .reset, .serverError, .securityDebug, .appCheckRevoked:
            controlReceived(message, now: now, into: &out)
        }
        return out
    }

    /// Server data: committed tagged (for the tag's listen) or untagged. Data for a tag the
    /// client no longer listens with is dropped (the unlisten crossed it on the wire).
    private mutating func dataPushed(
        path: Path, tag: Int?, into out: inout ClientOutput,
        tagged: (QueryLocation) throws -> [ClientCommit], untagged: () throws -> [ClientCommit]
    ) {
        do {
            if let tag {
                guard let location = tags[tag] else { return }
                out.commits += try tagged(location)
            } else {
                out.commits += try untagged()
            }
        } catch {
            out.events.append(.protocolWarning("server data at /\(path.wireString) is not valid: \(error)"))
        }
    }

    /// The cached data at `path` with the server's ranges merged in, in order; `nil` without
    /// a complete cache there (a range merge answers a compound hash, sent only with one).
    private static func merged(_ ranges: [WireRangeMerge], at path: Path, into cached: Node?) throws -> Node? {
        guard var node = cached else { return nil }
        for range in ranges {
            let merge = RangeMerge(start: range.start, end: range.end, update: try Node(json: range.data, at: path))
            node = merge.applied(to: node)
        }
        return node
    }

    private mutating func revokeListen(_ key: QueryLocation, error: DatabaseError, into out: inout ClientOutput) {
        guard let listen = listens.removeValue(forKey: key) else { return }
        if let tag = listen.tag { tags[tag] = nil }
        out.events.append(.listenRevoked(key, error))
    }

    static func error(status: String, data: JSONValue?) -> DatabaseError {
        let message = data?.stringValue ?? status
        return status == "permission_denied"
            ? .permissionDenied(message) : .serverError(status: status, message: message)
    }

    private mutating func responded(
        _ request: Request, status: String, data: JSONValue?, now: Int64, into out: inout ClientOutput
    ) {
        let ok = status == "ok"
        switch request {
        case .auth(let credential):
            // An answer about a token replaced since is not about the token in use (Firebase's
            // `tryAuth` compares too): the newer token's own answer follows.
            guard credential == token?.token else { return }
            if ok {
                invalidTokens = 0
                isAuthenticated = true
                out.events.append(.authenticated(true))
            } else {
                tokenRefused(status: status, now: now, into: &out)
            }
        case .appCheck(let token):
            appCheckAnswered(token, status: status, data: data, now: now, into: &out)
        case .listen(let key):
            warnOfListenWarnings(data, at: key, into: &out)
            guard listens[key] != nil else { return }  // unlistened meanwhile
            if ok {
                out.commits.append(.listenComplete(key))
            } else {
                revokeListen(key, error: ClientCore.error(status: status, data: data), into: &out)
            }
        case .unlisten:
            break
        case .write(let id):
            // A recognised re-send (`ok` with `seen`) is acknowledged the same way: the server
            // follows it with the current data of this connection's listens there, which
            // replaces the write's value where later writes changed it.
            guard writes.removeValue(forKey: id) != nil else { return }
            // Only sendWrite makes a write request, and a dropped connection forgets both.
            assert(sentWrites.contains(id), "an answered write was sent on this connection")
            writerIDs[id] = nil
            conditions[id] = nil
            if ok {
                out.commits.append(.ackWrite(id))
                out.events.append(.writeCompleted(id: id, error: nil))
            } else {
                out.commits.append(.revertWrite(id))
                out.events.append(.writeCompleted(id: id, error: ClientCore.error(status: status, data: data)))
            }
        case .onDisconnect(let id):
            guard let op = onDisconnects[id] else { return }
            if !ok {
                onDisconnects[id] = nil
                out.commits.append(.removeOnDisconnect(id))
                out.events.append(.onDisconnectCompleted(id: id, error: ClientCore.error(status: status, data: data)))
                return
            }
            if case .cancel = op.action {
                // The server dropped every operation at and below the path, this one with
                // them: so does the client.
                onDisconnects[id] = nil
                out.commits.append(.removeOnDisconnect(id))
                for (other, o) in onDisconnects.sorted(by: { $0.key < $1.key })
                where o.acknowledged && op.path.contains(o.path) {
                    onDisconnects[other] = nil
                    out.commits.append(.removeOnDisconnect(other))
                }
            } else {
                onDisconnects[id]!.acknowledged = true
                out.commits.append(.ackOnDisconnect(id))
            }
            out.events.append(.onDisconnectCompleted(id: id, error: nil))
        case .get(let id):
            guard let g = gets.removeValue(forKey: id) else { return }
            guard ok else {
                out.events.append(.getCompleted(id: id, .failure(ClientCore.error(status: status, data: data))))
                return
            }
            do {
                let node = try Node(json: data ?? .null, at: g.location.path)
                if g.location.query.loadsAllData {
                    out.commits.append(.serverOverwrite(g.location.path, node))
                } else {
                    // A window says nothing of the children outside it: merge what it holds.
                    out.commits.append(
                        .serverMerge(
                            g.location.path,
                            node.children.map { ChildUpdate(path: Path(keys: [$0.key]), node: $0.value) }))
                }
                out.events.append(.getCompleted(id: id, .success(node)))
            } catch {
                out.events.append(
                    .getCompleted(id: id, .failure(.serverError(status: "invalid_data", message: "\(error)"))))
            }
        }
    }
}
