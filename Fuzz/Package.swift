// swift-tools-version:6.1
// libFuzzer targets for Hearth (see README.md). Built only with
//   swift build --package-path Fuzz -c release --sanitize=fuzzer [--sanitize=address] --product <Target>
// A plain `swift build` of this package also works; the fuzzers are then no-ops that exit 0.
import PackageDescription

let swiftSettings: [SwiftSetting] = [.swiftLanguageMode(.v6)]
let checks: [Target.Dependency] = [
    "FuzzChecks",
    .product(name: "Hearth", package: "Hearth"),
]
let serverChecks: [Target.Dependency] = ["FuzzServerChecks"]

let package = Package(
    name: "HearthFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        // `name:` pins the identity, so it does not depend on the checkout directory's name.
        .package(name: "Hearth", path: ".."),
        // FuzzFrames hands the server's frame reader NIO's byte buffers.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // The checks every fuzzer runs, one file per target plus FuzzSupport.swift; the main
        // package's Tests/HearthTests/FuzzChecks/ links to each file (Fuzz/sync-checks.sh), and
        // FuzzRegressionTests replays the corpus through them and fails when a link is missing or differs.
        .target(
            name: "FuzzChecks",
            dependencies: [
                .product(name: "Hearth", package: "Hearth"),
                .product(name: "HearthLog", package: "Hearth"),
                .product(name: "HearthModel", package: "Hearth"),
                .product(name: "HearthTesting", package: "Hearth"),
            ],
            swiftSettings: swiftSettings
        ),
        // The rules fuzzer's checks, apart: they need HearthRules, and the main package links them
        // into Tests/HearthRulesTests/FuzzChecks/ (Fuzz/sync-checks.sh), whose target has it.
        .target(
            name: "FuzzRulesChecks",
            dependencies: [
                .product(name: "HearthRules", package: "Hearth"),
                .product(name: "HearthModel", package: "Hearth"),
            ],
            swiftSettings: swiftSettings
        ),
        // The checks of the server's network-facing parsers (FuzzToken, FuzzWire, FuzzREST, FuzzFrames), linked
        // the same way into the main package's Tests/HearthServerTests/FuzzChecks/, whose test
        // target depends on HearthServer and HearthWire.
        .target(
            name: "FuzzServerChecks",
            dependencies: [
                .product(name: "Hearth", package: "Hearth"),
                .product(name: "HearthWire", package: "Hearth"),
                .product(name: "HearthServer", package: "Hearth"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(name: "FuzzDecode", dependencies: checks, swiftSettings: swiftSettings),
        .executableTarget(name: "FuzzRecovery", dependencies: checks, swiftSettings: swiftSettings),
        .executableTarget(name: "FuzzState", dependencies: checks, swiftSettings: swiftSettings),
        .executableTarget(name: "FuzzToken", dependencies: serverChecks, swiftSettings: swiftSettings),
        .executableTarget(name: "FuzzWire", dependencies: serverChecks, swiftSettings: swiftSettings),
        .executableTarget(name: "FuzzREST", dependencies: serverChecks, swiftSettings: swiftSettings),
        .executableTarget(name: "FuzzFrames", dependencies: serverChecks, swiftSettings: swiftSettings),
        .executableTarget(name: "FuzzRules", dependencies: ["FuzzRulesChecks"], swiftSettings: swiftSettings),
    ]
)
