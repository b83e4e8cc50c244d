// Fixture (cyclic): Core imports App while App imports Core: a module cycle.
import App

public struct CoreThing {}
