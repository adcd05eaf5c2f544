import Foundation
import Testing
import TestSupport

/// `ckfs serve`'s records endpoints, driven over real HTTP by Python's `requests`
/// (`Tests/http/test_records.py`): the seven operation types, atomic batches, limits,
/// lookups, every query comparator against a brute-force filter, paging, sorting by distance, and
/// queries across zones, and encrypted fields.
@Suite struct WebServicesRecordsTests {
    func run(_ test: String) throws { try ServeFixture.expectPasses("test_records.py", test) }

    @Test func operationTypes() throws { try run("test_operation_types") }
    @Test func atomicBatches() throws { try run("test_atomic_batches") }
    @Test func limitsAndBadRequests() throws { try run("test_limits_and_bad_requests") }
    @Test func lookupAndNumbers() throws { try run("test_lookup_and_numbers") }
    @Test func datesInFractionalMilliseconds() throws { try run("test_dates_in_fractional_milliseconds") }
    @Test func queryComparators() throws { try run("test_query_comparators") }
    @Test func queryPaging() throws { try run("test_query_paging") }
    @Test func querySortByDistance() throws { try run("test_query_sort_by_distance") }
    @Test func zoneWideQuery() throws { try run("test_zone_wide_query") }
    @Test func untypedFields() throws { try run("test_untyped_fields") }
    @Test func schemaChangedElsewhere() throws { try run("test_schema_changed_elsewhere") }
    @Test func appleRequestShapes() throws { try run("test_apple_request_shapes") }
    @Test func itemErrorCodes() throws { try run("test_item_error_codes") }
    @Test func encryptedFields() throws { try run("test_encrypted_fields") }
}
