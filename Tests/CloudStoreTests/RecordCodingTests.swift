import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// Record dictionaries, every field type, the input shorthand.
@Suite struct RecordCodingTests {
    /// Every field of every record a catalog keeps is a `FieldValue`: a location or an asset
    /// held inline made each 72 bytes; held indirectly, the largest inline case
    /// is a reference (a string and its action).
    @Test func aFieldValueStaysSmall() {
        #expect(MemoryLayout<FieldValue>.stride <= 24, "FieldValue is \(MemoryLayout<FieldValue>.stride) bytes a value")
    }

    static let everyType: [String: FieldValue] = [
        "s": .string("Mei Chen"), "i": .int64(-42), "d": .double(2.5), "b": .bytes(Data([0, 1, 2, 255])),
        "t": .timestamp(milliseconds: 1_714_000_000_000),
        "l": .location(Location(latitude: 52.37, longitude: 4.89, altitude: 3, horizontalAccuracy: 5, verticalAccuracy: 6, course: 90, speed: 1.5, timestamp: 1_714_000_000_000)),
        "r": .reference(Reference(recordName: "other", action: .deleteSelf)),
        "a": .asset(Asset(fileChecksum: String(repeating: "ab", count: 32), size: 10)),
        "sl": .list(.string, [.string("ink"), .string("paper")]), "il": .list(.int64, [.int64(1), .int64(2)]),
        "dl": .list(.double, [.double(1.5)]), "bl": .list(.bytes, [.bytes(Data([9]))]),
        "tl": .list(.timestamp, [.timestamp(milliseconds: 1)]), "ll": .list(.location, [.location(Location(latitude: 1, longitude: 2))]),
        "rl": .list(.reference, [.reference(Reference(recordName: "x"))]),
        "al": .list(.asset, [.asset(Asset(fileChecksum: String(repeating: "0", count: 64), size: 0))]),
        "empty": .list(.string, []),
    ]

    @Test func everyFieldTypeRoundTripsThroughTheStoredFormat() throws {
        var r = Record(stored: "Art", recordID: RecordID(recordName: "a1", zoneID: ZoneID(zoneName: "z", ownerName: "_u")),
                       fields: Self.everyType, tag: "7",
                       created: Stamp(timestamp: 1, userRecordName: "_u", deviceID: "d"),
                       modified: Stamp(timestamp: 2, userRecordName: "_v", deviceID: "e"))
        let bytes = RecordCoding.fileBytes(r)
        let back = try RecordCoding.decode(try JSONParser.parse(bytes), mode: .stored).record
        #expect(back == r)
        // Canonical: the same record always gives the same bytes.
        r.clearChangedKeys()
        #expect(RecordCoding.fileBytes(back) == bytes)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#""type": "STRING_LIST""#))
        #expect(text.contains(#""action": "DELETE_SELF""#))
        #expect(text.hasSuffix("}\n"))
    }

    /// The direct writer gives exactly the bytes of the tree-based reference form, for
    /// every field type, encrypted fields, names that need escapes or sort by UTF-8 bytes, no
    /// fields, and records without system fields; in a log entry too.
    @Test func directWriterGivesTheReferenceBytes() throws {
        let zone = ZoneID(zoneName: "z", ownerName: "_u")
        var fields = Self.everyType
        fields["quote\"back\\slash\ttab\u{1}"] = .string("line\nbreak \"q\" \u{7f} é 日本")
        fields["Z"] = .int64(0)
        fields["é"] = .double(-0.000001)
        fields["a_b"] = .double(1e300)
        fields["secret"] = .string("kept apart")
        fields["secrets"] = .list(.int64, [.int64(1), .int64(2)])
        // Dates past a whole millisecond carry a `fraction`, plain and encrypted, alone and in lists.
        fields["when"] = .timestamp(Date(timeIntervalSinceReferenceDate: 786_000_000.123_456_7))
        fields["whens"] = .list(.timestamp, [.timestamp(milliseconds: 5), .timestamp(Date(timeIntervalSinceReferenceDate: -3_000.000_000_9))])
        fields["secretWhen"] = .timestamp(Date(timeIntervalSinceReferenceDate: 12_345.678_901_2))
        let full = Record(stored: "Art", recordID: RecordID(recordName: "a 1/é", zoneID: zone), fields: fields,
                          encryptedKeys: ["secret", "secrets", "secretWhen"], tag: "7",
                          created: Stamp(timestamp: 1, userRecordName: "_u", deviceID: "d\"x"),
                          modified: Stamp(timestamp: 2, userRecordName: "_v", deviceID: "e"))
        let bare = Record(recordType: "T", recordID: RecordID(recordName: "b", zoneID: zone), fields: [:])
        let pending = Record(recordType: "T", recordID: RecordID(recordName: "c", zoneID: zone),
                             fields: ["p": .asset(Asset(file: "/tmp/x")), "pl": .list(.asset, [.asset(Asset(file: "/a")), .asset(Asset(file: "/b"))])])
        // Sharing's keys, which sort among the system keys: a child, a root, and a share.
        var child = Record(stored: "Item", recordID: RecordID(recordName: "child", zoneID: zone), fields: ["n": .int64(1)],
                           tag: "8", created: nil, modified: nil, parent: "root")
        child.clearChangedKeys()
        let root = Record(stored: "List", recordID: RecordID(recordName: "root", zoneID: zone), fields: [:], tag: "9",
                          created: nil, modified: nil, parent: "top", share: "s1")
        let share = Record(stored: ShareInfo.recordType, recordID: RecordID(recordName: "s1", zoneID: zone),
                           fields: ["cloudkit.title": .string("T")], tag: "9", created: nil, modified: nil,
                           shareInfo: ShareInfo(publicPermission: .readOnly, participants: [
                               .init(userRecordName: "_o", role: .owner, permission: .readWrite, acceptanceStatus: .accepted),
                               .init(userRecordName: "_p", role: .privateUser, permission: .readOnly, acceptanceStatus: .pending, emailAddress: "p@example.com"),
                           ], shortGUID: "abc", rootRecordName: "root"))
        // With access requests and a one-time URL's participant, whose keys sort before
        // `created` and between `publicPermission` and `rootRecordName`.
        var asked = Record(stored: ShareInfo.recordType, recordID: RecordID(recordName: "s2", zoneID: zone), fields: [:], tag: "11",
                           created: nil, modified: nil, shareInfo: share.shareInfo)
        asked.created = Stamp(timestamp: 5, userRecordName: "_o", deviceID: "d")
        asked.shareInfo?.allowsAccessRequests = true
        asked.shareInfo?.requesters = [.init(userRecordName: "_r", emailAddress: "r@example.com", requested: 7, changeTag: "10")]
        asked.shareInfo?.blocked = [.init(userRecordName: "_b", requested: 6)]
        asked.shareInfo?.participants.append(.init(userRecordName: "", role: .privateUser, permission: .readWrite, acceptanceStatus: .pending,
                                                   participantID: "P-1", oneTimeToken: "tok", added: 8))
        asked.shareInfo?.participants[1].isApprovedRequester = true
        for r in [child, root, share, asked] {
            #expect(RecordCoding.fileBytes(r) == JSONWriter.pretty(RecordCoding.encode(r)), "pretty: \(r.recordID.recordName)")
            #expect(RecordWriter.compact(r) == JSONWriter.compact(RecordCoding.encode(r)), "compact: \(r.recordID.recordName)")
            #expect(try RecordCoding.decode(JSONParser.parse(RecordCoding.fileBytes(r)), mode: .stored, zoneID: zone).record == r, "read back: \(r.recordID.recordName)")
        }
        for r in [full, bare, pending] {
            #expect(RecordCoding.fileBytes(r) == JSONWriter.pretty(RecordCoding.encode(r)), "pretty: \(r.recordID.recordName)")
            #expect(RecordWriter.compact(r) == JSONWriter.compact(RecordCoding.encode(r)), "compact: \(r.recordID.recordName)")
        }
        let entries = [
            LogEntry(seq: 3, time: 9, userRecordName: "_u", deviceID: "dev", clientChangeToken: Data("tok".utf8),
                     saved: [full, bare], deleted: [.init(recordName: "gone", cascade: false), .init(recordName: "child", cascade: true),
                                                          .init(recordName: "typed", cascade: true, recordType: "Note"),
                                                          .init(recordName: "plain", cascade: false, recordType: "Item"),
                                                          .init(recordName: "shared", cascade: true, recordType: "Item", root: "root")], usage: 77),
            LogEntry(seq: 4, time: 10, userRecordName: "_u", deviceID: "dev", clientChangeToken: nil, saved: [], deleted: [], usage: 0),
        ]
        for e in entries {
            #expect(RecordWriter.entryBody(e) == JSONWriter.compact(e.body()))
            let line = e.frame()
            let back = try LogEntry.unframe(line[..<(line.endIndex - 1)], zoneID: zone)
            #expect(back.seq == e.seq && back.saved == e.saved && back.deleted == e.deleted && back.clientChangeToken == e.clientChangeToken)
        }
    }

    /// The log's checksum: the standard CRC-32C check value, and the CPU instruction (where
    /// used) agrees with the table at every length and alignment.
    @Test func crc32cMatchesTheStandardAndTheTable() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        let bytes = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        for start in 0..<9 {
            for end in stride(from: start, through: bytes.count, by: 7) {
                let slice = bytes[start..<end]
                #expect(CRC32C.checksum(slice) == CRC32C.checksum(slice.lazy.map { $0 }), "bytes \(start)..<\(end)")
            }
        }
    }

    @Test func inputMayLeaveOutTypesWhereTheValueIsPlain() throws {
        let json = try JSONParser.parse(#"{"recordType":"Art","fields":{"s":"x","i":{"value":3},"d":2.5,"sl":["a","b"],"il":[1,2],"dl":[1,2.5],"gone":null}}"#)
        let decoded = try RecordCoding.decode(json, mode: .input)
        let r = decoded.record
        #expect(r["s"] == .string("x"))
        #expect(r["i"] == .int64(3))
        #expect(r["d"] == .double(2.5))
        #expect(r["sl"] == .list(.string, [.string("a"), .string("b")]))
        #expect(r["il"] == .list(.int64, [.int64(1), .int64(2)]))
        #expect(r["dl"] == .list(.double, [.double(1), .double(2.5)]))
        #expect(r["gone"] == nil)
        #expect(r.changedKeys.contains("gone"))
        #expect(r.recordID.recordName.count == 36, "a record without a name gets a UUID-based one")
        #expect(decoded.inferredKeys == ["s", "i", "d", "sl", "il", "dl"])
    }

    @Test func badInputSaysWhatAndWhere() {
        let cases: [(String, String)] = [
            (#"[]"#, "must be a JSON object"),
            (#"{"fields":{}}"#, "recordType"),
            (#"{"recordType":"A","fields":{"x":null,"y":{"colour":"red"}}}"#, "must be a location"),
            (#"{"recordType":"A","fields":{"x":[true,"a"]}}"#, "all of one kind"),
            (#"{"recordType":"A","fields":{"x":{"type":"INT64","value":"3"}}}"#, "needs an integer"),
            (#"{"recordType":"A","fields":{"x":{"type":"NUMBER","value":3}}}"#, "unknown type"),
            (#"{"recordType":"A","fields":{"x":[]}}"#, "non-empty list"),
            (#"{"recordType":"A","fields":{"x":{"type":"REFERENCE","value":{"recordName":"b","action":"CASCADE"}}}}"#, "not NONE or DELETE_SELF"),
            (#"{"recordType":"A","fields":{"x":{"type":"LOCATION","value":{"latitude":91,"longitude":0}}}}"#, "latitude"),
            (#"{"recordType":"A","extra":1}"#, "unknown key \"extra\""),
            (#"{"recordType":"A","fields":{"x":{"type":"BYTES","value":"!!"}}}"#, "base64"),
        ]
        for (text, expected) in cases {
            do {
                _ = try RecordCoding.decode(try JSONParser.parse(text), mode: .input)
                Issue.record("\(text) was accepted")
            } catch let error as CKError {
                #expect(error.code == .invalidArguments)
                #expect(error.message.contains(expected), "\(error.message)")
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test func allTokensSplitsStringsOnWhiteSpace() {
        let r = Record(recordType: "A", fields: ["a": .string("Ink and  paper\tINK"), "b": .list(.string, [.string("brush")]), "n": .int64(1)])
        #expect(r.allTokens == ["and", "brush", "ink", "paper"])
    }

    @Test func everyRecordNameHasAFileNameThatFitsAndIsItsOwn() {
        let prefix = String(repeating: "p", count: 200)
        let names = [String(repeating: "a", count: 250), String(repeating: "a", count: 251), String(repeating: "%", count: 255),
                     "." + String(repeating: "/", count: 254), prefix + "1", prefix + "2", "short"]
        let files = names.map(StoreLayout.recordFileName)
        #expect(Set(files).count == names.count, "two names share a file name")
        for (name, file) in zip(names, files) {
            #expect(file.utf8.count <= 255 && file.hasSuffix(".json") && !file.contains("/"), "\(file)")
            // A name that fits is spelled in its file name; a longer one is marked, never read back as another name.
            let fits = StoreLayout.encode(name).utf8.count + 5 <= 255
            #expect(StoreLayout.recordName(fromFileName: file) == (fits ? name : nil), "\(name.prefix(10))")
            #expect(StoreLayout.isLongRecordFileName(file) == !fits)
        }
    }

    @Test func namesFollowTheRules() throws {
        try Names.checkRecordType("Artist_2")
        #expect(throws: CKError.self) { try Names.checkRecordType("2Artist") }
        #expect(throws: CKError.self) { try Names.checkRecordType("Art-ist") }
        try Names.checkRecordName(String(repeating: "a", count: 255))
        try Names.checkRecordName(String(repeating: "%", count: 255))
        #expect(throws: CKError.self) { try Names.checkRecordName(String(repeating: "a", count: 256)) }
        #expect(throws: CKError.self) { try Names.checkRecordName("") }
        #expect(throws: CKError.self) { try Names.checkRecordName("_users") }
        #expect(throws: CKError.self) { try Names.checkRecordName("é") }
        try Names.checkFieldKey("title", recordType: "A")
        for bad in ["creationDate", "recordChangeTag", "_x", "a b", String(repeating: "k", count: 256)] {
            #expect(throws: CKError.self, "\(bad)") { try Names.checkFieldKey(bad, recordType: "A") }
        }
        try Names.checkContainerIdentifier("iCloud.com.example.notes")
        for bad in ["com.example", "iCloud.", "iCloud.com..x", "iCloud.com/x"] {
            #expect(throws: CKError.self) { try Names.checkContainerIdentifier(bad) }
        }
    }

    @Test func fileNamesArePercentEncodedAndDecodeBack() {
        for name in ["a/b", "100%", ".hidden", "plain-name", "x\u{1}y", "..", ".", "Café", "日本/語", "🙂"] {
            let encoded = StoreLayout.encode(name)
            #expect(!encoded.contains("/"))
            #expect(!encoded.hasPrefix("."))
            #expect(StoreLayout.decode(encoded) == name)
        }
        // Characters beyond ASCII stay as they are: a zone "Café" is the folder "Café".
        #expect(StoreLayout.encode("Café") == "Café")
        #expect(StoreLayout.encode("日本/語") == "日本%2F語")
    }
}
