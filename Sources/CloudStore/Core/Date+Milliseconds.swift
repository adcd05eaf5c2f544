import Foundation

/// Dates as the store writes them: milliseconds since 1970, as CloudKit Web Services do, and
/// for a date that is no whole millisecond the rest of it, so that a date comes back from a
/// file exactly as it was saved (`Date()` has sub-microsecond precision; CloudKit's own client
/// keeps a date whole, and code compares dates it saved with `==`).
extension Date {
    /// Seconds from 1970 to 2001, Foundation's reference date.
    static let secondsFrom1970To2001: Int64 = 978_307_200
    /// The dates a record may hold, as CloudKit's: the years 1 to 9999, in milliseconds since
    /// 1970 (either side).
    public static let storableMilliseconds: Int64 = 253_402_300_800_000

    /// Whether a record may hold this date (``storableMilliseconds``).
    public var isStorable: Bool {
        abs(timeIntervalSince1970) < Double(Self.storableMilliseconds) / 1000
    }

    /// The date `milliseconds` after 1970 began.
    public init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// The date `milliseconds + fraction` milliseconds after 1970 began, computed from
    /// 2001 on so that the date's own value (seconds since 2001) is restored whole; `fraction`
    /// 0 is ``init(millisecondsSince1970:)``.
    public init(millisecondsSince1970 milliseconds: Int64, fraction: Double) {
        guard fraction != 0, milliseconds.magnitude < Self.storableMilliseconds.magnitude else {
            self.init(timeIntervalSince1970: (Double(milliseconds) + fraction) / 1000)
            return
        }
        let (wholeSeconds, rest) = (milliseconds - Self.secondsFrom1970To2001 * 1000).quotientAndRemainder(dividingBy: 1000)
        self.init(timeIntervalSinceReferenceDate: Double(wholeSeconds) + (Double(rest) + fraction) / 1000)
    }

    /// The date a Web Services TIMESTAMP names: `milliseconds` since 1970, with a fraction
    /// when a client counts in doubles (JavaScript, Python's `time.time()`), plus `fraction`;
    /// nil outside the years a record may hold.
    public init?(storableMillisecondsSince1970 milliseconds: Double, fraction: Double = 0) {
        guard abs(milliseconds) < Double(Self.storableMilliseconds) else { return nil }
        let whole = milliseconds.rounded()
        self.init(millisecondsSince1970: Int64(whole), fraction: milliseconds - whole + fraction)
    }

    /// Milliseconds since 1970, rounded: how Web Services write a date. A date no record may
    /// hold (``isStorable``) is held to the nearest that one may, and NaN is 0.
    public var millisecondsSince1970: Int64 {
        let ms = (timeIntervalSince1970 * 1000).rounded()
        guard !ms.isNaN else { return 0 }
        return Int64(max(-Double(Self.storableMilliseconds), min(Double(Self.storableMilliseconds), ms)))
    }

    /// The milliseconds since 1970 (rounded) and the fraction of a millisecond that
    /// ``init(millisecondsSince1970:fraction:)`` makes this date of again; the fraction is 0
    /// when the milliseconds alone make it, else within about ±0.5.
    public var millisecondParts: (milliseconds: Int64, fraction: Double) {
        let milliseconds = millisecondsSince1970
        if Date(millisecondsSince1970: milliseconds) == self || !isStorable { return (milliseconds, 0) }
        let (wholeSeconds, rest) = (milliseconds - Self.secondsFrom1970To2001 * 1000).quotientAndRemainder(dividingBy: 1000)
        // The fraction to the nearest bit; the date's own precision (a fraction of a
        // microsecond for dates of this century) is far coarser, so the shortest decimal near
        // it that makes the date again is taken (0.25, not 0.2500000476837158), else the
        // nearest bit or a neighbour of it. Whole seconds are counted toward 2001, so a date
        // within a second of it keeps its precision, all but the last bit or so at times.
        let first = (timeIntervalSinceReferenceDate - Double(wholeSeconds)) * 1000 - Double(rest)
        var scale = 10.0
        for _ in 0..<17 {
            let candidate = (first * scale).rounded() / scale
            if candidate != 0, abs(candidate) < 1, Date(millisecondsSince1970: milliseconds, fraction: candidate) == self { return (milliseconds, candidate) }
            scale *= 10
        }
        var up = first, down = first
        for _ in 0..<64 {
            for candidate in [up, down] where candidate != 0 && abs(candidate) < 1 {
                if Date(millisecondsSince1970: milliseconds, fraction: candidate) == self { return (milliseconds, candidate) }
            }
            up = up.nextUp
            down = down.nextDown
        }
        return (milliseconds, first == 0 ? Double.leastNonzeroMagnitude : max(-0.999, min(0.999, first)))
    }
}
