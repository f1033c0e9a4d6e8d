/// The OpenAPI 3.1 description of every endpoint, served at `/openapi.yaml`. A test checks that its paths and
/// methods are exactly the router's.
enum OpenAPIDocument {
    static let yaml = #"""
        openapi: 3.1.0
        info:
          title: Storekeeper
          version: 1.0.0
          description: |
            A self-hosted subscription backend for App Store apps. Errors are always
            `{"error": {"code", "message"}}`; bodies over 256 KB get 413. Instants are epoch milliseconds.
            Customer endpoints take the app's public key (pk_…) or a secret key (sk_…); admin endpoints a secret key.
        servers:
          - url: http://127.0.0.1:8080
        security:
          - apiKey: []
        components:
          securitySchemes:
            apiKey:
              type: http
              scheme: bearer
              description: "pk_<id>_<secret> (customer endpoints) or sk_<id>_<secret> (all endpoints of its app)"
          parameters:
            AppId:
              name: appId
              in: path
              required: true
              schema: {type: string}
            AppUserId:
              name: appUserId
              in: path
              required: true
              schema: {type: string, maxLength: 256}
            Environment:
              name: environment
              in: query
              required: false
              description: Production, Sandbox, Xcode or LocalTesting; one of the app's. Default: the app's first.
              schema: {type: string}
            After:
              name: after
              in: query
              required: false
              description: The nextCursor of the previous page.
              schema: {type: string}
            Limit:
              name: limit
              in: query
              required: false
              schema: {type: integer, minimum: 1, maximum: 1000, default: 100}
          responses:
            Error:
              description: An error.
              content:
                application/json:
                  schema: {$ref: "#/components/schemas/Error"}
            Customer:
              description: The customer's state at server time.
              headers:
                ETag: {schema: {type: string}}
                Cache-Control: {schema: {type: string}, description: "max-age never passes nextChangeAt"}
              content:
                application/json:
                  schema: {$ref: "#/components/schemas/Customer"}
            Events:
              description: A page of events.
              content:
                application/json:
                  schema: {$ref: "#/components/schemas/EventPage"}
          schemas:
            Error:
              type: object
              required: [error]
              properties:
                error:
                  type: object
                  required: [code, message]
                  properties:
                    code: {type: string, examples: [unauthenticated, forbidden, not_found, invalid_request, payload_too_large, invalidJWTFormat, verificationFailure, invalidAppIdentifier, invalidEnvironment, retryableVerificationFailure, transaction_owned, unavailable]}
                    message: {type: string}
                    field: {type: string, description: "The input at fault (a body field, a query parameter, the app user id), when one is."}
            Customer:
              type: object
              required: [appUserId, environment, requestDate, state, billingIssue, entitlements, subscriptions, nonSubscriptions, introEligibility]
              properties:
                appUserId: {type: string}
                environment: {type: string}
                requestDate: {type: integer, description: "server time, epoch ms: clients must not trust the device clock"}
                state: {type: string, enum: [new, active, inactive]}
                billingIssue: {type: boolean}
                entitlements:
                  type: object
                  additionalProperties: {$ref: "#/components/schemas/Access"}
                products:
                  type: object
                  additionalProperties: {$ref: "#/components/schemas/Access"}
                groups: {type: object}
                subscriptions: {type: array, items: {type: object}}
                nonSubscriptions: {type: array, items: {type: object}}
                introEligibility: {type: object}
                winBackEligibility: {type: object}
                nextChangeAt: {type: [integer, "null"]}
            Access:
              type: object
              properties:
                active: {type: boolean}
                expiresDate: {type: [integer, "null"]}
                productId: {type: [string, "null"]}
                transactionId: {type: [string, "null"]}
            EventPage:
              type: object
              required: [events, nextCursor]
              properties:
                events:
                  type: array
                  items:
                    type: object
                    required: [id, type, effectiveAt, cursor]
                    properties:
                      id: {type: string}
                      type: {type: string}
                      effectiveAt: {type: integer}
                      cursor: {type: string}
                      recordedAt: {type: integer}
                nextCursor: {type: string}
            Catalog:
              type: object
              required: [products]
              properties:
                products:
                  type: array
                  items:
                    type: object
                    required: [id, type]
                    properties:
                      id: {type: string}
                      type: {type: string, enum: [autoRenewable, nonConsumable, consumable, nonRenewing]}
                      group: {type: string}
                      period: {type: string}
                      duration: {type: string}
                      entitlements: {type: array, items: {type: string}}
                      level: {type: integer}
            AppView:
              type: object
              properties:
                appId: {type: string}
                bundleId: {type: string}
                appAppleId: {type: [integer, "null"]}
                environments: {type: array, items: {type: string}}
                trustedRoots: {type: [array, "null"], items: {type: string}}
                sharedSecretConfigured: {type: boolean}
                serverAPI: {type: [object, "null"]}
                catalog: {$ref: "#/components/schemas/Catalog"}
                transferPolicy: {type: string, enum: [transfer, keep]}
        paths:
          /health:
            get:
              summary: Whether the server and its database answer.
              security: []
              responses:
                "200": {description: Healthy.}
                "503": {description: The database does not answer.}
          /ping:
            get:
              summary: Answers "pong" and does nothing else (the benchmarks' yardstick).
              security: []
              responses:
                "200": {description: pong}
          /metrics:
            get:
              summary: Prometheus metrics (requests and latency, notifications by type and result, verification failures by error).
              security: []
              responses:
                "200": {description: Prometheus text format.}
          /openapi.yaml:
            get:
              summary: This document.
              security: []
              responses:
                "200": {description: OpenAPI 3.1 YAML.}
          /v1/apps/{appId}/notifications/appstore:
            post:
              summary: App Store Server Notifications V2 (Apple's webhook). No key; the signature is verified with the app's roots.
              security: []
              parameters: [{$ref: "#/components/parameters/AppId"}]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [signedPayload]
                      properties:
                        signedPayload: {type: string}
              responses:
                "200":
                  description: Stored and applied (or already stored), after the commit.
                  content:
                    application/json:
                      schema:
                        type: object
                        properties:
                          result: {type: string, enum: [applied, stored, duplicate]}
                "400": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
                "413": {$ref: "#/components/responses/Error"}
                "503": {$ref: "#/components/responses/Error"}
          /v1/apps/{appId}:
            get:
              summary: The app's configuration, without its secrets (secret key).
              parameters: [{$ref: "#/components/parameters/AppId"}]
              responses:
                "200":
                  description: The configuration.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/AppView"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
            patch:
              summary: Changes the app's configuration; present fields replace stored ones, null removes a secret (secret key).
              parameters: [{$ref: "#/components/parameters/AppId"}]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      properties:
                        appAppleId: {type: [integer, "null"]}
                        environments: {type: array, items: {type: string}}
                        trustedRoots: {type: [array, "null"], items: {type: string}}
                        sharedSecret: {type: [string, "null"]}
                        serverAPI:
                          type: [object, "null"]
                          properties:
                            issuerId: {type: string}
                            keyId: {type: string}
                            privateKey: {type: string}
                            baseURL: {type: string}
                        verifyReceiptURLs: {type: [array, "null"], items: {type: string}}
                        catalog: {$ref: "#/components/schemas/Catalog"}
                        transferPolicy: {type: string, enum: [transfer, keep]}
              responses:
                "200":
                  description: The new configuration.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/AppView"}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
          /v1/apps/{appId}/products:
            get:
              summary: The product catalog (secret key).
              parameters: [{$ref: "#/components/parameters/AppId"}]
              responses:
                "200":
                  description: The catalog.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/Catalog"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
            put:
              summary: Replaces the product catalog, and with it the entitlements (secret key).
              parameters: [{$ref: "#/components/parameters/AppId"}]
              requestBody:
                required: true
                content:
                  application/json:
                    schema: {$ref: "#/components/schemas/Catalog"}
              responses:
                "200":
                  description: The catalog.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/Catalog"}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
          /v1/apps/{appId}/entitlements:
            get:
              summary: The entitlements and the products that grant each (secret key).
              parameters: [{$ref: "#/components/parameters/AppId"}]
              responses:
                "200": {description: The entitlements.}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
          /v1/apps/{appId}/keys/rotate:
            post:
              summary: Issues a new public or secret key and revokes the old ones of that kind (secret key).
              parameters: [{$ref: "#/components/parameters/AppId"}]
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [kind]
                      properties:
                        kind: {type: string, enum: [public, secret]}
              responses:
                "201": {description: "The new key, shown once: {kind, key, revoked}."}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
          /v1/apps/{appId}/events:
            get:
              summary: The app's subscription events in recording order, for pulling (secret key).
              parameters:
                - {$ref: "#/components/parameters/AppId"}
                - {$ref: "#/components/parameters/After"}
                - {$ref: "#/components/parameters/Limit"}
              responses:
                "200": {$ref: "#/components/responses/Events"}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
          /v1/apps/{appId}/audit:
            get:
              summary: Every merge, transfer and alias of the app's customers (secret key).
              parameters: [{$ref: "#/components/parameters/AppId"}]
              responses:
                "200": {description: "{audit: [...]}"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
          /v1/customers/{appUserId}:
            get:
              summary: The customer's state, for proactive restore at launch (public or secret key).
              parameters:
                - {$ref: "#/components/parameters/AppUserId"}
                - {$ref: "#/components/parameters/Environment"}
                - {name: If-None-Match, in: header, required: false, schema: {type: string}}
              responses:
                "200": {$ref: "#/components/responses/Customer"}
                "304": {description: Not modified.}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
          /v1/customers/{appUserId}/transactions:
            post:
              summary: Posts a purchase (a StoreKit 2 signed transaction or an app receipt) and returns the state (public or secret key).
              parameters:
                - {$ref: "#/components/parameters/AppUserId"}
                - {$ref: "#/components/parameters/Environment"}
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      properties:
                        signedTransaction: {type: string, description: "StoreKit 2's jwsRepresentation"}
                        receipt: {type: string, description: "an app receipt, base64"}
              responses:
                "200": {$ref: "#/components/responses/Customer"}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "409": {$ref: "#/components/responses/Error"}
                "413": {$ref: "#/components/responses/Error"}
                "503": {$ref: "#/components/responses/Error"}
          /v1/customers/{appUserId}/alias:
            post:
              summary: Makes another app user id (an anonymous one) a name of this customer, merging its purchases (public or secret key).
              parameters:
                - {$ref: "#/components/parameters/AppUserId"}
                - {$ref: "#/components/parameters/Environment"}
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [alias]
                      properties:
                        alias: {type: string}
              responses:
                "200": {$ref: "#/components/responses/Customer"}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
          /v1/customers/{appUserId}/events:
            get:
              summary: The customer's subscription events (secret key).
              parameters:
                - {$ref: "#/components/parameters/AppUserId"}
                - {$ref: "#/components/parameters/After"}
                - {$ref: "#/components/parameters/Limit"}
              responses:
                "200": {$ref: "#/components/responses/Events"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
          /v1/subscribers/{appUserId}:
            get:
              summary: RevenueCat's v1 subscriber shape (the subset in the README), for migrations (secret key).
              parameters:
                - {$ref: "#/components/parameters/AppUserId"}
                - {$ref: "#/components/parameters/Environment"}
              responses:
                "200": {description: "{request_date, request_date_ms, subscriber}"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
        """#
}
