extension Container {
    /// The credentials of `ckfs serve` that `container.json` holds, as the file holds them now
    /// (one `stat`): tokens made or removed by another process count at once.
    /// CloudStoreServerCore decides what they mean; the engine only keeps them.
    package func webCredentials() throws(CKError) -> WebCredentials { try fresh().web }

    /// The credentials and the names of the restricted identities, from one read of what the
    /// container keeps (one `stat` when unchanged), for a request's check: a failure to read
    /// throws, so a credential of a restricted account never passes for want of a read.
    package func webAccess() throws(CKError) -> (credentials: WebCredentials, restricted: Set<String>) {
        let info = try fresh()
        return (info.web, Set(info.restrictedUsers.filter { info.users[$0] != nil }))
    }

    /// Changes the credentials under the container's lock, from what the file holds now; the
    /// file is written only when they changed.
    package func updateWebCredentials<T>(_ body: (inout WebCredentials) throws(CKError) -> T) throws(CKError) -> T {
        try update { (info: inout ContainerInfo) throws(CKError) -> T in try body(&info.web) }
    }
}
