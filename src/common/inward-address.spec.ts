import { isInwardAddress, isInwardName } from './inward-address';

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
      '224.0.0.1',
      '239.255.255.250',
      '255.255.255.255',
      'ff02::1',
      '::a9fe:a9fe',
      '64:ff9b::127.0.0.1',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b:1::808:808',
      '2002:7f00:1::1',
      '2002:a9fe:a9fe::1',
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
      '64:ff9b::808:808',
      '2002:808:808::1',
      'example.com',
    ]) {
      expect([outward, isInwardAddress(outward)]).toEqual([outward, false]);
    }
  });

  it('knows names that are inward whatever DNS answers', () => {
    for (const name of ['localhost', 'LOCALHOST.', 'foo.localhost', 'metadata.google.internal']) {
      expect([name, isInwardName(name)]).toEqual([name, true]);
    }
    for (const name of ['metadata', 'node-1']) {
      expect([name, isInwardName(name)]).toEqual([name, true]);
    }
    for (const name of ['node-1.example.com', 'localhost.example.com', '127.0.0.1']) {
      expect([name, isInwardName(name)]).toEqual([name, false]);
    }
  });
});
