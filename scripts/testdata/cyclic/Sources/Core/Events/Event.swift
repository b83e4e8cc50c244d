// Fixture (cyclic): an event carries a State type (Core/Events -> Core/State) ...
struct Event {
    let state: StateValue
}
