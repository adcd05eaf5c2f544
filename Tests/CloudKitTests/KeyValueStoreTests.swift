import CloudKit
import CloudStore
import Testing
import TestSupport

/// The iCloud key-value store as apps use it, with `import CloudKit` alone: typed setters and
/// getters, `synchronize()`, and the change notification another device's write posts.
@Suite struct KeyValueStoreTests {
    @Test func settingsSyncBetweenTwoDevices() async throws {
        let path = TemporaryStores.path("ckfs-kvs-")
        let phone = try NSUbiquitousKeyValueStore(store: Store.create(at: path), user: "mei")
        let laptop = try NSUbiquitousKeyValueStore(store: Store.open(at: path), user: "mei")

        phone.set("dark", forKey: "theme")
        phone.set(Int64(3), forKey: "launches")
        phone.set(true, forKey: "onboarded")
        phone.set(["a", "b"], forKey: "recent")
        #expect(phone.synchronize())

        // The laptop hears of the phone's write, with the keys and the reason.
        let heard = Locked<[String]>([])
        let observer = NotificationCenter.default.addObserver(forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification,
                                                              object: laptop, queue: nil) { note in
            let keys = note.userInfo?[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String] ?? []
            let reason = note.userInfo?[NSUbiquitousKeyValueStoreChangeReasonKey] as? Int
            heard.withLock { $0.append("\(reason == NSUbiquitousKeyValueStoreServerChange ? "server" : "other") \(keys.sorted())") }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        _ = laptop.synchronize()
        #expect(laptop.string(forKey: "theme") == "dark")
        #expect(laptop.longLong(forKey: "launches") == 3 && laptop.double(forKey: "launches") == 3)
        #expect(laptop.bool(forKey: "onboarded") && laptop.array(forKey: "recent") as? [String] == ["a", "b"])
        #expect(laptop.string(forKey: "missing") == nil && laptop.longLong(forKey: "missing") == 0)

        phone.set("light", forKey: "theme")
        _ = phone.synchronize()
        _ = laptop.synchronize()
        #expect(laptop.string(forKey: "theme") == "light")
        // Posted on a queue of the store's, as Apple's arrives: waited for, up to 10 s.
        for _ in 0..<1000 where !heard.withLock({ $0 }).contains("server [\"theme\"]") { try await Task.sleep(for: .milliseconds(10)) }
        #expect(heard.withLock { $0 } == ["server [\"launches\", \"onboarded\", \"recent\", \"theme\"]", "server [\"theme\"]"])
        laptop.removeObject(forKey: "theme")
        _ = laptop.synchronize()
        _ = phone.synchronize()
        #expect(phone.object(forKey: "theme") == nil && phone.dictionaryRepresentation.keys.sorted() == ["launches", "onboarded", "recent"])
    }
}
