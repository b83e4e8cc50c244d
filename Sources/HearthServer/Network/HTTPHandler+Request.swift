import NIOCore

// A REST request from its last byte to the runtime: the body checked as UTF-8, the credential
// and App Check token (whose check started at the head) resolved, then the core asked.
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
        guard target.needsResolving else {
            state = .busy
            return ask(
                context, target, body: decoded, caller: RESTCaller(principal: .unauthenticated), keepAlive: keepAlive)
        }
        if let caller {
            proceed(context, target, body: decoded, caller, keepAlive: keepAlive)
        } else {
            state = .resolving(target, body: decoded, keepAlive: keepAlive)
        }
    }

    /// Checks the current request's credential and App Check token off the event loop (a
    /// token check may wait for keys), then hands the result back to the loop.
    func resolve(_ context: ChannelHandlerContext, _ target: RESTTarget) {
        // Every database checks credentials alike (one verifier for the server).
        let runtime = databases.primary
        let generation = self.generation
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let (credential, override, appCheck) = (target.credential, target.authOverride, target.appCheckToken)
        Task {
            let caller = await runtime.caller(credential: credential, override: override, appCheck: appCheck)
            bound.eventLoop.execute {
                let (handler, context) = bound.value
                guard handler.generation == generation else { return }
                handler.resolved(context, caller)
            }
        }
    }

    /// A refused credential is answered at once, even before the body is read (closing: the
    /// rest of the body is not wanted); an accepted one waits for the body.
    func resolved(_ context: ChannelHandlerContext, _ result: Result<RESTCaller, RESTResponse>) {
        switch state {
        case .body:
            if case .failure(let refusal) = result { return refuse(context, refusal) }
            caller = result
        case .resolving(let target, let body, let keepAlive):
            proceed(context, target, body: body, result, keepAlive: keepAlive)
        case .idle, .refusedAtEnd, .busy, .streaming, .closing:
            break
        }
    }

    func proceed(
        _ context: ChannelHandlerContext, _ target: RESTTarget, body: String?,
        _ result: Result<RESTCaller, RESTResponse>, keepAlive: Bool
    ) {
        state = .busy
        caller = nil
        switch result {
        case .failure(let refusal): respond(context, refusal, keepAlive: keepAlive)
        case .success(let caller): ask(context, target, body: body, caller: caller, keepAlive: keepAlive)
        }
    }

    /// Hands the request to the runtime: an event stream opens, a REST request is answered once
    /// its writes are durable.
    func ask(
        _ context: ChannelHandlerContext, _ target: RESTTarget, body: String?, caller: RESTCaller, keepAlive: Bool
    ) {
        let runtime: ServerRuntime
        switch databases.runtime(for: target.namespace) {
        case .success(let r): runtime = r
        case .failure(let refusal):
            return respond(context, .error(refusal.status, refusal.description), keepAlive: keepAlive)
        }
        var request = target.request(body: body, principal: caller.principal)
        request.appCheckExpiresAt = caller.appCheckExpiresAt
        if target.isStream { return openStream(context, request, runtime: runtime) }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let answer: @Sendable (RESTResponse) -> Void = { response in
            bound.eventLoop.execute { bound.value.0.respond(bound.value.1, response, keepAlive: keepAlive) }
        }
        if target.isRulesSettings { return runtime.rulesSettings(request, respond: answer) }
        runtime.rest(request, respond: answer)
    }
}

/// Who asks a REST request, once its credential and App Check token are checked.
struct RESTCaller: Sendable {
    var principal: Principal
    /// When the request's App Check token expires (``RESTRequest/appCheckExpiresAt``).
    var appCheckExpiresAt: Int64? = nil
}

extension RESTTarget {
    /// Whether the request has a credential or an App Check token to check before the core is
    /// asked.
    var needsResolving: Bool { !(credential ?? "").isEmpty || !(appCheckToken ?? "").isEmpty }
}
