import { BlockList, isIP } from 'node:net';

/**
 * Addresses that point into the machine or its own network: loopback, link-local (cloud metadata
 * at 169.254.169.254 among them), private, carrier-grade NAT and unspecified, in IPv4 and IPv6.
 * IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`) match their IPv4 rule.
 */
const INWARD = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const) {
  INWARD.addSubnet(network, prefix, 'ipv4');
}
INWARD.addAddress('::', 'ipv6');
INWARD.addAddress('::1', 'ipv6');
INWARD.addSubnet('fc00::', 7, 'ipv6');
INWARD.addSubnet('fe80::', 10, 'ipv6');

/** True for an IP address in one of the ranges above; false for a public one or a name. */
export function isInwardAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return INWARD.check(address, family === 4 ? 'ipv4' : 'ipv6');
}
