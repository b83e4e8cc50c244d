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
        .target(
            name: "Workloads",
            dependencies: [.product(name: "HearthModel", package: "Hearth"), .product(name: "HearthLog", package: "Hearth")],
            path: "Workloads",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "EngineScenarios",
            dependencies: ["Workloads", .product(name: "Hearth", package: "Hearth")],
            path: "EngineScenarios",
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
