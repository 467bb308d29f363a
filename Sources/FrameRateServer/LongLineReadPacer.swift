import NIOCore

/// Paces the reads of connections that are in the middle of a long request line, for all
/// the connections of the control loop together: at most ``readsPerInterval`` of them go
/// ahead per ``interval``, the rest wait their turn in order.
///
/// NIO serves every connection that epoll reports ready in one turn of the loop, so 200
/// connections each streaming a line without a newline made one turn read 200 times
/// (about 10 ms of copying, scanning and closing), and a short request on another
/// connection waited behind that turn. A connection whose line is still open past
/// ``PartialLineTimeoutHandler/longLine`` bytes asks here instead of reading at once:
/// it is not registered for reading until released, so it costs the loop nothing while
/// it waits. Connections sending short lines never come here.
///
/// Confined to the control loop (every call on it), like the handlers that use it.
final class LongLineReadPacer {
    /// Reads released per ``interval`` unless told otherwise: 4 reads of at most 16 KiB a
    /// millisecond for every long line together. A connection asks again only after its
    /// read, so it gets at most one read per interval: a legitimate line of the full 64 KiB
    /// takes about 4 ms alone, and each of its reads waits about N/4 ms behind N other long
    /// lines (N/16 ms with 16). With 16, 200 connections streaming 1 MiB lines kept the
    /// control loop about 60 % busy on the 2-vCPU Intel VM, and other clients' control p99
    /// was 9.47–12.85 ms against a 10 ms bound; with 4 it was 4.88–6.16 ms (`docs/performance.md`,
    /// "On the Intel VM, and the long-line pacer at 4 reads a millisecond").
    static let defaultReadsPerInterval = 4

    /// Reads released per ``interval``.
    let readsPerInterval: Int
    /// How often waiting reads are released.
    let interval: TimeAmount
    private let eventLoop: any EventLoop
    private var waiting = CircularBuffer<() -> Void>()
    private var releaseScheduled = false

    /// - Parameters:
    ///   - readsPerInterval: reads released per `interval` (at least 1).
    ///   - interval: how often waiting reads are released.
    init(eventLoop: any EventLoop, readsPerInterval: Int = defaultReadsPerInterval, interval: TimeAmount = .milliseconds(1)) {
        self.eventLoop = eventLoop
        self.readsPerInterval = max(1, readsPerInterval)
        self.interval = interval
    }

    /// How many reads wait now.
    var waitingCount: Int { waiting.count }

    /// Runs `read` once its turn comes (on the loop, at most ``readsPerInterval`` per
    /// ``interval``, in the order asked).
    func enqueue(_ read: @escaping () -> Void) {
        eventLoop.preconditionInEventLoop()
        waiting.append(read)
        scheduleRelease()
    }

    private func scheduleRelease() {
        guard !releaseScheduled else { return }
        releaseScheduled = true
        eventLoop.assumeIsolated().scheduleTask(in: interval) {
            self.releaseScheduled = false
            self.release()
        }
    }

    private func release() {
        var released = 0
        while released < readsPerInterval, let read = waiting.popFirst() {
            read()
            released += 1
        }
        if !waiting.isEmpty { scheduleRelease() }
    }
}
