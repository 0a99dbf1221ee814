/**
 * Browser client of the VPN subscription service. Front ends call these typed methods instead of
 * writing fetch calls, so that the session rule (spec section 5, rule 10) lives in one place:
 * on a 401 the client refreshes silently and retries once; when the refresh fails it sends the app
 * to `/`.
 *
 * All runtime code stays in this one file and imports nothing at run time (`./types.js` gives
 * types only), so the CommonJS copy the root tests compile from it (test/client/client-module.ts)
 * needs no module resolution. Keep it free of `import.meta` and top-level await for the same reason.
 */
import type {
  AdminLoginRequest,
  AttachPartnerRequest,
  Config,
  ConfirmInvoiceResponse,
  CreateInvoiceRequest,
  CreatedDevice,
  CreateTicketRequest,
  Device,
  DeviceList,
  DeviceNameRequest,
  ExchangeRequest,
  FieldProblem,
  GameRound,
  Invoice,
  LeaderboardEntry,
  LoginCode,
  LoginCodePollRequest,
  LoginCodePollResponse,
  Page,
  PageQuery,
  PartnerEarnings,
  Plan,
  PostTicketMessageRequest,
  RoutingEntry,
  ScoreResult,
  SeedAccountResponse,
  SeedLoginRequest,
  SeedLoginResponse,
  SessionResponse,
  Subscription,
  SubmitScoreRequest,
  SubscriptionInfo,
  SubscriptionUrl,
  TelegramLoginRequest,
  Ticket,
  TicketMessage,
  TicketThread,
  User,
  Withdrawal,
  WithdrawalRequest,
} from './types.js';

export type * from './types.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What the client passes to `fetch`; the browser's `fetch` accepts it as it is. */
export interface FetchInit {
  method: HttpMethod;
  credentials: 'include';
  headers: Record<string, string>;
  body?: string;
}

/** The part of a `Response` the client reads. */
export interface ResponseLike {
  readonly status: number;
  readonly ok: boolean;
  text(): Promise<string>;
}

export type FetchLike = (url: string, init: FetchInit) => Promise<ResponseLike>;

/**
 * The part of the Web Locks API the client uses; `navigator.locks` fits it. With
 * `ifAvailable: true` the callback gets `null` when another holder has the lock.
 */
export interface LockManagerLike {
  request(
    name: string,
    options: { ifAvailable?: boolean },
    callback: (lock: unknown) => Promise<void>,
  ): Promise<unknown>;
}

/** The part of `localStorage` the client uses. */
export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

export interface ClientOptions {
  /** The API's origin without `/api/v1` (`https://api.example.com`); `''` for the page's own. */
  baseUrl: string;
  /** Moves the app to a route; called with `'/'` when the session cannot be renewed. */
  navigate: (path: string) => void;
  /** The app's current route, in the form `navigate` takes. */
  currentPath: () => string;
  /** Defaults to the global `fetch`. */
  fetch?: FetchLike;
  /** Defaults to `navigator.locks`, else a lock shared by the clients of this page only. */
  locks?: LockManagerLike;
  /** Where tabs note that a refresh happened; defaults to `localStorage`; `null` keeps none. */
  storage?: StorageLike | null;
}

export interface RequestOptions {
  /** Sent as JSON. */
  body?: unknown;
  /** Added as `?name=value`; `undefined` and `null` entries are left out. */
  query?: Record<string, string | number | boolean | null | undefined>;
}

/** The contract's error body as the client hands it on, plus the HTTP status. */
export interface ApiProblem {
  status: number;
  /** The contract's machine code, or `NETWORK_ERROR` / `UNEXPECTED_RESPONSE` from the client. */
  code: string;
  message: string;
  details?: FieldProblem[];
  requestId?: string;
}

/** Every failed call rejects with this. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** The HTTP status; 0 when no answer arrived. */
  readonly status: number;
  readonly code: string;
  /** The fields that failed validation; empty for other errors. */
  readonly details: FieldProblem[];
  /** Present on 500s; the same id is in the service's log line. */
  readonly requestId: string | undefined;

  constructor(problem: ApiProblem, options?: { cause?: unknown }) {
    super(problem.message, options);
    this.status = problem.status;
    this.code = problem.code;
    this.details = problem.details ?? [];
    this.requestId = problem.requestId;
  }
}

/** The Web Locks name every tab refreshes under. */
export const REFRESH_LOCK = 'vpn-service-refresh';

/** The storage key of the count of refreshes done in this browser. */
export const REFRESH_GENERATION_KEY = 'vpn-service-refresh-generation';

/**
 * Routes whose 401 means "wrong credentials", not "session expired": refreshing cannot help them,
 * and a 401 from `/auth/refresh` itself must end the attempt rather than start another.
 */
const NO_REFRESH_PATHS: readonly string[] = [
  '/auth/seed',
  '/auth/seed/login',
  '/auth/telegram',
  '/auth/admin/login',
  '/auth/exchange',
  '/auth/refresh',
];

function refreshesOn401(path: string): boolean {
  const bare = path.split('?')[0];
  return !NO_REFRESH_PATHS.includes(bare) && !bare.startsWith('/auth/bot/login-codes');
}

type RenewOutcome = { renewed: true } | { renewed: false; error: ApiError };

const RENEWED: RenewOutcome = { renewed: true };

export function createClient(options: ClientOptions) {
  const origin = options.baseUrl.replace(/\/+$/, '');
  const api = `${origin}/api/v1`;
  const fetchFn: FetchLike = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
  const locks = options.locks ?? browserLocks() ?? pageLocks;
  const storage = options.storage === undefined ? browserStorage() : options.storage;

  /**
   * Cookie renewals (refreshes and sign-ins) this client saw; stands in for the shared count when
   * there is no storage.
   */
  let localGeneration = 0;
  /** The one refresh the 401s of this client are waiting on. */
  let flight: Promise<RenewOutcome> | null = null;

  function url(path: string, query: RequestOptions['query']): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== null) params.set(name, String(value));
    }
    const search = params.toString();
    return `${api}${path}${search === '' ? '' : `?${search}`}`;
  }

  function send(
    method: HttpMethod,
    path: string,
    { body, query }: RequestOptions = {},
  ): Promise<ResponseLike> {
    return sendTo(method, url(path, query), body);
  }

  /** One call to an address of the service; no answer at all is `NETWORK_ERROR`. */
  async function sendTo(
    method: HttpMethod,
    address: string,
    body?: unknown,
  ): Promise<ResponseLike> {
    const init: FetchInit = {
      method,
      credentials: 'include',
      headers: { Accept: 'application/json' },
    };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    try {
      return await fetchFn(address, init);
    } catch (error) {
      const problem = { status: 0, code: 'NETWORK_ERROR', message: 'the service did not answer' };
      throw new ApiError(problem, { cause: error });
    }
  }

  /**
   * How many times this browser got new session cookies (a refresh or a sign-in). A call notes it
   * when sent; if it has grown by the time the call's 401 arrives, or by the time its refresh
   * failed, the cookies were renewed meanwhile and a retry is enough.
   */
  function generation(): number {
    let shared = 0;
    try {
      const stored = Number(storage?.getItem(REFRESH_GENERATION_KEY) ?? 0);
      if (Number.isSafeInteger(stored) && stored > 0) shared = stored;
    } catch {
      // Storage refused (privacy mode, quota): the local count still serves this client.
    }
    return Math.max(shared, localGeneration);
  }

  function noteNewCookies(): void {
    localGeneration = generation() + 1;
    try {
      storage?.setItem(REFRESH_GENERATION_KEY, String(localGeneration));
    } catch {
      // As above: other tabs then learn of this refresh by probing instead.
    }
  }

  /** Holds the refresh lock while `work` runs; `waited` says whether another holder came first. */
  async function withRefreshLock<T>(work: (waited: boolean) => Promise<T>): Promise<T> {
    const box: { done?: { value: T } } = {};
    await locks.request(REFRESH_LOCK, { ifAvailable: true }, async (lock) => {
      if (lock !== null) box.done = { value: await work(false) };
    });
    if (!box.done) {
      await locks.request(REFRESH_LOCK, {}, async () => {
        box.done = { value: await work(true) };
      });
    }
    if (!box.done) throw new Error('the lock manager did not run the refresh');
    return box.done.value;
  }

  /** `POST /auth/refresh`, to be called only while holding the refresh lock. */
  async function refreshNow(): Promise<SessionResponse> {
    const session = await read<SessionResponse>(await send('POST', '/auth/refresh'));
    noteNewCookies();
    return session;
  }

  /**
   * A sign-in, in turn with the refreshes of this browser: a failed refresh's answer clears the
   * cookies, and must not land after the sign-in's new ones. Once it succeeded, calls that failed
   * with the old cookies retry.
   */
  function signIn<T>(call: () => Promise<T>): Promise<T> {
    return withRefreshLock(async () => {
      const signedIn = await call();
      noteNewCookies();
      return signedIn;
    });
  }

  /** Whether the current cookies work: a cheap, side-effect-free call. */
  async function sessionWorks(): Promise<boolean> {
    try {
      return (await send('GET', '/users/me')).ok;
    } catch {
      return false;
    }
  }

  /**
   * Renews the session after a 401 of a call sent at `sentGeneration`. The server revokes every
   * session when a rotated refresh token comes back, so two refreshes must never carry one cookie:
   * the calls of this client share one flight, and tabs take turns under the refresh lock.
   */
  function renewAfter401(sentGeneration: number): Promise<RenewOutcome> {
    if (generation() > sentGeneration) return Promise.resolve(RENEWED);
    flight ??= withRefreshLock(async (waited) => {
      if (generation() > sentGeneration) return RENEWED;
      // Without shared storage a tab that waited cannot see whether the holder refreshed: ask.
      if (waited && storage === null && (await sessionWorks())) return RENEWED;
      await refreshNow();
      return RENEWED;
    })
      .catch((error: unknown): RenewOutcome => {
        // A sign-in finished while the refresh was out: its cookies stand, nobody is sent away.
        if (generation() > sentGeneration) return RENEWED;
        return { renewed: false, error: asApiError(error) };
      })
      .then((outcome) => {
        // Status 0: the refresh got no answer, so the session may well be alive; stay put.
        if (!outcome.renewed && outcome.error.status !== 0 && options.currentPath() !== '/') {
          options.navigate('/');
        }
        return outcome;
      })
      .finally(() => {
        flight = null;
      });
    return flight;
  }

  async function request<T>(
    method: HttpMethod,
    path: string,
    requestOptions: RequestOptions = {},
  ): Promise<T> {
    const sentGeneration = generation();
    const answer = await send(method, path, requestOptions);
    if (answer.status !== 401 || !refreshesOn401(path)) return read<T>(answer);
    const rejected = await problemOf(answer);
    const outcome = await renewAfter401(sentGeneration);
    if (!outcome.renewed && generation() === sentGeneration) {
      throw new ApiError(rejected, { cause: outcome.error });
    }
    // Once only: a second 401 after a good refresh is not an expired session; hand it on.
    return read<T>(await send(method, path, requestOptions));
  }

  const get = <T>(path: string, query?: RequestOptions['query']) =>
    request<T>('GET', path, { query });
  const post = <T>(path: string, body?: unknown) => request<T>('POST', path, { body });
  const id = encodeURIComponent;

  return {
    /** Any route, with the same session handling, for the routes without a method below. */
    request,

    config: () => get<Config>('/config'),
    plans: () => get<Plan[]>('/plans'),

    createSeedAccount: () => signIn(() => post<SeedAccountResponse>('/auth/seed')),
    loginWithSeed: (body: SeedLoginRequest) =>
      signIn(() => post<SeedLoginResponse>('/auth/seed/login', body)),
    loginWithTelegram: (body: TelegramLoginRequest) =>
      signIn(() => post<SessionResponse>('/auth/telegram', body)),
    adminLogin: (body: AdminLoginRequest) =>
      signIn(() => post<SessionResponse>('/auth/admin/login', body)),
    exchangeBootstrap: (body: ExchangeRequest) =>
      signIn(() => post<SessionResponse>('/auth/exchange', body)),
    createLoginCode: () => post<LoginCode>('/auth/bot/login-codes'),
    pollLoginCode: (code: string, body: LoginCodePollRequest) =>
      post<LoginCodePollResponse>(`/auth/bot/login-codes/${id(code)}/poll`, body),
    logout: () => post<void>('/auth/logout'),
    /** Refreshes now, in turn with every other refresh of this browser; never navigates. */
    refresh: () => withRefreshLock(refreshNow),

    me: () => get<User>('/users/me'),
    startTrial: () => post<Subscription>('/users/me/trial'),
    attachPartner: (body: AttachPartnerRequest) => post<User>('/users/me/partner', body),

    devices: () => get<DeviceList>('/users/me/devices'),
    /** A device with a link of its own; 409 `DEVICE_LIMIT` when the plan's limit is reached. */
    createDevice: (body: DeviceNameRequest) => post<CreatedDevice>('/users/me/devices', body),
    renameDevice: (deviceId: string, body: DeviceNameRequest) =>
      request<Device>('PATCH', `/users/me/devices/${id(deviceId)}`, { body }),
    removeDevice: (deviceId: string) =>
      request<void>('DELETE', `/users/me/devices/${id(deviceId)}`),
    /** A new account link; the old one stops working, devices keep their ids. */
    rotateSubscriptionLink: () => post<SubscriptionUrl>('/users/me/subscription-link/rotate'),
    /**
     * The subscription page's figures, from the link itself (`<origin>/sub/<token>?format=info`,
     * outside `/api`): no session, so a 401 is never refreshed.
     */
    subscriptionInfo: async (token: string) =>
      read<SubscriptionInfo>(await sendTo('GET', `${origin}/sub/${id(token)}?format=info`)),

    createInvoice: (body: CreateInvoiceRequest) => post<Invoice>('/invoices', body),
    listInvoices: (query: PageQuery = {}) => get<Page<Invoice>>('/invoices', { ...query }),
    getInvoice: (invoiceId: string) => get<Invoice>(`/invoices/${id(invoiceId)}`),
    confirmInvoice: (invoiceId: string) =>
      post<ConfirmInvoiceResponse>(`/invoices/${id(invoiceId)}/confirm`),

    routing: () => get<RoutingEntry[]>('/nodes/routing'),

    createTicket: (body: CreateTicketRequest) => post<TicketThread>('/tickets', body),
    listTickets: (query: PageQuery = {}) => get<Page<Ticket>>('/tickets', { ...query }),
    getTicket: (ticketId: string) => get<TicketThread>(`/tickets/${id(ticketId)}`),
    postTicketMessage: (ticketId: string, body: PostTicketMessageRequest) =>
      post<TicketMessage>(`/tickets/${id(ticketId)}/messages`, body),

    startRound: () => post<GameRound>('/game/rounds'),
    submitScore: (roundId: string, body: SubmitScoreRequest) =>
      post<ScoreResult>(`/game/rounds/${id(roundId)}/score`, body),
    leaderboard: () => get<LeaderboardEntry[]>('/game/leaderboard'),

    /** `recent` is paged with `limit` and `cursor`. */
    earnings: (query: PageQuery = {}) =>
      get<PartnerEarnings>('/partners/me/earnings', { ...query }),
    withdrawals: (query: PageQuery = {}) =>
      get<Page<Withdrawal>>('/partners/me/withdrawals', { ...query }),
    requestWithdrawal: (body: WithdrawalRequest) =>
      post<Withdrawal>('/partners/me/withdrawals', body),
  };
}

export type Client = ReturnType<typeof createClient>;

/** A successful answer's JSON (`undefined` for 204 or an empty body), or its error thrown. */
async function read<T>(answer: ResponseLike): Promise<T> {
  if (!answer.ok) throw new ApiError(await problemOf(answer));
  const text = answer.status === 204 ? '' : await answer.text();
  if (text === '') return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    const problem = { status: answer.status, code: 'UNEXPECTED_RESPONSE', message: 'not JSON' };
    throw new ApiError(problem, { cause: error });
  }
}

/** The contract's error body of a failed answer, or a stand-in when a proxy answered instead. */
async function problemOf(answer: ResponseLike): Promise<ApiProblem> {
  let body: unknown;
  try {
    body = JSON.parse(await answer.text());
  } catch {
    body = undefined;
  }
  if (
    typeof body === 'object' &&
    body !== null &&
    'code' in body &&
    typeof body.code === 'string' &&
    'message' in body &&
    typeof body.message === 'string'
  ) {
    const details = 'details' in body && Array.isArray(body.details) ? body.details : [];
    const requestId = 'request_id' in body ? body.request_id : undefined;
    return {
      status: answer.status,
      code: body.code,
      message: body.message,
      details: details.filter(isFieldProblem),
      requestId: typeof requestId === 'string' ? requestId : undefined,
    };
  }
  return {
    status: answer.status,
    code: 'UNEXPECTED_RESPONSE',
    message: `unexpected answer with status ${answer.status}`,
  };
}

function isFieldProblem(value: unknown): value is FieldProblem {
  return (
    typeof value === 'object' &&
    value !== null &&
    'field' in value &&
    typeof value.field === 'string' &&
    'message' in value &&
    typeof value.message === 'string'
  );
}

function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const message = error instanceof Error ? error.message : 'refresh failed';
  return new ApiError({ status: 0, code: 'NETWORK_ERROR', message }, { cause: error });
}

/** The browser globals the client may use, each absent outside a browser. */
interface BrowserGlobals {
  navigator?: { locks?: LockManagerLike };
  localStorage?: StorageLike;
}

function browserLocks(): LockManagerLike | undefined {
  return (globalThis as BrowserGlobals).navigator?.locks;
}

function browserStorage(): StorageLike | null {
  try {
    // Reading `localStorage` throws where the browser blocks storage; a probe read finds out here.
    const storage = (globalThis as BrowserGlobals).localStorage;
    storage?.getItem(REFRESH_GENERATION_KEY);
    return storage ?? null;
  } catch {
    return null;
  }
}

/**
 * Where Web Locks are missing (old browsers, insecure origins): one lock for the clients of this
 * page. It serves the one lock name the client uses, so it ignores the name.
 */
function createPageLocks(): LockManagerLike {
  const waiting: (() => void)[] = [];
  let held = false;
  return {
    async request(_name, { ifAvailable }, callback) {
      if (held) {
        if (ifAvailable) return callback(null);
        await new Promise<void>((resolve) => waiting.push(resolve));
      }
      held = true;
      try {
        return await callback({});
      } finally {
        // Hand the lock straight to the next waiter so no newcomer slips in between.
        const next = waiting.shift();
        if (next) next();
        else held = false;
      }
    },
  };
}

const pageLocks = createPageLocks();
