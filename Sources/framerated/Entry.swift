import ArgumentParser
import FrameRatePosix
import NIOCore
import NIOPosix

/// The process entry: sets up what must precede every other thread, then runs
/// ``Framerated``.
@main
enum Entry {
    /// Runs on the main thread, and before its first suspension nothing else has run: no
    /// task has been enqueued and no thread started.
    static func main() async {
        // Swift concurrency's jobs run on the NIO event loops the server already uses,
        // never on libdispatch's pool (whose monitor would wake the daemon every second).
        GlobalExecutorHook.install { job, _ in
            MultiThreadedEventLoopGroup.singleton.any().executor.enqueue(ExecutorJob(job))
        }
        await Framerated.main()
    }
}
