import FrameRateProtocol
import Testing

@testable import FrameRateServer

/// The per-user pacing of the control loop, on a stepped clock with exact instants.
@Suite struct UserPacingTests {
    func at(_ milliseconds: Int) -> MonotonicClock.Instant { MonotonicClock.Instant(nanoseconds: Int64(milliseconds) * 1_000_000) }

    /// 10 % of the loop with a 50 ms burst; a reply rate too high to matter.
    let loopOnly = UserPacingLimits(loopShare: 0.1, loopBurst: .milliseconds(50), replyBytesPerSecond: 1 << 40, replyBurstBytes: 1 << 40)
    /// 1,000,000 reply bytes per second with a 100,000-byte burst; the whole loop.
    let bytesOnly = UserPacingLimits(loopShare: 1, loopBurst: .seconds(60), replyBytesPerSecond: 1_000_000, replyBurstBytes: 100_000)

    @Test func aUserWithinItsShareNeverWaits() {
        var pacing = UserPacing(limits: loopOnly)
        // 9 ms of loop every 100 ms: 9 %, for 10 s.
        for step in 0..<100 {
            #expect(pacing.resumption(of: 1000, at: at(step * 100)) == nil)
            pacing.charge(1000, loopTime: .milliseconds(9), replyBytes: 0, at: at(step * 100))
        }
    }

    @Test func theBurstGoesAtOnceThenTheShareHolds() {
        var pacing = UserPacing(limits: loopOnly)
        // Five 10 ms requests at once are the 50 ms burst.
        for _ in 0..<5 {
            #expect(pacing.resumption(of: 1000, at: at(0)) == nil)
            pacing.charge(1000, loopTime: .milliseconds(10), replyBytes: 0, at: at(0))
        }
        // The sixth pays for it: 50 ms of loop at 10 % is 500 ms of wall time, the burst
        // tolerates 500 ms ahead; one more 10 ms puts the user 100 ms past it.
        #expect(pacing.resumption(of: 1000, at: at(0)) == nil)
        pacing.charge(1000, loopTime: .milliseconds(10), replyBytes: 0, at: at(0))
        #expect(pacing.resumption(of: 1000, at: at(0)) == at(100))
        #expect(pacing.resumption(of: 1000, at: at(99)) == at(100))
        #expect(pacing.resumption(of: 1000, at: at(100)) == nil)
        // From then on, one 10 ms request per 100 ms: exactly 10 %.
        for step in 1...20 {
            pacing.charge(1000, loopTime: .milliseconds(10), replyBytes: 0, at: at(step * 100))
            #expect(pacing.resumption(of: 1000, at: at(step * 100)) == at((step + 1) * 100))
        }
    }

    @Test func oneReplyLargerThanTheBurstGoesThroughAndIsPaidAfter() {
        var pacing = UserPacing(limits: bytesOnly)
        #expect(pacing.resumption(of: 65534, at: at(0)) == nil)
        // A 338,000-byte GetState at 1 MB/s is 338 ms; the burst tolerates 100 ms of it.
        pacing.charge(65534, loopTime: .zero, replyBytes: 338_000, at: at(0))
        #expect(pacing.resumption(of: 65534, at: at(0)) == at(238))
        #expect(pacing.resumption(of: 65534, at: at(238)) == nil)
        // A quiet spell refills the burst, never more.
        #expect(pacing.resumption(of: 65534, at: at(10_000)) == nil)
        pacing.charge(65534, loopTime: .zero, replyBytes: 100_000, at: at(10_000))
        #expect(pacing.resumption(of: 65534, at: at(10_000)) == nil)
        pacing.charge(65534, loopTime: .zero, replyBytes: 1_000, at: at(10_000))
        #expect(pacing.resumption(of: 65534, at: at(10_000)) == at(10_001))
    }

    @Test func usersArePacedApart() {
        var pacing = UserPacing(limits: bytesOnly)
        pacing.charge(1, loopTime: .zero, replyBytes: 1_000_000, at: at(0))
        #expect(pacing.resumption(of: 1, at: at(0)) == at(900))
        #expect(pacing.resumption(of: 2, at: at(0)) == nil)
        pacing.charge(2, loopTime: .zero, replyBytes: 1_000, at: at(0))
        #expect(pacing.resumption(of: 2, at: at(0)) == nil)
    }

    @Test func theSlowerOfTheTwoRatesDecides() {
        var pacing = UserPacing(
            limits: UserPacingLimits(loopShare: 0.5, loopBurst: .zero, replyBytesPerSecond: 1_000_000, replyBurstBytes: 0)
        )
        // 10 ms of loop at 50 % is 20 ms; 50,000 bytes at 1 MB/s is 50 ms.
        pacing.charge(7, loopTime: .milliseconds(10), replyBytes: 50_000, at: at(0))
        #expect(pacing.resumption(of: 7, at: at(0)) == at(50))
        // 100 ms of loop at 50 % is 200 ms; 1,000 bytes is 1 ms.
        pacing.charge(7, loopTime: .milliseconds(100), replyBytes: 1_000, at: at(50))
        #expect(pacing.resumption(of: 7, at: at(50)) == at(250))
    }

    @Test func extremeChargesNeitherTrapNorLastForever() throws {
        var pacing = UserPacing(limits: UserPacingLimits(loopShare: 0.001, replyBytesPerSecond: 1))
        pacing.charge(3, loopTime: .seconds(86_400 * 365), replyBytes: .max, at: at(0))
        pacing.charge(4, loopTime: .zero - .seconds(5), replyBytes: -1, at: at(0))
        let resumption = try #require(pacing.resumption(of: 3, at: at(0)))
        // Each rate charges at most UserPacing.longestCharge of loop time or of bytes.
        #expect(resumption <= at(0).advanced(by: UserPacing.longestCharge * 1000))
        #expect(pacing.resumption(of: 4, at: at(0)) == nil, "a negative charge costs nothing")
    }

    @Test func usersWhoPaidOffAreForgotten() {
        var pacing = UserPacing(limits: bytesOnly)
        // 100,000 users, each charged once, one per millisecond: only those still owing stay.
        for uid in 0..<100_000 {
            pacing.charge(UInt32(uid), loopTime: .zero, replyBytes: 1_000, at: at(uid))
        }
        #expect(pacing.trackedUsers < 200, "\(pacing.trackedUsers) users tracked")
    }
}
