// Fixture (acyclic): another module importing Core (App -> Core, App/. -> Core/.).
import Core

let root = Root.high
