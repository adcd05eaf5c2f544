extension Container {
    /// The credentials of `ckfs serve` that `container.json` holds, as the file holds them now
    /// (one `stat`): tokens made or removed by another process count at once.
    /// CloudStoreServerCore decides what they mean; the engine only keeps them.
    package func webCredentials() throws(CKError) -> WebCredentials { try fresh().web }

    /// Changes the credentials under the container's lock, from what the file holds now; the
    /// file is written only when they changed.
    package func updateWebCredentials<T>(_ body: (inout WebCredentials) throws(CKError) -> T) throws(CKError) -> T {
        try update { (info: inout ContainerInfo) throws(CKError) -> T in try body(&info.web) }
    }
}
