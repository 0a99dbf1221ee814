/** An upstream (exchange rates, toncenter, the Bot API) did not answer usefully. */
export class UpstreamError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
    readonly body: unknown = null,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

const TIMEOUT_MS = 10_000;

/**
 * One JSON request to an upstream. Network errors, timeouts, non-2xx answers and bodies that are
 * not JSON all become `UpstreamError`, whose message never carries the URL (it may hold a token).
 */
export async function requestJson(url: string, init: RequestInit = {}): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (error) {
    throw new UpstreamError(`request to ${hostOf(url)} failed: ${failureOf(error, url)}`);
  }
  let text: string;
  try {
    text = await response.text();
  } catch {
    throw new UpstreamError('response body could not be read', response.status);
  }
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    if (response.ok) throw new UpstreamError('response is not JSON', response.status);
  }
  if (!response.ok) throw new UpstreamError(`HTTP ${response.status}`, response.status, body);
  return body;
}

/**
 * Why a request failed, as an operator can act on it: fetch's own error only says "fetch failed",
 * the cause under it says `getaddrinfo ENOTFOUND tonapi.io` or `connect ECONNREFUSED …`. The URL is
 * cut out wherever it appears (a Bot API path holds the bot's token).
 */
function failureOf(error: unknown, url: string): string {
  // Read by shape, not `instanceof`: fetch's errors may come from another realm (a test runner's).
  const failure = error as ErrorShape | null;
  if (failure?.name === 'TimeoutError') return `no answer within ${TIMEOUT_MS / 1000} s`;
  let deepest = failure;
  while (deepest?.cause && typeof deepest.cause === 'object') deepest = deepest.cause;
  const reason = Array.isArray(deepest?.errors)
    ? [...new Set(deepest.errors.map(messageOf))].join('; ')
    : messageOf(deepest);
  return reason.split(url).join('<url>');
}

interface ErrorShape {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  cause?: ErrorShape;
  /** AggregateError's: a connection tried on several addresses. */
  errors?: ErrorShape[];
}

function hostOf(url: string): string {
  return URL.canParse(url) ? new URL(url).host : 'an invalid address';
}

function messageOf(error: ErrorShape | null | undefined): string {
  if (typeof error?.message === 'string' && error.message) return error.message;
  if (typeof error?.code === 'string') return error.code;
  return typeof error?.name === 'string' ? error.name : String(error);
}

/** `value` as a plain object, or null. */
export function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}
