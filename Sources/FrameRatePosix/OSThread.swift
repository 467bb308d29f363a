#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFrameRatePosix
import Synchronization

/// A dedicated operating-system thread, joined by its owner: the tick fan-out runs on
/// these so that nothing scheduled on the control event loop can delay it.
///
/// The structured-concurrency rule for threads: whoever calls ``spawn(name:body:)`` must
/// call ``join()`` before it returns (the server does so in `run()`), so no thread
/// outlives the service that started it.
public final class OSThread: Sendable {
    private let handle: pthread_t
    private let exit: Exit

    /// Whether the body has returned, and the task waiting for it (``join()`` from async code).
    private final class Exit: Sendable {
        private let state = Mutex<(returned: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

        /// Called on the thread once its body returned: resumes the waiter, if any.
        func bodyReturned() {
            state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.returned = true
                defer { state.waiter = nil }
                return state.waiter
            }?.resume()
        }

        /// Suspends until the body has returned (at once if it has).
        func wait() async {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let returned = state.withLock { state in
                    if !state.returned { state.waiter = waiter }
                    return state.returned
                }
                if returned { waiter.resume() }
            }
        }
    }

    private final class Box: Sendable {
        let name: String
        let body: @Sendable () -> Void
        let exit: Exit
        init(name: String, body: @escaping @Sendable () -> Void, exit: Exit) {
            self.name = name
            self.body = body
            self.exit = exit
        }
    }

    private init(handle: pthread_t, exit: Exit) {
        self.handle = handle
        self.exit = exit
    }

    /// Starts `body` on a new thread named `name` (15 bytes are kept, for `top -H` and perf).
    public static func spawn(name: String, body: @escaping @Sendable () -> Void) throws(PosixError) -> OSThread {
        let exit = Exit()
        let box = Unmanaged.passRetained(Box(name: name, body: body, exit: exit))
        var handle = pthread_t()
        let status = pthread_create(&handle, nil, { argument in
            let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
            box.name.withCString { cframerated_set_thread_name($0) }
            box.body()
            box.exit.bodyReturned()
            return nil
        }, box.toOpaque())
        guard status == 0 else {
            box.release()
            throw PosixError(errno: status, call: "pthread_create")
        }
        return OSThread(handle: handle, exit: exit)
    }

    /// Asks the kernel to schedule the calling thread ahead of normal ones: a nice value of
    /// `nice` (negative is favoured) for this thread alone. Needs `CAP_SYS_NICE` (root has
    /// it) or an `RLIMIT_NICE` that allows it; without, nothing changes.
    /// - Returns: whether the priority was raised.
    @discardableResult
    public static func raiseCurrentThreadPriority(nice: Int32) -> Bool {
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(UInt32(bitPattern: cframerated_gettid())), nice) == 0
    }

    /// Waits for the thread's body to return, blocking the calling thread: for callers on
    /// threads of their own (the fan-out leader joining its helpers).
    public func join() {
        _ = pthread_join(handle, nil)
    }

    /// Waits for the thread's body to return without blocking a thread of the Swift
    /// concurrency pool: suspends until the body has returned, then joins, which then only
    /// waits for the thread's own exit (microseconds).
    public func join() async {
        await exit.wait()
        _ = pthread_join(handle, nil)
    }
}
