import { type Agent, request } from 'node:http';
import { SERVICE_SECRETS } from './fixture';

/**
 * POSTs a report's bytes as a node's proxy would: `node:http` on a kept-alive connection. Not
 * `fetch`: measured with the system-wide monotonic clock on both sides, undici took about 3.4 ms
 * of each 10,000-entry report before the service saw the request (its web streams), which is the
 * client library's time, not the service's.
 */
export function postReport(
  url: URL,
  payload: Buffer,
  agent: Agent,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const sending = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': payload.length,
          'x-internal-secret': SERVICE_SECRETS.INTERNAL_SECRET,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
        );
      },
    );
    sending.on('error', reject);
    // A hung service fails the run instead of stalling it.
    sending.setTimeout(60_000, () => sending.destroy(new Error('no answer within 60 s')));
    sending.end(payload);
  });
}
