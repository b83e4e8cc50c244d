// swift-tools-version:6.1
// Hearth — an append-only, compressed, checkpointed storage engine for offline-first
// realtime-database clients.
//
// Layering (data flows one way): file system → log → events → state → views → API.
//   CZlib        system zlib (raw DEFLATE, used by the log codec)
//   HearthModel  the realtime-database data model: paths, keys, nodes, JSON, hash, queries
//   HearthLog    the durable log: file-system seam, segments, records, MANIFEST, recovery
//   Hearth       the engine and views on top of both; the public library product
//   hearth       the command-line tool
//   HearthRules  Firebase security rules: parse once, evaluate reads/writes (pure, no I/O)
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
]

let package = Package(
    name: "Hearth",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "Hearth", targets: ["Hearth"]),
        .library(name: "HearthModel", targets: ["HearthModel"]),
        .library(name: "HearthLog", targets: ["HearthLog"]),
        .library(name: "HearthRules", targets: ["HearthRules"]),
        .executable(name: "hearth", targets: ["HearthTool"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CZlib",
            path: "Sources/CZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(
            name: "HearthModel",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HearthLog",
            dependencies: ["CZlib"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Hearth",
            dependencies: ["HearthModel", "HearthLog"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HearthRules",
            dependencies: ["HearthModel"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "HearthTool",
            dependencies: [
                "Hearth",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HearthModelTests",
            dependencies: ["HearthModel"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HearthTests",
            dependencies: ["Hearth", "HearthModel", "HearthLog"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HearthToolTests",
            dependencies: ["Hearth"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HearthRulesTests",
            dependencies: ["HearthRules", "HearthModel"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HearthLogTests",
            dependencies: ["HearthLog"],
            swiftSettings: swiftSettings
        ),
    ]
)
