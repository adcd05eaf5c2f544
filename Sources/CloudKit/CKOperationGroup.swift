import Foundation
import CloudStore

/// Operations that make one user action, as CloudKit code groups them for its logs and
/// reports. A local store keeps the group as given; an operation in a group without a
/// configuration of its own takes the group's `defaultConfiguration`. An `NSObject` with
/// `NSSecureCoding`, as Apple's: the archive keeps the group's ID, name, quantity and sizes
/// (not its default configuration, whose container is an open store).
/// `@unchecked Sendable`: its values are in a `LockedSettings`; `operationGroupID` is a `let`.
open class CKOperationGroup: NSObject, NSSecureCoding, @unchecked Sendable {
    /// How much data the group's operations move, as Apple's hint takes it.
    public enum TransferSize: Int, Sendable {
        case unknown = 0, kilobytes, megabytes, tensOfMegabytes, hundredsOfMegabytes, gigabytes, tensOfGigabytes, hundredsOfGigabytes
    }

    public let operationGroupID: String

    private struct Values {
        var name: String?
        var quantity = 0
        var expectedSendSize = TransferSize.unknown
        var expectedReceiveSize = TransferSize.unknown
        var defaultConfiguration = CKOperation.Configuration()
    }

    private let values: LockedSettings<Values>

    public override init() {
        operationGroupID = UUID().uuidString
        values = LockedSettings(Values())
    }

    public var name: String? { get { values[\.name] } set { values[\.name] = newValue } }
    public var quantity: Int { get { values[\.quantity] } set { values[\.quantity] = newValue } }
    public var expectedSendSize: TransferSize { get { values[\.expectedSendSize] } set { values[\.expectedSendSize] = newValue } }
    public var expectedReceiveSize: TransferSize { get { values[\.expectedReceiveSize] } set { values[\.expectedReceiveSize] = newValue } }
    /// The configuration of the group's operations that set none of their own (a copy is kept).
    public var defaultConfiguration: CKOperation.Configuration! {
        get { values[\.defaultConfiguration] }
        set { values[\.defaultConfiguration] = newValue?.copied() ?? CKOperation.Configuration() }
    }

    public class var supportsSecureCoding: Bool { true }

    open func encode(with coder: NSCoder) {
        let all = values.all
        coder.encode(operationGroupID as NSString, forKey: "operationGroupID")
        if let name = all.name { coder.encode(name as NSString, forKey: "name") }
        coder.encode(all.quantity, forKey: "quantity")
        coder.encode(all.expectedSendSize.rawValue, forKey: "expectedSendSize")
        coder.encode(all.expectedReceiveSize.rawValue, forKey: "expectedReceiveSize")
    }

    public required init?(coder: NSCoder) {
        guard let id = coder.decodeStringIfPresent(forKey: "operationGroupID") else { return nil }
        operationGroupID = id
        var all = Values()
        all.name = coder.decodeStringIfPresent(forKey: "name")
        all.quantity = coder.decodeInteger(forKey: "quantity")
        all.expectedSendSize = TransferSize(rawValue: coder.decodeInteger(forKey: "expectedSendSize")) ?? .unknown
        all.expectedReceiveSize = TransferSize(rawValue: coder.decodeInteger(forKey: "expectedReceiveSize")) ?? .unknown
        values = LockedSettings(all)
    }
}
