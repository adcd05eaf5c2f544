import Foundation

/// A query predicate in the subset of `NSPredicate` CloudKit accepts, parsed from its
/// format language by `PredicateParser` (Foundation's `NSPredicate(format:)` does not exist
/// on Linux).
///
/// Keys name record fields or the system fields `recordID`, `creationDate`,
/// `modificationDate`, `creatorUserRecordID` and `lastModifiedUserRecordID`. The
/// description is format text that parses back to an equal predicate.
public indirect enum QueryPredicate: Sendable, Equatable, CustomStringConvertible {
    /// `TRUEPREDICATE`: every record.
    case all
    case and([QueryPredicate])
    case not(QueryPredicate)
    /// `key == value`, `key < value` …
    case compare(String, ComparisonOperator, PredicateValue)
    /// `key BETWEEN {low, high}`, both ends included.
    case between(String, PredicateValue, PredicateValue)
    /// `key IN {a, b}`.
    case isIn(String, [PredicateValue])
    /// `key BEGINSWITH 'prefix'`.
    case beginsWith(String, String)
    /// `key CONTAINS value`: a list field holds the value.
    case contains(String, PredicateValue)
    /// `self CONTAINS 'word'` or `allTokens TOKENMATCHES[cdl] 'some words'`: every word is
    /// among the words of the record's string fields, ignoring case and diacritics.
    case tokens(String)
    /// `distanceToLocation:fromLocation:(key, LOCATION(lat, lon)) < metres`.
    case distance(String, Location, ComparisonOperator, Double)

    public var description: String { PredicatePrinter.format(self) }
}

public enum ComparisonOperator: String, Sendable, CaseIterable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="

    /// The operator with its sides swapped (`5 < key` is `key > 5`).
    var flipped: ComparisonOperator {
        switch self {
        case .equal, .notEqual: self
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        }
    }
}

/// A constant in a predicate: a literal of the format text or a `%@` argument.
public enum PredicateValue: Sendable, Equatable, CustomStringConvertible {
    case string(String)
    case int(Int64)
    case double(Double)
    /// A date, whole, as record timestamps are kept.
    case date(Date)
    case location(Location)
    /// A record by name: a reference field, `recordID`, or a user record ID.
    case reference(String)
    case list([PredicateValue])

    public var description: String { PredicatePrinter.value(self) }

    /// The date `milliseconds` after 1970 began.
    public static func date(milliseconds: Int64) -> PredicateValue { .date(Date(millisecondsSince1970: milliseconds)) }
}

/// Prints predicates as format text that `PredicateParser` reads back.
enum PredicatePrinter {
    static func format(_ p: QueryPredicate) -> String {
        switch p {
        case .all: return "TRUEPREDICATE"
        case .and(let parts) where parts.isEmpty: return "TRUEPREDICATE"
        case .and(let parts): return parts.map { part in
            if case .and = part { return "(\(format(part)))" }
            return format(part)
        }.joined(separator: " AND ")
        case .not(let inner):
            switch inner {
            case .and: return "NOT (\(format(inner)))"
            default: return "NOT \(format(inner))"
            }
        case .compare(let key, let op, let value): return "\(keyText(key)) \(op.rawValue) \(self.value(value))"
        case .between(let key, let low, let high): return "\(keyText(key)) BETWEEN {\(value(low)), \(value(high))}"
        case .isIn(let key, let values): return "\(keyText(key)) IN {\(values.map(value).joined(separator: ", "))}"
        case .beginsWith(let key, let prefix): return "\(keyText(key)) BEGINSWITH \(string(prefix))"
        case .contains(let key, let v): return "\(keyText(key)) CONTAINS \(value(v))"
        case .tokens(let text): return "allTokens TOKENMATCHES[cdl] \(string(text))"
        case .distance(let key, let loc, let op, let metres):
            return "distanceToLocation:fromLocation:(\(keyText(key)), \(value(.location(loc)))) \(op.rawValue) \(number(metres))"
        }
    }

    static func value(_ v: PredicateValue) -> String {
        switch v {
        case .string(let s): return string(s)
        case .int(let i): return String(i)
        case .double(let d): return number(d)
        case .date(let d): return "CAST(\(number(d.timeIntervalSinceReferenceDate)), \"NSDate\")"
        case .location(let l): return "LOCATION(\(number(l.latitude)), \(number(l.longitude)))"
        case .reference(let name): return "REFERENCE(\(string(name)))"
        case .list(let items): return "{" + items.map(value).joined(separator: ", ") + "}"
        }
    }

    /// A key as written; one that is also a reserved word is escaped with `#`, as NSPredicate does.
    static func keyText(_ key: String) -> String {
        PredicateLexer.reserved.contains(key.uppercased()) ? "#" + key : key
    }

    static func string(_ s: String) -> String {
        var out = "\""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if c.value < 0x20 { out += String(format: "\\u%04x", c.value) } else { out.unicodeScalars.append(c) }
            }
        }
        return out + "\""
    }

    static func number(_ d: Double) -> String {
        if d == d.rounded(), abs(d) < 1e15 { return String(format: "%.1f", d) }
        return "\(d)"
    }
}
