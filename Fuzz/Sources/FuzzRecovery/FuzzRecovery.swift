// libFuzzer entry point; the check itself is FuzzChecks.run(target:_:) (Fuzz/README.md).
import FuzzChecks

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecovery(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzChecks.run(target: "FuzzRecovery", Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// With HEARTH_FUZZ_WRITE_SEEDS=dir: writes the seed corpus into dir and exits.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzRecoveryInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    FuzzChecks.initialize(target: "FuzzRecovery")
    return 0
}
