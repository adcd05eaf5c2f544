import Foundation

/// Operations that make one user action, as CloudKit code groups them for its logs and
/// reports. A local store keeps the group as given; an operation in a group without a
/// configuration of its own takes the group's `defaultConfiguration`.
/// `@unchecked Sendable`: every property is read and written under `lock`.
public final class CKOperationGroup: @unchecked Sendable {
    /// How much data the group's operations move, as Apple's hint takes it.
    public enum TransferSize: Int, Sendable {
        case unknown = 0, kilobytes, megabytes, tensOfMegabytes, hundredsOfMegabytes, gigabytes, tensOfGigabytes, hundredsOfGigabytes
    }

    public let operationGroupID: String = UUID().uuidString
    private let lock = NSLock()
    private var values = (name: String?.none, quantity: 0, expectedSendSize: TransferSize.unknown,
                          expectedReceiveSize: TransferSize.unknown, defaultConfiguration: CKOperation.Configuration())

    public init() {}

    public var name: String? {
        get { lock.withLock { values.name } }
        set { lock.withLock { values.name = newValue } }
    }
    public var quantity: Int {
        get { lock.withLock { values.quantity } }
        set { lock.withLock { values.quantity = newValue } }
    }
    public var expectedSendSize: TransferSize {
        get { lock.withLock { values.expectedSendSize } }
        set { lock.withLock { values.expectedSendSize = newValue } }
    }
    public var expectedReceiveSize: TransferSize {
        get { lock.withLock { values.expectedReceiveSize } }
        set { lock.withLock { values.expectedReceiveSize = newValue } }
    }
    /// The configuration of the group's operations that set none of their own.
    public var defaultConfiguration: CKOperation.Configuration! {
        get { lock.withLock { values.defaultConfiguration } }
        set {
            let copy = newValue?.copy() ?? CKOperation.Configuration()
            lock.withLock { values.defaultConfiguration = copy }
        }
    }
}
