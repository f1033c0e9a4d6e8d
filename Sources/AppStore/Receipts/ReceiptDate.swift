/// Parses the instants in app receipts: RFC 3339 as Apple writes them, `2025-12-26T18:39:47Z`, and in Xcode receipts
/// with an offset, `2023-10-19T10:45:36+0100` (also `+01:00`), optionally with fractional seconds.
enum ReceiptDate {
    static func parse(_ text: String) -> Timestamp? {
        let bytes = Array(text.utf8)
        var index = 0

        func digits(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for _ in 0..<count {
                let byte = bytes[index]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
                index += 1
            }
            return value
        }
        func expect(_ char: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == char else { return false }
            index += 1
            return true
        }

        guard let year = digits(4), expect(UInt8(ascii: "-")), let month = digits(2), expect(UInt8(ascii: "-")),
            let day = digits(2), expect(UInt8(ascii: "T")) || expect(UInt8(ascii: " ")),
            let hour = digits(2), expect(UInt8(ascii: ":")), let minute = digits(2), expect(UInt8(ascii: ":")),
            let second = digits(2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }

        var milliseconds = 0
        if expect(UInt8(ascii: ".")) {
            var scale = 100
            var any = false
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                milliseconds += Int(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
                any = true
            }
            guard any else { return nil }
        }

        var offsetMinutes = 0
        if expect(UInt8(ascii: "Z")) {
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = digits(2) else { return nil }
            _ = expect(UInt8(ascii: ":"))
            guard let minutes = digits(2), hours < 24, minutes < 60 else { return nil }
            offsetMinutes = sign * (hours * 60 + minutes)
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }

        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetMinutes * 60)
        return Timestamp(millisecondsSince1970: seconds * 1000 + Int64(milliseconds))
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
