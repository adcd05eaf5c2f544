extension Container {
    /// The key-value store of local identity `userName` in this container.
    package func keyValueStorage(user userName: String, environment: Environment = .development) throws(CKError) -> any KeyValueStorage {
        try keyValueStorage(caller: Caller(userName: userName), environment: environment)
    }

    /// The key-value store of the identity `caller` acts as.
    package func keyValueStorage(caller: Caller, environment: Environment = .development) throws(CKError) -> any KeyValueStorage {
        let id = try signedIn(caller, for: "the key-value store").userRecordName
        return store.backend.keyValueStorage(container: identifier, environment: environment, userRecordName: id)
    }
}
