// Fixture (acyclic): the folder above Low uses Low (Core/High -> Core/Low).
import Base

public struct High {
    let low = Low.shared
    let options: Low.Options? = nil
}

private struct Helper {}
