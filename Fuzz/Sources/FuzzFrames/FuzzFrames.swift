// libFuzzer entry point; the check itself is FuzzServerChecks.run(target:_:) (Fuzz/README.md).
import FuzzServerChecks

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzServerChecks.run(target: "FuzzFrames", Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// With HEARTH_FUZZ_WRITE_SEEDS=dir: writes the seed corpus into dir and exits.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzFramesInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    FuzzServerChecks.initialize(target: "FuzzFrames")
    return 0
}
