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
    const reason = error instanceof Error ? error.name : 'error';
    throw new UpstreamError(`request failed (${reason})`);
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

/** `value` as a plain object, or null. */
export function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}
