import { parseStartPayload } from './start-payload';

describe('the /start payload', () => {
  it('is read in the order partner, referral, login', () => {
    expect(parseStartPayload('p_123')).toEqual({ kind: 'partner', code: '123' });
    expect(parseStartPayload('p_acme-2')).toEqual({ kind: 'partner', code: 'acme-2' });
    expect(parseStartPayload('123456789')).toEqual({
      kind: 'referral',
      referrerTgId: '123456789',
    });
    expect(parseStartPayload('login_AbCdEfGhIjKlMnOpQrStUv')).toEqual({
      kind: 'login',
      code: 'AbCdEfGhIjKlMnOpQrStUv',
    });
  });

  it('is a plain start for anything else', () => {
    for (const payload of ['', 'p_', 'p_a b', '0123', '12345678901234567890', 'login_x', 'hello']) {
      expect(parseStartPayload(payload)).toEqual({ kind: 'plain' });
    }
  });
});
