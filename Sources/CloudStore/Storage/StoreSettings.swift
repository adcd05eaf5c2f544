/// `ckfs-store.json`: the store's format version, default container and limits.
public struct StoreSettings: Sendable, Equatable {
    public var defaultContainer = "iCloud.local.ckfs"
    /// Bytes of a record's fields, assets excluded.
    public var maxRecordBytes = 1_048_576
    /// Records saved plus IDs deleted in one operation.
    public var maxItemsPerOperation = 400
    /// Default quotas; `container.json` may set others.
    public var privateQuotaBytes: Int64 = 1 << 30
    public var publicQuotaBytes: Int64 = 10 << 30
    /// A zone's log is compacted past this size; change tokens older than what is kept expire.
    public var compactLogBytes: Int64 = ZoneTuning().compactLogBytes
    /// Record files are synced and a checkpoint noted after this many commits.
    public var checkpointEvery: Int64 = ZoneTuning().checkpointEvery
    /// Keys, values and the whole key-value store.
    public var keyValueLimits = KeyValueLimits()

    public init() {}

    /// The commit path's tuning these settings ask for.
    public var tuning: ZoneTuning {
        var t = ZoneTuning()
        t.compactLogBytes = compactLogBytes
        t.checkpointEvery = checkpointEvery
        return t
    }

    func json() -> JSONValue {
        .object([
            "format": .int(1),
            "defaultContainer": .string(defaultContainer),
            "limits": .object([
                "maxRecordBytes": .int(Int64(maxRecordBytes)),
                "maxItemsPerOperation": .int(Int64(maxItemsPerOperation)),
                "privateQuotaBytes": .int(privateQuotaBytes),
                "publicQuotaBytes": .int(publicQuotaBytes),
                "compactLogBytes": .int(compactLogBytes),
                "checkpointEvery": .int(checkpointEvery),
                "keyValueMaxKeyBytes": .int(Int64(keyValueLimits.maxKeyBytes)),
                "keyValueMaxKeys": .int(Int64(keyValueLimits.maxKeys)),
                "keyValueMaxValueBytes": .int(Int64(keyValueLimits.maxValueBytes)),
                "keyValueMaxTotalBytes": .int(Int64(keyValueLimits.maxTotalBytes)),
            ]),
        ])
    }

    init(json: JSONValue) {
        if let c = json["defaultContainer"]?.stringValue { defaultContainer = c }
        let l = json["limits"]
        if let v = l?["maxRecordBytes"]?.int64Value { maxRecordBytes = Int(v) }
        if let v = l?["maxItemsPerOperation"]?.int64Value { maxItemsPerOperation = Int(v) }
        if let v = l?["privateQuotaBytes"]?.int64Value { privateQuotaBytes = v }
        if let v = l?["publicQuotaBytes"]?.int64Value { publicQuotaBytes = v }
        if let v = l?["compactLogBytes"]?.int64Value, v > 0 { compactLogBytes = v }
        if let v = l?["checkpointEvery"]?.int64Value, v > 0 { checkpointEvery = v }
        if let v = l?["keyValueMaxKeyBytes"]?.int64Value, v > 0 { keyValueLimits.maxKeyBytes = Int(v) }
        if let v = l?["keyValueMaxKeys"]?.int64Value, v > 0 { keyValueLimits.maxKeys = Int(v) }
        if let v = l?["keyValueMaxValueBytes"]?.int64Value, v > 0 { keyValueLimits.maxValueBytes = Int(v) }
        if let v = l?["keyValueMaxTotalBytes"]?.int64Value, v > 0 { keyValueLimits.maxTotalBytes = Int(v) }
    }
}
