import { createCipheriv, createHmac, hkdfSync } from 'node:crypto';
import { SessionTokens, TokenTargets } from './session-token';

describe('routing session tokens', () => {
  const tokens = new SessionTokens('proxy-token-secret-0123456789abcdef');
  const user = '11111111-1111-4111-8111-111111111111';
  const node = '22222222-2222-4222-8222-222222222222';
  const nodes = [
    node,
    '33333333-3333-4333-8333-333333333333',
    '44444444-4444-4444-8444-444444444444',
  ];

  it('carry user, node, expiry and a unique id, and verify', () => {
    const token = tokens.issue(user, node, 1_900_000_000);
    expect(token.startsWith('vst2.')).toBe(true);
    const claims = tokens.verify(token)!;
    expect(claims).toMatchObject({ userId: user, nodeId: node, expiresAt: 1_900_000_000 });
    expect(claims.jti).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(tokens.verify(tokens.issue(user, node, 1_900_000_000))!.jti).not.toBe(claims.jti);
  });

  it('match known answers: the format is our own construction, so its bytes are pinned', () => {
    // Fixed key and input, fixed token: a change to the derivation, the MAC or the layout fails
    // here even when issuing and verifying still agree with each other.
    const nonce = '0f0e0d0c-0b0a-4908-8706-050403020100';
    const known =
      'vst2.11111111-1111-4111-8111-111111111111.22222222-2222-4222-8222-222222222222.1900000000.' +
      '0f0e0d0c-0b0a-4908-8706-050403020100.wbmNGU3g897Ng1tTTZwPUQ';
    expect(tokens.verify(known)).toEqual({
      userId: user,
      nodeId: node,
      expiresAt: 1_900_000_000,
      jti: 'c1b98d19-4de0-f3de-cd83-5b534d9c0f51',
    });

    // The same tag from the documented construction, written out with the bare primitives.
    const secret = 'proxy-token-secret-0123456789abcdef';
    const key = (purpose: string) =>
      Buffer.from(hkdfSync('sha256', secret, 'vst2', `routing session token: ${purpose}`, 32));
    const r = createHmac('sha256', key('request')).update(`${user}.1900000000.${nonce}`).digest();
    const block = Buffer.from(node.replace(/-/g, ''), 'hex').map((b, i) => b ^ r[i]);
    const tag = createCipheriv('aes-256-ecb', key('node'), null)
      .setAutoPadding(false)
      .update(block);
    expect(known.endsWith(`.${tag.toString('base64url')}`)).toBe(true);
  });

  it('issue one token per node of a request, each verifying for its own node only', () => {
    const issued = tokens.issueAll(user, new TokenTargets(nodes), 1_900_000_000);
    const claims = issued.map((token) => tokens.verify(token)!);
    expect(claims.map((c) => c.nodeId)).toEqual(nodes);
    expect(new Set(claims.map((c) => c.jti)).size).toBe(nodes.length);
    // Moving a token to another node of the same request (same nonce) breaks its tag.
    const [, , , expiry, nonce, tag] = issued[0].split('.');
    expect(tokens.verify(`vst2.${user}.${nodes[1]}.${expiry}.${nonce}.${tag}`)).toBeNull();
    // So does naming another user or expiry.
    const other = '55555555-5555-4555-8555-555555555555';
    expect(tokens.verify(`vst2.${other}.${node}.${expiry}.${nonce}.${tag}`)).toBeNull();
    expect(tokens.verify(`vst2.${user}.${node}.1900000001.${nonce}.${tag}`)).toBeNull();
    // Every character is JSON-safe: routing writes tokens into its answer as they are.
    for (const token of issued) expect(JSON.stringify(token)).toBe(`"${token}"`);
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
    expect(tokens.verify(`${token}.x`)).toBeNull();
    expect(tokens.verify(token.replace('vst2.', 'vst1.'))).toBeNull();
    // A tag of the right length in characters but not in bytes is refused, not thrown on.
    expect(tokens.verify(`${token.slice(0, -1)}é`)).toBeNull();
    expect(tokens.verify(`${token.slice(0, -1)}=`)).toBeNull();
    expect(tokens.verify('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln')).toBeNull();
  });

  it('refuse node ids that are not UUIDs when issuing', () => {
    expect(() => new TokenTargets(['not-a-uuid'])).toThrow(TypeError);
    // Right length in all, wrong in each: still refused.
    expect(() => new TokenTargets(['2222222222-2222-4222-8222-2222222222', node])).toThrow(
      TypeError,
    );
  });
});
