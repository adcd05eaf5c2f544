import Foundation

/// The account status of the caller.
public enum CKAccountStatus: Int, Sendable {
    case couldNotDetermine = 0, available = 1, restricted = 2, noAccount = 3, temporarilyUnavailable = 4

    init(_ status: AccountStatus) {
        switch status {
        case .couldNotDetermine: self = .couldNotDetermine
        case .available: self = .available
        case .restricted: self = .restricted
        case .noAccount: self = .noAccount
        }
    }
}

/// What discovery tells about a user: the user record ID, how the user was looked up,
/// and the name; nothing else.
public struct CKUserIdentity: Sendable, Equatable {
    /// How to look a user up: by email address, phone number or user record ID. Identities
    /// here have email addresses and no phone numbers, so a lookup by phone number finds no one.
    public struct LookupInfo: Sendable, Equatable {
        public var emailAddress: String?
        public var phoneNumber: String?
        public var userRecordID: CKRecord.ID?
        public init(emailAddress: String) { self.emailAddress = emailAddress }
        public init(phoneNumber: String) { self.phoneNumber = phoneNumber }
        public init(userRecordID: CKRecord.ID) { self.userRecordID = userRecordID }

        public static func lookupInfos(withEmails emails: [String]) -> [LookupInfo] { emails.map(LookupInfo.init(emailAddress:)) }
        public static func lookupInfos(withPhoneNumbers phoneNumbers: [String]) -> [LookupInfo] { phoneNumbers.map(LookupInfo.init(phoneNumber:)) }
        public static func lookupInfos(with recordIDs: [CKRecord.ID]) -> [LookupInfo] { recordIDs.map(LookupInfo.init(userRecordID:)) }
    }

    public var userRecordID: CKRecord.ID?
    public var lookupInfo: LookupInfo?
    public var nameComponents: PersonNameComponents?
    public var hasiCloudAccount: Bool { userRecordID != nil }
    /// The user's email addresses (what the caller could look the user up by).
    public var emailAddresses: [String]

    init(_ d: DiscoveredIdentity, lookup: LookupInfo?) {
        userRecordID = CKRecord.ID(recordName: d.userRecordName)
        lookupInfo = lookup
        var n = PersonNameComponents()
        n.nickname = d.name
        nameComponents = n
        emailAddresses = d.emails
    }
}

extension CKContainer {
    /// Application permissions.
    public struct ApplicationPermissions: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let userDiscoverability = ApplicationPermissions(rawValue: 1)
    }

    public enum ApplicationPermissionStatus: Int, Sendable {
        case initialState = 0, couldNotComplete = 1, denied = 2, granted = 3

        init(_ s: PermissionStatus) {
            switch s {
            case .initialState: self = .initialState
            case .couldNotComplete: self = .couldNotComplete
            case .denied: self = .denied
            case .granted: self = .granted
            }
        }
    }

    /// What the permission calls with completion handlers call back with.
    public typealias ApplicationPermissionBlock = @Sendable (ApplicationPermissionStatus, Error?) -> Void

    /// Asks on the terminal (stdin and stderr) when both are one; nil otherwise.
    public static let terminalPrompt: @Sendable (String) -> Bool? = { question in
        guard Syscall.isTerminal(STDIN_FILENO), Syscall.isTerminal(STDERR_FILENO) else { return nil }
        FileHandle.standardError.write(Data("\(question) [y/n] ".utf8))
        guard let line = readLine() else { return nil }
        switch line.trimmingCharacters(in: .whitespaces).lowercased() {
        case "y", "yes": return true
        case "n", "no": return false
        default: return nil
        }
    }

    // MARK: Account status

    /// The caller's account status; never fails: an unreadable store is `couldNotDetermine`.
    public func accountStatusNow() -> CKAccountStatus {
        guard case .success(let c) = opened else { return .couldNotDetermine }
        return CKAccountStatus(c.accountStatus(of: caller))
    }

    public func accountStatus(completionHandler: @escaping @Sendable (CKAccountStatus, Error?) -> Void) {
        queue.async {
            switch self.opened {
            case .success: completionHandler(self.accountStatusNow(), nil)
            case .failure(let e): completionHandler(.couldNotDetermine, e)
            }
        }
    }

    public func accountStatus() async throws -> CKAccountStatus {
        if case .failure(let e) = opened { throw e }
        return accountStatusNow()
    }

    // MARK: Permissions

    public func status(forApplicationPermission permission: ApplicationPermissions) throws(CKError) -> ApplicationPermissionStatus {
        try checkPermission(permission)
        return ApplicationPermissionStatus(try engine().permissionStatus(.userDiscoverability, caller: caller))
    }

    /// Asks once (with `prompt`); once granted or denied, answers without asking.
    public func requestApplicationPermission(_ permission: ApplicationPermissions) throws(CKError) -> ApplicationPermissionStatus {
        try checkPermission(permission)
        let container = try engine()
        let prompt = self.prompt
        let question = "Let people who know your email address find you in \(containerIdentifier)?"
        return ApplicationPermissionStatus(try container.requestPermission(.userDiscoverability, caller: caller) { prompt(question) })
    }

    public func status(forApplicationPermission permission: ApplicationPermissions,
                       completionHandler: @escaping ApplicationPermissionBlock) {
        queue.async {
            do throws(CKError) { completionHandler(try self.status(forApplicationPermission: permission), nil) } catch {
                completionHandler(.couldNotComplete, error)
            }
        }
    }

    public func requestApplicationPermission(_ permission: ApplicationPermissions,
                                             completionHandler: @escaping ApplicationPermissionBlock) {
        queue.async {
            do throws(CKError) { completionHandler(try self.requestApplicationPermission(permission), nil) } catch {
                completionHandler(.couldNotComplete, error)
            }
        }
    }

    private func checkPermission(_ permission: ApplicationPermissions) throws(CKError) {
        guard permission == .userDiscoverability else {
            throw CKError(.invalidArguments, "unknown application permission \(permission.rawValue); the one there is is userDiscoverability")
        }
    }

    // MARK: Discovery

    /// Every user who granted discoverability and whose email address is in the caller's contacts.
    public func discoverAllIdentities() throws(CKError) -> [CKUserIdentity] {
        try engine().discoverAllIdentities(caller: caller).map { CKUserIdentity($0, lookup: nil) }
    }

    /// The user with this email address, if that user granted discoverability.
    public func discoverUserIdentity(withEmailAddress email: String) throws(CKError) -> CKUserIdentity? {
        try engine().discoverIdentity(email: email, caller: caller).map { CKUserIdentity($0, lookup: .init(emailAddress: email)) }
    }

    /// The user with this user record ID, if that user granted discoverability.
    public func discoverUserIdentity(withUserRecordID id: CKRecord.ID) throws(CKError) -> CKUserIdentity? {
        try engine().discoverIdentity(userRecordName: id.recordName, caller: caller).map { CKUserIdentity($0, lookup: .init(userRecordID: id)) }
    }

    /// The user with this phone number: nil, since identities here have no phone numbers.
    public func discoverUserIdentity(withPhoneNumber phoneNumber: String) throws(CKError) -> CKUserIdentity? {
        _ = try engine()
        return nil
    }

    public func discoverUserIdentity(withPhoneNumber phoneNumber: String, completionHandler: @escaping @Sendable (CKUserIdentity?, Error?) -> Void) {
        complete(completionHandler) { () throws(CKError) in try self.discoverUserIdentity(withPhoneNumber: phoneNumber) }
    }

    public func discoverAllIdentities(completionHandler: @escaping @Sendable ([CKUserIdentity]?, Error?) -> Void) {
        complete(completionHandler) { () throws(CKError) in try self.discoverAllIdentities() }
    }

    public func discoverUserIdentity(withEmailAddress email: String, completionHandler: @escaping @Sendable (CKUserIdentity?, Error?) -> Void) {
        complete(completionHandler) { () throws(CKError) in try self.discoverUserIdentity(withEmailAddress: email) }
    }

    public func discoverUserIdentity(withUserRecordID id: CKRecord.ID, completionHandler: @escaping @Sendable (CKUserIdentity?, Error?) -> Void) {
        complete(completionHandler) { () throws(CKError) in try self.discoverUserIdentity(withUserRecordID: id) }
    }
}

/// Discovers users by email address or user record ID.
open class CKDiscoverUserIdentitiesOperation: CKOperation, @unchecked Sendable {
    public var userIdentityLookupInfos: [CKUserIdentity.LookupInfo]
    public var userIdentityDiscoveredBlock: (@Sendable (CKUserIdentity, CKUserIdentity.LookupInfo) -> Void)?
    public var discoverUserIdentitiesCompletionBlock: (@Sendable (Error?) -> Void)?

    public init(userIdentityLookupInfos: [CKUserIdentity.LookupInfo]) { self.userIdentityLookupInfos = userIdentityLookupInfos }

    open override func main() {
        do throws(CKError) {
            let container = self.container ?? CKContainer.default()
            for info in userIdentityLookupInfos {
                if isCancelled { throw CKError(.operationCancelled, "the operation was cancelled") }
                var found: CKUserIdentity?
                if let e = info.emailAddress { found = try container.discoverUserIdentity(withEmailAddress: e) }
                else if let id = info.userRecordID { found = try container.discoverUserIdentity(withUserRecordID: id) }
                if let found { userIdentityDiscoveredBlock?(found, info) }
            }
            discoverUserIdentitiesCompletionBlock?(nil)
        } catch {
            discoverUserIdentitiesCompletionBlock?(error)
        }
    }
}

/// Discovers every discoverable user in the caller's contacts.
open class CKDiscoverAllUserIdentitiesOperation: CKOperation, @unchecked Sendable {
    public var userIdentityDiscoveredBlock: (@Sendable (CKUserIdentity) -> Void)?
    public var discoverAllUserIdentitiesCompletionBlock: (@Sendable (Error?) -> Void)?

    public override init() {}

    open override func main() {
        do throws(CKError) {
            let container = self.container ?? CKContainer.default()
            for u in try container.discoverAllIdentities() { userIdentityDiscoveredBlock?(u) }
            discoverAllUserIdentitiesCompletionBlock?(nil)
        } catch {
            discoverAllUserIdentitiesCompletionBlock?(error)
        }
    }
}

extension Notification.Name {
    /// Posted by Apple's framework when the device's iCloud account changes. A process here
    /// acts as one identity for its whole life, so it is never posted; observing it is harmless.
    public static let CKAccountChanged = Notification.Name("CKAccountChanged")
}

/// Apple's older name of ``CKContainer/ApplicationPermissionBlock``.
public typealias CKApplicationPermissionBlock = CKContainer.ApplicationPermissionBlock
