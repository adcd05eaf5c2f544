/// A local identity: a user of a container on this machine.
///
/// Kept in `container.json`; an OS user is matched by `uid`, a `--user NAME` by name.
public struct Identity: Sendable, Equatable {
    /// The identity's name: an OS user name, or one given with `ckfs user add`.
    public var name: String
    /// `_` + an opaque id, stable for this container.
    public var userRecordName: String
    /// The OS user this identity belongs to, when it is one.
    public var uid: UInt32?
    /// The identity's own email addresses: how others find it.
    public var emails: [String] = []
    /// The email addresses of the people this identity knows: whom it may discover.
    public var contacts: [String] = []
    /// The answer to the discoverability request.
    public var discoverability: PermissionStatus = .initialState
    /// Milliseconds since 1970 when the identity was enrolled.
    public var created: Int64

    public init(name: String, userRecordName: String, uid: UInt32? = nil, emails: [String] = [], contacts: [String] = [],
                discoverability: PermissionStatus = .initialState, created: Int64) {
        self.name = name
        self.userRecordName = userRecordName
        self.uid = uid
        self.emails = emails
        self.contacts = contacts
        self.discoverability = discoverability
        self.created = created
    }

    /// A new user record name: `_` and 32 hex digits.
    static func newUserRecordName() -> String {
        "_" + (0..<16).map { _ in
            let b = UInt8.random(in: 0...255)
            return (b < 16 ? "0" : "") + String(b, radix: 16)
        }.joined()
    }
}

/// The account state of a caller in a container.
public enum AccountStatus: String, Sendable, CaseIterable {
    /// The store could not be read to decide.
    case couldNotDetermine
    /// The caller has an identity in the container.
    case available
    /// The container's settings deny this identity.
    case restricted
    /// The caller has no identity (for example `--no-account`, or a uid the container does not know).
    case noAccount
}

/// A permission the application asks the user for.
public enum ApplicationPermission: String, Sendable, CaseIterable {
    /// Others who know the user's email address may find the user.
    case userDiscoverability
}

/// The state of an application permission.
public enum PermissionStatus: String, Sendable, CaseIterable {
    /// Not asked yet.
    case initialState
    /// Asked, but no answer could be had (no terminal and no `--grant`/`--deny`).
    case couldNotComplete
    case denied
    case granted

    /// Granted and denied are final: a request does not ask again.
    public var isDecided: Bool { self == .granted || self == .denied }
}

/// What discovery reveals about another user: nothing but these.
public struct DiscoveredIdentity: Sendable, Equatable {
    public var userRecordName: String
    public var name: String
    public var emails: [String]
}
