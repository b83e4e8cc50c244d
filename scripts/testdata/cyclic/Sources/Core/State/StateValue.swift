// Fixture (cyclic): ... and the state applies events (Core/State -> Core/Events): a folder cycle.
struct StateValue {
    func apply(_ event: Event) {}
}
