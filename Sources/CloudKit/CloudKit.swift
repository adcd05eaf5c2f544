// The module CloudKit code imports. As Apple's module does, `import CloudKit` brings Foundation
// and CloudKit's classes (CKContainer, CKDatabase, CKRecord, the operations, CKError,
// NSUbiquitousKeyValueStore); they are ckfs's, over a local store. On Linux no other module of
// this name exists. The classes are declared in CloudStore, the engine, which code that
// wants the engine's own types (`Store`, `Database`, `Record`) imports instead.
@_exported import CloudStore
@_exported import Foundation

// Linux Foundation declares NSPredicate and NSSortDescriptor without their string forms
// (`NSPredicate(format:)`, `NSSortDescriptor(key:ascending:)` are unavailable there). These
// names, declared in the module CloudKit code imports, stand first for the engine's classes
// that have them. A file that imports Foundation itself as well sees two types of each name
// in a type annotation: it writes `CloudKit.NSPredicate` there, or imports CloudKit alone.
public typealias NSPredicate = CloudStore.CloudKitPredicate
public typealias NSCompoundPredicate = CloudStore.CloudKitCompoundPredicate
public typealias NSSortDescriptor = CloudStore.CloudKitSortDescriptor

// Linux Foundation's NSObject has no key-value coding, so `UserDefaults.setValue(_:forKey:)`
// and `value(forKey:)`, which CloudKit code uses to remember that its zone or subscription
// exists, are missing there; these stand in for them with `set(_:forKey:)` and
// `object(forKey:)`, as the pairs do the same on Apple's platforms.
extension UserDefaults {
    public func setValue(_ value: Any?, forKey key: String) { set(value, forKey: key) }
    public func value(forKey key: String) -> Any? { object(forKey: key) }
}
