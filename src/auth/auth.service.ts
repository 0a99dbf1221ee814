import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../common/errors';
import { RateLimiter } from '../common/throttling/rate-limiter';
import { randomToken, secretsEqual, sha256 } from '../common/secrets';
import { readBotUsername } from '../config/runtime';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import type { User } from '../users/entities/user.entity';
import { AccountsRepository } from '../users/accounts.repository';
import { AuthRepository } from './auth.repository';
import type { LoginCode, LoginCodePoll } from './login-code';
import type { TelegramLoginRequest } from './dto/auth.dto';
import { hashPassword, needsRehash, verifyPassword } from './passwords';
import { generateSeed, hashSeed } from './seeds';
import { type IssuedSession, SessionsService } from './sessions.service';
import { verifyWidget } from './telegram-widget';
import { type SecondFactor, TotpService } from './totp.service';

export const LOGIN_CODE_TTL_S = 10 * 60;
export const BOOTSTRAP_TOKEN_TTL_S = 5 * 60;

/** The ways to sign in. Each ends in a new session. */
@Injectable()
export class AuthService {
  constructor(
    private readonly users: AccountsRepository,
    private readonly repository: AuthRepository,
    private readonly sessions: SessionsService,
    private readonly limiter: RateLimiter,
    private readonly totp: TotpService,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  async createSeedAccount(): Promise<{ seed: string; user: User; session: IssuedSession }> {
    const seed = generateSeed();
    const user = await this.users.createSeedUser(hashSeed(seed, this.settings.seedPepper));
    return { seed, user, session: await this.sessions.start(user) };
  }

  async loginWithSeed(seed: string): Promise<{ user: User; session: IssuedSession }> {
    const user = await this.users.findBySeedHash(hashSeed(seed, this.settings.seedPepper));
    if (!user) throw new AppError('INVALID_CREDENTIALS', 'wrong seed');
    return { user, session: await this.sessions.start(user) };
  }

  async loginWithTelegram(
    fields: TelegramLoginRequest,
  ): Promise<{ user: User; session: IssuedSession }> {
    const botToken = this.settings.botToken;
    const valid =
      botToken !== null && verifyWidget({ ...fields }, botToken, this.settings.telegramAuthMaxAgeS);
    if (!valid)
      throw new AppError('TELEGRAM_AUTH_INVALID', 'the Telegram login could not be verified');
    const user = await this.users.upsertTelegramUser(fields.id, fields.username ?? null);
    return { user, session: await this.sessions.start(user) };
  }

  async loginStaff(
    username: string,
    password: string,
    factor: SecondFactor = {},
  ): Promise<{ user: User; session: IssuedSession }> {
    const user = await this.users.findByUsername(username.toLowerCase());
    const storedHash = user?.role ? user.passwordHash : null;
    // Guesses at a known username are bounded per username; made-up ones only by this, whatever
    // addresses a flood claims: past it they are refused before the check's argon2 run.
    if (storedHash === null) {
      await this.limiter.hit('staff-login-unknown', 'all', 'staffLoginUnknownGlobal');
    }
    const ok = await verifyPassword(storedHash, password);
    if (!ok || !user || !storedHash)
      throw new AppError('INVALID_CREDENTIALS', 'wrong username or password');
    // The second factor only after the password: a code alone says nothing of who is asking.
    await this.totp.checkSignIn(user.id, factor);
    if (needsRehash(storedHash))
      await this.users.updatePasswordHash(user.id, await hashPassword(password));
    return { user, session: await this.sessions.start(user) };
  }

  async createLoginCode(): Promise<LoginCode> {
    const code = randomToken(16);
    const pollSecret = randomToken(32);
    const expiresAt = await this.repository.createLoginCode(
      sha256(code),
      sha256(pollSecret),
      LOGIN_CODE_TTL_S,
    );
    const bot = readBotUsername();
    return {
      code,
      pollSecret,
      deepLink: bot ? `https://t.me/${bot}?start=login_${code}` : null,
      expiresAt,
    };
  }

  /**
   * The bot's first step when a Telegram account opens `login_<code>`: the code is bound to that
   * account, and nothing is signed in yet. When the code was made, or null when it cannot be used
   * (unknown, expired, cancelled, confirmed, or opened by another account).
   */
  async openLoginCode(code: string, userId: string): Promise<{ createdAt: Date } | null> {
    return this.repository.openLoginCode(sha256(code), userId);
  }

  /** Confirm, pressed by the account that opened the code while it is pending. */
  async confirmLoginCode(code: string, userId: string): Promise<boolean> {
    return this.repository.confirmLoginCode(sha256(code), userId);
  }

  /** Cancel, pressed by the account that opened the code: the app's poll then answers `expired`. */
  async cancelLoginCode(code: string, userId: string): Promise<boolean> {
    return this.repository.cancelLoginCode(sha256(code), userId);
  }

  async pollLoginCode(code: string, pollSecret: string): Promise<LoginCodePoll> {
    const codeHash = sha256(code);
    const storedSecret = await this.repository.loginCodePollSecretHash(codeHash);
    if (!storedSecret || !secretsEqual(sha256(pollSecret), storedSecret)) {
      throw new AppError('NOT_FOUND', 'no such login code');
    }
    const taken = await this.repository.takeLoginCode(codeHash);
    switch (taken.state) {
      case 'confirmed':
        return {
          status: 'confirmed',
          bootstrapToken: await this.issueBootstrapToken(taken.userId),
        };
      case 'pending':
        return { status: 'pending' };
      case 'expired':
      case 'unknown':
        return { status: 'expired' };
    }
  }

  /** A single-use token for `POST /auth/exchange`, valid five minutes. */
  async issueBootstrapToken(userId: string): Promise<string> {
    const token = randomToken(32);
    await this.repository.createBootstrapToken(sha256(token), userId, BOOTSTRAP_TOKEN_TTL_S);
    return token;
  }

  async exchange(bootstrapToken: string): Promise<{ user: User; session: IssuedSession }> {
    const userId = await this.repository.useBootstrapToken(sha256(bootstrapToken));
    if (!userId)
      throw new AppError('BOOTSTRAP_INVALID', 'unknown, expired or already used bootstrap token');
    const user = await this.users.getById(userId);
    return { user, session: await this.sessions.start(user) };
  }

  async refresh(refreshToken: string | undefined): Promise<IssuedSession> {
    return this.sessions.refresh(refreshToken, (userId) => this.users.getById(userId));
  }
}
