extension Store {
    /// Writes the store (or the containers named) as a new store at `path`, in the plain file
    /// layout, readable with `ls`, `cat`, `tar` and any JSON reader: `ckfs export`. `path`
    /// must not exist or be empty. Each zone is copied whole as of one commit, its history
    /// with it, so change tokens and change tags given before the copy stay good after it.
    ///
    /// `containers`, `users` and `zones` narrow it: only those containers; only those users'
    /// private databases, key-value stores and notifications, without the public database;
    /// only zones of those names, with the subscriptions of those zones and nothing else of a
    /// user's.
    @discardableResult
    public func export(to path: String, containers: [String]? = nil, users: [String]? = nil, zones: [String]? = nil,
                       progress: ((StoreCopyProgress) -> Void)? = nil) throws(CKError) -> StoreCopyProgress {
        let target = try Store.fileBackendToCopy(into: path, settings: settings)
        return try StoreCopy(source: backend, target: target, containers: containers, users: users, zones: zones, progress: progress).run()
    }

    /// Copies what the store at `path` holds (an export, or any store; all of it, or the
    /// containers named) into this store: `ckfs import`. A container this store holds
    /// already is refused, and nothing is copied; with `skippingHeld` it is left as it is
    /// and the others are copied (``StoreCopyProgress/skipped`` names those left). There is
    /// no merge within a container: the store's history and the copy's would interleave, and
    /// a change tag or token of one would name another version in the other.
    /// `containers`, `users` and `zones` narrow it as they do
    /// ``export(to:containers:users:zones:progress:)``.
    @discardableResult
    public func importContents(from path: String, containers: [String]? = nil, users: [String]? = nil, zones: [String]? = nil,
                               skippingHeld: Bool = false, progress: ((StoreCopyProgress) -> Void)? = nil) throws(CKError) -> StoreCopyProgress {
        let (source, _) = try Store.fileBackendToCopy(from: path)
        var copy = StoreCopy(source: source, target: backend, containers: containers, users: users, zones: zones, progress: progress)
        copy.skippingHeld = skippingHeld
        return try copy.run()
    }

    /// Makes a new store at `path` holding what the store at `source` holds (an export): the
    /// export's settings, and no container but its. `path` must not exist or be empty.
    @discardableResult
    public static func create(at path: String, importing source: String, containers: [String]? = nil, users: [String]? = nil,
                              zones: [String]? = nil, progress: ((StoreCopyProgress) -> Void)? = nil) throws(CKError) -> StoreCopyProgress {
        let (from, settings) = try Store.fileBackendToCopy(from: source)
        let target = try Store.fileBackendToCopy(into: path, settings: settings)
        return try StoreCopy(source: from, target: target, containers: containers, users: users, zones: zones, progress: progress).run()
    }
}
