// libFuzzer entry point; the check itself is FuzzServerChecks.run(target:_:) (Fuzz/README.md).
import FuzzServerChecks

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzREST(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzServerChecks.run(target: "FuzzREST", Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// With HEARTH_FUZZ_WRITE_SEEDS=dir: writes the seed corpus into dir and exits.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzRESTInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    FuzzServerChecks.initialize(target: "FuzzREST")
    return 0
}
