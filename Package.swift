// swift-tools-version:6.1
// Hearth — an append-only, compressed, checkpointed storage engine for offline-first
// realtime-database clients.
//
// Layering (data flows one way): file system → log → events → state → views → API.
//   CZlib        system zlib (raw DEFLATE, used by the log codec)
//   CCRC32C      CRC32C with the processor's instruction where there is one (x86-64 SSE4.2)
//   CFileSystemKind which file system holds a file (fstatfs's magic, Linux), for the log's mapping
//   HearthModel  the realtime-database data model: paths, keys, nodes, JSON, hash, queries,
//                server values; and the seeded generator the cores, tests and the demo share
//   HearthLog    the durable log: file-system seam, segments, records, MANIFEST, recovery
//   Hearth       the engine and views on top of both; the public library product
//   HearthTesting test aids (simulated file system with power cuts and faults),
//                kept out of `import Hearth` as swift-nio keeps NIOEmbedded apart
//   HearthWire   Firebase's WebSocket protocol v5 as values: frames, messages, queries, push ids
//   HearthServer `hearth serve`: the sans-I/O server core, and its SwiftNIO adapter
//   HearthWireTesting a raw WebSocket client speaking protocol v5 frames, for tests and benchmarks
//   hearth       the command-line tool
//   HearthRules  Firebase security rules: parse once, evaluate reads/writes (pure, no I/O)
//   HearthDatabase the sync client: Firebase's Database/DatabaseReference/observe API on a store,
//                its sans-I/O protocol core, and a WebSocket transport: URLSessionWebSocketTask
//                (system TLS) on Apple platforms, SwiftNIO with NIOSSL on Linux; logs through
//                swift-log
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6)
]

/// SwiftNIO's HTTP/1.1 and WebSocket stack, for the server and its test client.
let nioWebSocket: [Target.Dependency] = [
    .product(name: "NIOCore", package: "swift-nio"),
    .product(name: "NIOPosix", package: "swift-nio"),
    .product(name: "NIOHTTP1", package: "swift-nio"),
    .product(name: "NIOWebSocket", package: "swift-nio"),
]
/// TLS for `wss://` (the client's transport).
let nioSSL: Target.Dependency = .product(name: "NIOSSL", package: "swift-nio-ssl")
/// The client's transport on Linux, where FoundationNetworking's `URLSessionWebSocketTask` fails
/// ("WebSockets not supported by libcurl"). Apple platforms use `URLSessionWebSocketTask` and
/// system TLS instead, so an app embedding `HearthDatabase` links neither SwiftNIO nor BoringSSL.
let clientNIO: [Target.Dependency] = [
    .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: [.linux])),
    .product(name: "NIOPosix", package: "swift-nio", condition: .when(platforms: [.linux])),
    .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: [.linux])),
    .product(name: "NIOWebSocket", package: "swift-nio", condition: .when(platforms: [.linux])),
    .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(platforms: [.linux])),
]
/// Compiles the SwiftNIO transport exactly where `clientNIO` links it. A define rather than
/// `canImport(NIOPosix)`: in a build that also builds the server, NIO's modules sit in the
/// shared module directory and `canImport` would find them on Apple platforms too.
let nioTransport: SwiftSetting = .define("HEARTH_NIO_TRANSPORT", .when(platforms: [.linux]))
let jwtKit: Target.Dependency = .product(name: "JWTKit", package: "jwt-kit")

let package = Package(
    name: "Hearth",
    // The floor: the Synchronization module (Mutex, Atomic) ships with macOS 15 / iOS 18 /
    // tvOS 18 / watchOS 11 / visionOS 2. HearthLog (POSIX file system, recovery), Hearth (pending
    // writes, checkpoint reader), HearthDatabase, HearthServer, HearthTesting, HearthWireTesting
    // and the tool import it, so the engine and all on it need it (HearthModel, HearthWire and
    // HearthRules do not, but a package has one set of platforms).
    // Below that, were Mutex/Atomic replaced (os_unfair_lock, swift-atomics): Duration and
    // ContinuousClock (Durability.batched, maintenance) and Task.sleep(for:)
    // need macOS 13 / iOS 16 / tvOS 16 / watchOS 9; jwt-kit, used by
    // HearthServer only, needs macOS 13 / iOS 15. Typed throws through function values
    // (`(inout StoreBatch) throws(StoreError) -> Void`) may need the Swift 6 runtime (iOS 18) where
    // their metadata is formed; unverified. Firebase's SDKs reach iOS 13; Hearth does not, and this
    // cannot be built or checked for Apple platforms here (Linux CI), so the platforms stay.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Hearth", targets: ["Hearth"]),
        .library(name: "HearthModel", targets: ["HearthModel"]),
        .library(name: "HearthLog", targets: ["HearthLog"]),
        .library(name: "HearthTesting", targets: ["HearthTesting"]),
        .library(name: "HearthRules", targets: ["HearthRules"]),
        .library(name: "HearthWire", targets: ["HearthWire"]),
        .library(name: "HearthServer", targets: ["HearthServer"]),
        .library(name: "HearthWireTesting", targets: ["HearthWireTesting"]),
        .library(name: "HearthDatabase", targets: ["HearthDatabase"]),
        .executable(name: "hearth", targets: ["HearthTool"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // The client's logging API (Firebase's `setLoggingEnabled` as log levels): the server-side
        // Swift standard, one small module an app routes to its own backend (os_log, a file);
        // already in the graph through jwt-kit.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // `swift package generate-documentation --target Hearth` (DocC catalogs in Sources/*/*.docc);
        // a command plugin only: nothing of it is linked into the products.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CZlib",
            path: "Sources/CZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(
            name: "CCRC32C",
            path: "Sources/CCRC32C"
        ),
        .target(
            name: "CFileSystemKind",
            path: "Sources/CFileSystemKind"
        ),
        .target(
            name: "HearthModel",
            swiftSettings: swiftSettings,
            // Numbers are rounded and ordered with libm's round/floor/sqrt. An optimized build
            // turns them into instructions; a debug one calls libm, which nothing else links into
            // an executable that takes HearthModel without Foundation (the rules fuzzer).
            linkerSettings: [.linkedLibrary("m", .when(platforms: [.linux]))]
        ),
        .target(
            name: "HearthLog",
            dependencies: ["CZlib", "CCRC32C", "CFileSystemKind"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Hearth",
            dependencies: ["HearthModel", "HearthLog"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HearthTesting",
            dependencies: ["HearthLog", "HearthModel"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HearthWire",
            dependencies: ["HearthModel"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HearthServer",
            dependencies: ["Hearth", "HearthLog", "HearthWire", "HearthRules", jwtKit] + nioWebSocket,
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HearthWireTesting",
            dependencies: ["HearthWire"] + nioWebSocket,
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HearthDatabase",
            dependencies: ["Hearth", "HearthLog", "HearthWire", .product(name: "Logging", package: "swift-log")]
                + clientNIO,
            swiftSettings: swiftSettings + [nioTransport]
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
                "HearthRules",
                "HearthServer",
                "HearthDatabase",
                jwtKit,
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HearthModelTests",
            dependencies: ["HearthModel", "HearthTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HearthTests",
            dependencies: ["Hearth", "HearthModel", "HearthLog", "HearthTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HearthToolTests",
            dependencies: ["Hearth", "HearthDatabase", "HearthLog", "HearthTesting", "HearthTool"],
            exclude: ["Python"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HearthServerTests",
            dependencies: [
                "HearthServer", "HearthWire", "HearthWireTesting", "HearthRules", "Hearth", "HearthTesting", jwtKit,
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ] + nioWebSocket,
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HearthDatabaseTests",
            dependencies: [
                "HearthDatabase", "HearthServer", "HearthWire", "Hearth", "HearthTesting", nioSSL, jwtKit,
                .product(name: "Logging", package: "swift-log"),
            ] + nioWebSocket,
            swiftSettings: swiftSettings + [nioTransport]
        ),
        .testTarget(
            name: "HearthRulesTests",
            dependencies: ["HearthRules", "HearthModel"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HearthLogTests",
            dependencies: ["HearthLog", "HearthModel", "HearthTesting"],
            swiftSettings: swiftSettings
        ),
    ]
)
