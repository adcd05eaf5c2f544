extension ArraySlice where Element == UInt8 {
    /// The decimal integer written at `start` (an optional `-`, then at most 18 digits, so it
    /// fits an `Int64`), and the index after it; nil when no digit is there. The log's and
    /// `zone.json`'s readers take numbers out of text they know the shape of, without parsing
    /// the whole of it.
    func decimalInteger(at start: Int) -> (value: Int64, end: Int)? {
        var i = start
        let negative = i < endIndex && self[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        var value: Int64 = 0
        let first = i
        while i < endIndex, self[i] >= 0x30, self[i] <= 0x39, i - first < 18 {
            value = value * 10 + Int64(self[i] - 0x30)
            i += 1
        }
        guard i > first else { return nil }
        return (negative ? -value : value, i)
    }
}
