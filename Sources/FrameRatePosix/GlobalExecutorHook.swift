import CFrameRatePosix

/// Where Swift concurrency's global executor sends its jobs.
///
/// By default on Linux that is libdispatch's worker pool. Once the pool has started, its
/// monitor (`_dispatch_workq_monitor_pools`) runs on a one-second timer for the life of
/// the process, so a daemon whose tasks only wait still wakes every second. Routing the
/// jobs to an executor of the daemon's own (its NIO event loops) keeps the pool from ever
/// starting.
///
/// Only immediate jobs are redirected: a delayed one (`Task.sleep`, `Clock.sleep`) still
/// goes to libdispatch, which would start the pool. The daemon has none;
/// `Tests/Realtime/test_wakeups.py` fails if an idle daemon starts waking again.
public enum GlobalExecutorHook {
    /// The Swift runtime's `swift_task_enqueueGlobal_hook` type: it receives every job for
    /// the global executor, with the runtime's own enqueue as the second argument.
    public typealias Enqueue = @convention(thin) (UnownedJob, @convention(thin) (UnownedJob) -> Void) -> Void

    /// Sends every later job for the global executor to `enqueue`.
    ///
    /// Call it once, first thing in an async `main` on the main thread: a job enqueued
    /// before it has already started the default pool. SwiftNIO's
    /// `NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()`
    /// does the same through `dlsym`, which cannot find the hook in a binary that links
    /// the Swift runtime statically (as the daemon's release build does); this stores it
    /// through a link-time reference instead. The hook's type is the runtime's, unchanged
    /// since Swift 5.9; like NIO, this installs it only with a compiler it is known for
    /// (below 6.6), so a toolchain that changes the hook leaves the default executor in
    /// place (an idle daemon then wakes once a second) rather than calling a function
    /// through the wrong type.
    /// - Returns: whether the hook was installed.
    @discardableResult
    public static func install(_ enqueue: Enqueue) -> Bool {
        #if compiler(<6.6)
        cframerated_set_global_enqueue_hook(unsafeBitCast(enqueue, to: UnsafeMutableRawPointer.self))
        return true
        #else
        return false
        #endif
    }
}
