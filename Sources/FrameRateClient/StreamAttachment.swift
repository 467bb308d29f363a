/// Where a link or watch lives on the daemon right now.
enum StreamAttachment<ID: Hashable & Sendable>: Sendable {
    /// Nowhere: the connection that held it is gone and it is not registered again yet.
    case detached
    /// A Register (or Watch) for it is in flight on `router`'s connection.
    case registering(ClientRouter)
    /// It is `id` on `router`'s connection.
    case attached(ClientRouter, ID)

    /// Whether it is attached to, or being registered on, `router`'s connection.
    func isOn(_ router: ClientRouter) -> Bool {
        switch self {
        case .detached: false
        case .registering(let other), .attached(let other, _): other === router
        }
    }

    /// The router and daemon-side id, when attached.
    var target: (router: ClientRouter, id: ID)? {
        if case .attached(let router, let id) = self { return (router, id) }
        return nil
    }
}
