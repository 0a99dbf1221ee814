import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { Client } from 'pg';
import { createTestDatabase, type TestDatabase } from './harness/database';
import { startTestApp, TEST_SECRETS } from './harness/app';
import { serviceArgs } from './harness/service-process';

const ROOT = resolve(__dirname, '..');
const NODE_ARGS = serviceArgs();
const MAIN = [...NODE_ARGS, '--create-owner'];
const RESET = [...NODE_ARGS, '--reset-password'];

/** `script` runs the command on a pseudo-terminal, as a person at a terminal would. */
function onTerminal(args: string[]): [string, string[]] {
  const command = [process.execPath, ...args].join(' ');
  return ['script', ['-q', '-E', 'never', '-ec', command, '/dev/null']];
}

interface Run {
  code: number | null;
  output: string;
}

/** Runs the command; `input` is written at once, or each answer after its prompt appears. */
function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  input: string | [prompt: string, answer: string][],
): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env } });
    let output = '';
    const pending = typeof input === 'string' ? [] : [...input];
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      while (pending.length > 0 && output.includes(pending[0][0])) {
        const [, answer] = pending.shift()!;
        // Answer like a person, after the prompt is on screen, not within the same microsecond.
        setTimeout(() => child.stdin.write(`${answer}\n`), 300);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    if (typeof input === 'string') child.stdin.end(input);
    child.on('exit', (code) => done({ code, output }));
  });
}

describe('--create-owner', () => {
  jest.setTimeout(60_000);
  let db: TestDatabase;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    db = await createTestDatabase();
    env = {
      ...TEST_SECRETS,
      DATABASE_URL: db.url,
      NODE_ENV: 'test',
    };
  });
  afterAll(() => db.drop());

  async function ownerRow(
    username: string,
  ): Promise<{ role: string; password_hash: string } | undefined> {
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        'SELECT role, password_hash FROM users WHERE username = $1',
        [username],
      );
      return rows[0];
    } finally {
      await client.end();
    }
  }

  async function liveSessions(username: string): Promise<number> {
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT count(*)::int AS n FROM refresh_sessions s JOIN users u ON u.id = s.user_id
          WHERE u.username = $1 AND s.revoked_at IS NULL`,
        [username],
      );
      return (rows[0] as { n: number }).n;
    } finally {
      await client.end();
    }
  }

  it('reads two lines from piped stdin and creates the owner', async () => {
    const result = await run(process.execPath, MAIN, env, 'root_admin\ncorrect horse battery\n');
    expect(result.output).toContain('created owner root_admin');
    expect(result.code).toBe(0);
    const row = await ownerRow('root_admin');
    expect(row?.role).toBe('owner');
    expect(row?.password_hash).toMatch(/^\$argon2id\$/);
  });

  it('keeps the spaces around a password, so the owner signs in with it as typed', async () => {
    const password = '  spaces around it  ';
    const result = await run(process.execPath, MAIN, env, `spaced_owner\n${password}\n`);
    expect(result.code).toBe(0);
    const app = await startTestApp({}, { database: db });
    try {
      const login = (p: string) =>
        app.http().post('/api/v1/auth/admin/login').send({ username: 'spaced_owner', password: p });
      await login(password).expect(200);
      await login(password.trim()).expect(401);
    } finally {
      await app.close();
    }
  });

  it('fails with a clear message and exit code 1 when the username is taken', async () => {
    const result = await run(process.execPath, MAIN, env, 'root_admin\nanother long password\n');
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/username "root_admin" is taken/);
  });

  it('refuses a short password without writing anything', async () => {
    const result = await run(process.execPath, MAIN, env, 'short_pw_owner\nshort\n');
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/password: must be 12 to 128 characters/);
    expect(await ownerRow('short_pw_owner')).toBeUndefined();
  });

  it('through a pseudo-terminal, prompts, asks the password twice and does not echo it', async () => {
    const password = 'terminal typed secret';
    const result = await run(...onTerminal(MAIN), env, [
      ['Owner username:', 'tty_owner'],
      ['Owner password:', password],
      ['The same password again:', password],
    ]);
    expect(result.output).toContain('Owner username:');
    expect(result.output).toContain('Owner password:');
    expect(result.output).toContain('created owner tty_owner');
    // What the terminal shows from the password prompt on must not include the password.
    const afterPrompt = result.output.slice(result.output.indexOf('Owner password:'));
    expect(afterPrompt).not.toContain(password);
    expect(result.code).toBe(0);
    expect((await ownerRow('tty_owner'))?.role).toBe('owner');
  });

  it('on a terminal, asks again after a bad username, a short password or a mismatch', async () => {
    const password = 'a long enough password';
    const result = await run(...onTerminal(MAIN), env, [
      ['Owner username:', 'No Spaces Allowed'],
      ['try again', 'root_admin'],
      ['is taken; try again', 'retry_owner'],
      ['Owner password:', 'short'],
      ['must be 12 to 128 characters; try again', password],
      ['The same password again:', 'a different password'],
      ['the two passwords differ; try again', password],
      ['The same password again:', password],
    ]);
    expect(result.output).toMatch(/username: must be 3 to 32 of a-z.*; try again/);
    expect(result.output).toContain('the username "root_admin" is taken; try again');
    expect(result.output).toContain('created owner retry_owner');
    expect(result.code).toBe(0);
    expect(result.output).not.toContain(password);
    const app = await startTestApp({}, { database: db });
    try {
      await app
        .http()
        .post('/api/v1/auth/admin/login')
        .send({ username: 'retry_owner', password })
        .expect(200);
    } finally {
      await app.close();
    }
  });

  describe('--reset-password, the way back in for a locked-out owner', () => {
    it('sets the new password and ends the sessions of the account', async () => {
      const old = 'the password once known';
      const fresh = 'the password set from the shell';
      await run(process.execPath, MAIN, env, `locked_owner\n${old}\n`);
      const app = await startTestApp({}, { database: db });
      try {
        const login = (password: string) =>
          app.http().post('/api/v1/auth/admin/login').send({ username: 'locked_owner', password });
        await login(old).expect(200);
        expect(await liveSessions('locked_owner')).toBe(1);

        const result = await run(process.execPath, RESET, env, `locked_owner\n${fresh}\n`);
        expect(result.output).toContain('new password set for locked_owner (owner');
        expect(result.code).toBe(0);
        expect(await liveSessions('locked_owner')).toBe(0);

        await login(old).expect(401);
        await login(fresh).expect(200);
      } finally {
        await app.close();
      }
    });

    it('refuses a name that is no staff account, exit 1, and asks the name again on a terminal', async () => {
      const piped = await run(process.execPath, RESET, env, 'nobody_here\nwhatever long enough\n');
      expect(piped.code).toBe(1);
      expect(piped.output).toContain('no staff account is named "nobody_here"');

      const password = 'typed at the terminal';
      await run(process.execPath, MAIN, env, `forgetful_owner\nsomething long forgotten\n`);
      const typed = await run(...onTerminal(RESET), env, [
        ['Staff username:', 'nobody_here'],
        ['; try again', 'forgetful_owner'],
        ['New password:', password],
        ['The same password again:', password],
      ]);
      expect(typed.output).toContain('new password set for forgetful_owner');
      expect(typed.code).toBe(0);
    });
  });
});
