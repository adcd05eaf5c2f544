extension CommitWatch {
    /// Follows writes to the key-value store `storage` as `target`: in the file backend every
    /// write renames a new `keyvalue.plist` into its folder. False when it cannot be followed
    /// yet (the folder is made at the store's first write), so a later call tries again, and
    /// for a store of another backend, which this watch of folders cannot follow.
    @discardableResult
    package func follow(_ target: Target, keyValues storage: any KeyValueStorage) -> Bool {
        guard let file = storage as? KeyValueFile else { return false }
        return follow(target, folder: file.directory)
    }
}
