import { BlockList, isIP } from 'node:net';

/**
 * Addresses that point into the machine or its own network: loopback, link-local (cloud metadata
 * at 169.254.169.254 among them), private, carrier-grade NAT and unspecified, in IPv4 and IPv6,
 * and multicast, broadcast and reserved ones, which reach whatever listens on the local segment.
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
  ['224.0.0.0', 4],
  // Reserved, with the limited broadcast 255.255.255.255 at its end.
  ['240.0.0.0', 4],
] as const) {
  INWARD.addSubnet(network, prefix, 'ipv4');
}
INWARD.addSubnet('::', 96, 'ipv6');
INWARD.addSubnet('fc00::', 7, 'ipv6');
INWARD.addSubnet('fe80::', 10, 'ipv6');
INWARD.addSubnet('ff00::', 8, 'ipv6');
// Local-use NAT64 (RFC 8215): whatever it translates to is the local network's choice.
INWARD.addSubnet('64:ff9b:1::', 48, 'ipv6');

/**
 * IPv6 prefixes that carry an IPv4 address a NAT64 or a 6to4 relay delivers to: the address is
 * inward when the IPv4 inside is (`64:ff9b::127.0.0.1` is this machine's loopback through NAT64).
 */
const CARRIERS: readonly { prefix: string; bits: number; firstByte: number }[] = [
  { prefix: '64:ff9b::', bits: 96, firstByte: 12 },
  { prefix: '2002::', bits: 16, firstByte: 2 },
];
const CARRIER_LISTS = CARRIERS.map((carrier) => {
  const list = new BlockList();
  list.addSubnet(carrier.prefix, carrier.bits, 'ipv6');
  return { list, firstByte: carrier.firstByte };
});

/**
 * Names that are inward whatever DNS says: `localhost` and everything under it (RFC 6761), the
 * `.internal` top-level domain kept for private networks (GCP's `metadata.google.internal`), and
 * single labels (`metadata`), which only a search domain of the local network completes.
 */
export function isInwardName(host: string): boolean {
  if (isIP(host) !== 0) return false;
  const name = host.toLowerCase().replace(/\.$/, '');
  return (
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    name === 'internal' ||
    name.endsWith('.internal') ||
    !name.includes('.')
  );
}

/** True for an IP address in one of the ranges above; false for a public one or a name. */
export function isInwardAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 4) return INWARD.check(address, 'ipv4');
  if (INWARD.check(address, 'ipv6')) return true;
  for (const carrier of CARRIER_LISTS) {
    if (carrier.list.check(address, 'ipv6')) {
      const bytes = ipv6Bytes(address);
      return isInwardAddress(bytes.subarray(carrier.firstByte, carrier.firstByte + 4).join('.'));
    }
  }
  return false;
}

/** The 16 bytes of an IPv6 address (valid: `isIP` said so). */
function ipv6Bytes(address: string): Buffer {
  // URL writes the address in hexadecimal groups only, with at most one `::` among them.
  const [head, tail] = new URL(`http://[${address.split('%')[0]}]/`).hostname
    .slice(1, -1)
    .split('::');
  const groupsOf = (part: string | undefined): string[] => (part ? part.split(':') : []);
  const zeros = 8 - groupsOf(head).length - groupsOf(tail).length;
  const groups =
    tail === undefined
      ? groupsOf(head)
      : [...groupsOf(head), ...Array<string>(zeros).fill('0'), ...groupsOf(tail)];
  const bytes = Buffer.alloc(16);
  groups.forEach((group, index) => bytes.writeUInt16BE(parseInt(group, 16), index * 2));
  return bytes;
}
