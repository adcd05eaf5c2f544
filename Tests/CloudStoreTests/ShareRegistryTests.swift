import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// Shares are found through `<container>/<environment>/shared-zones.json`: a share's zone is
/// in it before the share commits, a file deleted or damaged is made again from the zones, and
/// `ckfs fsck` adds what a file restored from an older copy lacks.
@Suite struct ShareRegistryTests {
    /// The zones the registry file names, read as an outside reader would.
    static func listed(_ c: Container) throws -> [String] {
        let path = (ShareRegistry(container: c, environment: .development).storage as! SharedZonesFile).path
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        let zones = try #require(json?["zones"] as? [[String: String]])
        return zones.map { "\($0["owner"] ?? "?")/\($0["zone"] ?? "?")" }
    }

    /// A store where olivia shares zone Lists (of ten) with wes by URL.
    struct Shared {
        let t: TempStore
        let c: Container
        let olivia: Database
        let url: String
        let wes = Caller(userName: "wes")

        init() throws {
            t = try TempStore()
            c = try t.store.container()
            for name in ["olivia", "wes"] { try c.addUser(name) }
            olivia = try c.database(.private, caller: Caller(userName: "olivia"))
            for i in 0..<10 { try olivia.createZone("Zone\(i)") }
            try olivia.createZone("Lists")
            try olivia.save(Record(recordType: "List", recordID: RecordID(recordName: "groceries", zoneID: ZoneID(zoneName: "Lists"))))
            url = ShareURL.make(container: c.identifier, shortGUID: try c.createShare(root: "groceries", zone: "Lists", caller: Caller(userName: "olivia"),
                                                                                         publicPermission: .readOnly).info.shortGUID)
        }

        var entry: String { "\(olivia.userRecordName)/Lists" }
        var registry: String { (ShareRegistry(container: c, environment: .development).storage as! SharedZonesFile).path }

        /// What wes finds by the URL: accepted, the zone shows in his shared database.
        func acceptAndList() throws -> [String] {
            try c.acceptShare(url: url, caller: wes)
            return try c.sharedDatabase(caller: wes).zones().map(\.zoneID.zoneName)
        }
    }

    @Test func aShareIsFoundThroughTheZonesTheRegistryNames() throws {
        let s = try Shared()
        #expect(try Self.listed(s.c) == [s.entry])
        #expect(try s.acceptAndList() == ["Lists"])
        // A second share in the same zone leaves the file as it is; one in another zone adds it.
        try s.olivia.save(Record(recordType: "List", recordID: RecordID(recordName: "todo", zoneID: ZoneID(zoneName: "Zone3"))))
        try s.c.createShare(root: "todo", zone: "Zone3", caller: Caller(userName: "olivia"))
        #expect(try Self.listed(s.c) == [s.entry, "\(s.olivia.userRecordName)/Zone3"].sorted())
        #expect(try s.c.shares().count == 2)
    }

    @Test func aRegistryDeletedOrDamagedIsMadeAgainFromTheZones() throws {
        for damage in [nil, "{\"zones\": [{\"owner\": 1}]}", "not json"] {
            let s = try Shared()
            if let damage {
                try Data(damage.utf8).write(to: URL(fileURLWithPath: s.registry))
            } else {
                try FileManager.default.removeItem(atPath: s.registry)
            }
            #expect(try s.acceptAndList() == ["Lists"], "\(damage ?? "deleted")")
            #expect(try Self.listed(s.c) == [s.entry])
        }
    }

    @Test func fsckAddsTheZonesAnOlderRegistryLacks() throws {
        let s = try Shared()
        // As restored from a copy made before the share: the zone is missing, the share unseen.
        try Data(#"{"zones": []}"#.utf8).write(to: URL(fileURLWithPath: s.registry))
        #expect(throws: CKError.self) { try s.acceptAndList() }
        let report = s.t.store.check()
        #expect(report.repaired.contains { $0.contains("added zone Lists") }, "\(report.repaired)")
        #expect(report.damage.isEmpty, "\(report.damage)")
        #expect(try Self.listed(s.c) == [s.entry])
        #expect(try s.acceptAndList() == ["Lists"])
        // A second check finds nothing to add, and makes no file where there are no shares.
        #expect(!s.t.store.check().repaired.contains { $0.contains("shared-zones") })
        let production = s.c.store.layout.containerDirectory(s.c.identifier) + "/production/shared-zones.json"
        #expect(!FileManager.default.fileExists(atPath: production))
    }
}
