/// One zone's page of a query: the records in result order, each with the values it was
/// sorted by.
package struct QueryPage {
    var entries: [SortedRecords.Entry]
    var more: Bool
    /// Whether each entry's values start with the equality group's key (not a sort key).
    var grouped: Bool

    /// The values of `entry` for the query's own sort descriptors.
    func sortValues(_ entry: SortedRecords.Entry) -> [FieldValue?] {
        grouped ? Array(entry.values.dropFirst()) : entry.values
    }
}
