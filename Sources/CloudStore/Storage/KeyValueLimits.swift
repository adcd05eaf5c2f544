/// The key-value store's limits, Apple's by default and settable per store.
///
/// Sizes are measured on the compact XML property-list encoding: a value's size is the byte
/// count of its element with no whitespace between elements (`<string>hi</string>` is 19
/// bytes; data counts as its base64 text; see `PropertyListWriter.compactSize(_:)`), and
/// the store's size is the sum of its values' sizes. Keys count against their own limits.
/// As Apple says of its store: with a 1 MB value under one key, no other key fits.
public struct KeyValueLimits: Sendable, Equatable {
    /// Bytes of a key in UTF-8.
    public var maxKeyBytes = 64
    public var maxKeys = 1024
    /// Bytes of one value, measured as above.
    public var maxValueBytes = 1_048_576
    /// Bytes of all values together.
    public var maxTotalBytes = 1_048_576

    public init() {}

    /// Fails for an empty key, a key longer than ``maxKeyBytes``, or one XML cannot carry.
    public func checkKey(_ key: String) throws(CKError) {
        if key.isEmpty { throw CKError(.invalidArguments, "a key-value key cannot be empty") }
        let n = key.utf8.count
        if n > maxKeyBytes {
            throw CKError(.limitExceeded, "the key \"\(key.prefix(80))\" is \(n) bytes of UTF-8; keys have at most \(maxKeyBytes); use a shorter key")
        }
        try PropertyListValue.checkText(key, what: "the key \"\(key.prefix(80))\"")
    }

    /// Fails for a value a property list cannot hold or one over ``maxValueBytes``; returns its size.
    @discardableResult
    public func checkValue(_ value: PropertyListValue, forKey key: String) throws(CKError) -> Int {
        try value.checkRepresentable(path: "the value of \"\(key.prefix(80))\"")
        let size = PropertyListWriter.compactSize(value)
        if size > maxValueBytes {
            throw CKError(.limitExceeded, "the value of \"\(key.prefix(80))\" is \(size) bytes as a property list; a value may have at most \(maxValueBytes)")
        }
        return size
    }

    /// Fails when `count` keys holding `total` bytes break the store's limits; `key` is the one being set.
    public func checkStore(count: Int, total: Int, settingKey key: String) throws(CKError) {
        if count > maxKeys {
            throw CKError(.quotaExceeded, "setting \"\(key.prefix(80))\" would make \(count) keys; the key-value store holds at most \(maxKeys); remove keys first")
        }
        if total > maxTotalBytes {
            throw CKError(.quotaExceeded, "setting \"\(key.prefix(80))\" would make the store's values \(total) bytes; the key-value store holds at most \(maxTotalBytes); remove or shrink values first")
        }
    }
}
