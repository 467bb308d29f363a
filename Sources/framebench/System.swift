#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FrameRateProtocol

/// A failed system call or setup step, with a message for people.
struct BenchError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }

    /// `what: strerror(errno)`.
    static func errno(_ what: String) -> BenchError { BenchError("\(what): \(String(cString: strerror(Glibc.errno)))") }
}

/// Small wrappers over POSIX calls shared by the subcommands.
enum System {
    /// `CLOCK_MONOTONIC` now, nanoseconds: the clock of every tick timestamp.
    @inline(__always)
    static func monotonicNanoseconds() -> Int64 { MonotonicClock.nowNanoseconds }

    /// Sleeps until `deadline` (nanoseconds on `CLOCK_MONOTONIC`); returns at once if it has passed.
    static func sleep(untilNanoseconds deadline: Int64) {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
    }

    /// Sleeps for `seconds`.
    static func sleep(seconds: Double) {
        sleep(untilNanoseconds: monotonicNanoseconds() + Int64(seconds * 1e9))
    }

    /// Raises the soft open-files limit to the hard limit (thousands of sockets; children inherit it).
    /// - Returns: the new soft limit.
    @discardableResult
    static func raiseOpenFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return Int(clamping: limit.rlim_cur)
    }

    /// The running executable's path (`/proc/self/exe`).
    static func executablePath() throws -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { throw BenchError.errno("readlink /proc/self/exe") }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The directory part of `path`.
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// A fresh private directory under /tmp.
    static func makeTemporaryDirectory(prefix: String) throws -> String {
        var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
        guard let result = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw BenchError.errno("mkdtemp")
        }
        return String(cString: result)
    }

    /// Removes a directory made by ``makeTemporaryDirectory(prefix:)`` and the files directly in it.
    static func removeDirectory(_ path: String) {
        for name in directoryEntries(path) { unlink(path + "/" + name) }
        rmdir(path)
    }

    /// The names in directory `path` other than `.` and `..` (empty when it cannot be read).
    static func directoryEntries(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The whole contents of a small file (`/proc` entries), or `nil`.
    static func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count < 0 && Glibc.errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes every byte of `text` to `fd` (a pipe or stdout), retrying short writes.
    static func writeAll(_ fd: Int32, _ text: String) throws {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if Glibc.errno == EINTR { continue }
                throw BenchError.errno("write")
            }
            offset += written
        }
    }

    /// Writes `text` to stderr.
    static func warn(_ text: String) {
        try? writeAll(2, text.hasSuffix("\n") ? text : text + "\n")
    }
}
