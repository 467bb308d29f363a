#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFrameRatePosix

/// A dedicated operating-system thread, joined by its owner: the tick fan-out runs on
/// these so that nothing scheduled on the control event loop can delay it.
///
/// The structured-concurrency rule for threads: whoever calls ``spawn(name:body:)`` must
/// call ``join()`` before it returns (the server does so in `run()`), so no thread
/// outlives the service that started it.
public final class OSThread: Sendable {
    private let handle: pthread_t

    private final class Box: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    private init(handle: pthread_t) { self.handle = handle }

    /// Starts `body` on a new thread named `name` (15 bytes are kept, for `top -H` and perf).
    public static func spawn(name: String, body: @escaping @Sendable () -> Void) throws(PosixError) -> OSThread {
        let box = Unmanaged.passRetained(Box(name: name, body: body))
        var handle = pthread_t()
        let status = pthread_create(&handle, nil, { argument in
            let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
            box.name.withCString { cframerated_set_thread_name($0) }
            box.body()
            return nil
        }, box.toOpaque())
        guard status == 0 else {
            box.release()
            throw PosixError(errno: status, call: "pthread_create")
        }
        return OSThread(handle: handle)
    }

    /// Asks the kernel to schedule the calling thread ahead of normal ones: a nice value of
    /// `nice` (negative is favoured) for this thread alone. Needs `CAP_SYS_NICE` (root has
    /// it) or an `RLIMIT_NICE` that allows it; without, nothing changes.
    /// - Returns: whether the priority was raised.
    @discardableResult
    public static func raiseCurrentThreadPriority(nice: Int32) -> Bool {
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(UInt32(bitPattern: cframerated_gettid())), nice) == 0
    }

    /// Waits for the thread's body to return.
    public func join() {
        _ = pthread_join(handle, nil)
    }
}
