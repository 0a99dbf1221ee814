import { addressHint, networkOf } from './presence.service';

describe('a device’s address as its list shows it, and the network it is in', () => {
  it('hides the last part of an address', () => {
    expect(addressHint('203.0.113.77')).toBe('203.0.113.x');
    expect(addressHint('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::x');
    expect(addressHint('2001:db8::1')).toBe('2001:db8:0:0::x');
  });

  it('treats a move within a /24 or a /64 as the same network', () => {
    expect(networkOf('203.0.113.5')).toBe(networkOf('203.0.113.200'));
    expect(networkOf('203.0.113.5')).not.toBe(networkOf('203.0.114.5'));
    expect(networkOf('2001:db8:1:2::1')).toBe(networkOf('2001:db8:1:2:ffff::9'));
    expect(networkOf('2001:db8:1:2::1')).not.toBe(networkOf('2001:db8:1:3::1'));
  });
});
