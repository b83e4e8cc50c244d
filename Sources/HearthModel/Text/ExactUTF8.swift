// Exact string equality, the one Firebase's keys and values have: the same UTF-8 bytes.

extension String {
    /// Whether the two strings hold the same UTF-8 bytes (equivalently the same code points, or
    /// the same UTF-16 code units). Not `==`, which also equates canonically equivalent strings
    /// ("é" precomposed and decomposed), where Firebase's keys and values differ.
    ///
    /// Native strings compare their contiguous bytes, eight at a time, and two references to
    /// one buffer compare without reading it: the generic `elementsEqual` over two UTF-8 views
    /// costs about 450 instructions a call, and keys and values are compared in every dictionary
    /// lookup, tree walk and checkpoint's reuse of an encoded write.
    @inlinable
    package func hasSameUTF8(as other: String) -> Bool {
        let a = utf8
        let b = other.utf8
        let fast = a.withContiguousStorageIfAvailable { pa in
            b.withContiguousStorageIfAvailable { pb in String.sameBytes(pa, pb) }
        }
        if let fast, let equal = fast { return equal }
        return a.elementsEqual(b)
    }

    /// Whether two byte buffers hold the same bytes.
    @inlinable
    package static func sameBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = a.count
        guard n == b.count else { return false }
        guard n > 0, let pa = a.baseAddress, let pb = b.baseAddress else { return true }
        if pa == pb { return true }
        let ra = UnsafeRawPointer(pa)
        let rb = UnsafeRawPointer(pb)
        var i = 0
        while i + 8 <= n {
            if ra.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                != rb.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            {
                return false
            }
            i += 8
        }
        while i < n {
            if pa[i] != pb[i] { return false }
            i += 1
        }
        return true
    }
}
