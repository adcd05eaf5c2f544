/// Where a store keeps its state: the seam between the engine and a backend. The engine asks
/// it for what it needs, named for what it does (read this user's key-value store, change it
/// atomically), never for files; each operation is one round trip's work for a database
/// server. Files on one machine (``FileStoreBackend``) are the backend today; only where the
/// store is opened names it (docs/Architecture.md, "The storage seam").
package protocol StoreBackend: Sendable {
    /// The zones of a database: the public database (owner `_defaultOwner`) or one user's
    /// private database, in one environment of a container.
    func databaseStorage(container: String, environment: Environment, scope: DatabaseScope, owner: String) -> any DatabaseStorage

    /// Returns once everything the backend writes after a commit is acknowledged is written
    /// (the file backend's record files; a commit is durable before that).
    func waitForWritesBehind()

    /// Gives up the room a backend keeps for deletes on a full disk; true when there was some
    /// to give (a delete that failed for want of room is then tried again).
    func releaseSpaceReserve() -> Bool

    /// The key-value store of the user with this user record name, in one environment of a
    /// container; it may not exist yet (``KeyValueStorage/version()`` is nil then).
    func keyValueStorage(container: String, environment: Environment, userRecordName: String) -> any KeyValueStorage

    /// The subscriptions of a database, or of one user's shared database.
    func subscriptionStorage(_ owner: SubscriptionOwner) -> any SubscriptionStorage

    /// The users (by user record name) who keep subscriptions of their shared database in a
    /// container's environment, for the commits of shared zones to notify.
    func sharedDatabaseSubscribers(container: String, environment: Environment) -> [String]

    /// The notifications of the user with this user record name, in one environment of a
    /// container.
    func notificationStorage(container: String, environment: Environment, userRecordName: String) -> any NotificationStorage

    /// The schema of a container, every environment's.
    func schemaStorage(container: String) -> any SchemaStorage

    /// What a container keeps: its settings, quotas, identities and web credentials.
    func containerStorage(container: String) -> any ContainerStorage

    /// The zones of a container's private databases that may hold shares, in one environment.
    func sharedZoneStorage(container: String, environment: Environment) -> any SharedZoneStorage

    /// A feed of commits to the zones and key-value stores a process follows.
    func commitFeed<Target: Hashable & Sendable>(of target: Target.Type) -> any CommitFeed<Target>

    /// Checks and repairs what the backend keeps (`ckfs fsck`), reporting what it found and
    /// mended; returns the containers whose description reads, whose share registries the
    /// engine then checks. `progress` is called before each zone and now and then within one.
    func check(progress: ((CheckProgress) -> Void)?) -> (CheckReport, containers: [String])

    /// Marks a container as being made by a copy, before anything of it is kept: until
    /// ``finishCopy(container:)`` it is refused when opened, so one a copy did not finish
    /// never looks whole.
    func beginCopy(container: String) throws(CKError)

    /// Marks the container a copy made whole.
    func finishCopy(container: String) throws(CKError)

    /// Lets go of a container a copy stopped making (it failed): its mark stays, so it is
    /// refused when opened until a rerun makes it anew, and a rerun may.
    func abandonCopy(container: String)

    /// Whether a copy marked the container and did not finish it (or is at work on it).
    func isUnfinishedCopy(container: String) -> Bool

    /// Removes what a copy that stopped part way made of a container
    /// (``isUnfinishedCopy(container:)``), so that a rerun makes it again; nothing for a
    /// container not so marked. Refused (`serviceUnavailable`) while another copy is at work
    /// on it.
    func discardUnfinishedCopy(container: String) throws(CKError)

    /// Marks a store that a copy made (``StoreCopy``) whole: until then it is refused when
    /// opened, so a copy stopped part way never looks whole. Nothing to do for a store that
    /// was not made by a copy.
    func finishCopy() throws(CKError)

    /// The identifiers of the containers the store holds, sorted.
    func containerIdentifiers() throws(CKError) -> [String]
}
