import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { TransactionHost } from '@nestjs-cls/transactional';
import { type TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { validateSync } from 'class-validator';
import { plainToInstance } from 'class-transformer';
import { type Settings } from '../config/settings';
import { startCommandContext } from '../database/command-context';
import { ENTITIES } from '../entities';
import { StaffCredentials } from '../users/dto/staff.dto';
import { UsernameTakenCondition } from '../users/users.errors';
import { AccountsRepository } from '../users/accounts.repository';
import { AuthRepository } from './auth.repository';
import { hashPassword } from './passwords';

/** The reason a command stops without changing anything; told on stderr, exit code 1. */
class Refusal extends Error {}

/**
 * `node dist/main.js --create-owner`: asks for a username and a password and creates the owner;
 * returns the exit code. On a terminal the password is not echoed and is asked twice, and a bad
 * value is asked again; without one (a script) it reads two lines from stdin and a bad value stops
 * it with exit code 1, since nobody is there to answer again.
 */
export async function runCreateOwner(settings: Settings, databaseUrl: string): Promise<number> {
  const context = await startCommandContext(settings, databaseUrl, ENTITIES, [AccountsRepository]);
  const prompt = new Prompt();
  try {
    const users = context.get(AccountsRepository);
    const username = await prompt.value('Owner username: ', 'username', async (name) =>
      (await users.findByUsername(name)) ? `the username "${name}" is taken` : null,
    );
    const password = await prompt.password('Owner password: ');
    const owner = await users.createStaff({
      username,
      passwordHash: await hashPassword(password),
      role: 'owner',
    });
    process.stdout.write(`created owner ${owner.username} (${owner.id})\n`);
    return 0;
  } catch (error) {
    // Taken between the question and the insert: another owner was made meanwhile.
    if (error instanceof UsernameTakenCondition) {
      return refuse(new Refusal(`the username "${error.username}" is taken`), 'create the owner');
    }
    return refuse(error, 'create the owner');
  } finally {
    prompt.close();
    await context.close();
  }
}

/**
 * `node dist/main.js --reset-password`: the way back in for a sole owner who lost the password
 * (nobody else may set an owner's): asks for a staff account's username and a new password, sets
 * it and ends every session of the account. It needs what the service needs (its settings and
 * database), so only whoever runs the service can use it.
 */
export async function runResetPassword(settings: Settings, databaseUrl: string): Promise<number> {
  const context = await startCommandContext(settings, databaseUrl, ENTITIES, [
    AccountsRepository,
    AuthRepository,
  ]);
  const prompt = new Prompt();
  try {
    const users = context.get(AccountsRepository);
    const sessions = context.get(AuthRepository);
    const txHost = context.get<TransactionHost<TransactionalAdapterTypeOrm>>(TransactionHost);
    const username = await prompt.value('Staff username: ', 'username', async (name) => {
      const user = await users.findByUsername(name);
      return user?.role ? null : `no staff account is named "${name}"`;
    });
    const password = await prompt.password('New password: ');
    const user = await users.findByUsername(username);
    if (!user?.role) throw new Refusal(`no staff account is named "${username}"`);
    const passwordHash = await hashPassword(password);
    await txHost.withTransaction(async () => {
      await users.updatePasswordHash(user.id, passwordHash);
      await sessions.revokeAllSessions(user.id);
    });
    process.stdout.write(
      `new password set for ${user.username} (${user.role}, ${user.id}); its sessions ended\n`,
    );
    return 0;
  } catch (error) {
    return refuse(error, 'reset the password');
  } finally {
    prompt.close();
    await context.close();
  }
}

function refuse(error: unknown, what: string): number {
  if (!(error instanceof Refusal)) throw error;
  console.error(`cannot ${what}: ${error.message}`);
  return 1;
}

/** The problems of one field of `StaffCredentials`, as the console's own form would report them. */
function fieldProblems(field: keyof StaffCredentials, value: string): string[] {
  const credentials = plainToInstance(StaffCredentials, { [field]: value });
  return validateSync(credentials)
    .filter((error) => error.property === field)
    .flatMap((error) => Object.values(error.constraints ?? {}).map((m) => `${field}: ${m}`));
}

/**
 * Questions on stdin. On a terminal the typed password is not echoed (the output stream drops
 * it) and a bad answer is asked again; otherwise each answer is the next line, and a bad one ends
 * the command.
 */
class Prompt {
  private readonly tty = process.stdin.isTTY === true;
  private muted = false;
  private readonly rl;
  private readonly lines: AsyncIterator<string>;

  constructor() {
    const output = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        if (!this.muted) process.stdout.write(chunk);
        done();
      },
    });
    this.rl = createInterface({
      input: process.stdin,
      output: this.tty ? output : undefined,
      terminal: this.tty,
    });
    this.lines = this.rl[Symbol.asyncIterator]();
  }

  /** A username, trimmed, that passes validation and `check` (a problem, or null). */
  async value(
    question: string,
    field: 'username',
    check: (value: string) => Promise<string | null>,
  ): Promise<string> {
    for (;;) {
      const answer = (await this.ask(question, false)).trim();
      const problem = fieldProblems(field, answer)[0] ?? (await check(answer));
      if (problem === null) return answer;
      this.retryOrRefuse(problem);
    }
  }

  /** A password kept exactly as typed, as sign-in compares it; typed twice on a terminal. */
  async password(question: string): Promise<string> {
    for (;;) {
      const answer = await this.ask(question, true);
      const problem = fieldProblems('password', answer)[0];
      if (problem) {
        this.retryOrRefuse(problem);
        continue;
      }
      // Typed unseen: a typo would lock the account out, so a person types it again.
      if (!this.tty || (await this.ask('The same password again: ', true)) === answer) {
        return answer;
      }
      this.retryOrRefuse('the two passwords differ');
    }
  }

  close(): void {
    this.rl.close();
  }

  private retryOrRefuse(problem: string): void {
    if (!this.tty) throw new Refusal(problem);
    process.stdout.write(`${problem}; try again\n`);
  }

  private async ask(question: string, hidden: boolean): Promise<string> {
    // Raw mode keeps the terminal itself from echoing; readline's echo goes to the muted stream.
    if (this.tty && hidden) process.stdin.setRawMode(true);
    process.stdout.write(question);
    this.muted = hidden;
    const next = await this.lines.next();
    this.muted = false;
    if (hidden) process.stdout.write('\n');
    if (next.done) throw new Refusal('the input ended before every answer was given');
    return String(next.value);
  }
}
