import FrameRateModel
import FrameRateProtocol
import NIOCore

/// Each link's JSON as the last `GetState` encoding wrote it, kept so that re-encoding the
/// state after a change serializes only the links that changed and copies the others.
///
/// A whole-state encoding (``EncodedStateCache``) is thrown away by any change; with 1,000
/// links it cost the control loop 4.4 ms, 86 % of it building and serializing the links'
/// JSON, and a client that changes one link between two `GetState`s forced it every time.
///
/// Correct by construction: a kept encoding is reused only for a ``LinkState`` equal to
/// the one it was made from (the encoding is a function of that value alone). A link
/// looks one of two ways, by whether the viewer may see its holder (``LinkState/peer``):
/// both are kept, so viewers of both kinds asking in turn do not evict each other.
///
/// Bounded: every encoding of the state lists every link (hidden holders included), so
/// after each one the links it did not list (ended ones) are dropped; at most two
/// encodings per live link are kept. Confined to the control loop.
struct EncodedLinkCache {
    private struct Kept {
        let state: LinkState
        let bytes: ByteBuffer
    }

    private struct Entry {
        var shown: Kept?
        var hidden: Kept?
        /// The encoding that last listed the link.
        var pass: UInt64
    }

    private var entries: [LinkID: Entry] = [:]
    private var pass: UInt64 = 0
    /// Links serialized anew, and copied from a kept encoding, since the cache was made.
    private(set) var serialized = 0
    private(set) var reused = 0

    /// How many links have an encoding kept.
    var count: Int { entries.count }

    /// Appends `state` encoded (the bytes of ``CompositorState/jsonValue``), reusing kept
    /// encodings of unchanged links; then drops the links `state` no longer lists.
    mutating func encode(_ state: CompositorState, into buffer: inout ByteBuffer) {
        pass &+= 1
        state.writeJSON(into: &buffer) { link, buffer in write(link, into: &buffer) }
        let current = pass
        if entries.count > 0, entries.values.contains(where: { $0.pass != current }) {
            entries = entries.filter { $0.value.pass == current }
        }
    }

    private mutating func write(_ link: LinkState, into buffer: inout ByteBuffer) {
        // The entry is changed in place (no copy of its kept states and bytes per link).
        let kept = Self.encoding(of: link, in: &entries[link.link, default: Entry(pass: pass)], pass: pass)
        if kept.reused { reused += 1 } else { serialized += 1 }
        buffer.writeImmutableBuffer(kept.bytes)
    }

    private static func encoding(of link: LinkState, in entry: inout Entry, pass: UInt64) -> (bytes: ByteBuffer, reused: Bool) {
        entry.pass = pass
        let shown = link.peer != nil
        if let kept = shown ? entry.shown : entry.hidden, kept.state == link { return (kept.bytes, true) }
        var bytes = ByteBuffer()
        bytes.writeJSONValue(link.jsonValue)
        if shown { entry.shown = Kept(state: link, bytes: bytes) } else { entry.hidden = Kept(state: link, bytes: bytes) }
        return (bytes, false)
    }
}
