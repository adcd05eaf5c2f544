/// CloudKit's two databases of a container.
public enum DatabaseScope: String, Sendable, CaseIterable {
    case `public`
    case `private`
}

/// Development and production are kept apart.
public enum Environment: String, Sendable, CaseIterable {
    case development
    case production
}
