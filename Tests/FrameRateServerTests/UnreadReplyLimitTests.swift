import FrameRateModel
import Testing

@testable import FrameRateServer

@Suite("UnreadReplyLimit: a user's connections that do not read their replies")
struct UnreadReplyLimitTests {
    static func owner(_ number: UInt64) -> OwnerID { OwnerID(rawValue: number) }

    @Test("below the limit nobody waits; at it, the user's other connections wait and resume when one drains")
    func waitsAtTheLimitAndResumes() {
        var limit = UnreadReplyLimit(limit: 2)
        var waits = limit.mustWait(Self.owner(9), uid: 1000)
        #expect(!waits)
        var resumed = limit.writabilityChanged(of: Self.owner(1), uid: 1000, writable: false)
        #expect(resumed.isEmpty)
        waits = limit.mustWait(Self.owner(9), uid: 1000)
        #expect(!waits)
        resumed = limit.writabilityChanged(of: Self.owner(2), uid: 1000, writable: false)
        #expect(resumed.isEmpty)
        #expect(limit.unreadCount(of: 1000) == 2)
        waits = limit.mustWait(Self.owner(9), uid: 1000)
        #expect(waits)
        waits = limit.mustWait(Self.owner(8), uid: 1000)
        #expect(waits)
        // Another user is not affected.
        waits = limit.mustWait(Self.owner(20), uid: 1001)
        #expect(!waits)
        // A report that a connection is still unread changes nothing.
        resumed = limit.writabilityChanged(of: Self.owner(2), uid: 1000, writable: false)
        #expect(resumed.isEmpty)
        // One drains: both waiting connections resume, once.
        resumed = limit.writabilityChanged(of: Self.owner(1), uid: 1000, writable: true)
        #expect(resumed == [Self.owner(9), Self.owner(8)])
        resumed = limit.writabilityChanged(of: Self.owner(2), uid: 1000, writable: true)
        #expect(resumed.isEmpty)
        #expect(limit.unreadCount(of: 1000) == 0)
    }

    @Test("an unread connection does not count against its own request")
    func ownUnreadDoesNotCount() {
        var limit = UnreadReplyLimit(limit: 2)
        _ = limit.writabilityChanged(of: Self.owner(1), uid: 7, writable: false)
        _ = limit.writabilityChanged(of: Self.owner(2), uid: 7, writable: false)
        var waits = limit.mustWait(Self.owner(1), uid: 7)
        #expect(!waits)
        waits = limit.mustWait(Self.owner(3), uid: 7)
        #expect(waits)
    }

    @Test("a line paused between turns counts like an unread connection, once, whatever else holds it")
    func linesInProgressCount() {
        var limit = UnreadReplyLimit(limit: 2)
        var resumed = limit.lineInProgress(of: Self.owner(1), uid: 3, true)
        #expect(resumed.isEmpty)
        _ = limit.lineInProgress(of: Self.owner(2), uid: 3, true)
        // Unread as well: still one connection.
        _ = limit.writabilityChanged(of: Self.owner(2), uid: 3, writable: false)
        #expect(limit.unreadCount(of: 3) == 2)
        var waits = limit.mustWait(Self.owner(9), uid: 3)
        #expect(waits)
        // The line finishes, but the connection is still unread: no one resumes.
        resumed = limit.lineInProgress(of: Self.owner(2), uid: 3, false)
        #expect(resumed.isEmpty)
        // The other line finishes: below the limit.
        resumed = limit.lineInProgress(of: Self.owner(1), uid: 3, false)
        #expect(resumed == [Self.owner(9)])
        waits = limit.mustWait(Self.owner(9), uid: 3)
        #expect(!waits)
        resumed = limit.writabilityChanged(of: Self.owner(2), uid: 3, writable: true)
        #expect(resumed.isEmpty)
        #expect(limit.unreadCount(of: 3) == 0)
    }

    @Test("closing an unread connection resumes the waiting ones; closing a waiting one forgets it")
    func closes() {
        var limit = UnreadReplyLimit(limit: 1)
        _ = limit.writabilityChanged(of: Self.owner(1), uid: 5, writable: false)
        var waits = limit.mustWait(Self.owner(2), uid: 5)
        #expect(waits)
        waits = limit.mustWait(Self.owner(3), uid: 5)
        #expect(waits)
        var resumed = limit.closed(Self.owner(3), uid: 5)
        #expect(resumed.isEmpty)
        resumed = limit.closed(Self.owner(1), uid: 5)
        #expect(resumed == [Self.owner(2)])
        #expect(limit.unreadCount(of: 5) == 0)
        // Nothing left over: a drain of a connection never counted resumes nobody.
        resumed = limit.writabilityChanged(of: Self.owner(4), uid: 5, writable: true)
        #expect(resumed.isEmpty)
    }
}
