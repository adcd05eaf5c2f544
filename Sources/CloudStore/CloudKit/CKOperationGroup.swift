import Foundation

/// Operations that make one user action, as CloudKit code groups them for its logs and
/// reports. A local store keeps the group as given; an operation in a group without a
/// configuration of its own takes the group's `defaultConfiguration`.
/// `@unchecked Sendable`: its values are in a `LockedSettings`.
public final class CKOperationGroup: @unchecked Sendable {
    /// How much data the group's operations move, as Apple's hint takes it.
    public enum TransferSize: Int, Sendable {
        case unknown = 0, kilobytes, megabytes, tensOfMegabytes, hundredsOfMegabytes, gigabytes, tensOfGigabytes, hundredsOfGigabytes
    }

    public let operationGroupID: String = UUID().uuidString

    private struct Values {
        var name: String?
        var quantity = 0
        var expectedSendSize = TransferSize.unknown
        var expectedReceiveSize = TransferSize.unknown
        var defaultConfiguration = CKOperation.Configuration()
    }

    private let values = LockedSettings(Values())

    public init() {}

    public var name: String? { get { values[\.name] } set { values[\.name] = newValue } }
    public var quantity: Int { get { values[\.quantity] } set { values[\.quantity] = newValue } }
    public var expectedSendSize: TransferSize { get { values[\.expectedSendSize] } set { values[\.expectedSendSize] = newValue } }
    public var expectedReceiveSize: TransferSize { get { values[\.expectedReceiveSize] } set { values[\.expectedReceiveSize] = newValue } }
    /// The configuration of the group's operations that set none of their own (a copy is kept).
    public var defaultConfiguration: CKOperation.Configuration! {
        get { values[\.defaultConfiguration] }
        set { values[\.defaultConfiguration] = newValue?.copy() ?? CKOperation.Configuration() }
    }
}
