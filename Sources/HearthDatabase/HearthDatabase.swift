// HearthDatabase — Firebase's Realtime Database client API, offline-first on a Hearth store.
//
// Layers inside this module (data flows one way):
//   Values/     what apps read and write: DataSnapshot, DatabaseValue, ServerValue, Codable
//   Transport/  the WebSocket connection to a server: whole messages in and out, nothing else.
//               URLSessionWebSocketTask on Apple platforms, SwiftNIO with NIOSSL on Linux;
//               what they share (URL, framing, phases, close reasons) is platform-neutral
//   Core/       ClientCore, the protocol as a sans-I/O state machine (Firebase's
//               PersistentConnection): fed user intents, decoded messages, connection events and
//               clock ticks; returns messages to send, store commits and events to deliver
//   API/        Database, DatabaseReference, DatabaseQuery, observers: the runtime that owns the
//               store, the core, the transport and the timers, and applies what the core returns
