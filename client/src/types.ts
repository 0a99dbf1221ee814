/**
 * Request and response shapes of the routes a front end calls. Every route type lives in this one
 * file; the names are the API contract's (the routes' own words, as in docs/routes.md) so that
 * client/src/index.ts and its callers do not depend on how the service names its classes.
 *
 * Where the service serves a route, its shapes are aliases of the types `openapi-typescript`
 * generates from the service's own OpenAPI document (`GET /api/v1/docs-json`, committed as
 * client/openapi.json, types in ./schema.d.ts). Regenerate both with `npm run client:types`;
 * `npm run client:types:check` and test/openapi.e2e-spec.ts fail when they fall behind the service.
 * Only the routes the service does not serve yet, and the shapes its document has no schema for,
 * are written by hand below, each in a marked section.
 */
import type { components, paths } from './schema.js';

type Schemas = components['schemas'];

// ---------------------------------------------------------------------------------------------
// Scalars: the document types these as plain strings; the names say what a string holds.

/** A UUID string: the id of a user, invoice, node, ticket, round, withdrawal or session. */
export type Uuid = string;

/** An ISO 8601 time in UTC. */
export type IsoDateTime = string;

/**
 * An integer count of a currency's minor unit, as a string of digits (`"499"` = 4.99 USD; TON in
 * nanotons). A string because amounts outgrow a float's exact integers.
 */
export type Money = string;

/** An ISO 4217 upper-case code (`USD`, `EUR`, `RUB`), or `TON` for on-chain amounts. */
export type CurrencyCode = string;

// ---------------------------------------------------------------------------------------------
// Errors: the document has no schema for the error body; hand-written from the contract.

export interface FieldProblem {
  field: string;
  /** English, for people reading the raw answer. */
  message: string;
  /** The rule that failed (`isVisibleText`, `maxLength`, …): what an app puts into words. */
  rule?: string;
}

/** The body of every error answer. */
export interface ErrorBody {
  statusCode: number;
  error: string;
  code: string;
  message: string;
  details?: FieldProblem[];
  request_id?: string;
}

/** The contract's machine codes (section 0, error table). */
export type ErrorCode =
  | 'VALIDATION_FAILED'
  | 'UNAUTHENTICATED'
  | 'REFRESH_INVALID'
  | 'REFRESH_REUSED'
  | 'BOOTSTRAP_INVALID'
  | 'INVALID_CREDENTIALS'
  | 'TELEGRAM_AUTH_INVALID'
  | 'SUBSCRIPTION_REQUIRED'
  | 'FORBIDDEN'
  | 'ORIGIN_REJECTED'
  | 'INTERNAL_SECRET_INVALID'
  | 'TRIAL_TELEGRAM_ONLY'
  | 'NO_USER'
  | 'NO_TICKETS'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'USERNAME_TAKEN'
  | 'TRIAL_USED'
  | 'TICKET_CLOSED'
  | 'INVOICE_NOT_PENDING'
  | 'PAYMENT_NOT_FOUND'
  | 'INSUFFICIENT_BALANCE'
  | 'WITHDRAWAL_STATE'
  | 'ALREADY_ATTACHED'
  | 'ROUND_FINISHED'
  | 'ROUND_EXPIRED'
  | 'NODE_BUSY'
  | 'RATE_LIMITED'
  | 'UPSTREAM_UNAVAILABLE'
  | 'INTERNAL';

// ---------------------------------------------------------------------------------------------
// Lists

/**
 * One page of a paged list. The document names each page type on its own (`InvoicePage`,
 * `TicketPage` below); this generic form serves the lists of the client, and the checks at the end
 * of the file hold it equal to the generated pages.
 */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** `limit` is 1 to 100 (default 50); `cursor` is a previous page's `next_cursor`. */
export type PageQuery = NonNullable<paths['/api/v1/invoices']['get']['parameters']['query']>;

// ---------------------------------------------------------------------------------------------
// Public

/** `GET /config`. */
export type Config = Schemas['ConfigResponse'];
/** A way of paying the service may have set up (`Config['payment_methods']`). */
export type PaymentMethod = Config['payment_methods'][number];

/** `GET /plans`: an active plan; `prices` per currency, e.g. `{ USD: "499" }`. */
export type Plan = Schemas['PlanResponse'];

// ---------------------------------------------------------------------------------------------
// Users

export type Subscription = Schemas['SubscriptionView'];

export type Traffic = Schemas['TrafficView'];

/** `GET /users/me`, and the `user` of every login answer. */
export type User = Schemas['UserResponse'];

/** A staff role; an ordinary account has `role: null`. */
export type Role = NonNullable<User['role']>;

// ---------------------------------------------------------------------------------------------
// Auth

/** `POST /auth/seed`: the seed is shown this once; only its hash is stored. */
export type SeedAccountResponse = Schemas['SeedCreatedResponse'];

/** `POST /auth/seed/login`. */
export type SeedLoginRequest = Schemas['SeedLoginRequest'];

export type SeedLoginResponse = Schemas['SeedLoginResponse'];

/** `POST /auth/telegram`: the Telegram login widget's fields, passed on unchanged. */
export type TelegramLoginRequest = Schemas['TelegramLoginRequest'];

/** The answer of the cookie-only logins: telegram, exchange, refresh and admin login. */
export type SessionResponse = Schemas['UserEnvelope'];

/** `POST /auth/admin/login`. */
export type AdminLoginRequest = Schemas['AdminLoginRequest'];

/** `POST /auth/exchange`. */
export type ExchangeRequest = Schemas['ExchangeRequest'];

/** `POST /auth/bot/login-codes`: lives 10 minutes. */
export type LoginCode = Schemas['LoginCodeResponse'];

/** `POST /auth/bot/login-codes/{code}/poll`. */
export type LoginCodePollRequest = Schemas['PollLoginCodeRequest'];

/** `bootstrap_token` comes once, with `confirmed`; exchange it with `POST /auth/exchange`. */
export type LoginCodePollResponse = Schemas['PollLoginCodeResponse'];

// ---------------------------------------------------------------------------------------------
// Billing

/** `POST /invoices`. */
export type CreateInvoiceRequest = Schemas['CreateInvoiceRequest'];

export type TonPayment = Schemas['TonPaymentView'];

export type TelegramPayment = Schemas['TelegramPaymentView'];

/**
 * An invoice. `provider` tells which `payment` it carries (`TonPayment` for `ton`), and `amount` is
 * in the provider's own unit: nanotons for `ton`, minor units of `currency` for `telegram`.
 */
export type Invoice = Schemas['InvoiceResponse'];

export type PaymentProvider = Invoice['provider'];

export type InvoiceStatus = Invoice['status'];

/** `GET /invoices`. */
export type InvoicePage = Schemas['InvoicePageResponse'];

/** `POST /invoices/{id}/confirm` when the payment is found. */
export type ConfirmInvoiceResponse = Schemas['ConfirmationResponse'];

// ---------------------------------------------------------------------------------------------
// Tickets

export type Ticket = Schemas['TicketResponse'];

export type TicketStatus = Ticket['status'];

export type TicketMessage = Schemas['TicketMessageResponse'];

/** `GET /tickets`. */
export type TicketPage = Schemas['TicketPageResponse'];

/** `POST /tickets`: `subject` 1–200 characters, `message` 1–4000. */
export type CreateTicketRequest = Schemas['CreateTicketRequest'];

/** `POST /tickets` and `GET /tickets/{id}`. */
export type TicketThread = Schemas['TicketThreadResponse'];

/** `POST /tickets/{id}/messages`: `body` 1–4000 characters. */
export type PostTicketMessageRequest = Schemas['PostTicketMessageRequest'];

// ---------------------------------------------------------------------------------------------
// Game

/** `POST /game/rounds`: `board` is 10 rows × 10 columns of `0..colors-1`, row 0 at the top. */
export type GameRound = Schemas['RoundStartedResponse'];

/** `POST /game/rounds/{id}/score`: the raw clicks, `[row, col]` each, at most 500. */
export type SubmitScoreRequest = Schemas['ScoreRequest'];

export type ScoreResult = Schemas['ScoreResponse'];

/** `GET /game/leaderboard`: top 20. */
export type LeaderboardEntry = Schemas['LeaderboardEntry'];

// ---------------------------------------------------------------------------------------------
// Partners

/** `POST /users/me/partner`: answers the user. */
export type AttachPartnerRequest = Schemas['AttachPartnerRequest'];

/** A partner's money in one currency, in minor units; `available` is never negative. */
export type PartnerBalance = Schemas['BalanceView'];

/** A commission on one paid invoice of an attached buyer; it keeps the percent of its time. */
export type Commission = Schemas['CommissionView'];

/** `GET /partners/me/earnings`: `recent` is one page, `next_cursor` the next one's. */
export type PartnerEarnings = Schemas['EarningsResponse'];

export type Withdrawal = Schemas['WithdrawalResponse'];

export type WithdrawalStatus = Withdrawal['status'];

/** `POST /partners/me/withdrawals`: `destination` is a TON address when `currency` is TON. */
export type WithdrawalRequest = Schemas['CreateWithdrawalRequest'];

/** `GET /partners/me/withdrawals`. */
export type WithdrawalPage = Schemas['WithdrawalPageResponse'];

// ---------------------------------------------------------------------------------------------
// Devices and the subscription link

/** One device of the account: each has its own VLESS id; `client` is what its app said of itself. */
export type Device = Schemas['DeviceResponse'];

/** `GET /users/me/devices`: the account link, the plan's device limit, the devices. */
export type DeviceList = Schemas['DeviceListResponse'];

/** `POST /users/me/devices` and `PATCH /users/me/devices/{id}`: `name` 1-40 visible characters. */
export type DeviceNameRequest = Schemas['DeviceNameRequest'];

/** `POST /users/me/devices`: the new device and its own link; 409 `DEVICE_LIMIT` when full. */
export type CreatedDevice = Schemas['CreatedDeviceResponse'];

/** `POST /users/me/subscription-link/rotate`: the new account link (the old one answers 404). */
export type SubscriptionUrl = Schemas['SubscriptionUrlResponse'];

// ---------------------------------------------------------------------------------------------
// Outside the API's document: hand-written from the contract.

/** Why a link has nothing to connect to, or `ok`. */
export type LinkOutcome =
  'ok' | 'blocked' | 'expired' | 'traffic_exceeded' | 'device_limit' | 'no_node';

/**
 * `GET <SUB_URL>/sub/<token>?format=info` (outside `/api`; the token is its own authentication):
 * what the subscription page shows. An unknown or replaced token answers 404 `NOT_FOUND`.
 */
export interface SubscriptionInfo {
  outcome: LinkOutcome;
  /** The reason in the service's words (English) when `outcome` is not `ok`. */
  message: string | null;
  plan_name: string | null;
  expires_at: IsoDateTime | null;
  traffic_used_bytes: number;
  traffic_limit_bytes: number;
  device_limit: number;
  devices: { name: string; last_seen_at: IsoDateTime | null }[];
  subscription_url: string;
}

// ---------------------------------------------------------------------------------------------
// Not served yet: hand-written from the contract. Replace each with an alias of the generated
// schema once its route is in the service's document.

/** `GET /nodes/routing`: one online, provisioned node. */
export interface RoutingEntry {
  node_id: Uuid;
  name: string;
  tunnel_host: string;
  tunnel_port: number;
  tunnel_protocol: string;
  tunnel_flow: string;
  tunnel_short_id: string;
  public_key: string;
  sni_domain: string;
  /** One-time: the proxy accepts it once. */
  session_token: string;
}

// ---------------------------------------------------------------------------------------------
// Compile-time checks: the build fails when a route of the document stops answering (or taking)
// the type client/src/index.ts uses for it, e.g. after the service renames a response class.

type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
type Operation<P extends keyof paths, M extends keyof paths[P]> = NonNullable<paths[P][M]>;
/** The JSON answer of `M P` at `status`. */
type Answer<P extends keyof paths, M extends keyof paths[P], S extends number> =
  Operation<P, M> extends { responses: { [K in S]: { content: { 'application/json': infer T } } } }
    ? T
    : never;
/** The JSON body `M P` takes. */
type Body<P extends keyof paths, M extends keyof paths[P]> =
  Operation<P, M> extends { requestBody: { content: { 'application/json': infer T } } } ? T : never;

type _RouteChecks = [
  Holds<Exact<Page<Invoice>, InvoicePage>>,
  Holds<Exact<Page<Ticket>, TicketPage>>,
  Holds<Exact<Page<Withdrawal>, WithdrawalPage>>,
  Holds<Exact<PageQuery, NonNullable<paths['/api/v1/tickets']['get']['parameters']['query']>>>,
  Holds<Exact<Answer<'/api/v1/config', 'get', 200>, Config>>,
  Holds<Exact<Answer<'/api/v1/plans', 'get', 200>, Plan[]>>,
  Holds<Exact<Answer<'/api/v1/auth/seed', 'post', 201>, SeedAccountResponse>>,
  Holds<Exact<Body<'/api/v1/auth/seed/login', 'post'>, SeedLoginRequest>>,
  Holds<Exact<Answer<'/api/v1/auth/seed/login', 'post', 200>, SeedLoginResponse>>,
  Holds<Exact<Body<'/api/v1/auth/telegram', 'post'>, TelegramLoginRequest>>,
  Holds<Exact<Answer<'/api/v1/auth/telegram', 'post', 200>, SessionResponse>>,
  Holds<Exact<Body<'/api/v1/auth/admin/login', 'post'>, AdminLoginRequest>>,
  Holds<Exact<Answer<'/api/v1/auth/admin/login', 'post', 200>, SessionResponse>>,
  Holds<Exact<Body<'/api/v1/auth/exchange', 'post'>, ExchangeRequest>>,
  Holds<Exact<Answer<'/api/v1/auth/exchange', 'post', 200>, SessionResponse>>,
  Holds<Exact<Answer<'/api/v1/auth/refresh', 'post', 200>, SessionResponse>>,
  Holds<Exact<Answer<'/api/v1/auth/bot/login-codes', 'post', 201>, LoginCode>>,
  Holds<Exact<Body<'/api/v1/auth/bot/login-codes/{code}/poll', 'post'>, LoginCodePollRequest>>,
  Holds<
    Exact<Answer<'/api/v1/auth/bot/login-codes/{code}/poll', 'post', 200>, LoginCodePollResponse>
  >,
  Holds<Exact<Answer<'/api/v1/users/me', 'get', 200>, User>>,
  Holds<Exact<Answer<'/api/v1/users/me/trial', 'post', 200>, Subscription>>,
  Holds<Exact<Body<'/api/v1/invoices', 'post'>, CreateInvoiceRequest>>,
  Holds<Exact<Answer<'/api/v1/invoices', 'post', 201>, Invoice>>,
  Holds<Exact<Answer<'/api/v1/invoices', 'get', 200>, InvoicePage>>,
  Holds<Exact<Answer<'/api/v1/invoices/{id}', 'get', 200>, Invoice>>,
  Holds<Exact<Answer<'/api/v1/invoices/{id}/confirm', 'post', 200>, ConfirmInvoiceResponse>>,
  Holds<Exact<Body<'/api/v1/tickets', 'post'>, CreateTicketRequest>>,
  Holds<Exact<Answer<'/api/v1/tickets', 'post', 201>, TicketThread>>,
  Holds<Exact<Answer<'/api/v1/tickets', 'get', 200>, TicketPage>>,
  Holds<Exact<Answer<'/api/v1/tickets/{id}', 'get', 200>, TicketThread>>,
  Holds<Exact<Body<'/api/v1/tickets/{id}/messages', 'post'>, PostTicketMessageRequest>>,
  Holds<Exact<Answer<'/api/v1/tickets/{id}/messages', 'post', 201>, TicketMessage>>,
  Holds<Exact<Answer<'/api/v1/game/rounds', 'post', 201>, GameRound>>,
  Holds<Exact<Body<'/api/v1/game/rounds/{id}/score', 'post'>, SubmitScoreRequest>>,
  Holds<Exact<Answer<'/api/v1/game/rounds/{id}/score', 'post', 200>, ScoreResult>>,
  Holds<Exact<Answer<'/api/v1/game/leaderboard', 'get', 200>, LeaderboardEntry[]>>,
  Holds<Exact<Body<'/api/v1/users/me/partner', 'post'>, AttachPartnerRequest>>,
  Holds<Exact<Answer<'/api/v1/users/me/partner', 'post', 200>, User>>,
  Holds<Exact<Answer<'/api/v1/partners/me/earnings', 'get', 200>, PartnerEarnings>>,
  Holds<Exact<Answer<'/api/v1/partners/me/withdrawals', 'get', 200>, WithdrawalPage>>,
  Holds<Exact<Body<'/api/v1/partners/me/withdrawals', 'post'>, WithdrawalRequest>>,
  Holds<Exact<Answer<'/api/v1/partners/me/withdrawals', 'post', 201>, Withdrawal>>,
  Holds<
    Exact<
      NonNullable<paths['/api/v1/partners/me/earnings']['get']['parameters']['query']>,
      PageQuery
    >
  >,
  Holds<Exact<Answer<'/api/v1/users/me/devices', 'get', 200>, DeviceList>>,
  Holds<Exact<Body<'/api/v1/users/me/devices', 'post'>, DeviceNameRequest>>,
  Holds<Exact<Answer<'/api/v1/users/me/devices', 'post', 201>, CreatedDevice>>,
  Holds<Exact<Body<'/api/v1/users/me/devices/{id}', 'patch'>, DeviceNameRequest>>,
  Holds<Exact<Answer<'/api/v1/users/me/devices/{id}', 'patch', 200>, Device>>,
  Holds<Exact<Answer<'/api/v1/users/me/subscription-link/rotate', 'post', 200>, SubscriptionUrl>>,
];
