import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// A date field comes back exactly as it was saved: files keep milliseconds since 1970, as
/// CloudKit Web Services write them, and the `fraction` of a millisecond past them; whole
/// milliseconds are written as before, with no `fraction`. Queries compare dates whole; the
/// index keeps them to the millisecond and pages through dates that share one without a
/// repeat or a gap.
@Suite struct ExactDateTests {
    typealias G = PropertyListCodingTests.Generator

    /// Dates as `Date()` makes them (every bit of the double used), across the years 1900 to
    /// 2200, and whole milliseconds and seconds among them.
    static func dates(_ count: Int, seed: UInt64) -> [Date] {
        var g = G(state: seed)
        return (0..<count).map { i in
            let seconds = Double.random(in: -3_187_296_000...6_311_433_600, using: &g)
            switch i % 4 {
            case 0: return Date(millisecondsSince1970: Int64(seconds * 1000))
            case 1: return Date(timeIntervalSince1970: seconds.rounded())
            default: return Date(timeIntervalSinceReferenceDate: seconds - 978_307_200)
            }
        } + [Date(), Date(timeIntervalSinceReferenceDate: 786_000_000.000_000_06), Date.distantFuture, Date.distantPast]
    }

    @Test func millisecondPartsMakeTheDateAgain() {
        for date in Self.dates(5_000, seed: 1) {
            let (ms, fraction) = date.millisecondParts
            #expect(Date(millisecondsSince1970: ms, fraction: fraction) == date, "\(date.timeIntervalSinceReferenceDate)")
            #expect(ms == date.millisecondsSince1970)
            #expect(abs(fraction) < 1, "\(fraction): a file takes a fraction between -1 and 1")
            if fraction == 0 { #expect(Date(millisecondsSince1970: ms) == date) }
        }
    }

    /// Within a second of 2001 a date is finer than a millisecond's fraction can always say: it
    /// comes back to its last bit or two.
    @Test func aDateNearTwoThousandOneKeepsItsPrecision() {
        var g = G(state: 3)
        for _ in 0..<5_000 {
            let t = Double.random(in: -1...1, using: &g) * pow(10, Double.random(in: -9...0, using: &g))
            let (ms, fraction) = Date(timeIntervalSinceReferenceDate: t).millisecondParts
            let back = Date(millisecondsSince1970: ms, fraction: fraction).timeIntervalSinceReferenceDate
            #expect(abs(back - t) <= 2 * t.ulp, "\(t) came back \(back)")
        }
    }

    /// A date no record may hold is refused by a save with the reason, and never traps.
    @Test func aDateOutsideTheYearsOneToNineThousandNineHundredNinetyNineIsRefused() throws {
        let db = try TempStore().db()
        for date in [Date(timeIntervalSince1970: 1e15), Date(timeIntervalSince1970: -1e15), Date(timeIntervalSinceReferenceDate: .nan),
                     Date(timeIntervalSinceReferenceDate: .infinity)] {
            let r = Record(recordType: "T", recordID: RecordID(recordName: "far"), fields: ["at": .timestamp(date)])
            var error: CKError?
            if case .failure(let e)? = try db.modify(saving: [r]).saveResults.first?.1 { error = e }
            #expect(error?.code == .invalidArguments, "\(date.timeIntervalSince1970)")
            #expect(error?.message.contains("outside the years 1 to 9999") == true, "\(error?.message ?? "saved")")
            _ = date.millisecondParts
            _ = date.millisecondsSince1970
        }
        // The farthest milliseconds with a fraction: made, not trapped on.
        #expect(!Date(millisecondsSince1970: .min, fraction: 0.5).isStorable)
        #expect(!Date(millisecondsSince1970: .max, fraction: -0.5).isStorable)
    }

    @Test func aDateComesBackWholeFromItsFile() throws {
        let dates = Self.dates(2_000, seed: 2)
        for (i, date) in dates.enumerated() {
            let r = Record(stored: "T", recordID: RecordID(recordName: "r\(i)"),
                           fields: ["when": .timestamp(date), "whens": .list(.timestamp, [.timestamp(date), .timestamp(milliseconds: 7), .timestamp(dates[(i + 1) % dates.count])])],
                           tag: "1", created: nil, modified: nil)
            let bytes = RecordCoding.fileBytes(r)
            let back = try RecordCoding.decode(try JSONParser.parse(bytes), mode: .stored).record
            #expect(back.fields == r.fields, "\(String(decoding: bytes, as: UTF8.self))")
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.contains("\"value\": \(date.millisecondsSince1970)"))
            #expect(text.contains("\"fraction\"") == (date.millisecondParts.fraction != 0 || dates[(i + 1) % dates.count].millisecondParts.fraction != 0))
        }
    }

    /// A whole millisecond is written as it always was: the bytes of a record saved before
    /// dates were kept whole.
    @Test func aWholeMillisecondIsWrittenAsBefore() throws {
        let r = Record(stored: "T", recordID: RecordID(recordName: "r"), fields: ["when": .timestamp(milliseconds: 1_714_000_000_123)],
                       tag: "1", created: nil, modified: nil)
        let text = String(decoding: RecordCoding.fileBytes(r), as: UTF8.self)
        #expect(text.contains("""
            "when": {
                  "type": "TIMESTAMP",
                  "value": 1714000000123
                }
            """), "\(text)")
    }

    /// What a person or a tool writes: a fraction that is no number, too large, or on another
    /// type, is refused saying what to write; a value with a fraction in it is taken.
    @Test func badFractionsAreRefusedAndFractionalValuesTaken() throws {
        func decode(_ field: String) throws(CKError) -> FieldValue? {
            let json = try! JSONParser.parse(Array("{\"recordType\": \"T\", \"fields\": {\"f\": \(field)}}".utf8))
            return try RecordCoding.decode(json, mode: .input).record["f"]
        }
        for (field, says) in [
            (#"{"type": "TIMESTAMP", "value": 5, "fraction": "x"}"#, "a number between -1 and 1"),
            (#"{"type": "TIMESTAMP", "value": 5, "fraction": 1.5}"#, "a number between -1 and 1"),
            (#"{"type": "INT64", "value": 5, "fraction": 0.5}"#, "TIMESTAMP fields only"),
            (#"{"type": "TIMESTAMP_LIST", "value": [5, 6], "fraction": [0.5]}"#, "a list of 2 numbers"),
            (#"{"value": 5, "fraction": 0.5}"#, "add \"type\": \"TIMESTAMP\""),
            // Dates no record holds, which once went through arithmetic that traps.
            (#"{"type": "TIMESTAMP", "value": -9223372036854775808, "fraction": 0.5}"#, "outside the years 1 to 9999"),
            (#"{"type": "TIMESTAMP", "value": 9223372036854775807}"#, "outside the years 1 to 9999"),
            (#"{"type": "TIMESTAMP", "value": 1e300}"#, "outside the years 1 to 9999"),
        ] {
            #expect(throws: CKError.self, "\(field)") { _ = try decode(field) }
            do { _ = try decode(field) } catch { #expect(error.message.contains(says), "\(field): \(error.message)") }
        }
        let half = try decode(#"{"type": "TIMESTAMP", "value": 1714000000123.25}"#)
        #expect(half == .timestamp(Date(millisecondsSince1970: 1_714_000_000_123, fraction: 0.25)))
        let listed = try decode(#"{"type": "TIMESTAMP_LIST", "value": [5, 6], "fraction": [0, -0.125]}"#)
        #expect(listed == .list(.timestamp, [.timestamp(milliseconds: 5), .timestamp(Date(millisecondsSince1970: 6, fraction: -0.125))]))
    }

    /// Records whose dates share milliseconds, queried by date and sorted by it: the store
    /// that reads them into memory and the one that reads them from the index give every
    /// match once, page after page, and a bound inside a millisecond is kept exactly.
    @Test func datesSharingAMillisecondArePagedAndComparedWhole() throws {
        let t = try TempStore()
        let db = try t.db()
        let base = Date(millisecondsSince1970: 1_714_000_000_000)
        // 12 milliseconds, 10 dates in each, 0.05 ms apart; names against the dates' order.
        let dates = (0..<120).map { base.addingTimeInterval(Double($0 / 10) / 1000 + Double($0 % 10) * 0.000_05) }
        let records = dates.enumerated().map { i, date in
            Record(recordType: "Event", recordID: RecordID(recordName: String(format: "e%03d", 119 - i)), fields: ["at": .timestamp(date)])
        }
        if let e = try db.modify(saving: records).error { throw e }
        let bound = dates[57]
        let readers = [try t.reopen().container().database(.private, caller: Caller(userName: "alice")),
                       try t.reopen(reading: .indexed).container().database(.private, caller: Caller(userName: "alice"))]
        for (reader, how) in zip(readers, ["in memory", "indexed"]) {
            for (op, expected) in [(ComparisonOperator.less, dates.filter { $0 < bound }), (.greaterOrEqual, dates.filter { $0 >= bound }),
                                   (.equal, [bound]), (.notEqual, dates.filter { $0 != bound })] {
                let query = RecordQuery(recordType: "Event", predicate: .compare("at", op, .date(bound)),
                                        sortDescriptors: [QuerySortDescriptor(key: "at", ascending: false)])
                let names = try ZoneIndexFileTests.pages(reader, query, limit: 7, atMost: 200)
                #expect(names.count == expected.count && Set(names).count == names.count, "\(how) \(op): \(names.count) names, \(expected.count) expected")
                let found = try names.map { name throws -> Date in
                    guard case .timestamp(let d)? = try reader.record(for: RecordID(recordName: name))["at"] else { throw CKError(.unknownItem, name) }
                    return d
                }
                #expect(Set(found) == Set(expected), "\(how) \(op)")
                if how == "in memory" { #expect(found == expected.sorted(by: >), "\(how) \(op): in the dates' order") }
            }
        }
    }
}
