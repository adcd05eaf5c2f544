import Foundation

/// Who is acting, and from where (the device ID names a client: a process or a mount).
public struct Caller: Sendable, Equatable {
    /// The local identity's name (an OS user name unless given); empty: no account.
    public var userName: String
    /// The OS user acting, when the caller is one: the container finds its identity by uid
    /// first, so an identity added with `--uid` is the same person under any name.
    public var uid: UInt32?
    public var deviceID: String

    public init(userName: String, uid: UInt32? = nil, deviceID: String = Caller.processDeviceID) {
        self.userName = userName
        self.uid = uid
        self.deviceID = deviceID
    }

    /// This process's OS user.
    public static func osUser(deviceID: String = Caller.processDeviceID) -> Caller {
        Caller(userName: currentOSUserName, uid: geteuid(), deviceID: deviceID)
    }

    /// A caller with no account: reads the public database, nothing else.
    public static func noAccount(deviceID: String = Caller.processDeviceID) -> Caller {
        Caller(userName: "", deviceID: deviceID)
    }

    public var hasAccount: Bool { !userName.isEmpty }

    /// The device ID of this process as a client: `<host>-<pid>`.
    public static let processDeviceID = "\(hostName)-\(getpid())"

    /// The device ID of a mount: `<host>:mount:<mount point>`, the same each time it is mounted
    /// there, so a mount's own edits never come back to it as notifications.
    public static func mountDeviceID(_ mountPoint: String) -> String { "\(hostName):mount:\(mountPoint)" }

    public static let hostName: String = {
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, 255)
        return String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    /// The OS user running this process.
    public static var currentOSUserName: String {
        Syscall.userName(uid: geteuid()) ?? "uid\(geteuid())"
    }
}

#if canImport(Glibc)
import Glibc
#endif
