/// A key-value store's entries with the size of each value, kept within the limits on
/// every change: the one place that counts keys and bytes, for the client's memory, the
/// merge at sync, the mount's saves and `fsck`.
package struct KeyValueEntries: Sendable {
    public private(set) var values: [String: PropertyListValue]
    private var sizes: [String: Int]
    /// Bytes of all values, measured as ``KeyValueLimits`` says.
    public private(set) var totalSize: Int
    public let limits: KeyValueLimits

    /// Entries as read; `reusing` lends the sizes of values it holds unchanged.
    public init(_ values: [String: PropertyListValue], limits: KeyValueLimits, reusing known: KeyValueEntries? = nil) {
        self.values = values
        self.limits = limits
        var sizes: [String: Int] = [:]
        for (key, value) in values {
            if let known, let size = known.sizes[key], known.values[key] == value { sizes[key] = size } else {
                sizes[key] = PropertyListWriter.compactSize(value)
            }
        }
        self.sizes = sizes
        self.totalSize = sizes.values.reduce(0, +)
    }

    public subscript(key: String) -> PropertyListValue? { values[key] }
    public var count: Int { values.count }

    /// Sets `key`, or fails changing nothing: a bad key or value (`invalidArguments`), a key
    /// or value over its limit (`limitExceeded`), a store over its limits (`quotaExceeded`).
    public mutating func set(_ value: PropertyListValue, forKey key: String) throws(CKError) {
        try limits.checkKey(key)
        let size = try limits.checkValue(value, forKey: key)
        let old = sizes[key]
        try limits.checkStore(count: count + (old == nil ? 1 : 0), total: totalSize - (old ?? 0) + size, settingKey: key)
        values[key] = value
        sizes[key] = size
        totalSize += size - (old ?? 0)
    }

    /// Removes `key`; false when it was not there.
    @discardableResult
    public mutating func remove(_ key: String) -> Bool {
        guard values.removeValue(forKey: key) != nil else { return false }
        totalSize -= sizes.removeValue(forKey: key) ?? 0
        return true
    }

    /// Fails when entries read from a file break a limit or hold what a property list cannot.
    func check() throws(CKError) {
        for (key, value) in values {
            try limits.checkKey(key)
            try limits.checkValue(value, forKey: key)
        }
        if count > limits.maxKeys { throw CKError(.quotaExceeded, "the store holds \(count) keys; at most \(limits.maxKeys) are allowed") }
        if totalSize > limits.maxTotalBytes { throw CKError(.quotaExceeded, "the store's values are \(totalSize) bytes; at most \(limits.maxTotalBytes) are allowed") }
    }
}
