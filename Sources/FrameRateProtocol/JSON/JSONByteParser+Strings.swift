extension JSONByteParser {
    /// Parses a string starting at the opening quote, validating UTF-8 and decoding escapes.
    ///
    /// Strings without escapes are created straight from the input bytes; otherwise the
    /// decoded bytes are collected run by run in the reused `scratch` buffer.
    mutating func parseString() throws(JSONParseError) -> String {
        let openingQuote = self.position
        self.position += 1
        let contentStart = self.position
        var runStart = self.position
        var hasEscapes = false
        while true {
            guard let byte = self.peek() else {
                throw JSONParseError(
                    kind: .unexpectedEndOfInput,
                    offset: self.position,
                    message: "unexpected end of input at byte \(self.position); unterminated string started at byte \(openingQuote)"
                )
            }
            switch byte {
            case ASCII.quote:
                let string: String
                if hasEscapes {
                    self.appendRun(from: runStart)
                    string = String(decoding: self.scratch, as: UTF8.self)
                } else {
                    let content = UnsafeRawBufferPointer(rebasing: self.bytes[contentStart..<self.position])
                    string = String(decoding: content, as: UTF8.self)
                }
                self.position += 1
                return string
            case ASCII.backslash:
                if !hasEscapes {
                    hasEscapes = true
                    self.scratch.removeAll(keepingCapacity: true)
                }
                self.appendRun(from: runStart)
                try self.decodeEscape()
                runStart = self.position
            case 0..<ASCII.space:
                throw JSONParseError(
                    kind: .controlCharacterInString,
                    offset: self.position,
                    message: "control character \(ASCII.describe(byte)) in string at byte \(self.position); it must be escaped"
                )
            case 0x80...:
                guard let end = UTF8Validation.sequenceEnd(in: self.bytes, at: self.position) else {
                    throw JSONParseError(
                        kind: .invalidUTF8,
                        offset: self.position,
                        message: "invalid UTF-8 at byte \(self.position)"
                    )
                }
                self.position = end
            default:
                self.position += 1
            }
        }
    }

    /// Expects a string then a colon, as at the start of an object member.
    mutating func parseMemberKey() throws(JSONParseError) -> String {
        guard let byte = self.peek() else {
            throw self.endOfInput(expecting: "a string key")
        }
        guard byte == ASCII.quote else {
            throw self.unexpected(byte, expecting: "a string key")
        }
        let key = try self.parseString()
        while let byte = self.peek(), ASCII.isWhitespace(byte) {
            self.position += 1
        }
        guard let colon = self.peek() else {
            throw self.endOfInput(expecting: "':'")
        }
        guard colon == ASCII.colon else {
            throw self.unexpected(colon, expecting: "':'")
        }
        self.position += 1
        return key
    }

    private mutating func appendRun(from start: Int) {
        self.scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: self.bytes[start..<self.position]))
    }

    /// Decodes the escape at the current backslash into `scratch`.
    private mutating func decodeEscape() throws(JSONParseError) {
        let escapeStart = self.position
        self.position += 1
        guard let letter = self.peek() else {
            throw self.endOfInput(expecting: "an escape sequence")
        }
        let simple: UInt8?
        switch letter {
        case ASCII.quote, ASCII.backslash, ASCII.slash: simple = letter
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "n"): simple = ASCII.newline
        case UInt8(ascii: "r"): simple = ASCII.carriageReturn
        case UInt8(ascii: "t"): simple = ASCII.tab
        case ASCII.lowerU: simple = nil
        default:
            let shown = letter < 0x80 ? ASCII.describe(letter) : "a non-ASCII byte"
            throw JSONParseError(
                kind: .invalidEscape,
                offset: escapeStart,
                message: "invalid escape sequence: backslash followed by \(shown) at byte \(escapeStart)"
            )
        }
        if let simple {
            self.scratch.append(simple)
            self.position += 1
            return
        }
        self.position += 1
        let unit = try self.readHex4(escapeStart: escapeStart)
        let scalarValue: UInt32
        switch unit {
        case 0xD800...0xDBFF:
            // A high surrogate must be immediately followed by a low-surrogate escape.
            let lowStart = self.position
            guard self.bytes.count - self.position >= 2,
                self.bytes[self.position] == ASCII.backslash,
                self.bytes[self.position + 1] == ASCII.lowerU
            else {
                throw self.loneSurrogate(unit, at: escapeStart)
            }
            self.position += 2
            let low = try self.readHex4(escapeStart: lowStart)
            guard (0xDC00...0xDFFF).contains(low) else {
                throw self.loneSurrogate(unit, at: escapeStart)
            }
            scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
        case 0xDC00...0xDFFF:
            throw self.loneSurrogate(unit, at: escapeStart)
        default:
            scalarValue = UInt32(unit)
        }
        // Not a surrogate and at most U+10FFFF by construction, so this always succeeds.
        guard let scalar = Unicode.Scalar(scalarValue) else {
            throw self.loneSurrogate(unit, at: escapeStart)
        }
        self.scratch.append(contentsOf: scalar.utf8)
    }

    private mutating func readHex4(escapeStart: Int) throws(JSONParseError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard let byte = self.peek() else {
                throw self.endOfInput(expecting: "4 hex digits in the \\u escape at byte \(escapeStart)")
            }
            guard let digit = ASCII.hexValue(byte) else {
                throw JSONParseError(
                    kind: .invalidEscape,
                    offset: escapeStart,
                    message: "invalid \\u escape at byte \(escapeStart): expected 4 hex digits, found \(byte < 0x80 ? ASCII.describe(byte) : "a non-ASCII byte")"
                )
            }
            value = value << 4 | digit
            self.position += 1
        }
        return value
    }

    private func loneSurrogate(_ unit: UInt16, at offset: Int) -> JSONParseError {
        let hex = String(unit, radix: 16, uppercase: true)
        return JSONParseError(
            kind: .invalidEscape,
            offset: offset,
            message: "lone surrogate \\u\(hex) at byte \(offset); surrogates must come in high-low pairs"
        )
    }
}
