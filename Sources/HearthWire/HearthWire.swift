// HearthWire — Firebase Realtime Database wire protocol v5, as values.
//
// Shared by the server (`HearthServer`) and, later, the sync client. No I/O here: this module
// turns WebSocket text frames into messages and messages into frames.
//
//   Framing/   the 16,384-character frame limit: splitting outgoing messages, reassembling
//              incoming ones (FrameSplitter, FrameAssembler)
//   Messages/  the envelope and every request, response and push as Swift types, with their
//              JSON codecs (ClientMessage, ServerMessage, WireQuery)
//   Keys/      Firebase push ids (PushID)
//   Connection/ the id each end gives a connection it holds (ConnectionID)
//
// Facts come from the SDKs: firebase-js-sdk packages/database/src/realtime/Connection.ts,
// WebSocketConnection.ts, core/PersistentConnection.ts, core/view/QueryParams.ts.
@_exported import HearthModel
