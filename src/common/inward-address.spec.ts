import { isInwardAddress } from './inward-address';

describe('isInwardAddress', () => {
  it('knows loopback, link-local, private, shared and unspecified addresses in both families', () => {
    for (const inward of [
      '127.0.0.1',
      '127.8.9.10',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::',
      '::1',
      'fe80::1',
      'fd12:3456::1',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
    ]) {
      expect([inward, isInwardAddress(inward)]).toEqual([inward, true]);
    }
  });

  it('lets public addresses through, and names (resolved elsewhere)', () => {
    for (const outward of [
      '8.8.8.8',
      '172.32.0.1',
      '203.0.113.9',
      '2001:db8::1',
      '::ffff:8.8.8.8',
      'example.com',
    ]) {
      expect([outward, isInwardAddress(outward)]).toEqual([outward, false]);
    }
  });
});
