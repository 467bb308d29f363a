#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes whole lines straight to the standard file descriptors, unbuffered,
/// so a reader on a pipe sees each line as soon as it is printed.
enum Console {
    /// Writes `line` and a newline to standard output.
    static func out(_ line: String) {
        write(line + "\n", to: STDOUT_FILENO)
    }

    /// Writes `text` to standard output as is (terminal control sequences, a whole screen).
    static func raw(_ text: String) {
        write(text, to: STDOUT_FILENO)
    }

    /// Writes `line` and a newline to standard error.
    static func error(_ line: String) {
        write(line + "\n", to: STDERR_FILENO)
    }

    private static func write(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let written = systemWrite(descriptor, base + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }

    private static func systemWrite(_ descriptor: Int32, _ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(descriptor, bytes, count)
        #else
        Musl.write(descriptor, bytes, count)
        #endif
    }
}
