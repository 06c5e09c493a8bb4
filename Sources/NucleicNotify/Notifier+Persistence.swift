public import NucleicProtocol

/// The notifier's alerts as JSON, so a restarted daemon sends nothing twice (its state file,
/// `notify/alerts.json` in the home). Only what the payloads already carry is written.
extension Notifier {
    public static func encode(_ alerts: [SessionID: Alert]) -> JSONValue {
        .array(alerts.keys.sorted().map { id in
            let a = alerts[id]!
            var o = JSONObject()
            switch a.identity {
            case .needsYou(let approval): o.append("identity", ["needsYou": .string(approval.rawValue)])
            case .done(let status): o.append("identity", ["done": .string(status.rawValue)])
            }
            o.append("payload", a.payload.stored)
            o.append("createdAt", .int(a.createdAt.millisecondsSince1970))
            o.append("seen", .bool(a.seen))
            var deliveries = JSONObject()
            for (c, d) in a.deliveries.sorted(by: { $0.key < $1.key }) { deliveries.append(c.rawValue, encode(d)) }
            o.append("deliveries", .object(deliveries))
            return .object(o)
        })
    }

    public static func decode(_ json: JSONValue) throws(ShapeError) -> [SessionID: Alert] {
        guard let items = json.arrayValue else { throw ShapeError("notifier state: not an array") }
        var alerts: [SessionID: Alert] = [:]
        for item in items {
            let f = try Fields(item, "alert")
            let identity: Identity
            let i = try f.value("identity")
            if let approval = i["needsYou"]?.stringValue {
                identity = .needsYou(ApprovalID(approval))
            } else if let raw = i["done"]?.stringValue, let status = SessionStatus(rawValue: raw) {
                identity = .done(status)
            } else {
                throw ShapeError("alert: bad identity")
            }
            let payload = try NotificationPayload(json: try f.value("payload"))
            var deliveries: [ChannelID: Delivery] = [:]
            for entry in try f.value("deliveries").objectValue ?? [:] { deliveries[ChannelID(entry.key)] = try decode(delivery: entry.value) }
            alerts[payload.sessionID] = Alert(identity: identity, payload: payload, createdAt: Timestamp(millisecondsSince1970: try f.int("createdAt")),
                                              seen: try f.bool("seen", default: false), deliveries: deliveries)
        }
        return alerts
    }

    static func encode(_ d: Delivery) -> JSONValue {
        switch d {
        case .waiting(let until): ["waiting": .int(until.millisecondsSince1970)]
        case .sending(let attempt): ["sending": .int(Int64(attempt))]
        case .shown(let handle): ["shown": handle.map(JSONValue.string) ?? .null]
        case .retrying(let attempt, let at): ["retrying": .int(Int64(attempt)), "at": .int(at.millisecondsSince1970)]
        case .gaveUp(let message): ["gaveUp": .string(message)]
        case .suppressed: ["suppressed": true]
        }
    }

    static func decode(delivery json: JSONValue) throws(ShapeError) -> Delivery {
        guard let o = json.objectValue, let key = o.keys.first, let value = o[key] else { throw ShapeError("delivery: not an object") }
        switch key {
        case "waiting": if let t = value.intValue { return .waiting(until: Timestamp(millisecondsSince1970: t)) }
        case "sending": if let n = value.intValue { return .sending(attempt: Int(n)) }
        case "shown": return .shown(handle: value.stringValue)
        case "retrying": if let n = value.intValue, let at = o["at"]?.intValue { return .retrying(attempt: Int(n), at: Timestamp(millisecondsSince1970: at)) }
        case "gaveUp": return .gaveUp(value.stringValue ?? "")
        case "suppressed": return .suppressed
        default: break
        }
        throw ShapeError("delivery: unknown '\(key)'")
    }
}
