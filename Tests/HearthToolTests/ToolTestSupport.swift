// Support for end-to-end tests of the `hearth` binary (built by `swift build` before tests run).
