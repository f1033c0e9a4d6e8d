import Foundation
import Integrations
import Testing

@Suite struct RetryScheduleTests {
    @Test func theDefaultIsTheStandardWebhooksSchedule() {
        let schedule = RetrySchedule.standardWebhooks
        #expect(schedule.attempts == 10)
        #expect(schedule.delays == [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400])
        // About three days, and never less than three: a destination back within three days receives everything.
        #expect(schedule.span == 272_105_000)
        #expect(schedule.span >= 3 * 24 * 3_600_000)
    }

    @Test func eachRetryComesAfterItsDelayWithinTenPercent() {
        let schedule = RetrySchedule.standardWebhooks
        var now: Int64 = 1_000_000
        let first = now
        for attempt in 1...9 {
            let delay = schedule.delays[attempt - 1] * 1000
            let early = schedule.nextAttempt(afterFailed: attempt, firstAttemptAt: first, now: now, jitter: -1)
            let late = schedule.nextAttempt(afterFailed: attempt, firstAttemptAt: first, now: now, jitter: 1)
            let exact = schedule.nextAttempt(afterFailed: attempt, firstAttemptAt: first, now: now, jitter: 0)
            // The last attempt waits at least for the schedule's span from the first.
            let floor = attempt == 9 ? first + schedule.span : Int64.min
            #expect(late == max(floor, now + delay + delay / 10))
            #expect(exact == max(floor, now + delay))
            #expect(early == max(floor, now + delay - delay / 10))
            now = early ?? now
        }
        // Always early, and still the last attempt waits for the whole schedule's span from the first.
        #expect(now == first + schedule.span)
        #expect(schedule.nextAttempt(afterFailed: 10, firstAttemptAt: first, now: now, jitter: 0) == nil)
    }

    @Test func retryAfterIsAFloor() {
        let schedule = RetrySchedule.standardWebhooks
        #expect(schedule.nextAttempt(afterFailed: 1, firstAttemptAt: 0, now: 0, jitter: 0, retryAfter: 60_000) == 60_000)
        #expect(schedule.nextAttempt(afterFailed: 2, firstAttemptAt: 0, now: 0, jitter: 0, retryAfter: 60_000) == 300_000)
    }

    @Test func anOperatorsScheduleIsChecked() throws {
        let schedule = try RetrySchedule(seconds: [1, 2])
        #expect(schedule.attempts == 3)
        #expect(schedule.nextAttempt(afterFailed: 2, firstAttemptAt: 0, now: 1000, jitter: 0) == 3000)
        #expect(schedule.nextAttempt(afterFailed: 3, firstAttemptAt: 0, now: 1000, jitter: 0) == nil)
        #expect(try RetrySchedule(seconds: []).attempts == 1)
        for bad: [Int64] in [[-1], [RetrySchedule.maximumDelay + 1], Array(repeating: 1, count: 51)] {
            #expect(throws: IntegrationError.self) { try RetrySchedule(seconds: bad) }
        }
    }

    @Test func retryAfterReadsSecondsAndHTTPDates() {
        let now: Int64 = 784_111_777_000  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(RetryAfter.milliseconds("120", now: now) == 120_000)
        #expect(RetryAfter.milliseconds(" 1.5 ", now: now) == 1500)
        #expect(RetryAfter.milliseconds("Sun, 06 Nov 1994 08:50:37 GMT", now: now) == 60_000)
        #expect(RetryAfter.milliseconds("Sun, 06 Nov 1994 08:48:37 GMT", now: now) == 0)
        #expect(RetryAfter.milliseconds("-3", now: now) == nil)
        #expect(RetryAfter.milliseconds("soon", now: now) == nil)
        // A destination's extreme numbers are cut to a week, never overflow.
        let week = RetrySchedule.maximumDelay * 1000
        for extreme in ["9223372036854775807", "1e400", "inf", "Fri, 31 Dec 9999 23:59:59 GMT"] {
            #expect(RetryAfter.milliseconds(extreme, now: now) == week, "\(extreme)")
        }
        #expect(RetryAfter.milliseconds("nan", now: now) == nil)
    }
}
