public import ArgumentParser
import FrameRatePosix

/// `--tick-sends io_uring|send`.
extension BatchSender.Path: ExpressibleByArgument {}
