// The durable log layer. See FORMAT.md for the bytes on disk.
