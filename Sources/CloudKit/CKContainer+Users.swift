import Foundation
import CloudStore

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

/// How to look a user up: by email address, phone number or user record ID. Apple's
/// `CKUserIdentity.LookupInfo`, declared at the top level under its Objective-C name for the
/// archiver, as ``CKRecordID`` is. Identities here have email addresses and no phone numbers,
/// so a lookup by phone number finds no one.
///
/// `@unchecked Sendable`: immutable; its stored properties are `let`s.
open class CKUserIdentityLookupInfo: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    public let emailAddress: String?
    public let phoneNumber: String?
    public let userRecordID: CKRecord.ID?

    private init(emailAddress: String?, phoneNumber: String?, userRecordID: CKRecord.ID?) {
        self.emailAddress = emailAddress
        self.phoneNumber = phoneNumber
        self.userRecordID = userRecordID
    }

    public convenience init(emailAddress: String) { self.init(emailAddress: emailAddress, phoneNumber: nil, userRecordID: nil) }
    public convenience init(phoneNumber: String) { self.init(emailAddress: nil, phoneNumber: phoneNumber, userRecordID: nil) }
    public convenience init(userRecordID: CKRecord.ID) { self.init(emailAddress: nil, phoneNumber: nil, userRecordID: userRecordID) }

    open class func lookupInfos(withEmails emails: [String]) -> [CKUserIdentityLookupInfo] { emails.map(CKUserIdentityLookupInfo.init(emailAddress:)) }
    open class func lookupInfos(withPhoneNumbers phoneNumbers: [String]) -> [CKUserIdentityLookupInfo] { phoneNumbers.map(CKUserIdentityLookupInfo.init(phoneNumber:)) }
    open class func lookupInfos(with recordIDs: [CKRecord.ID]) -> [CKUserIdentityLookupInfo] { recordIDs.map(CKUserIdentityLookupInfo.init(userRecordID:)) }

    /// Equal when they look up the same way: dictionaries keyed by the lookups an operation
    /// was given find its results.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? CKUserIdentityLookupInfo else { return false }
        return other.emailAddress == emailAddress && other.phoneNumber == phoneNumber && other.userRecordID == userRecordID
    }

    open override var hash: Int { emailAddress.hashValue ^ phoneNumber.hashValue ^ (userRecordID?.hash ?? 0) }

    open override var description: String {
        "<CKUserIdentityLookupInfo \(emailAddress ?? phoneNumber ?? userRecordID?.recordName ?? "nobody")>"
    }

    /// Immutable: the copy is the lookup itself.
    open func copy(with zone: NSZone? = nil) -> Any { self }

    public class var supportsSecureCoding: Bool { true }

    open func encode(with coder: NSCoder) {
        if let emailAddress { coder.encode(emailAddress as NSString, forKey: "emailAddress") }
        if let phoneNumber { coder.encode(phoneNumber as NSString, forKey: "phoneNumber") }
        if let userRecordID { coder.encode(userRecordID, forKey: "userRecordID") }
    }

    public required init?(coder: NSCoder) {
        emailAddress = coder.decodeStringIfPresent(forKey: "emailAddress")
        phoneNumber = coder.decodeStringIfPresent(forKey: "phoneNumber")
        userRecordID = coder.decodeObjectIfPresent(of: CKRecord.ID.self, forKey: "userRecordID")
        guard emailAddress != nil || phoneNumber != nil || userRecordID != nil else { return nil }
    }
}

/// What discovery tells about a user: the user record ID, how the user was looked up,
/// and the name; nothing else. An `NSObject` with `NSSecureCoding` and `NSCopying`, as
/// Apple's, so an app can keep the identities it found.
///
/// `@unchecked Sendable`: immutable; its stored properties are `let`s.
open class CKUserIdentity: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    /// How to look a user up (``CKUserIdentityLookupInfo``).
    public typealias LookupInfo = CKUserIdentityLookupInfo

    public let userRecordID: CKRecord.ID?
    public let lookupInfo: LookupInfo?
    public let nameComponents: PersonNameComponents?
    public var hasiCloudAccount: Bool { userRecordID != nil }
    /// Apple's identifiers of the user in the device's contacts: there are no contacts here.
    public var contactIdentifiers: [String] { [] }
    /// The user's email addresses (what the caller could look the user up by).
    public let emailAddresses: [String]

    init(userRecordID: CKRecord.ID?, lookupInfo: LookupInfo?, nameComponents: PersonNameComponents?, emailAddresses: [String]) {
        self.userRecordID = userRecordID
        self.lookupInfo = lookupInfo
        self.nameComponents = nameComponents
        self.emailAddresses = emailAddresses
    }

    convenience init(_ d: DiscoveredIdentity, lookup: LookupInfo?) {
        var n = PersonNameComponents()
        n.nickname = d.name
        self.init(userRecordID: CKRecord.ID(recordName: d.userRecordName), lookupInfo: lookup, nameComponents: n, emailAddresses: d.emails)
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? CKUserIdentity else { return false }
        return other.userRecordID == userRecordID && other.lookupInfo == lookupInfo
            && other.nameComponents == nameComponents && other.emailAddresses == emailAddresses
    }

    open override var hash: Int { userRecordID?.hash ?? 0 }

    open override var description: String { "<CKUserIdentity \(userRecordID?.recordName ?? "no account")>" }

    /// Immutable: the copy is the identity itself.
    open func copy(with zone: NSZone? = nil) -> Any { self }

    public class var supportsSecureCoding: Bool { true }

    /// The parts of a name that discovery fills in, each under its own key.
    private static var nameParts: [(String, WritableKeyPath<PersonNameComponents, String?>)] {
        [("namePrefix", \.namePrefix), ("givenName", \.givenName), ("middleName", \.middleName),
         ("familyName", \.familyName), ("nameSuffix", \.nameSuffix), ("nickname", \.nickname)]
    }

    open func encode(with coder: NSCoder) {
        if let userRecordID { coder.encode(userRecordID, forKey: "userRecordID") }
        if let lookupInfo { coder.encode(lookupInfo, forKey: "lookupInfo") }
        if let nameComponents {
            coder.encode(true, forKey: "hasName")
            for (key, path) in Self.nameParts { if let part = nameComponents[keyPath: path] { coder.encode(part as NSString, forKey: key) } }
        }
        coder.encode(NSArray(array: emailAddresses.map { $0 as NSString }), forKey: "emailAddresses")
    }

    public required init?(coder: NSCoder) {
        userRecordID = coder.decodeObjectIfPresent(of: CKRecord.ID.self, forKey: "userRecordID")
        lookupInfo = coder.decodeObjectIfPresent(of: LookupInfo.self, forKey: "lookupInfo")
        if coder.containsValue(forKey: "hasName") {
            var name = PersonNameComponents()
            for (key, path) in Self.nameParts { name[keyPath: path] = coder.decodeStringIfPresent(forKey: key) }
            nameComponents = name
        } else {
            nameComponents = nil
        }
        emailAddresses = coder.decodeObject(of: [NSArray.self, NSString.self], forKey: "emailAddresses") as? [String] ?? []
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
        try permissionStatus(permission)
    }

    /// Asks once (with `prompt`); once granted or denied, answers without asking.
    public func requestApplicationPermission(_ permission: ApplicationPermissions) throws(CKError) -> ApplicationPermissionStatus {
        try requestPermission(permission)
    }

    /// Apple's async form of ``status(forApplicationPermission:)``.
    public func applicationPermissionStatus(for permission: ApplicationPermissions) async throws -> ApplicationPermissionStatus {
        try permissionStatus(permission)
    }

    /// Apple's async form of ``requestApplicationPermission(_:)``.
    public func requestApplicationPermission(_ permission: ApplicationPermissions) async throws -> ApplicationPermissionStatus {
        try requestPermission(permission)
    }

    private func permissionStatus(_ permission: ApplicationPermissions) throws(CKError) -> ApplicationPermissionStatus {
        try checkPermission(permission)
        return ApplicationPermissionStatus(try engine().permissionStatus(.userDiscoverability, caller: caller))
    }

    private func requestPermission(_ permission: ApplicationPermissions) throws(CKError) -> ApplicationPermissionStatus {
        try checkPermission(permission)
        let container = try engine()
        let prompt = self.prompt
        let question = "Let people who know your email address find you in \(container.identifier)?"
        return ApplicationPermissionStatus(try container.requestPermission(.userDiscoverability, caller: caller) { prompt(question) })
    }

    public func status(forApplicationPermission permission: ApplicationPermissions,
                       completionHandler: @escaping ApplicationPermissionBlock) {
        queue.async {
            do throws(CKError) { completionHandler(try self.permissionStatus(permission), nil) } catch {
                completionHandler(.couldNotComplete, error)
            }
        }
    }

    public func requestApplicationPermission(_ permission: ApplicationPermissions,
                                             completionHandler: @escaping ApplicationPermissionBlock) {
        queue.async {
            do throws(CKError) { completionHandler(try self.requestPermission(permission), nil) } catch {
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

    // Apple's async forms of the lookups above.

    public func userIdentity(forEmailAddress email: String) async throws -> CKUserIdentity? { try discoverUserIdentity(withEmailAddress: email) }
    public func userIdentity(forPhoneNumber phoneNumber: String) async throws -> CKUserIdentity? { try discoverUserIdentity(withPhoneNumber: phoneNumber) }
    public func userIdentity(forUserRecordID id: CKRecord.ID) async throws -> CKUserIdentity? { try discoverUserIdentity(withUserRecordID: id) }
    public func allUserIdentitiesFromContacts() async throws -> [CKUserIdentity] { try discoverAllIdentities() }

    public func userIdentities(forEmailAddresses emails: [String]) async throws -> [String: CKUserIdentity] {
        try identities(emails) { (email) throws(CKError) in try discoverUserIdentity(withEmailAddress: email) }
    }

    public func userIdentities(forPhoneNumbers phoneNumbers: [String]) async throws -> [String: CKUserIdentity] {
        try identities(phoneNumbers) { (phone) throws(CKError) in try discoverUserIdentity(withPhoneNumber: phone) }
    }

    public func userIdentities(forUserRecordIDs ids: [CKRecord.ID]) async throws -> [CKRecord.ID: CKUserIdentity] {
        try identities(ids) { (id) throws(CKError) in try discoverUserIdentity(withUserRecordID: id) }
    }

    public func discoverUserIdentities(forEmailAddresses emails: [String],
                                       completionHandler: @escaping @Sendable (Result<[String: CKUserIdentity], any Error>) -> Void) {
        completeWithResult(completionHandler) { () throws(CKError) in
            try self.identities(emails) { (email) throws(CKError) in try self.discoverUserIdentity(withEmailAddress: email) }
        }
    }

    public func discoverUserIdentities(forPhoneNumbers phoneNumbers: [String],
                                       completionHandler: @escaping @Sendable (Result<[String: CKUserIdentity], any Error>) -> Void) {
        completeWithResult(completionHandler) { () throws(CKError) in
            try self.identities(phoneNumbers) { (phone) throws(CKError) in try self.discoverUserIdentity(withPhoneNumber: phone) }
        }
    }

    public func discoverUserIdentities(forUserRecordIDs ids: [CKRecord.ID],
                                       completionHandler: @escaping @Sendable (Result<[CKRecord.ID: CKUserIdentity], any Error>) -> Void) {
        completeWithResult(completionHandler) { () throws(CKError) in
            try self.identities(ids) { (id) throws(CKError) in try self.discoverUserIdentity(withUserRecordID: id) }
        }
    }

    /// The identities found for `keys`, by key; those not found (or not discoverable) are left out.
    private func identities<Key: Hashable>(_ keys: [Key], _ find: (Key) throws(CKError) -> CKUserIdentity?) throws(CKError) -> [Key: CKUserIdentity] {
        var found: [Key: CKUserIdentity] = [:]
        for key in keys { if let identity = try find(key) { found[key] = identity } }
        return found
    }
}

/// Discovers users by email address or user record ID.
open class CKDiscoverUserIdentitiesOperation: CKOperation, @unchecked Sendable {
    public var userIdentityLookupInfos: [CKUserIdentity.LookupInfo]
    public var userIdentityDiscoveredBlock: ((CKUserIdentity, CKUserIdentity.LookupInfo) -> Void)?
    public var discoverUserIdentitiesCompletionBlock: ((Error?) -> Void)?
    /// The end of the operation, as a `Result` (Apple's newer form of the completion block).
    public var discoverUserIdentitiesResultBlock: ((Result<Void, Error>) -> Void)?

    /// An operation whose lookups are set later.
    public override init() { userIdentityLookupInfos = [] }
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
            discoverUserIdentitiesResultBlock?(.success(()))
        } catch {
            discoverUserIdentitiesCompletionBlock?(error)
            discoverUserIdentitiesResultBlock?(.failure(error))
        }
    }
}

/// Discovers every discoverable user in the caller's contacts.
open class CKDiscoverAllUserIdentitiesOperation: CKOperation, @unchecked Sendable {
    public var userIdentityDiscoveredBlock: ((CKUserIdentity) -> Void)?
    public var discoverAllUserIdentitiesCompletionBlock: ((Error?) -> Void)?
    /// The end of the operation, as a `Result` (Apple's newer form of the completion block).
    public var discoverAllUserIdentitiesResultBlock: ((Result<Void, Error>) -> Void)?

    public override init() {}

    open override func main() {
        do throws(CKError) {
            let container = self.container ?? CKContainer.default()
            for u in try container.discoverAllIdentities() { userIdentityDiscoveredBlock?(u) }
            discoverAllUserIdentitiesCompletionBlock?(nil)
            discoverAllUserIdentitiesResultBlock?(.success(()))
        } catch {
            discoverAllUserIdentitiesCompletionBlock?(error)
            discoverAllUserIdentitiesResultBlock?(.failure(error))
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
/// Apple's Objective-C names of ``CKContainer/ApplicationPermissions``,
/// ``CKContainer/ApplicationPermissionStatus`` and ``CKContainer/ApplicationPermissionBlock``.
public typealias CKContainer_Application_Permissions = CKContainer.ApplicationPermissions
public typealias CKContainer_Application_PermissionStatus = CKContainer.ApplicationPermissionStatus
public typealias CKContainer_Application_PermissionBlock = CKContainer.ApplicationPermissionBlock
/// Apple's Objective-C names of the share participant's enums.
public typealias CKShare_Participant_AcceptanceStatus = CKShare.ParticipantAcceptanceStatus
public typealias CKShare_Participant_Permission = CKShare.ParticipantPermission
public typealias CKShare_Participant_Role = CKShare.ParticipantRole
