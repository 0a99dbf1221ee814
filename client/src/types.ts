/**
 * Request and response shapes of the routes a front end calls, written by hand from
 * /work/shared/api-contract.md. Every route type lives in this one file so that it can be swapped
 * for aliases of the types `openapi-typescript` generates from `GET /api/v1/docs-json`; the names
 * follow the contract's shapes so that swap does not reach the callers.
 *
 * Where the contract leaves a field out, the type leaves it out too rather than guess it.
 */

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

/** A staff role; an ordinary account has `role: null`. */
export type Role = 'owner' | 'moderator' | 'partner' | 'support';

// ---------------------------------------------------------------------------------------------
// Errors and lists

export interface FieldProblem {
  field: string;
  message: string;
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

/** One page of a paged list (`/invoices`, `/tickets`, withdrawals). */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** `limit` is 1 to 100 (default 50); `cursor` is a previous page's `next_cursor`. */
export interface PageQuery {
  limit?: number;
  cursor?: string;
}

// ---------------------------------------------------------------------------------------------
// Public

/** `GET /config`. */
export interface Config {
  bot_username: string | null;
  grafana_url: string | null;
}

/** `GET /plans`: an active plan. */
export interface Plan {
  name: string;
  duration_days: number;
  traffic_limit_bytes: number;
  /** Price per currency, e.g. `{ USD: "499" }`. */
  prices: Record<CurrencyCode, Money>;
}

// ---------------------------------------------------------------------------------------------
// Users

export interface Subscription {
  plan_name: string;
  expires_at: IsoDateTime;
  active: boolean;
}

export interface Traffic {
  limit_bytes: number;
  used_bytes: number;
}

/** `GET /users/me`, and the `user` of every login answer. */
export interface User {
  id: Uuid;
  role: Role | null;
  username: string | null;
  /** A Telegram id; fits in 53 bits. */
  tg_id: number | null;
  can_manage_nodes: boolean;
  partner_code: string | null;
  /** A percentage with up to 2 decimals (`12.5`). */
  commission_percent: number | null;
  subscription: Subscription | null;
  traffic: Traffic;
  created_at: IsoDateTime;
}

/** `POST /users/me/partner`. */
export interface AttachPartnerRequest {
  partner_code: string;
}

// ---------------------------------------------------------------------------------------------
// Auth

/** `POST /auth/seed`: the seed is shown this once; only its hash is stored. */
export interface SeedAccountResponse {
  seed: string;
  access_token: string;
  user: User;
}

/** `POST /auth/seed/login`. */
export interface SeedLoginRequest {
  seed: string;
}

export interface SeedLoginResponse {
  access_token: string;
  user: User;
}

/** `POST /auth/telegram`: the Telegram login widget's fields, passed on unchanged. */
export interface TelegramLoginRequest {
  id: number;
  first_name: string;
  last_name?: string;
  username?: string;
  photo_url?: string;
  auth_date: number;
  hash: string;
}

/** The answer of the cookie-only logins: telegram, exchange, refresh and admin login. */
export interface SessionResponse {
  user: User;
}

/** `POST /auth/admin/login`. */
export interface AdminLoginRequest {
  username: string;
  password: string;
}

/** `POST /auth/exchange`. */
export interface ExchangeRequest {
  bootstrap_token: string;
}

/** `POST /auth/bot/login-codes`: lives 10 minutes. */
export interface LoginCode {
  code: string;
  poll_secret: string;
  /** `https://t.me/<bot_username>?start=login_<code>` */
  deep_link: string;
  expires_at: IsoDateTime;
}

/** `POST /auth/bot/login-codes/{code}/poll`. */
export interface LoginCodePollRequest {
  poll_secret: string;
}

/** The `bootstrap_token` is given once; exchange it with `POST /auth/exchange`. */
export type LoginCodePollResponse =
  { status: 'pending' } | { status: 'confirmed'; bootstrap_token: string } | { status: 'expired' };

// ---------------------------------------------------------------------------------------------
// Billing

export type PaymentProvider = 'ton' | 'telegram';

export type InvoiceStatus = 'pending' | 'paid' | 'expired';

/** `POST /invoices`. */
export interface CreateInvoiceRequest {
  plan_name: string;
  currency: CurrencyCode;
  provider: PaymentProvider;
}

export interface TonPayment {
  address: string;
  amount_nano: Money;
  comment: string;
  /** `ton://transfer/<address>?amount=<nano>&text=<comment>` */
  link: string;
}

export interface TelegramPayment {
  invoice_link: string;
}

interface InvoiceFields {
  id: Uuid;
  user_id: Uuid;
  plan_name: string;
  /** The currency asked for; for `ton` the `amount` is still in nanotons. */
  currency: CurrencyCode;
  /** In the provider's own unit: nanotons for `ton`, minor units of `currency` for `telegram`. */
  amount: Money;
  status: InvoiceStatus;
  created_at: IsoDateTime;
  paid_at: IsoDateTime | null;
}

/** An invoice; `provider` tells which `payment` it carries. */
export type Invoice =
  | (InvoiceFields & { provider: 'ton'; payment: TonPayment })
  | (InvoiceFields & { provider: 'telegram'; payment: TelegramPayment });

/** `POST /invoices/{id}/confirm` when the payment is found. */
export interface ConfirmInvoiceResponse {
  invoice: Invoice;
  subscription: Subscription;
}

// ---------------------------------------------------------------------------------------------
// Nodes

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
// Tickets

export type TicketStatus = 'open' | 'closed';

/** The contract names only these fields of a ticket. */
export interface Ticket {
  id: Uuid;
  subject: string;
  status: TicketStatus;
}

export interface TicketMessage {
  id: Uuid;
  ticket_id: Uuid;
  author_id: Uuid;
  author_role: 'user' | 'staff';
  body: string;
  created_at: IsoDateTime;
}

/** `POST /tickets`: `subject` 1–200 characters, `message` 1–4000. */
export interface CreateTicketRequest {
  subject: string;
  message: string;
}

/** `POST /tickets` and `GET /tickets/{id}`. */
export interface TicketThread {
  ticket: Ticket;
  messages: TicketMessage[];
}

/** `POST /tickets/{id}/messages`: `body` 1–4000 characters. */
export interface PostTicketMessageRequest {
  body: string;
}

// ---------------------------------------------------------------------------------------------
// Game

/** `POST /game/rounds`: `board` is 10 rows × 10 columns of `0..colors-1`, row 0 at the top. */
export interface GameRound {
  round_id: Uuid;
  board: number[][];
  colors: number;
  expires_at: IsoDateTime;
}

/** `POST /game/rounds/{id}/score`: the raw clicks, `[row, col]` each, at most 500. */
export interface SubmitScoreRequest {
  clicks: [number, number][];
}

/** The contract names `cleared` and `remaining` without their type; read here as tile counts. */
export interface ScoreResult {
  score: number;
  cleared: number;
  remaining: number;
}

/** `GET /game/leaderboard`: top 20. */
export interface LeaderboardEntry {
  user_id: Uuid;
  best_score: number;
}

// ---------------------------------------------------------------------------------------------
// Partners

export interface PartnerBalance {
  currency: CurrencyCode;
  earned: Money;
  /** Pending plus approved withdrawals. */
  requested: Money;
  paid: Money;
  /** earned − (requested + paid); never negative. */
  available: Money;
}

/** The contract does not list a commission's fields; read them as unknown until it does. */
export type Commission = Record<string, unknown>;

/** `GET /partners/me/earnings`. */
export interface PartnerEarnings {
  partner_code: string;
  commission_percent: number;
  balances: PartnerBalance[];
  recent: Commission[];
}

export type WithdrawalStatus = 'pending' | 'approved' | 'rejected' | 'paid';

/** The contract names these fields and elides the rest. */
export interface Withdrawal {
  id: Uuid;
  amount: Money;
  currency: CurrencyCode;
  destination: string;
  status: WithdrawalStatus;
}

/** `POST /partners/me/withdrawals`. */
export interface WithdrawalRequest {
  amount: Money;
  currency: CurrencyCode;
  destination: string;
}
