// libFuzzer entry point; the check itself is FuzzRulesChecks.run(_:) (Fuzz/README.md).
import FuzzRulesChecks

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRules(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzRulesChecks.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
