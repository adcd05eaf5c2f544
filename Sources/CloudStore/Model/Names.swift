/// The naming rules of containers, zones, record types, record names and field names, each returning a message that says how to fix the name.
public enum Names {
    /// Field names that belong to the system.
    public static let systemFieldNames: Set<String> = [
        "recordID", "recordName", "recordType", "creationDate", "creatorUserRecordID",
        "modificationDate", "lastModifiedUserRecordID", "recordChangeTag", "parent", "share",
        "allTokens",
    ]

    public static let maxNameLength = 255
    static func isIdentifier(_ s: String) -> Bool {
        guard let first = s.utf8.first, isLetter(first) else { return false }
        return s.utf8.allSatisfy { isLetter($0) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "_") }
    }

    private static func isLetter(_ b: UInt8) -> Bool { (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) }

    /// A new epoch for a history that may start again (a zone, a notification log): tokens of
    /// another epoch are `changeTokenExpired`.
    static func randomEpoch() -> String {
        String((0..<12).map { _ in "0123456789abcdefghijklmnopqrstuvwxyz".randomElement()! })
    }

    public static func checkRecordType(_ name: String) throws(CKError) {
        guard isIdentifier(name), name.utf8.count <= maxNameLength else {
            throw .invalid("record type \"\(name)\" is not a valid name: use ASCII letters, digits and '_', starting with a letter, at most \(maxNameLength) characters")
        }
    }

    public static func checkFieldKey(_ key: String, recordType: String) throws(CKError) {
        guard isIdentifier(key), key.utf8.count <= maxNameLength else {
            throw .invalid("field \"\(key)\" of record type \(recordType) is not a valid name: use ASCII letters, digits and '_', starting with a letter, at most \(maxNameLength) characters")
        }
        guard !systemFieldNames.contains(key) else {
            throw .invalid("field \"\(key)\" of record type \(recordType) is a system field name; the store sets system fields itself, so choose another key")
        }
    }

    /// Record names: 1–255 printable ASCII characters, not starting with `_`.
    public static func checkRecordName(_ name: String, allowSystem: Bool = false) throws(CKError) {
        guard !name.isEmpty else { throw .invalid("a record name must not be empty") }
        guard name.utf8.count <= maxNameLength else {
            throw .invalid("record name \"\(name.prefix(40))…\" is \(name.utf8.count) characters long; the limit is \(maxNameLength)")
        }
        guard name.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw .invalid("record name \"\(name)\" must be printable ASCII")
        }
        guard allowSystem || !name.hasPrefix("_") else {
            throw .invalid("record name \"\(name)\" starts with '_', which is kept for system records such as user records; choose a name that does not")
        }
    }

    /// Zone names: like record names; `_defaultZone` is the only one starting with `_`.
    public static func checkZoneName(_ name: String) throws(CKError) {
        if name == ZoneID.defaultZoneName { return }
        guard !name.isEmpty, name.utf8.count <= maxNameLength,
              name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), !name.hasPrefix("_") else {
            throw .invalid("zone name \"\(name)\" is not valid: use 1–\(maxNameLength) printable ASCII characters without spaces, not starting with '_'")
        }
    }

    /// Container identifiers look like `iCloud.com.example.notes`.
    public static func checkContainerIdentifier(_ id: String) throws(CKError) {
        let parts = id.split(separator: ".", omittingEmptySubsequences: false)
        let ok = id.hasPrefix("iCloud.") && parts.count >= 3 && id.utf8.count <= maxNameLength
            && parts.allSatisfy { p in !p.isEmpty && p.utf8.allSatisfy { isLetter($0) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") } }
        guard ok else {
            throw CKError(.badContainer, "container identifier \"\(id)\" is not valid: it looks like iCloud.com.example.app (\"iCloud.\" and a reverse-DNS name of letters, digits, '-' and '_')")
        }
    }
}
