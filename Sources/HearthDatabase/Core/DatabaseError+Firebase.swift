import Foundation

extension DatabaseError {
    /// A write dropped by ``Database/purgeOutstandingWrites()`` before the server answered it:
    /// Firebase's `write_canceled`, "Write cancelled by user".
    public static let writeCanceled = DatabaseError.serverError(
        status: "write_canceled", message: "Write cancelled by user")

    /// Firebase's error codes by server status (firebase-ios-sdk `FUtilities`); every other
    /// status is 9999 there.
    static let firebaseCodes: [String: Int] = ["permission_denied": 1, "unavailable": 2, "write_canceled": 3]

    /// Firebase's descriptions of the statuses that have one; the others read as the status.
    static let firebaseDescriptions: [String: String] = [
        "permission_denied": "Permission Denied", "unavailable": "Service is unavailable",
        "write_canceled": "Write cancelled by user",
    ]

    /// The server status the error stands for (`nil` for Hearth's own errors).
    var firebaseStatus: String? {
        switch self {
        case .permissionDenied: "permission_denied"
        case .serverError(let status, _): status
        default: nil
        }
    }
}

extension DatabaseError: CustomNSError {
    /// `com.firebase`, Firebase's domain, so that code comparing an `NSError`'s domain and code
    /// ports unchanged.
    public static var errorDomain: String { "com.firebase" }

    /// Firebase's code: 1 `permission_denied`, 2 `unavailable`, 3 `write_canceled`
    /// (``writeCanceled``); 9999 for any other status, a transaction's abort (`maxretry`,
    /// `disconnect`, `set`), and Hearth's own errors, for which Firebase has no code (it raises
    /// an exception for invalid input instead).
    public var errorCode: Int { firebaseStatus.flatMap { Self.firebaseCodes[$0] } ?? 9999 }

    /// The description under `NSLocalizedDescriptionKey`: ``errorDescription``.
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: firebaseDescription] }

    /// Firebase's text: the server's reason when it gave one, else Firebase's description of
    /// the status ("Permission Denied"), else the status itself (`maxretry`); Hearth's own
    /// errors read as ``description``.
    var firebaseDescription: String {
        switch self {
        case .permissionDenied(let message):
            return message.isEmpty || message == "permission_denied" ? "Permission Denied" : message
        case let .serverError(status, message):
            let said = message.isEmpty || message == status || message == "transaction aborted: \(status)"
            return said ? Self.firebaseDescriptions[status] ?? status : message
        default:
            return description
        }
    }
}

extension DatabaseError: LocalizedError {
    /// What `localizedDescription` shows: Firebase's text for the server's errors (see
    /// ``errorCode``), ``description`` for Hearth's own.
    public var errorDescription: String? { firebaseDescription }
}
