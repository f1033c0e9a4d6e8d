import AppStore

/// Instants for readable tests: days after 2026-01-01T00:00:00Z, in Apple's milliseconds.
public let day: Int64 = 86_400_000
/// 2026-01-01T00:00:00Z.
public let t0: Int64 = 1_767_225_600_000

/// `days` after `t0`, in ms (fractions of a day allowed).
public func at(_ days: Double) -> Int64 { t0 + Int64(days * Double(day)) }

/// `days` after `t0`, as a timestamp.
public func ts(_ days: Double) -> Timestamp { Timestamp(millisecondsSince1970: at(days)) }
