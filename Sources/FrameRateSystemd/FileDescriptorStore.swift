import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// systemd's file descriptor store (`FDSTORE=1`, `sd_pid_notify_with_fds`): descriptors
/// the service manager keeps across a restart of the service and passes to the next
/// process with `$LISTEN_FDS` / `$LISTEN_FDNAMES`, under the name they were stored with.
///
/// The unit must allow it (`FileDescriptorStoreMax=`, and `NotifyAccess=` for the
/// sender); without `$NOTIFY_SOCKET` every call fails with ``Failure``. systemd watches
/// stored sockets and drops one whose peer hangs up.
public struct FileDescriptorStore: Sendable {
    /// Why storing or removing failed.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        /// What failed, for the log.
        public let description: String
    }

    /// The most descriptors one notification carries (the kernel's `SCM_MAX_FD` is 253).
    public static let descriptorsPerMessage = 250

    /// Whether a service manager listens (`$NOTIFY_SOCKET` is set).
    public let isAvailable: Bool

    /// The store of this process's service.
    public init() {
        isAvailable = getenv("NOTIFY_SOCKET").map { $0.pointee != 0 } ?? false
    }

    /// Whether `name` is a name systemd accepts (`FDNAME=`): 1 to 255 printable ASCII
    /// characters, no colon.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 255 && name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }
    }

    /// Stores `descriptors` under `name` (several notifications when there are more than
    /// ``descriptorsPerMessage``). The caller keeps its own copies and closes them.
    public func store(_ descriptors: [Int32], name: String) throws(Failure) {
        guard isAvailable else { throw Failure(description: "no $NOTIFY_SOCKET: not started by systemd") }
        guard Self.isValidName(name) else { throw Failure(description: "'\(name)' is not a valid FDNAME") }
        var start = 0
        while start < descriptors.count {
            let batch = Array(descriptors[start..<min(descriptors.count, start + Self.descriptorsPerMessage)])
            let result = batch.withUnsafeBufferPointer { fds in
                sd_pid_notify_with_fds(0, 0, "FDSTORE=1\nFDNAME=\(name)", fds.baseAddress, UInt32(fds.count))
            }
            guard result > 0 else {
                throw Failure(description: "sd_pid_notify_with_fds(FDSTORE=1, FDNAME=\(name)): \(String(cString: strerror(-result)))")
            }
            start += batch.count
        }
    }

    /// Removes every descriptor stored under `name` (`FDSTOREREMOVE=1`): once adopted,
    /// so that the store does not keep connections open behind the daemon's back.
    public func remove(name: String) throws(Failure) {
        guard isAvailable else { throw Failure(description: "no $NOTIFY_SOCKET: not started by systemd") }
        guard Self.isValidName(name) else { throw Failure(description: "'\(name)' is not a valid FDNAME") }
        let result = sd_notify(0, "FDSTOREREMOVE=1\nFDNAME=\(name)")
        guard result > 0 else { throw Failure(description: "sd_notify(FDSTOREREMOVE=1, FDNAME=\(name)): \(String(cString: strerror(-result)))") }
    }

    /// Waits until the service manager has processed every notification sent so far
    /// (`sd_notify_barrier`), at most `timeout`: before exiting after ``store(_:name:)``.
    public func barrier(timeout: Duration) throws(Failure) {
        guard isAvailable else { return }
        let microseconds = UInt64(clamping: timeout.components.seconds) &* 1_000_000
            &+ UInt64(clamping: timeout.components.attoseconds / 1_000_000_000_000)
        let result = sd_notify_barrier(0, microseconds)
        guard result >= 0 else { throw Failure(description: "sd_notify_barrier: \(String(cString: strerror(-result)))") }
    }
}
