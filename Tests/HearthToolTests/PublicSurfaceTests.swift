// What `import Hearth` gives an app, checked on the built modules' symbol graphs
// (swift-symbolgraph-extract, from the toolchain): the store API and the data model, every public
// symbol documented, and none of the internals (checksums, compression, codecs, the sync tree, the
// test aids). This target imports Hearth without `@testable`, as an app does.
import Foundation
import Hearth
import Testing

@Suite struct PublicSurfaceTests {
    /// Internals that must not be public in the modules `import Hearth` brings (Hearth and the
    /// re-exported HearthModel): they are `package`, `@_spi(HearthInternals)`, or in HearthTesting.
    static let forbidden: Set<String> = [
        "SHA1", "SHA1Hasher", "Base64", "CRC32C", "RawDeflate", "EventCodec", "SyncTree",
        "SimulatedFileSystem", "Log", "LogReader", "Checkpoint", "CheckpointWriter",
        "Manifest", "Recovery", "Scanner", "WriteTree", "PathTrie", "IndexOrderedChildren", "ViewOperation",
        "ByteWriter", "PersistedCacheReader",
    ]

    /// The HearthLog declarations `Hearth.swift` re-exports: exactly those the store's API names.
    static let reexported: Set<String> = [
        "enum HearthLog.Durability", "typealias HearthLog.LSN", "enum HearthLog.LogError",
        "struct HearthLog.RecoveryReport", "struct HearthLog.Damage", "protocol HearthLog.FileSystem",
        "protocol HearthLog.StoreFile", "protocol HearthLog.StoreLock", "struct HearthLog.POSIXFileSystem",
        "struct HearthLog.FileSystemError", "enum HearthLog.FileOperation",
    ]

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func hearthReexportsTheModelAndOnlyTheLogTypesItsAPINames() throws {
        let source = try String(
            contentsOf: Self.root.appendingPathComponent("Sources/Hearth/Hearth.swift"), encoding: .utf8)
        var modules: [String] = [], scoped: Set<String> = []
        for line in source.split(separator: "\n") where line.hasPrefix("@_exported import ") {
            let rest = line.dropFirst("@_exported import ".count)
            if rest.contains(" ") { scoped.insert(String(rest)) } else { modules.append(String(rest)) }
        }
        #expect(modules == ["HearthModel"], "whole modules re-exported: \(modules)")
        #expect(scoped == Self.reexported)
    }

    /// The wire protocol's codec is machinery the client and server share: nothing of it is
    /// public outside the `HearthInternals` SPI (which the fuzzers and benchmarks import).
    @Test func theWireCodecHasNoPublicFace() throws {
        guard let graph = try SymbolGraph.extract("HearthWire") else { return }
        let names = graph.symbols.map { $0.path.joined(separator: ".") }
        #expect(names.isEmpty, "public in HearthWire: \(names.sorted())")
    }

    @Test(arguments: ["Hearth", "HearthModel", "HearthServer", "HearthDatabase"])
    func noInternalsAndEveryPublicSymbolDocumented(module: String) throws {
        guard let graph = try SymbolGraph.extract(module) else { return }
        #expect(graph.symbols.count > 30, "the symbol graph of \(module) looks empty")
        let topLevel = Set(graph.symbols.compactMap { $0.path.count == 1 ? $0.path[0] : nil })
        #expect(
            topLevel.isDisjoint(with: Self.forbidden),
            "internals public in \(module): \(topLevel.intersection(Self.forbidden).sorted())")
        let undocumented = graph.symbols.filter { $0.hasSourceLocation && !$0.documented }.map {
            $0.path.joined(separator: ".")
        }
        #expect(undocumented.isEmpty, "public symbols without a doc comment in \(module): \(undocumented.sorted())")
    }

    /// The engine's machinery, which an embedder of a `Store` never names: the event log's
    /// vocabulary and its reducer, the server's store, the writer tables of exactly-once
    /// delivery. `package`, or `@_spi(HearthInternals)` where the fuzzers and benchmarks (other
    /// packages) or the `hearth` tool need them.
    static let engineMachinery: Set<String> = [
        "StoreState", "StoreEvent", "PruneResult", "DecodeError", "AuthoritativeStore", "AuthoritativeBatch",
        "WriterWatermark", "WriterIdentities", "Store.state()", "Store.CommitResult.events", "StoreBatch.events",
        "StoreBatch.recordWriterWatermark(_:id:)", "StoreBatch.removeWriterWatermarks(_:)",
        "StoreBatch.saveWrite(_:at:writer:)", "Store.verifyCheckpoint(_:)", "Store.writerWatermarks()",
        "Store.writerID()", "Store.writerIdentities()", "Store.Options.sizeCheckIntervalBytes",
        "ViewEvent.init(kind:path:query:registration:childKey:previousChildKey:node:)", "RegistrationID.init(_:)",
        "PendingWrite.touchedPaths",
    ]

    /// What an embedder of the engine calls, which must stay public.
    static let embedderAPI: Set<String> = [
        "Store", "Store.open(directory:options:)", "Store.commit(durability:_:)", "Store.stats()",
        "Store.pendingWrites()", "Store.addListener(at:query:kinds:_:)", "StoreBatch.applyAckedWrite(_:)",
        "StoreBatch.saveWrite(_:at:)", "StoreError", "ViewEvent", "ChildUpdate", "PendingWrite", "TrackedQuery",
    ]

    @Test func theEngineExposesItsStoreAndNotItsMachinery() throws {
        guard let graph = try SymbolGraph.extract("Hearth") else { return }
        let names = Set(graph.symbols.map { $0.path.joined(separator: ".") })
        // A listed type hides its members too: none of them may be public either.
        let exposed = names.filter { name in Self.engineMachinery.contains { name == $0 || name.hasPrefix($0 + ".") } }
        #expect(exposed.isEmpty, "engine machinery public in Hearth: \(exposed.sorted())")
        let missing = Self.embedderAPI.subtracting(names)
        #expect(missing.isEmpty, "not public in Hearth: \(missing.sorted())")
    }

    /// With the server's store behind `@_spi`, an embedder still makes a runtime — from a
    /// directory — to hand to `Databases` and `NetworkServer`, which are public.
    @Test func anEmbedderCanMakeAServerRuntime() throws {
        guard let graph = try SymbolGraph.extract("HearthServer") else { return }
        let inits = graph.symbols.map { $0.path.joined(separator: ".") }.filter { $0.hasPrefix("ServerRuntime.init(") }
        #expect(inits.contains { $0.hasPrefix("ServerRuntime.init(directory:") }, "public initializers: \(inits)")
        #expect(!inits.contains { $0.hasPrefix("ServerRuntime.init(store:") }, "the store-taking one is SPI")
    }

    @Test func testAidsLiveInHearthTesting() throws {
        guard let graph = try SymbolGraph.extract("HearthTesting") else { return }
        let topLevel = Set(graph.symbols.compactMap { $0.path.count == 1 ? $0.path[0] : nil })
        #expect(topLevel.contains("SimulatedFileSystem"))
        #expect(!topLevel.contains("SeededRandom"), "one seeded generator, HearthModel's, which the shipped cores use")
    }

    /// The shipped `hearth` tool links no test aids: what it needs at runtime (the seeded
    /// generator of its demo) lives in the modules it ships.
    @Test func theToolLinksNoTestAids() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let start = try #require(manifest.range(of: "name: \"HearthTool\""))
        let end = try #require(manifest.range(of: ".testTarget(", range: start.upperBound..<manifest.endIndex))
        let target = manifest[start.lowerBound..<end.lowerBound]
        #expect(!target.contains("\"HearthTesting\""), "HearthTool's dependencies: \(target)")
        #expect(!target.contains("\"HearthWireTesting\""), "HearthTool's dependencies: \(target)")
    }
}

/// The public symbols of one built module, read from its symbol graph.
struct SymbolGraph {
    struct Symbol {
        let path: [String]
        let documented: Bool
        let hasSourceLocation: Bool
    }

    let symbols: [Symbol]

    /// Runs swift-symbolgraph-extract on `module` from the build directory of this test run.
    /// Returns nil (after recording why the test is skipped) when the tool or the modules are
    /// not where a `swift test` run puts them.
    static func extract(_ module: String) throws -> SymbolGraph? {
        guard let tool = toolchainBinary("swift-symbolgraph-extract") else {
            print("skipped: swift-symbolgraph-extract is not next to `swift` on PATH")
            return nil
        }
        guard let modules = Tool.binary?.deletingLastPathComponent().appendingPathComponent("Modules"),
            FileManager.default.fileExists(atPath: modules.appendingPathComponent("\(module).swiftmodule").path)
        else {
            print("skipped: no built \(module).swiftmodule next to the hearth binary")
            return nil
        }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-sg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: out) }
        let p = Process()
        p.executableURL = tool
        #if arch(x86_64)
        let arch = "x86_64"
        #else
        let arch = "aarch64"
        #endif
        #if os(Linux)
        let target = "\(arch)-unknown-linux-gnu"
        #else
        let target = "\(arch == "aarch64" ? "arm64" : arch)-apple-macosx15.0"
        #endif
        let zlibMap = PublicSurfaceTests.root.appendingPathComponent("Sources/CZlib/module.modulemap").path
        // The C modules of dependencies (SwiftNIO's, swift-crypto's) have their module maps in
        // their build folders.
        var cModules: [String] = []
        let buildDir = modules.deletingLastPathComponent()
        let checkouts = buildDir.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
            "checkouts")
        for dir in [buildDir, checkouts] {
            guard let walk = FileManager.default.enumerator(atPath: dir.path) else { continue }
            while let entry = walk.nextObject() as? String {
                let parts = entry.split(separator: "/")
                let generatedForC = dir == buildDir && parts.count == 2 && parts[0].hasSuffix(".build")
                let shipped =
                    dir == checkouts && parts.count >= 4 && parts[parts.count - 2] == "include"
                    && parts.contains("Sources")
                if entry.hasSuffix("module.modulemap"), generatedForC || shipped {
                    cModules += ["-Xcc", "-fmodule-map-file=\(dir.appendingPathComponent(entry).path)"]
                }
            }
        }
        p.arguments =
            ["-module-name", module, "-I", modules.path, "-Xcc", "-fmodule-map-file=\(zlibMap)"] + cModules
            + ["-target", target, "-minimum-access-level", "public", "-output-dir", out.path]
        try p.run()
        p.waitUntilExit()
        try #require(p.terminationStatus == 0, "swift-symbolgraph-extract failed for \(module)")
        let data = try Data(contentsOf: out.appendingPathComponent("\(module).symbols.json"))
        guard let top = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let list = top["symbols"] as? [[String: Any]]
        else {
            Issue.record("unexpected symbol graph shape")
            return nil
        }
        var symbols: [Symbol] = []
        for s in list {
            guard let access = s["accessLevel"] as? String, access == "public" || access == "open",
                let path = s["pathComponents"] as? [String]
            else { continue }
            symbols.append(
                Symbol(path: path, documented: s["docComment"] != nil, hasSourceLocation: s["location"] != nil))
        }
        return SymbolGraph(symbols: symbols)
    }

    private static func toolchainBinary(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for dir in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(dir)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }
}
