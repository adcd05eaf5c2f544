/// A container's settings, quotas, identities and web credentials (``ContainerInfo``) as a
/// backend keeps them: read whole when their version changed, changed atomically against what
/// is kept now. ``Container`` keeps them in memory.
package protocol ContainerStorage: Sendable {
    /// The version kept now, cheaply; nil when nothing is kept yet.
    func version() -> ContainerVersion?

    /// What is kept now, under the container's own identifier whatever the kept form says;
    /// nil when nothing is kept yet.
    func read() throws(CKError) -> ContainerInfo?

    /// Keeps `initial` unless something is kept already: the container's first use, by any
    /// process.
    func create(_ initial: ContainerInfo) throws(CKError)

    /// Runs `body` on what is kept now (`fallback` when nothing is) and keeps the result
    /// durably when `body` changed it; returns `body`'s result and what is kept now.
    func update<T>(fallback: ContainerInfo, _ body: (inout ContainerInfo) throws(CKError) -> T) throws(CKError)
        -> (result: T, info: ContainerInfo)
}

/// One version of what a container keeps: equal versions hold equal infos.
package struct ContainerVersion: Sendable, Equatable {
    /// What the backend tells versions apart by (the file's inode and change time: every
    /// write replaces the file).
    package var stamp: [Int64]

    package init(stamp: [Int64]) { self.stamp = stamp }
}
