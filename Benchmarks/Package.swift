// swift-tools-version:6.1
// Hearth's benchmarks: a separate package so the root build never compiles the harness or the
// baseline databases. Run from this folder: `swift package benchmark` (see README.md).
import PackageDescription

let package = Package(
    name: "HearthBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Hearth", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The baselines: system libraries, built only inside this package.
        .systemLibrary(name: "CSQLite", path: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLevelDB", path: "CLevelDB", providers: [.apt(["libleveldb-dev"])]),
        .target(
            name: "Workloads",
            dependencies: [.product(name: "Hearth", package: "Hearth"), .product(name: "HearthTesting", package: "Hearth")],
            path: "Workloads",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // One protocol, three engines doing the same persistence work (Hearth, SQLite in Firebase
        // Android's layout, LevelDB in Firebase iOS's layout) and the machine's floor.
        .target(
            name: "Engines",
            dependencies: ["Workloads", "CSQLite", "CLevelDB", .product(name: "Hearth", package: "Hearth")],
            path: "Engines",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The whole-workload driver: one workload x one engine per process (see run.sh).
        .executableTarget(
            name: "HearthBench",
            dependencies: ["Engines", "Workloads", .product(name: "Hearth", package: "Hearth")],
            path: "HearthBench",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // hearth serve's figures: durable writes/s, fan-out, matching-hash listens, restart.
        .executableTarget(
            name: "ServerBench",
            dependencies: [
                .product(name: "Hearth", package: "Hearth"),
                .product(name: "HearthServer", package: "Hearth"),
                .product(name: "HearthWireTesting", package: "Hearth"),
            ],
            path: "ServerBench",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The sync client's figures: offline drain against the loopback floor,
        // reconnect bytes for an unchanged cache, first event after an offline cold start.
        .executableTarget(
            name: "SyncBench",
            dependencies: [
                .product(name: "Hearth", package: "Hearth"),
                .product(name: "HearthDatabase", package: "Hearth"),
                .product(name: "HearthServer", package: "Hearth"),
                .product(name: "HearthWire", package: "Hearth"),
                .product(name: "HearthWireTesting", package: "Hearth"),
            ],
            path: "SyncBench",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "EngineScenarios",
            dependencies: ["Workloads", .product(name: "Hearth", package: "Hearth")],
            path: "EngineScenarios",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Rules evaluation per write against the write itself (a plain executable).
        .executableTarget(
            name: "RulesBench",
            dependencies: [
                .product(name: "HearthRules", package: "Hearth"),
                .product(name: "Hearth", package: "Hearth"),
            ],
            path: "RulesBench",
            exclude: ["rules50.json"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "ModelBenchmarks",
            dependencies: [
                .product(name: "HearthModel", package: "Hearth"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "ModelBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
