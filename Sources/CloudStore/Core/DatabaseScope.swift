/// CloudKit's databases of a container: the public one, each user's private one, and each
/// user's shared one (the zones and records other users share with them).
public enum DatabaseScope: String, Sendable, CaseIterable {
    case `public`
    case `private`
    case shared
}

/// Development and production are kept apart.
public enum Environment: String, Sendable, CaseIterable {
    case development
    case production
}
