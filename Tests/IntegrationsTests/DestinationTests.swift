import Foundation
import Integrations
import Testing

/// Each destination's request shape and what each of its documented answers means.
@Suite struct DestinationTests {
    static func event(
        _ type: String = "subscription_renewed", id: String = "msg_int_1_7", price: Int64? = 9_990, currency: String? = "EUR",
        usd: Double? = 10.84, retractedAt: Int64? = nil
    ) -> OutboundEvent {
        var event = OutboundEvent(
            deliveryId: id, eventId: "renewal:1001", type: type, effectiveAt: 1_800_000_000_000, recordedAt: 1_800_000_100_000,
            retractedAt: retractedAt, environment: "Production", productId: "pro.monthly", price: price, currency: currency,
            usdPrice: usd, appId: "app_1", bundleId: "com.example.app", customerId: "cus_1", appUserId: "user <1> & co",
            aliases: ["$device:1"], eventJSON: #"{"id":"renewal:1001","type":"\#(type)"}"#, stateJSON: #"{"state":"active"}"#)
        // A payment moves its price and a refund gives it back (what the ledger books is what analytics destinations
        // report); a notice moves nothing.
        if AnalyticsNaming.legacyRevenueTypes.contains(type) {
            let sign: Double = type == "refunded" ? -1 : 1
            event.revenue = price.map { Int64(sign) * $0 }
            event.revenueUSD = usd.map { sign * $0 }
        }
        event.groupStatuses = ["pro": "active"]
        event.groupPeriodTypes = ["pro": "regular"]
        event.subscription = SubscriptionStanding(status: "active", periodType: "regular", willRenew: true)
        event.paying = true
        event.totalSpentUSD = 21.68
        return event
    }

    static func json(_ request: OutgoingRequest) throws -> Any { try JSONSerialization.jsonObject(with: Data(request.body)) }

    @Test func theWebhookBodyNamesTheEventTheCustomerAndTheApp() throws {
        let body = try #require(
            try JSONSerialization.jsonObject(with: Data(WebhookDelivery.body(Self.event(retractedAt: 5)).utf8)) as? [String: Any])
        #expect(body["type"] as? String == "subscription_renewed")
        #expect(body["timestamp"] as? String == "2027-01-15T08:01:40.000Z")
        let data = try #require(body["data"] as? [String: Any])
        let event = try #require(data["event"] as? [String: Any])
        #expect(
            event["id"] as? String == "renewal:1001" && event["retractedAt"] as? Int == 5
                && event["recordedAt"] as? Int64 == 1_800_000_100_000)
        let customer = try #require(data["customer"] as? [String: Any])
        #expect(customer["appUserId"] as? String == "user <1> & co" && customer["aliases"] as? [String] == ["$device:1"])
        #expect(customer["state"] as? String == "active" && customer["customerId"] as? String == "cus_1")
        #expect((data["app"] as? [String: Any])?["bundleId"] as? String == "com.example.app")
    }

    @Test(arguments: [
        #"{"state":"active"}"#, #" {"state": "active"} "#, "{\"state\":\"active\"}\n", "\n\t{ \"state\" : \"active\" }",
    ])
    func theCustomersStoredStateIsMergedHoweverItWasWritten(_ state: String) throws {
        var event = Self.event()
        event.stateJSON = state
        let body = try #require(try JSONSerialization.jsonObject(with: Data(WebhookDelivery.body(event).utf8)) as? [String: Any])
        let customer = try #require((body["data"] as? [String: Any])?["customer"] as? [String: Any])
        #expect(customer["state"] as? String == "active" && customer["customerId"] as? String == "cus_1")
    }

    @Test(arguments: ["plain", #"say "hi""#, #"back\slash"#, "line\nbreak\ttab\r", "bell\u{07}", "é 😀 \u{2028}", ""])
    func namesAreSentExactlyWhateverTheyHold(_ name: String) throws {
        var event = Self.event()
        event.appUserId = name
        event.aliases = [name, "x"]
        let text = WebhookDelivery.body(event)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let customer = try #require((body["data"] as? [String: Any])?["customer"] as? [String: Any])
        #expect(customer["appUserId"] as? String == name)
        #expect(customer["aliases"] as? [String] == [name, "x"])
        // No control character is written raw.
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 })
    }

    @Test(arguments: ["{}", " { } ", "", "null"])
    func anEmptyOrMissingStateAddsNothing(_ state: String) throws {
        var event = Self.event()
        event.stateJSON = state
        let body = try #require(try JSONSerialization.jsonObject(with: Data(WebhookDelivery.body(event).utf8)) as? [String: Any])
        let customer = try #require((body["data"] as? [String: Any])?["customer"] as? [String: Any])
        #expect(Set(customer.keys) == ["customerId", "appUserId", "aliases"])
    }

    @Test("a refund is told as money returned (a prorated refund's share), and reported as negative revenue; a retraction undoes")
    func refundsAreMoneyReturned() throws {
        var refund = Self.event("refunded", price: 59_990, currency: "EUR", usd: 65.0)
        refund.revenue = -29_995
        refund.revenueUSD = -32.5
        #expect(EventText.facts(refund).contains { $0.label == "Returned" && $0.value == "-29.995 EUR (≈ -32.50 USD)" })
        #expect(!EventText.facts(refund).contains { $0.label == "Price" })
        #expect(AnalyticsNaming.revenueUSD(refund) == -32.5)
        var retracted = refund
        retracted.retractedAt = 1
        #expect(AnalyticsNaming.revenueUSD(retracted) == 32.5)
        // A notice moves no money.
        var notice = Self.event("subscription_canceled")
        notice.revenue = nil
        notice.revenueUSD = nil
        #expect(AnalyticsNaming.revenueUSD(notice) == nil)
        // A full refund in USD, and one whose sale carried no price: every refund message has its Returned line.
        var dollars = Self.event("refunded", price: 4_990, currency: "USD", usd: 4.99)
        dollars.revenue = -4_990
        dollars.revenueUSD = -4.99
        #expect(EventText.facts(dollars).contains { $0.label == "Returned" && $0.value == "-4.99 USD" })
        let unpriced = Self.event("refunded", price: nil, currency: nil, usd: nil)
        #expect(EventText.facts(unpriced).contains { $0.label == "Returned" && $0.value.hasPrefix("not known") })
        #expect(TelegramDestination.html(unpriced).contains("Returned: not known"))
    }

    @Test func slackGetsAReadableMessageAndItsAnswersMeanWhatSlackSays() throws {
        let slack = SlackDestination(url: "https://hooks.slack.test/services/T/B/x")
        let request = try #require(try slack.requests(for: [Self.event()], now: 0).first)
        let body = try #require(try Self.json(request) as? [String: Any])
        let text = try #require(body["text"] as? String)
        #expect(
            text == "Subscription renewed · user &lt;1&gt; &amp; co · pro.monthly · 9.99 EUR (≈ 10.84 USD) · Production · com.example.app")
        #expect((body["blocks"] as? [Any])?.count == 3)
        #expect(slack.minimumInterval == .seconds(1))
        let now: Int64 = 0
        #expect(slack.verdicts([AttemptAnswer(status: 200, body: Array("ok".utf8))], for: [Self.event()], now: now) == [.delivered])
        #expect(
            slack.verdicts([AttemptAnswer(status: 429, headers: ["Retry-After": "30"])], for: [Self.event()], now: now)
                == [.throttled(reason: "Slack answered 429 (rate limited)", retryAfter: 30_000, lane: .destination)])
        for error in ["channel_not_found", "channel_is_archived", "invalid_token"] {
            let verdict = slack.verdicts([AttemptAnswer(status: 404, body: Array(error.utf8))], for: [Self.event()], now: now)
            #expect(verdict == [.disableDestination(reason: "Slack answered 404 \(error)")])
        }
        #expect(
            slack.verdicts([AttemptAnswer(status: 400, body: Array("invalid_payload".utf8))], for: [Self.event()], now: now)
                == [.rejected(reason: "Slack refused this message: 400 invalid_payload")])
        if case .retry = slack.verdicts([AttemptAnswer(status: 500, body: Array("rollup_error".utf8))], for: [Self.event()], now: now)[0] {
        } else {
            Issue.record("a 500 is retried")
        }
    }

    @Test func telegramGetsEscapedHTMLAndFollowsAMigratedGroup() throws {
        let telegram = TelegramDestination(baseURL: "https://api.telegram.test/", botToken: "123:ABC", chatId: "-1001")
        let request = try #require(try telegram.requests(for: [Self.event()], now: 0).first)
        #expect(request.url == "https://api.telegram.test/bot123:ABC/sendMessage")
        let body = try #require(try Self.json(request) as? [String: Any])
        #expect(body["chat_id"] as? Int == -1001)
        #expect(body["parse_mode"] as? String == "HTML")
        #expect((body["link_preview_options"] as? [String: Any])?["is_disabled"] as? Bool == true)
        #expect((body["text"] as? String)?.hasPrefix("<b>Subscription renewed</b>\nCustomer: user &lt;1&gt; &amp; co\n") == true)
        #expect(telegram.minimumInterval == .seconds(3))
        #expect(TelegramDestination(baseURL: "x", botToken: "t", chatId: "42").minimumInterval == .seconds(1))
        func answer(_ status: Int, _ json: String) -> AttemptVerdict {
            telegram.verdicts([AttemptAnswer(status: status, body: Array(json.utf8))], for: [Self.event()], now: 0)[0]
        }
        #expect(answer(200, #"{"ok":true,"result":{}}"#) == .delivered)
        #expect(
            answer(429, #"{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 7","parameters":{"retry_after":7}}"#)
                == .throttled(reason: "Telegram answered 429: Too Many Requests: retry after 7", retryAfter: 7_000, lane: .destination))
        #expect(
            answer(
                400,
                #"{"ok":false,"error_code":400,"description":"Bad Request: group chat was upgraded to a supergroup chat","parameters":{"migrate_to_chat_id":-1009}}"#
            )
                == .moved(reason: "Telegram: the group became supergroup -1009", config: ["chatId": "-1009"]))
        #expect(
            answer(403, #"{"ok":false,"error_code":403,"description":"Forbidden: bot was blocked by the user"}"#)
                == .disableDestination(reason: "Telegram answered 403: Forbidden: bot was blocked by the user"))
        #expect(
            answer(400, #"{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}"#)
                == .disableDestination(reason: "Telegram answered 400: Bad Request: chat not found"))
        #expect(
            answer(400, #"{"ok":false,"error_code":400,"description":"Bad Request: can't parse entities"}"#)
                == .rejected(reason: "Telegram refused this message: Bad Request: can't parse entities"))
    }

    @Test func amplitudeRevenueTypesAreApphudsEventNamesUnderTheApphudPreset() throws {
        let amplitude = AmplitudeDestination(
            url: AmplitudeDestination.url(region: "us", baseURL: nil), apiKey: "key", naming: AnalyticsNaming(.apphud))
        var lifetime = Self.event("non_consumable_purchase", id: "msg_h_1")
        lifetime.isOneTimePurchase = true
        var lifetimeRefund = Self.event("refunded", id: "msg_h_2")
        lifetimeRefund.isOneTimePurchase = true
        var consumable = Self.event("consumable_purchase", id: "msg_h_3")
        consumable.isOneTimePurchase = true
        let events = [lifetime, lifetimeRefund, consumable, Self.event("refunded", id: "msg_h_4"), Self.event(id: "msg_h_5")]
        let request = try #require(try amplitude.requests(for: events, now: 0).first)
        let body = try #require(try Self.json(request) as? [String: Any])
        let sent = try #require(body["events"] as? [[String: Any]])
        #expect(
            sent.map { $0["revenueType"] as? String } == [
                "non_renewing_purchase", "non_renewing_purchase_refunded", "non_renewing_purchase", "subscription_refunded",
                "subscription_renewed",
            ])
    }

    @Test func amplitudeBatchesWithRevenueAndRefusesOnlyTheEventsItLists() throws {
        let amplitude = AmplitudeDestination(
            url: AmplitudeDestination.url(region: "eu", baseURL: nil), apiKey: "key", naming: AnalyticsNaming(.storekeeper))
        #expect(amplitude.url == "https://api.eu.amplitude.com/2/httpapi")
        let events = [Self.event(id: "msg_a_1"), Self.event("refunded", id: "msg_a_2"), Self.event("subscription_canceled", id: "msg_a_3")]
        let request = try #require(try amplitude.requests(for: events, now: 0).first)
        let body = try #require(try Self.json(request) as? [String: Any])
        #expect(body["api_key"] as? String == "key")
        let sent = try #require(body["events"] as? [[String: Any]])
        #expect(sent.map { $0["insert_id"] as? String } == ["msg_a_1", "msg_a_2", "msg_a_3"])
        #expect(sent[0]["user_id"] as? String == "user <1> & co" && sent[0]["time"] as? Int64 == 1_800_000_000_000)
        #expect(sent[0]["price"] as? Double == 10.84 && sent[0]["revenueType"] as? String == "subscription_renewed")
        #expect(sent[1]["price"] as? Double == -10.84)
        #expect(sent[2]["price"] == nil)
        #expect((sent[0]["event_properties"] as? [String: Any])?["currency"] as? String == "EUR")
        let user = try #require(sent[0]["user_properties"] as? [String: Any])
        #expect(user["storekeeper_status_pro"] as? String == "active" && user["storekeeper_paying"] as? Bool == true)
        #expect(user["storekeeper_total_spent_usd"] as? Double == 21.68)

        let partial = AttemptAnswer(
            status: 400, body: Array(#"{"code":400,"error":"Invalid field values","events_with_invalid_fields":{"time":[1]}}"#.utf8))
        #expect(
            amplitude.verdicts([partial], for: events, now: 0) == [
                .retryNow(reason: "Amplitude refused other events of the batch"),
                .rejected(reason: "Amplitude refused this event (events with invalid fields: time)"),
                .retryNow(reason: "Amplitude refused other events of the batch"),
            ])
        let badKey = AttemptAnswer(status: 400, body: Array(#"{"code":400,"error":"Invalid API key: key"}"#.utf8))
        #expect(
            amplitude.verdicts([badKey], for: events, now: 0).allSatisfy {
                if case .disableDestination = $0 { return true } else { return false }
            })
        // 2,000 events or 1 MB, whichever comes first.
        let many = (0..<4_500).map { Self.event(id: "msg_a_\($0)") }
        let batches = amplitude.batches(many)
        #expect(batches.map(\.lowerBound) == [0] + batches.dropLast().map(\.upperBound) && batches.last?.upperBound == many.count)
        for batch in batches {
            let body = try #require(try amplitude.requests(for: Array(many[batch]), now: 0).first).body
            #expect(batch.count <= 2_000 && body.count <= 1_000_000 && body.count > 900_000 || batch == batches.last)
        }
        #expect(amplitude.batches(many, count: 2_000, bytes: 1_000_000) { _ in 1 }.map(\.count) == [2_000, 2_000, 500])
    }

    @Test("Amplitude's 429 holds the users it names (and only them); a 429 without detail holds the destination")
    func amplitudeThrottlesUsers() {
        let amplitude = AmplitudeDestination(
            url: "https://api2.amplitude.com/2/httpapi", apiKey: "k", naming: AnalyticsNaming(.storekeeper))
        var ann = Self.event(id: "a")
        ann.appUserId = "ann"
        var bob = Self.event(id: "b")
        bob.appUserId = "bob"
        let answer = AttemptAnswer(
            status: 429,
            body: Array(
                #"{"code":429,"error":"Too many requests for some devices and users","throttled_users":{"ann":40},"throttled_events":[0]}"#
                    .utf8))
        let verdicts = amplitude.verdicts([answer], for: [ann, bob], now: 0)
        #expect(
            verdicts[0]
                == .throttled(
                    reason: "Amplitude answered 429: Too many requests for some devices and users", retryAfter: 30_000,
                    lane: .keys(["user:ann"])))
        #expect(verdicts[1] == .retryNow(reason: "Amplitude throttled other users of the batch"))
        #expect(amplitude.laneKeys(ann) == ["user:ann"])
        let bare = amplitude.verdicts([AttemptAnswer(status: 429, body: Array(#"{"code":429}"#.utf8))], for: [ann], now: 0)
        #expect(bare == [.throttled(reason: #"Amplitude answered 429: {"code":429}"#, retryAfter: 30_000, lane: .destination)])
    }

    @Test("holds: a lane waits until its latest hold; the whole destination holds every key; ended holds are forgotten")
    func throttleHolds() {
        var holds = ThrottleHolds()
        #expect(holds.heldUntil(["user:ann"], now: 0) == nil)
        holds.hold(.keys(["user:ann"]), until: 30_000)
        holds.hold(.keys(["user:ann"]), until: 10_000)
        #expect(holds.heldUntil(["user:ann"], now: 0) == 30_000)
        #expect(holds.heldUntil(["user:bob"], now: 0) == nil && !holds.destinationHeld(now: 0))
        holds.hold(.destination, until: 5_000)
        #expect(holds.heldUntil(["user:bob"], now: 0) == 5_000 && holds.destinationHeld(now: 4_999))
        #expect(holds.heldUntil(["user:bob"], now: 5_000) == nil)
        holds.expire(now: 30_000)
        #expect(holds.isEmpty)
    }

    @Test func theNamingPresetsKeepApphudsAndRevenueCatsNames() {
        #expect(AnalyticsNaming(.apphud).eventName(Self.event("trial_started")) == "[Apphud] trial_started")
        #expect(AnalyticsNaming(.apphud).eventName(Self.event("refunded")) == "[Apphud] subscription_refunded")
        // Apphud's names, as its documentation gives them.
        var introRefund = Self.event("refunded")
        introRefund.periodType = "intro"
        #expect(AnalyticsNaming(.apphud).eventName(introRefund) == "[Apphud] intro_refunded")
        var lifetimeRefund = Self.event("refunded")
        lifetimeRefund.isOneTimePurchase = true
        #expect(AnalyticsNaming(.apphud).eventName(lifetimeRefund) == "[Apphud] non_renewing_purchase_refunded")
        #expect(AnalyticsNaming(.apphud).eventName(Self.event("subscription_canceled")) == "[Apphud] subscription_canceled")
        for type in ["non_consumable_purchase", "consumable_purchase", "non_renewing_purchase"] {
            #expect(AnalyticsNaming(.apphud).eventName(Self.event(type)) == "[Apphud] non_renewing_purchase")
        }
        #expect(AnalyticsNaming(.apphud).eventProperties(Self.event()).contains { $0.0 == "usd_price" && $0.1 == "10.84" })
        #expect(!AnalyticsNaming(.apphud).eventProperties(Self.event()).contains { $0.0 == "price_usd" })
        var grace = Self.event()
        grace.groupStatuses = ["pro": "grace_period", "extra": "active"]
        grace.groupPeriodTypes = ["pro": "regular", "extra": "intro"]
        let apphudUser = Dictionary(uniqueKeysWithValues: AnalyticsNaming(.apphud).userProperties(grace))
        #expect(apphudUser["[Apphud] status-pro"] == #""grace""# && apphudUser["[Apphud] status-extra"] == #""intro""#)
        // RevenueCat's: a resubscription is a renewal, a one-time purchase a non-subscription purchase.
        #expect(AnalyticsNaming(.revenuecat).eventName(Self.event("subscription_resubscribed")) == "rc_renewal_event")
        #expect(AnalyticsNaming(.revenuecat).eventName(Self.event("non_consumable_purchase")) == "rc_non_subscription_purchase_event")
        let documented: Set = [
            "active", "intro", "cancelled", "grace_period", "trial", "cancelled_trial", "grace_period_trial", "expired",
        ]
        for status in ["active", "gracePeriod", "billingRetry", "expired", "revoked"] {
            for periodType in ["trial", "intro", "regular", "promo"] {
                for willRenew in [true, false, nil] as [Bool?] {
                    let value = AnalyticsNaming.revenueCatStatus(.init(status: status, periodType: periodType, willRenew: willRenew))
                    #expect(documented.contains(value), "\(value)")
                }
            }
        }
        #expect(AnalyticsNaming.revenueCatStatus(.init(status: "active", periodType: "trial", willRenew: false)) == "cancelled_trial")
        #expect(AnalyticsNaming(.revenuecat).eventName(Self.event("trial_started")) == "rc_trial_started_event")
        #expect(AnalyticsNaming(.revenuecat).eventName(Self.event("subscription_renewed")) == "rc_renewal_event")
        #expect(AnalyticsNaming(.revenuecat).userProperties(Self.event()).map(\.0) == ["rc_subscription_status"])
        #expect(AnalyticsNaming(.storekeeper).eventName(Self.event(retractedAt: 1)) == "subscription_renewed (retracted)")
    }

    @Test(arguments: [AnalyticsNaming.Preset.storekeeper, .apphud, .revenuecat])
    func mixpanelNeverSendsAnEmptySet(_ preset: AnalyticsNaming.Preset) throws {
        let mixpanel = MixpanelDestination(
            baseURL: MixpanelDestination.baseURL(region: "us", override: nil), projectToken: "tok", projectId: nil, serviceAccount: nil,
            naming: AnalyticsNaming(preset))
        // A one-time purchase of a customer who never subscribed: no subscription, no group.
        var oneTime = Self.event("non_consumable_purchase", id: "msg_o_1")
        oneTime.subscription = nil
        oneTime.groupStatuses = [:]
        oneTime.groupPeriodTypes = [:]
        let profiles = try #require(
            try Self.json(try mixpanel.requests(for: [oneTime, Self.event(id: "msg_o_2")], now: 0)[1]) as? [[String: Any]])
        #expect(profiles.count == 1)
        for profile in profiles {
            let set = try #require(profile["$set"] as? [String: Any])
            #expect(!set.isEmpty, "\(preset): \(profile)")
        }
        let alone = try #require(try Self.json(try mixpanel.requests(for: [oneTime], now: 0)[1]) as? [[String: Any]])
        let set = try #require(alone.first?["$set"] as? [String: Any])
        #expect(!set.isEmpty, "\(preset)")
        if preset == .revenuecat { #expect(set["storekeeper_customer_id"] as? String == "cus_1") }
    }

    @Test func mixpanelImportsStrictlyThenSetsProfilesAndReadsZeroAsAFailure() throws {
        let mixpanel = MixpanelDestination(
            baseURL: MixpanelDestination.baseURL(region: "eu", override: nil), projectToken: "tok", projectId: "42",
            serviceAccount: ServiceAccount(username: "sa.user", secret: "sa-secret"), naming: AnalyticsNaming(.revenuecat))
        let events = [Self.event(id: "msg_m_1"), Self.event(id: "msg_m_2")]
        let requests = try mixpanel.requests(for: events, now: 0)
        #expect(
            requests.map(\.url) == ["https://api-eu.mixpanel.com/import?strict=1&project_id=42", "https://api-eu.mixpanel.com/engage?ip=0"])
        #expect(requests[0].header("authorization") == "Basic " + Data("sa.user:sa-secret".utf8).base64EncodedString())
        let imported = try #require(try Self.json(requests[0]) as? [[String: Any]])
        let properties = try #require(imported.first?["properties"] as? [String: Any])
        #expect(imported.first?["event"] as? String == "rc_renewal_event")
        #expect(properties["$insert_id"] as? String == MixpanelDestination.insertId("msg_m_1"))
        #expect(MixpanelDestination.insertId("msg_m_1").count == 32)
        #expect(properties["time"] as? Int64 == 1_800_000_000_000 && properties["distinct_id"] as? String == "user <1> & co")
        let profiles = try #require(try Self.json(requests[1]) as? [[String: Any]])
        #expect(profiles.count == 1)
        #expect((profiles.first?["$set"] as? [String: Any])?["rc_subscription_status"] as? String == "active")

        let ok = AttemptAnswer(status: 200, body: Array(#"{"code":200,"num_records_imported":2,"status":"OK"}"#.utf8))
        #expect(
            mixpanel.verdicts([ok, AttemptAnswer(status: 200, body: Array("1".utf8))], for: events, now: 0) == [.delivered, .delivered])
        #expect(
            mixpanel.verdicts([ok, AttemptAnswer(status: 200, body: Array("0".utf8))], for: events, now: 0)
                == Array(repeating: .retry(reason: "Mixpanel /engage answered 0 (0 is a failure)", retryAfter: nil), count: 2))
        let failed = AttemptAnswer(
            status: 400,
            body: Array(
                #"{"code":400,"error":"some data points in the request failed validation","failed_records":[{"index":1,"$insert_id":"x","field":"properties.time","message":"too old"}],"num_records_imported":1}"#
                    .utf8))
        #expect(mixpanel.proceeds(after: failed))
        #expect(
            mixpanel.verdicts([failed, AttemptAnswer(status: 200, body: Array("1".utf8))], for: events, now: 0) == [
                .delivered, .rejected(reason: "Mixpanel refused this event (properties.time: too old)"),
            ])
        let unauthorized = AttemptAnswer(status: 401, body: Array(#"{"error":"Invalid credentials"}"#.utf8))
        #expect(!mixpanel.proceeds(after: unauthorized))
        #expect(
            mixpanel.verdicts([unauthorized], for: events, now: 0).first
                == .disableDestination(reason: "Mixpanel answered 401: Invalid credentials"))
    }

    @Test func internalAddressesAreNotPublic() {
        for text in [
            "127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
            "224.0.0.1", "::1", "::", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1",
        ] {
            #expect(IPAddress(text)?.isPublic == false, "\(text)")
        }
        for text in ["8.8.8.8", "172.32.0.1", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8"] {
            #expect(IPAddress(text)?.isPublic == true, "\(text)")
        }
        #expect(IPAddress("example.com") == nil)
    }

    @Test func thePolicyRefusesInternalAddressesUnlessAllowed() async throws {
        await #expect(throws: IntegrationError.self) { try await AddressPolicy(allowPrivate: false).check("http://127.0.0.1:8080/x") }
        await #expect(throws: IntegrationError.self) { try await AddressPolicy(allowPrivate: false).check("http://[::1]/x") }
        await #expect(throws: IntegrationError.self) { try await AddressPolicy(allowPrivate: false).check("http://localhost/x") }
        await #expect(throws: IntegrationError.self) { try await AddressPolicy(allowPrivate: false).check("file:///etc/passwd") }
        try await AddressPolicy(allowPrivate: true).check("http://127.0.0.1:8080/x")
        try await AddressPolicy(allowPrivate: false).check("https://93.184.215.14/x")
        // A name that does not resolve (.invalid never does) is a failure to retry, not a refused address.
        do {
            try await AddressPolicy(allowPrivate: false).check("https://storekeeper-test.invalid/x")
            Issue.record("a .invalid name resolved")
        } catch let error as IntegrationError {
            #expect(error.code == .unresolvableAddress)
        }
        let transport = DeliveryTransport(client: DeliveryTransport.sharedClient, policy: AddressPolicy(allowPrivate: false))
        let unresolved = await transport.send(OutgoingRequest(url: "https://storekeeper-test.invalid/x", headers: [], body: []))
        #expect(!unresolved.permanent && unresolved.failure?.contains("does not resolve") == true)
        let refused = await transport.send(OutgoingRequest(url: "http://127.0.0.1:9/x", headers: [], body: []))
        #expect(refused.permanent)
    }

    @Test func aConfigurationIsSplitIntoReadableFieldsAndSecrets() throws {
        let split = try DestinationKind.telegram.split(["botToken": "123:ABC", "chatId": "-100", "baseURL": "http://127.0.0.1:9"])
        #expect(split.readable == ["chatId": "-100", "baseURL": "http://127.0.0.1:9"])
        #expect(split.secrets == ["botToken": "123:ABC"])
        let changed = try DestinationKind.telegram.split(["baseURL": nil], existing: split)
        #expect(changed.readable == ["chatId": "-100"])
        #expect(throws: IntegrationError.self) { try DestinationKind.telegram.split(["chatId": nil], existing: split) }
        #expect(throws: IntegrationError.self) { try DestinationKind.mixpanel.split(["projectToken": "t", "serviceAccountUsername": "u"]) }
        #expect(throws: IntegrationError.self) { try DestinationKind.amplitude.split(["apiKey": "k", "region": "mars"]) }
        #expect(throws: IntegrationError.self) { try DestinationKind.slack.split(["url": "https://x\nInjected: 1"]) }
    }
}
