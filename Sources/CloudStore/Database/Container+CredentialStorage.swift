extension Container {
    /// The credentials of `ckfs serve` that `container.json` holds, as the file holds them now
    /// (one `stat`): tokens made or removed by another process count at once.
    /// CloudStoreServerCore decides what they mean; the engine only keeps them.
    package func webCredentials() throws(CKError) -> WebCredentials { try fresh().web }

    /// Whether the identity named `userName` is restricted, as the container keeps it now; an
    /// unknown name is not. A failure to read throws: a credential of a restricted account
    /// must not pass because the file could not be read.
    package func isRestricted(userName: String) throws(CKError) -> Bool {
        let info = try fresh()
        guard let identity = info.identity(of: Caller(userName: userName)) else { return false }
        return info.isRestricted(identity)
    }

    /// Changes the credentials under the container's lock, from what the file holds now; the
    /// file is written only when they changed.
    package func updateWebCredentials<T>(_ body: (inout WebCredentials) throws(CKError) -> T) throws(CKError) -> T {
        try update { (info: inout ContainerInfo) throws(CKError) -> T in try body(&info.web) }
    }
}
