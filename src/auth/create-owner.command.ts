import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { validateSync } from 'class-validator';
import { plainToInstance } from 'class-transformer';
import { type Settings } from '../config/settings';
import { startCommandContext } from '../database/command-context';
import { StaffCredentials } from '../users/dto/staff.dto';
import { UsernameTakenCondition } from '../users/users.errors';
import { AccountsRepository } from '../users/accounts.repository';
import { hashPassword } from './passwords';

/**
 * `node dist/main.js --create-owner`: asks for a username and a password (not echoed on a
 * terminal; read as two lines from stdin otherwise), creates the owner and returns the exit code.
 */
export async function runCreateOwner(settings: Settings, databaseUrl: string): Promise<number> {
  const { username, password } = await promptCredentials();
  const credentials = plainToInstance(StaffCredentials, { username, password });
  const problems = validateSync(credentials).flatMap((e) =>
    Object.values(e.constraints ?? {}).map((m) => `${e.property}: ${m}`),
  );
  if (problems.length > 0) {
    console.error(`cannot create the owner:\n  ${problems.join('\n  ')}`);
    return 1;
  }
  const context = await startCommandContext(settings, databaseUrl, [AccountsRepository]);
  try {
    const users = context.get(AccountsRepository);
    const owner = await users.createStaff({
      username: credentials.username,
      passwordHash: await hashPassword(credentials.password),
      role: 'owner',
    });
    process.stdout.write(`created owner ${owner.username} (${owner.id})\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsernameTakenCondition) {
      console.error(`cannot create the owner: the username "${credentials.username}" is taken`);
      return 1;
    }
    throw error;
  } finally {
    await context.close();
  }
}

async function promptCredentials(): Promise<{ username: string; password: string }> {
  const tty = process.stdin.isTTY === true;
  let muted = false;
  // On a terminal the typed password must not be echoed: the output stream drops it.
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (!muted) process.stdout.write(chunk);
      done();
    },
  });
  const rl = createInterface({
    input: process.stdin,
    output: tty ? output : undefined,
    terminal: tty,
  });
  const lines = rl[Symbol.asyncIterator]();
  // The username is trimmed; the password is kept exactly as typed, as sign-in compares it.
  const ask = async (question: string, hidden: boolean): Promise<string> => {
    // Raw mode keeps the terminal itself from echoing; readline's echo goes to the muted stream.
    if (tty && hidden) process.stdin.setRawMode(true);
    process.stdout.write(question);
    muted = hidden;
    const next = await lines.next();
    muted = false;
    if (hidden) process.stdout.write('\n');
    const line = next.done ? '' : String(next.value);
    return hidden ? line : line.trim();
  };
  try {
    const username = await ask('Owner username: ', false);
    const password = await ask('Owner password: ', true);
    return { username, password };
  } finally {
    rl.close();
  }
}
