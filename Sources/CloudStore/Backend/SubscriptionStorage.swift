/// The subscriptions of one database, or of one user's shared database, as a backend keeps
/// them. Every commit asks for the subscriptions of its database, so reading them unchanged
/// is cheap; changes are atomic against what is kept now.
package protocol SubscriptionStorage: Sendable {
    /// Every subscription kept.
    func all() throws(CKError) -> [Subscription]

    /// Runs `body` on the subscriptions kept now and keeps them durably when it changed them.
    func update<T>(_ body: (inout [Subscription]) throws(CKError) -> T) throws(CKError) -> T
}

/// Whose subscriptions: a database's (the owner's private one, or the public one), which its
/// commits fire, or one user's subscriptions of their shared database (the zones others share
/// with them).
package enum SubscriptionOwner: Hashable, Sendable {
    case database(container: String, environment: Environment, scope: DatabaseScope, owner: String)
    case sharedDatabase(container: String, environment: Environment, user: String)
}
