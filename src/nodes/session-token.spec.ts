import { SessionTokens } from './session-token';

describe('routing session tokens', () => {
  const tokens = new SessionTokens('proxy-token-secret-0123456789abcdef');
  const user = '11111111-1111-4111-8111-111111111111';
  const node = '22222222-2222-4222-8222-222222222222';

  it('carry user, node, expiry and a unique id, and verify', () => {
    const token = tokens.issue(user, node, 1_900_000_000);
    expect(token.startsWith('vst1.')).toBe(true);
    const claims = tokens.verify(token)!;
    expect(claims).toMatchObject({ userId: user, nodeId: node, expiresAt: 1_900_000_000 });
    expect(tokens.verify(tokens.issue(user, node, 1_900_000_000))!.jti).not.toBe(claims.jti);
  });

  it('refuse any altered character, another secret, garbage and JWTs', () => {
    const token = tokens.issue(user, node, 1_900_000_000);
    for (let i = 5; i < token.length; i++) {
      const c = token[i] === 'A' ? 'B' : 'A';
      expect(tokens.verify(token.slice(0, i) + c + token.slice(i + 1))).toBeNull();
    }
    expect(new SessionTokens('another-secret-0123456789abcdefghij').verify(token)).toBeNull();
    expect(tokens.verify('garbage')).toBeNull();
    expect(tokens.verify('')).toBeNull();
    expect(tokens.verify('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln')).toBeNull();
  });
});
