import { isIPv6 } from 'node:net';
import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

const V4_MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/**
 * What a throttle counts a client address by: an IPv4 address as it is, an IPv6 address by its
 * /64. One subscriber (a home, a phone) is given a whole /64 and may use any address in it, so
 * counting single IPv6 addresses would give each client 2^64 fresh counters.
 */
export function throttleAddress(ip: string | undefined): string | null {
  if (!ip) return null;
  const mapped = V4_MAPPED.exec(ip);
  if (mapped) return mapped[1];
  if (!isIPv6(ip)) return ip;
  return `${ipv6Groups(ip).slice(0, 4).join(':')}::/64`;
}

/**
 * A handler's parameter: the caller's address as `throttleAddress` gives it (null without one),
 * for a service that counts a throttle itself.
 */
export const ThrottleAddress = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string | null =>
    throttleAddress(context.switchToHttp().getRequest<Request>().ip),
);

/** The eight 16-bit groups of a valid IPv6 address, in lower-case hex without leading zeros. */
function ipv6Groups(ip: string): string[] {
  const [address] = ip.split('%');
  const halves = address.split('::');
  const part = (text: string | undefined): string[] => {
    if (!text) return [];
    // An IPv4 tail stands for the last two groups; only the first four are ever read.
    return text.split(':').flatMap((group) => (group.includes('.') ? ['0', '0'] : [group]));
  };
  const head = part(halves[0]);
  const tail = part(halves[1]);
  const zeros = halves.length === 2 ? Array(8 - head.length - tail.length).fill('0') : [];
  return [...head, ...zeros, ...tail].map((group) => parseInt(group, 16).toString(16));
}
