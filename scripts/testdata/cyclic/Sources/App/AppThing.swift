// Fixture (cyclic): App imports Core.
import Core

public struct AppThing {
    let thing = CoreThing()
}
