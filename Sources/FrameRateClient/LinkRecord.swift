import FrameRateModel
import FrameRateProtocol
import Synchronization

/// What the client knows about one of its links, shared by its
/// ``DisplayLinkHandle`` and the connection's router: the registration as it
/// stands now (range and paused flag after every update, so a later reconnect
/// can re-register it), the latest status, and how it ended.
final class LinkRecord: Sendable {
    /// The mutable part.
    struct State: Sendable {
        /// The request that would register the link as it stands now.
        var registration: RegisterRequest
        /// The latest Register or Update result.
        var status: LinkStatusResult?
        /// How the link ended, once it has.
        var end: DisplayLinkEnd?
    }

    private let state: Mutex<State>

    /// A record for a registration about to be sent.
    init(registration: RegisterRequest) {
        self.state = Mutex(State(registration: registration))
    }

    /// A copy of the current state.
    var snapshot: State { state.withLock { $0 } }

    /// Records a successful Register or Update; `range` and `paused` are what the update changed.
    func didUpdate(status: LinkStatusResult, range: FrameRateRange?, paused: Bool?) {
        state.withLock { state in
            if let range { state.registration.range = range }
            if let paused { state.registration.paused = paused }
            state.status = status
        }
    }

    /// Records how the link ended (the first end wins).
    func didEnd(_ end: DisplayLinkEnd) {
        state.withLock { state in
            if state.end == nil { state.end = end }
        }
    }
}
