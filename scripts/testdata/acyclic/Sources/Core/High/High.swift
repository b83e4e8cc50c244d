// Fixture (acyclic): the folder above Low uses Low (Core/High -> Core/Low).
public struct High {
    let low = Low.shared
    let options: Low.Options? = nil
}

private struct Helper {}
