/**
 * Staff sign-in with a second factor (RFC 6238 TOTP): enrolment with a first code and recovery
 * codes, then every sign-in of the account needs a code: none, a wrong and a reused one are refused;
 * a right one and a recovery code (once) pass; the owner takes it off a staff account; all audited.
 */
import { authenticator } from 'otplib';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';
import { previousStepCode } from './harness/totp';

describe('staff sign-in with a second factor', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    // More sign-ins per username than by default; the last test checks codes count against it.
    t = await startTestApp({
      RATE_STAFF_LOGIN_PER_ADDRESS_AND_USERNAME: '8/60',
      RATE_STAFF_LOGIN_PER_ADDRESS: '100/60',
    });
    owner = await newUser(t, 'owner');
  });
  afterAll(() => t.close());

  const signIn = (user: TestUser, factor: Record<string, string> = {}) =>
    t
      .http()
      .post('/api/v1/auth/admin/login')
      .send({ username: user.user.username, password: user.password, ...factor });

  /** The secret's code for the current time step. */
  const codeOf = (secret: string) => authenticator.generate(secret);

  async function enrol(
    user: TestUser,
  ): Promise<{ secret: string; recovery: string[]; enrolledWith: string }> {
    const setup = await t.http().post('/api/v1/auth/totp/setup').set(user.bearer).expect(200);
    const secret = setup.body.secret as string;
    expect(setup.body.otpauth_url).toMatch(/^otpauth:\/\/totp\/.+secret=/);
    // A wrong first code enables nothing.
    await t
      .http()
      .post('/api/v1/auth/totp/enable')
      .set(user.bearer)
      .send({ code: '000000' })
      .expect(400);
    expect((await signIn(user)).status).toBe(200);
    // Enabled with the previous period's code, so that the current one is still unused.
    const enrolledWith = await previousStepCode(secret);
    const enabled = await t
      .http()
      .post('/api/v1/auth/totp/enable')
      .set(user.bearer)
      .send({ code: enrolledWith })
      .expect(200);
    const recovery = enabled.body.recovery_codes as string[];
    expect(recovery).toHaveLength(10);
    expect(new Set(recovery).size).toBe(10);
    return { secret, recovery, enrolledWith };
  }

  it('once enrolled, a sign-in needs a code: none, wrong and reused are refused, right passes', async () => {
    const moderator = await newUser(t, 'moderator');
    const { secret, enrolledWith } = await enrol(moderator);
    const status = await t.http().get('/api/v1/auth/totp').set(moderator.bearer).expect(200);
    expect(status.body).toEqual({ enabled: true, recovery_codes_left: 10, required: false });

    const none = await signIn(moderator);
    expect([none.status, none.body.code]).toEqual([401, 'TOTP_REQUIRED']);
    const wrongCode = codeOf(secret) === '123456' ? '654321' : '123456';
    const wrong = await signIn(moderator, { totp_code: wrongCode });
    expect([wrong.status, wrong.body.code]).toEqual([401, 'TOTP_INVALID']);
    // The code taken at enrolment is not taken again (the code of its period: if a period has
    // ended since, the previous period's code is another one, still unused).
    const old = await signIn(moderator, { totp_code: enrolledWith });
    expect([old.status, old.body.code]).toEqual([401, 'TOTP_INVALID']);
    const right = codeOf(secret);
    expect((await signIn(moderator, { totp_code: right })).status).toBe(200);
    const reused = await signIn(moderator, { totp_code: right });
    expect([reused.status, reused.body.code]).toEqual([401, 'TOTP_INVALID']);
    // A wrong password with a right code says nothing of the code.
    const badPassword = await t.http().post('/api/v1/auth/admin/login').send({
      username: moderator.user.username,
      password: 'not-the-password-at-all',
      totp_code: right,
    });
    expect(badPassword.body.code).toBe('INVALID_CREDENTIALS');
  });

  it('a recovery code signs in once; the owner takes the factor off a staff account, audited', async () => {
    const support = await newUser(t, 'support');
    const { recovery } = await enrol(support);
    expect((await signIn(support, { recovery_code: recovery[0].toUpperCase() })).status).toBe(200);
    const again = await signIn(support, { recovery_code: recovery[0] });
    expect([again.status, again.body.code]).toEqual([401, 'TOTP_INVALID']);
    const left = await t.http().get('/api/v1/auth/totp').set(support.bearer).expect(200);
    expect(left.body.recovery_codes_left).toBe(9);

    // A moderator may not; the owner may, with a reason.
    const moderator = await newUser(t, 'moderator');
    const reset = `/api/v1/admin/users/${support.user.id}/totp/reset`;
    await t.http().post(reset).set(moderator.bearer).send({ reason: 'lost phone' }).expect(403);
    await t.http().post(reset).set(owner.bearer).send({ reason: 'lost phone' }).expect(204);
    expect((await signIn(support)).status).toBe(200);
    const actions = (
      (await t.dataSource.query(
        `SELECT action FROM audit_log WHERE target_id = $1 ORDER BY created_at`,
        [support.user.id],
      )) as { action: string }[]
    ).map((row) => row.action);
    expect(actions).toEqual(['staff.totp_enabled', 'staff.recovery_code_used', 'staff.totp_reset']);
  });

  it('an account turns its own factor off with a code; subscribers have none to set up', async () => {
    const moderator = await newUser(t, 'moderator');
    const { secret } = await enrol(moderator);
    await t
      .http()
      .post('/api/v1/auth/totp/disable')
      .set(moderator.bearer)
      .send({ code: '000001' })
      .expect(401);
    await t
      .http()
      .post('/api/v1/auth/totp/disable')
      .set(moderator.bearer)
      .send({ code: codeOf(secret) })
      .expect(204);
    expect((await signIn(moderator)).status).toBe(200);
    const subscriber = await newUser(t, 'seed');
    await t.http().post('/api/v1/auth/totp/setup').set(subscriber.bearer).expect(403);
  });
  it('codes are tried under the staff sign-in throttle', async () => {
    const moderator = await newUser(t, 'moderator');
    await enrol(moderator);
    const answers: number[] = [];
    for (let i = 0; i < 9; i++)
      answers.push((await signIn(moderator, { totp_code: '000000' })).status);
    // One sign-in went to enrolment; then wrong codes until the throttle stops them.
    expect(answers.slice(0, 7)).toEqual(Array(7).fill(401));
    expect(answers.slice(7)).toEqual([429, 429]);
  });
});

describe('a second factor required of all staff (STAFF_TOTP_REQUIRED)', () => {
  let t: TestApp;
  afterAll(() => t?.close());

  it('a staff account without one may only enrol; with it, its routes answer at once', async () => {
    t = await startTestApp({ STAFF_TOTP_REQUIRED: 'true' });
    const moderator = await newUser(t, 'moderator');
    const refused = await t.http().get('/api/v1/admin/stats').set(moderator.bearer);
    expect([refused.status, refused.body.code]).toEqual([403, 'FORBIDDEN']);
    expect(refused.body.message).toMatch(/second factor/);
    const partner = await newUser(t, 'partner');
    expect((await t.http().get('/api/v1/partners/me/earnings').set(partner.bearer)).status).toBe(
      403,
    );
    // What any account may do is not a staff power, and stays open.
    expect((await t.http().get('/api/v1/users/me').set(moderator.bearer)).status).toBe(200);

    const status = await t.http().get('/api/v1/auth/totp').set(moderator.bearer).expect(200);
    expect(status.body).toEqual({ enabled: false, recovery_codes_left: 0, required: true });
    const setup = await t.http().post('/api/v1/auth/totp/setup').set(moderator.bearer).expect(200);
    await t
      .http()
      .post('/api/v1/auth/totp/enable')
      .set(moderator.bearer)
      .send({ code: authenticator.generate(setup.body.secret as string) })
      .expect(200);
    // The same session, without signing in again.
    expect((await t.http().get('/api/v1/admin/stats').set(moderator.bearer)).status).toBe(200);
  });
});
