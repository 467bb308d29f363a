import FrameRateModel
import FrameRatePosix

extension OwnerID {
    /// The connection's word in ``SharedModel/gates``: its slot in the owner tables, and
    /// the tag (from the owner id's generation half) that tells it apart from the slot's
    /// earlier and later connections.
    var tickGate: (slot: Int, tag: UInt64) {
        (OwnerTable<SocketWriter>.slot(of: self), TickGates.tag(of: rawValue >> 32))
    }
}
