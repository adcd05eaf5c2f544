/// The file backend: a store as plain files in one folder (`StoreLayout`), written crash-safe
/// through `FileWriter`. What of the store is behind the seam is reached through it; the rest
/// is still read and written where it is used (``StoreBackend``).
final class FileStoreBackend: StoreBackend {
    let layout: StoreLayout
    let writer: FileWriter
    let settings: StoreSettings

    init(layout: StoreLayout, writer: FileWriter, settings: StoreSettings) {
        self.layout = layout
        self.writer = writer
        self.settings = settings
    }

    /// `keyvalue.plist` in the user's private folder of the environment.
    func keyValueStorage(container: String, environment: Environment, userRecordName: String) -> any KeyValueStorage {
        KeyValueFile(directory: layout.databaseDirectory(container, environment, .private, user: userRecordName), writer: writer,
                     limits: settings.keyValueLimits)
    }
}
