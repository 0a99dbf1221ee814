import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Injectable } from '@nestjs/common';

/** Every address a name resolves to; an address resolves to itself. */
export type LookupAll = (host: string) => Promise<string[]>;

/** getaddrinfo, as `net.connect` would resolve: /etc/hosts, then DNS. */
const systemLookup: LookupAll = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/**
 * The seam to name resolution for the service's own outward connections (node health checks and
 * SSH): the caller resolves once, checks the addresses, and connects to the checked address, so a
 * name cannot point elsewhere between the check and the connection. Tests put a hosts table in
 * `lookupAll` and never depend on real DNS.
 */
@Injectable()
export class HostResolver {
  lookupAll: LookupAll = systemLookup;

  /** The addresses of `host`, or none when it does not resolve within `timeoutMs`. */
  async addresses(host: string, timeoutMs: number): Promise<string[]> {
    if (isIP(host) !== 0) return [host];
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string[]>((done) => {
      timer = setTimeout(() => done([]), timeoutMs);
    });
    try {
      const resolved = this.lookupAll(host).catch((): string[] => []);
      return await Promise.race([resolved, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
