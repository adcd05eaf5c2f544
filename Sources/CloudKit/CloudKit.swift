// The module CloudKit code imports. As Apple's module does, `import CloudKit` brings Foundation
// and CloudKit's classes (CKContainer, CKDatabase, CKRecord, the operations, CKError,
// NSUbiquitousKeyValueStore); they are ckfs's, over a local store. On Linux no other module of
// this name exists. The classes are declared here, over the engine (CloudStore), which they
// reach through its public and `package` API and never show: code that wants the engine's own
// types (`Store`, `Database`, `Record`) imports CloudStore. CKError is the engine's one error
// type, so this module shows it as it is.
@_exported import Foundation
@_exported public import struct CloudStore.CKError
@_exported public import enum CloudStore.CKItemID

// `NSPredicate`, `NSCompoundPredicate` and `NSSortDescriptor` are Foundation's: the engine
// gives `NSPredicate(format:…)` and `NSSortDescriptor(key:ascending:)`, which Linux Foundation
// lacks, as factory initializers of its subclasses (`CloudKitPredicate`,
// `CloudKitSortDescriptor`), so a file that imports Foundation too names one type of each.

// Linux Foundation's NSObject has no key-value coding, so `UserDefaults.setValue(_:forKey:)`
// and `value(forKey:)`, which CloudKit code uses to remember that its zone or subscription
// exists, are missing there; these stand in for them with `set(_:forKey:)` and
// `object(forKey:)`, as the pairs do the same on Apple's platforms.
extension UserDefaults {
    public func setValue(_ value: Any?, forKey key: String) { set(value, forKey: key) }
    public func value(forKey key: String) -> Any? { object(forKey: key) }
}
