package import FrameRateModel
package import NIOCore

extension CompositorCore {
    /// The model's owner id of the connection on `channel`, while it is open (for the
    /// test harness: which links a connection holds).
    package func owner(of channel: any Channel) -> OwnerID? {
        sessions.values.first { $0.context.channel === channel }?.owner
    }

    /// Connections open now.
    package var connectionCount: Int { sessions.count }

    /// Watches held now, across every connection.
    package var watchCount: Int { watchers.count }

    /// The number of users the per-user accounting holds anything for: 0 once every
    /// connection is closed, or a connection, link or watch was not given back.
    package var accountedUserCount: Int { usage.userCount }
}
