extension CommitWatch {
    /// Follows writes to the key-value store `file` as `target`: every write renames a new
    /// `keyvalue.plist` into its folder. False when it cannot be followed yet (the folder is
    /// made at the store's first write), so a later call tries again.
    @discardableResult
    public func follow(_ target: Target, keyValues file: KeyValueFile) -> Bool {
        follow(target, folder: file.directory)
    }
}
