import { throttleAddress } from './client-address';

describe('throttleAddress', () => {
  it('counts an IPv6 client by its /64, however the address is written', () => {
    const forms = [
      '2001:db8:aa:bb::1',
      '2001:0db8:00aa:00bb:ffff:ffff:ffff:ffff',
      '2001:DB8:AA:BB:1:2:3:4',
      '2001:db8:aa:bb:1::',
      '2001:db8:aa:bb::1.2.3.4',
      'fe80::1%eth0'.replace('fe80::1', '2001:db8:aa:bb::9'),
    ];
    for (const form of forms)
      expect([form, throttleAddress(form)]).toEqual([form, '2001:db8:aa:bb::/64']);
    expect(throttleAddress('2001:db8:aa:bc::1')).toBe('2001:db8:aa:bc::/64');
    expect(throttleAddress('::1')).toBe('0:0:0:0::/64');
    expect(throttleAddress('2001:db8::')).toBe('2001:db8:0:0::/64');
  });

  it('keeps IPv4 addresses, also when written as IPv4-mapped IPv6', () => {
    expect(throttleAddress('203.0.113.9')).toBe('203.0.113.9');
    expect(throttleAddress('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(throttleAddress(undefined)).toBeNull();
  });
});
