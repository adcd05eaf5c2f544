// The module CloudKit code imports. As Apple's module does, `import CloudKit` brings Foundation
// and CloudKit's classes (CKContainer, CKDatabase, CKRecord, the operations, CKError,
// NSUbiquitousKeyValueStore); they are ckfs's, over a local store. On Linux no other module of
// this name exists. The classes are declared in CloudStore, the engine, which code that
// wants the engine's own types (`Store`, `Database`, `Record`) imports instead.
@_exported import CloudStore
@_exported import Foundation
