#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CFrameRatePosix

/// A sealed in-memory file (`memfd_create`): how the daemon hands its serialized state to
/// the process that replaces it, through systemd's file descriptor store, without a file
/// anywhere on disk (the service's file system is read-only anyway).
public enum MemoryFile {
    /// A memory file holding `contents`, sealed against any change, its offset at 0.
    /// - Returns: the descriptor (close-on-exec), which the caller owns.
    public static func create(name: String, contents: [UInt8]) throws(PosixError) -> Int32 {
        let fd = cframerated_memfd_create(name)
        guard fd >= 0 else { throw PosixError(errno: errno, call: "memfd_create") }
        var written = 0
        while written < contents.count {
            let count = contents.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                let error = PosixError(errno: errno, call: "write to memfd")
                Glibc.close(fd)
                throw error
            }
            written += count
        }
        guard cframerated_memfd_seal(fd) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
            let error = PosixError(errno: errno, call: "seal memfd")
            Glibc.close(fd)
            throw error
        }
        return fd
    }

    /// Reads a whole file from offset 0 (`pread`), refusing one larger than `limit` bytes.
    public static func read(_ fd: Int32, limit: Int) throws(PosixError) -> [UInt8] {
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw PosixError(errno: errno, call: "fstat") }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw PosixError(errno: EINVAL, call: "read memfd (not a regular file)") }
        guard status.st_size >= 0, status.st_size <= limit else { throw PosixError(errno: EFBIG, call: "read memfd (\(status.st_size) bytes)") }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var total = 0
        while total < bytes.count {
            let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + total, $0.count - total, off_t(total)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw PosixError(errno: count == 0 ? EIO : errno, call: "pread memfd") }
            total += count
        }
        return bytes
    }
}
