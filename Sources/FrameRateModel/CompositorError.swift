/// Why the compositor refused an operation. Each case's description says what
/// was wrong and what to do.
public enum CompositorError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No display has this id.
    case unknownDisplay(DisplayID, known: [DisplayID])
    /// The link does not exist, or belongs to another owner (both look the same
    /// to the caller, so one client cannot probe another's links).
    case linkNotFound(LinkID)
    /// A frame-done report or a `Present` named a sequence the link has not been sent: a
    /// later one, or an interval it skipped.
    case sequenceNotDelivered(LinkID, sequence: UInt64, lastDelivered: UInt64)
    /// A `Present` named a delivered tick whose target the link no longer keeps: neither
    /// one of its 8 latest delivered ticks nor its first while that is still kept (until
    /// the link first presents). `oldest` is the oldest of the 8 latest.
    case sequenceTooOld(LinkID, sequence: UInt64, oldest: UInt64)
    /// A `Present`'s `vsyncId` is not the presentation vsync of one of the tick's possible
    /// frame timelines (``FrameTimelines/presentation(of:schedule:latency:)``): those are `offered`.
    case vsyncNotOffered(LinkID, sequence: UInt64, vsyncID: UInt64, offered: [UInt64])

    /// A sentence for the user.
    public var description: String {
        switch self {
        case .unknownDisplay(let display, let known):
            "no \(display); known displays: " + known.map { String($0.rawValue) }.joined(separator: ", ")
        case .linkNotFound(let link):
            "\(link) does not exist on this connection (already invalidated, or registered by another client)"
        case .sequenceNotDelivered(let link, let sequence, let lastDelivered):
            "\(link) was never sent sequence \(sequence); the latest tick it was sent is \(lastDelivered)"
        case .sequenceTooOld(let link, let sequence, let oldest):
            "sequence \(sequence) of \(link) is too old to present; present the frame of a recent tick (\(oldest) or later; "
                + "a link keeps its 8 latest ticks, and its first until it presents)"
        case .vsyncNotOffered(let link, let sequence, let vsyncID, let offered):
            "vsyncId \(vsyncID) is not one of the frame timelines of tick \(sequence) of \(link); its timelines' vsyncIds are "
                + offered.map(String.init).joined(separator: ", ")
        }
    }
}
