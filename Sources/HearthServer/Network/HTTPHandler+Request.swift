import NIOCore

// A REST request from its last byte to the runtime: the body checked as UTF-8, the credential
// (whose check started at the head) resolved to a principal, then the core asked.
extension HTTPHandler {
    /// The whole body arrived: a body that is not UTF-8 is answered 400; otherwise the request
    /// goes to the runtime once its principal is known.
    func finish(_ context: ChannelHandlerContext, _ target: RESTTarget, keepAlive: Bool) {
        var decoded: String?
        if let body {
            self.body = nil
            guard let valid = String(validating: body.readableBytesView, as: UTF8.self) else {
                state = .busy
                return respond(
                    context, .error(400, "Invalid data; the request body is not UTF-8"), keepAlive: keepAlive)
            }
            decoded = valid
        }
        guard let credential = target.credential, !credential.isEmpty else {
            state = .busy
            return ask(context, target, body: decoded, principal: .unauthenticated, keepAlive: keepAlive)
        }
        if let principal {
            proceed(context, target, body: decoded, principal, keepAlive: keepAlive)
        } else {
            state = .resolving(target, body: decoded, keepAlive: keepAlive)
        }
    }

    /// Checks the current request's credential off the event loop (a token check may wait for
    /// keys), then hands the result back to the loop.
    func resolve(_ context: ChannelHandlerContext, _ credential: String, override: String?) {
        // Every database checks credentials alike (one verifier for the server).
        let runtime = databases.primary
        let generation = self.generation
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        Task {
            let principal = await runtime.principal(credential: credential, override: override)
            bound.eventLoop.execute {
                let (handler, context) = bound.value
                guard handler.generation == generation else { return }
                handler.resolved(context, principal)
            }
        }
    }

    /// A refused credential is answered at once, even before the body is read (closing: the
    /// rest of the body is not wanted); an accepted one waits for the body.
    func resolved(_ context: ChannelHandlerContext, _ result: Result<Principal, RESTResponse>) {
        switch state {
        case .body:
            if case .failure(let refusal) = result { return refuse(context, refusal) }
            principal = result
        case .resolving(let target, let body, let keepAlive):
            proceed(context, target, body: body, result, keepAlive: keepAlive)
        case .idle, .refusedAtEnd, .busy, .streaming, .closing:
            break
        }
    }

    func proceed(
        _ context: ChannelHandlerContext, _ target: RESTTarget, body: String?,
        _ result: Result<Principal, RESTResponse>, keepAlive: Bool
    ) {
        state = .busy
        principal = nil
        switch result {
        case .failure(let refusal): respond(context, refusal, keepAlive: keepAlive)
        case .success(let principal): ask(context, target, body: body, principal: principal, keepAlive: keepAlive)
        }
    }

    /// Hands the request to the runtime: an event stream opens, a REST request is answered once
    /// its writes are durable.
    func ask(
        _ context: ChannelHandlerContext, _ target: RESTTarget, body: String?, principal: Principal, keepAlive: Bool
    ) {
        let runtime: ServerRuntime
        switch databases.runtime(for: target.namespace) {
        case .success(let r): runtime = r
        case .failure(let refusal):
            return respond(context, .error(refusal.status, refusal.description), keepAlive: keepAlive)
        }
        let request = target.request(body: body, principal: principal)
        if target.isStream { return openStream(context, request, runtime: runtime) }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let answer: @Sendable (RESTResponse) -> Void = { response in
            bound.eventLoop.execute { bound.value.0.respond(bound.value.1, response, keepAlive: keepAlive) }
        }
        if target.isRulesSettings { return runtime.rulesSettings(request, respond: answer) }
        runtime.rest(request, respond: answer)
    }
}
