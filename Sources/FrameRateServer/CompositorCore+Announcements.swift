package import FrameRateModel

/// The links the tick plane found held back or resumed, announced to watchers and the
/// journal a bounded number a loop turn.
///
/// Each announcement is a line to every watch. A user whose 1,024 links each leave a tick
/// unanswered puts them all on hold at one vsync, and a batch of `FrameDone` resumes them
/// at one; with the 64 watches a user may hold, announcing a burst in one task was 65,536
/// lines, the control loop taken from everyone meanwhile. So the hand-overs go into a
/// queue, in the order the tick plane found them (a link's hold before its resumption),
/// and each turn announces as many as about ``announcementLinesPerTurn`` lines allow; the
/// rest wait 1 ms, while the loop serves its sockets.
extension CompositorCore {
    /// One link to announce.
    enum LinkAnnouncement {
        case heldBack(DisplayID, HeldBackLink)
        case resumed(DisplayID, ResumedLink)
    }

    /// Watch lines (an announcement to every watch) one turn writes at most, beyond the
    /// first announcement, which always goes.
    static let announcementLinesPerTurn = 2048

    /// The tick plane's hand-over of one vsync: `links` of `display` went on hold.
    package func linksHeldBack(display: DisplayID, _ links: [HeldBackLink]) {
        for link in links { pendingAnnouncements.append(.heldBack(display, link)) }
        announcePending()
    }

    /// The tick plane's hand-over of one vsync: `links` of `display` tick again.
    package func linksResumed(display: DisplayID, _ links: [ResumedLink]) {
        for link in links { pendingAnnouncements.append(.resumed(display, link)) }
        announcePending()
    }

    /// Announces the queued links, as many as a turn allows, and schedules the rest.
    func announcePending() {
        let perTurn = Swift.max(1, Self.announcementLinesPerTurn / Swift.max(1, watchers.count))
        var announced = 0
        while announced < perTurn, let next = pendingAnnouncements.popFirst() {
            switch next {
            case .heldBack(let display, let link): linkHeldBack(display: display, link)
            case .resumed(let display, let link): linkResumed(display: display, link)
            }
            announced += 1
        }
        if !pendingAnnouncements.isEmpty { continueInLaterTurn(.announcements) }
    }
}
