import FrameRateProtocol
import NIOCore
import NIOEmbedded
import Testing

@Suite("NDJSONLineDecoder")
struct NDJSONLineDecoderTests {
    /// Runs `chunks` through the decoder the way `ByteToMessageHandler` would.
    private func frames(
        _ chunks: [[UInt8]],
        limit: Int = NDJSONLineDecoder.defaultMaximumLineLength,
        eof: Bool = true
    ) throws -> [NDJSONFrame] {
        let processor = NIOSingleStepByteToMessageProcessor(NDJSONLineDecoder(maximumLineLength: limit))
        var output: [NDJSONFrame] = []
        for chunk in chunks {
            try processor.process(buffer: ByteBuffer(bytes: chunk)) { output.append($0) }
        }
        if eof {
            try processor.finishProcessing(seenEOF: true) { output.append($0) }
        }
        return output
    }

    private func frames(_ chunks: String..., limit: Int = NDJSONLineDecoder.defaultMaximumLineLength, eof: Bool = true) throws -> [NDJSONFrame] {
        try frames(chunks.map { Array($0.utf8) }, limit: limit, eof: eof)
    }

    private func lines(_ texts: String...) -> [NDJSONFrame] {
        texts.map { .line(ByteBuffer(string: $0)) }
    }

    @Test func multipleLinesInOneRead() throws {
        #expect(try frames("{\"a\":1}\n[2]\n\"three\"\n") == lines("{\"a\":1}", "[2]", "\"three\""))
    }

    @Test func crlfEndingsStripExactlyOneCarriageReturn() throws {
        #expect(try frames("a\r\nb\r\n") == lines("a", "b"))
        #expect(try frames("a\r\r\n") == lines("a\r"))
        #expect(try frames("a\rb\n") == lines("a\rb"))
    }

    @Test func linesSplitAcrossManyReads() throws {
        let text = "{\"jsonrpc\":\"2.0\",\"id\":1}\r\n\n[1,2,3]\n{}"
        let expected = lines("{\"jsonrpc\":\"2.0\",\"id\":1}", "[1,2,3]", "{}")
        #expect(try frames(text.utf8.map { [$0] }) == expected)
        for chunkSize in [2, 3, 5, 7] {
            let bytes = Array(text.utf8)
            let chunks = stride(from: 0, to: bytes.count, by: chunkSize).map { Array(bytes[$0..<min($0 + chunkSize, bytes.count)]) }
            #expect(try frames(chunks) == expected)
        }
        // The "\r" and "\n" arriving in different reads.
        #expect(try frames("ab\r", "\ncd") == lines("ab", "cd"))
    }

    @Test func blankLinesAreSkipped() throws {
        #expect(try frames("\n\n  \n\t\r\n \r\n{}\n\n") == lines("{}"))
        #expect(try frames("\n", "\n", "   ") == [])
        #expect(try frames("") == [])
    }

    @Test func finalLineWithoutNewlineIsDeliveredAtEOF() throws {
        #expect(try frames("a\nb") == lines("a", "b"))
        #expect(try frames("a\nb", eof: false) == lines("a"))
        #expect(try frames("a\nb\r") == lines("a", "b"))
        #expect(try frames("a\n  \t") == lines("a"))
    }

    @Test func linesAreNotInterpreted() throws {
        // The decoder frames bytes; JSON and UTF-8 validation happen later.
        #expect(try frames([[0xFF, 0x00, UInt8(ascii: "x"), UInt8(ascii: "\n")]]) == [.line(ByteBuffer(bytes: [0xFF, 0x00, UInt8(ascii: "x")]))])
    }

    @Test func lengthLimitIsExactAndExcludesTheTerminator() throws {
        #expect(try frames("12345678\n", limit: 8) == lines("12345678"))
        #expect(try frames("12345678\r\n", limit: 8) == lines("12345678"))
        #expect(try frames("12345678", limit: 8) == lines("12345678"))
        #expect(try frames("12345678\r", limit: 8) == lines("12345678"))
        #expect(try frames("123456789\n", limit: 8) == [.oversized(limit: 8)])
        #expect(try frames("123456789\r\n", limit: 8) == [.oversized(limit: 8)])
        #expect(try frames("123456789", limit: 8) == [.oversized(limit: 8)])
    }

    @Test func oversizedLineIsSkippedAndDecodingResumes() throws {
        #expect(
            try frames("a\n", "0123456789abcdef", "ghij\nb\n", limit: 8)
                == [.line(ByteBuffer(string: "a")), .oversized(limit: 8), .line(ByteBuffer(string: "b"))]
        )
        // Two oversized lines in a row are reported separately.
        #expect(try frames("0123456789\n0123456789\nok\n", limit: 8) == [.oversized(limit: 8), .oversized(limit: 8)] + lines("ok"))
        // At EOF the remains of an oversized line are dropped.
        #expect(try frames("0123456789", "01234", limit: 8) == [.oversized(limit: 8)])
    }

    @Test func oversizedIsDetectedBeforeTheNewlineWithoutBuffering() throws {
        var decoder = NDJSONLineDecoder(maximumLineLength: 8)
        var buffer = ByteBuffer(string: "12345678")
        #expect(try decoder.decode(buffer: &buffer) == nil)
        #expect(buffer.readableBytes == 8)
        buffer.writeString("\r")  // could still be "12345678\r\n"
        #expect(try decoder.decode(buffer: &buffer) == nil)
        buffer.writeString("x")
        #expect(try decoder.decode(buffer: &buffer) == .oversized(limit: 8))
        #expect(buffer.readableBytes == 0)
        for _ in 0..<100 {
            buffer.writeString("more bytes of the same huge line ")
            #expect(try decoder.decode(buffer: &buffer) == nil)
            #expect(buffer.readableBytes == 0)
        }
        buffer.writeString("tail\n{}\n")
        #expect(try decoder.decode(buffer: &buffer) == .line(ByteBuffer(string: "{}")))
        #expect(buffer.readableBytes == 0)
    }

    @Test func slowTrickleOfALongLineIsLinear() throws {
        // 256 KiB delivered one byte at a time: a decoder that rescans from the start on
        // every read would examine ~34 billion bytes here.
        let length = 256 * 1024
        let processor = NIOSingleStepByteToMessageProcessor(NDJSONLineDecoder())
        var output: [NDJSONFrame] = []
        var byte = ByteBuffer(string: "x")
        for _ in 0..<length {
            try processor.process(buffer: byte) { output.append($0) }
        }
        byte = ByteBuffer(string: "\n")
        try processor.process(buffer: byte) { output.append($0) }
        #expect(output == [.line(ByteBuffer(repeating: UInt8(ascii: "x"), count: length))])
    }

    // MARK: - Through a channel pipeline

    @Test func oneMebibytePlusOneThroughEmbeddedChannel() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(NDJSONLineDecoder()))
        let limit = NDJSONLineDecoder.defaultMaximumLineLength
        #expect(limit == 1_048_576)

        var exact = ByteBuffer(repeating: UInt8(ascii: "a"), count: limit)
        exact.writeString("\n")
        try channel.writeInbound(exact)
        let first = try channel.readInbound(as: NDJSONFrame.self)
        #expect(first == .line(ByteBuffer(repeating: UInt8(ascii: "a"), count: limit)))

        // 1 MiB + 2 bytes, delivered in 64 KiB reads: reported before the newline arrives.
        let chunk = ByteBuffer(repeating: UInt8(ascii: "b"), count: 65_536)
        for _ in 0..<16 {
            try channel.writeInbound(chunk)
        }
        #expect(try channel.readInbound(as: NDJSONFrame.self) == nil)
        try channel.writeInbound(ByteBuffer(string: "\r"))
        #expect(try channel.readInbound(as: NDJSONFrame.self) == nil)  // could still be 1 MiB + "\r\n"
        try channel.writeInbound(ByteBuffer(string: "b"))
        #expect(try channel.readInbound(as: NDJSONFrame.self) == .oversized(limit: limit))
        try channel.writeInbound(ByteBuffer(string: "bbb\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\r\n"))
        #expect(try channel.readInbound(as: NDJSONFrame.self) == .line(ByteBuffer(string: #"{"jsonrpc":"2.0","method":"x"}"#)))
        #expect(try channel.readInbound(as: NDJSONFrame.self) == nil)
        #expect(try channel.finish().isClean)
    }

    @Test func oneMebibytePlusOneInOneRead() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(NDJSONLineDecoder()))
        var buffer = ByteBuffer(repeating: UInt8(ascii: "c"), count: 1_048_577)
        buffer.writeString("\n[]\n")
        try channel.writeInbound(buffer)
        #expect(try channel.readInbound(as: NDJSONFrame.self) == .oversized(limit: 1_048_576))
        #expect(try channel.readInbound(as: NDJSONFrame.self) == .line(ByteBuffer(string: "[]")))
        #expect(try channel.finish().isClean)
    }

    @Test func partialLineIsDeliveredWhenInputCloses() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(NDJSONLineDecoder()))
        try channel.writeInbound(ByteBuffer(string: "{}\n[1"))
        try channel.writeInbound(ByteBuffer(string: ",2]"))
        #expect(try channel.readInbound(as: NDJSONFrame.self) == .line(ByteBuffer(string: "{}")))
        #expect(try channel.readInbound(as: NDJSONFrame.self) == nil)
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(try channel.readInbound(as: NDJSONFrame.self) == .line(ByteBuffer(string: "[1,2]")))
        #expect(try channel.finish().isClean)
    }

    @Test func framesFeedTheRPCLayer() throws {
        let input = #"{"jsonrpc":"2.0","id":1,"method":"sum","params":[1,2]}"# + "\r\n\n" + #"{"jsonrpc":"2.0","method":"notify_hello"}"# + "\n"
            + String(repeating: "x", count: 100) + "\n"
        var replies: [String] = []
        for frame in try frames([Array(input.utf8)], limit: 64) {
            switch frame {
            case .line(let line):
                if let reply = JSONRPCInbound.parse(line: line).reply(handler: SpecHandler.handle) {
                    replies.append(String(buffer: reply))
                }
            case .oversized(let limit):
                replies.append(JSONRPCOutboundMessage.response(id: nil, result: .failure(.lineTooLong(limit: limit))).line)
            }
        }
        #expect(
            replies == [
                #"{"jsonrpc":"2.0","id":1,"result":3}"# + "\n",
                #"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"status":"INVALID_ARGUMENT","detail":"line longer than 64 bytes"}}}"# + "\n",
            ]
        )
    }
}
