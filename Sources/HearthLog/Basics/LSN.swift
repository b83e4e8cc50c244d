// The log's record numbering, named by every layer of the log.

/// A log sequence number. Records are numbered 1, 2, 3, … without gaps; 0 means "none".
public typealias LSN = UInt64
