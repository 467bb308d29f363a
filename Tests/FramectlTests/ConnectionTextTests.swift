import FrameRateClient
import FrameRateModel
import Testing
@testable import framectl

/// The stderr lines `register` and `watch` print when the daemon goes and comes back.
@Suite("Connection loss and return lines")
struct ConnectionTextTests {
    @Test("one line when the daemon is lost, one when back, naming the links")
    func lines() {
        #expect(ConnectionText.line(for: .lost) == "daemon gone; reconnecting…")
        #expect(
            ConnectionText.line(for: .restored(outage: .milliseconds(1234), links: [LinkID(rawValue: 3)], watches: 0))
                == "reconnected after 1.2 s; link 3 re-registered"
        )
        #expect(
            ConnectionText.line(for: .restored(outage: .milliseconds(260), links: [LinkID(rawValue: 3), LinkID(rawValue: 5)], watches: 1))
                == "reconnected after 0.3 s; links 3, 5 re-registered; watch restarted"
        )
        #expect(
            ConnectionText.line(for: .restored(outage: .seconds(2), links: [LinkID(rawValue: 1)], watches: 1), mentionWatches: false)
                == "reconnected after 2.0 s; link 1 re-registered"
        )
        #expect(ConnectionText.line(for: .restored(outage: .seconds(2), links: [], watches: 1)) == "reconnected after 2.0 s; watch restarted")
    }
}
