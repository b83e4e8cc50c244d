import Foundation
import HearthModel
import Testing

/// The cap is the option of whoever opens a store, and open runs maintenance: the commands that
/// only read a store (`get`, `state`, `stats` without `--cache-size`) must not prune what the
/// app's own cap kept.
@Suite struct ReadingCommandsPruneNothingTests {
    @Test func aStoreKeptUnderALargerCapLosesNothingToBeingRead() throws {
        guard Tool.binary != nil else { return }
        let store = TempStore()
        // Over the default 10 MiB cap once deflated (letters a deflater cannot shrink much),
        // within the 100 MiB the app ran with; and more inactive queries (after a restart every
        // query is inactive) than the default limit of 1,000.
        var lines: [String] = []
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        let alphabet = Array(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=-_.,:;!?()[]{}<>@#$%^&*~")
        for q in 0..<40 {
            var children: [String] = []
            for k in 0..<1000 {
                var text = ""
                for _ in 0..<340 {
                    seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    text.append(alphabet[Int(seed >> 33) % alphabet.count])
                }
                children.append(#""k\#(k)":"\#(text)""#)
            }
            lines.append(#"{"op":"trackQuery","path":"big/q\#(q)","complete":true}"#)
            lines.append(#"{"op":"serverSet","path":"big/q\#(q)","value":{\#(children.joined(separator: ","))}}"#)
        }
        for i in 0..<1010 {
            lines.append(#"{"op":"trackQuery","path":"small/q\#(i)","complete":true,"active":true}"#)
        }
        let fill = try Tool.apply(store.path, lines, ["--cache-size", "104857600", "--durability", "buffered"])
        #expect(fill.status == 0, "\(fill.stderr)")

        let before = try Tool.run(["stats", store.path, "--json", "--read-only"]).json()
        let footprint = before["footprintBytes"]?.doubleValue ?? 0
        #expect(footprint > Double(10 << 20), "the test needs a footprint over the default cap")
        #expect(before["trackedQueries"] == 1050)

        let got = try Tool.run(["get", store.path, "big/q0/k999"])
        #expect(got.status == 0 && got.stdout.count > 300, "\(got)")
        _ = try Tool.run(["state", store.path])
        let stats = try Tool.run(["stats", store.path, "--json"]).json()
        #expect(stats["trackedQueries"] == 1050)
        #expect(stats["cacheSizeBytes"] == 10_485_760)
        #expect((stats["serverCacheBytes"]?.doubleValue ?? 0) == before["serverCacheBytes"]?.doubleValue)

        // Given a cap, stats measures against it and prunes to it, as the app would at open.
        let capped = try Tool.run(["stats", store.path, "--json", "--cache-size", "10485760"]).json()
        #expect((capped["trackedQueries"]?.doubleValue ?? 1050) < 1050)
    }
}
