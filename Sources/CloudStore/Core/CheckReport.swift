/// What `ckfs fsck` found and did.
public struct CheckReport: Sendable {
    public var zones = 0
    public var records = 0
    /// Keys in every user's key-value store.
    public var keyValueKeys = 0
    /// Subscriptions of every database, and notifications kept for every user.
    public var subscriptions = 0
    public var notifications = 0
    /// Identities of every container.
    public var users = 0
    /// Problems found and fixed.
    public var repaired: [String] = []
    /// Problems that need a person: what and how to fix it.
    public var damage: [String] = []
    /// What is not damage but a person should know: files other OS users can read.
    public var warnings: [String] = []
    /// What could not be checked or finished because the disk holding the store is full.
    public var diskFull: [String] = []
    public var isClean: Bool { damage.isEmpty }
}

/// How far `ckfs fsck` has come, for a progress line.
public struct CheckProgress: Sendable {
    /// Zones checked so far, and the records in them.
    public var zones = 0
    public var records = 0
    /// The zone being checked (its folder), and how many of its record files are checked.
    public var zone = ""
    public var zoneFilesChecked = 0
    public var zoneFiles = 0
}
