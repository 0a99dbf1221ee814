import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import { authenticator } from 'otplib';
import { refuseSelfOrStaff } from '../admin/acting-on';
import { AUDIT_ACTIONS, AuditService } from '../audit/audit.service';
import type { AuthUser } from './guards/auth-user';
import { AppError, validationFailed } from '../common/errors';
import { SecretBox } from '../common/secret-box';
import { sha256 } from '../common/secrets';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { AccountsRepository } from '../users/accounts.repository';
import { TotpRepository } from './totp.repository';

/** Recovery codes given at enrolment, each good once. */
const RECOVERY_CODES = 10;
/** The authenticator apps' defaults (SHA-1, six digits, 30 s); the previous period's code is still taken (clocks drift; typing takes time), a future one never. */
const codes = authenticator.clone({ window: [1, 0] });
/** The time step of the codes (the apps' 30 s). */
export const TOTP_PERIOD_MS = 30_000;
/** Secret bytes: 160 bits, as RFC 4226 recommends. */
const SECRET_BYTES = 20;

/** What a second factor at sign-in can be: a code of the app, or a recovery code. */
export interface SecondFactor {
  code?: string;
  recoveryCode?: string;
}

/**
 * Staff sign-in's second factor (RFC 6238 TOTP, with otplib): enrolled from the console (a secret
 * shown as a QR code, confirmed by a first code, then ten one-time recovery codes), required at
 * every sign-in of the account once enrolled. A code is taken once (its time step is kept), codes
 * are tried under the staff sign-in throttles, and every change is audited. The owner can take
 * the factor off a staff account that lost its phone and its recovery codes.
 */
@Injectable()
export class TotpService {
  constructor(
    private readonly totp: TotpRepository,
    private readonly accounts: AccountsRepository,
    private readonly audit: AuditService,
    private readonly box: SecretBox,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  async status(
    caller: AuthUser,
  ): Promise<{ enabled: boolean; recoveryCodesLeft: number; required: boolean }> {
    const found = await this.totp.find(caller.id);
    const enabled = found?.enabledAt != null;
    return {
      enabled,
      recoveryCodesLeft: enabled ? await this.totp.unusedRecoveryCodes(caller.id) : 0,
      required: this.settings.staffTotpRequired,
    };
  }

  /** A new secret for the caller's authenticator app, enabled by its first code. */
  @Transactional()
  async setUp(caller: AuthUser, label: string): Promise<{ secret: string; uri: string }> {
    const secret = authenticator.generateSecret(SECRET_BYTES);
    if (!(await this.totp.savePending(caller.id, this.box.seal(secret)))) {
      throw new AppError('CONFLICT', 'a second factor is on already: turn it off first');
    }
    const issuer = new URL(this.settings.appUrl).hostname;
    return { secret, uri: authenticator.keyuri(label, issuer, secret) };
  }

  /** Enables the pending secret with a code of it; the recovery codes, shown once. */
  @Transactional()
  async enable(caller: AuthUser, code: string): Promise<string[]> {
    const found = await this.totp.find(caller.id, true);
    if (!found || found.enabledAt !== null) {
      throw new AppError('CONFLICT', 'set up a second factor first');
    }
    const step = this.acceptedStep(found.secretEnc, found.lastStep, code);
    if (step === null)
      throw validationFailed([{ field: 'code', message: 'is not the current code' }]);
    await this.totp.accept(caller.id, step);
    const codes = Array.from({ length: RECOVERY_CODES }, recoveryCode);
    await this.totp.replaceRecoveryCodes(caller.id, codes.map(hashOf));
    await this.record(caller.id, AUDIT_ACTIONS.totpEnabled, caller.id, null);
    return codes;
  }

  /** Turns the caller's factor off, with a current code or a recovery code. */
  @Transactional()
  async disable(caller: AuthUser, factor: SecondFactor): Promise<void> {
    await this.check(caller.id, factor);
    await this.totp.remove(caller.id);
    await this.record(caller.id, AUDIT_ACTIONS.totpDisabled, caller.id, null);
  }

  /** The owner takes the factor off another staff account (lost phone and codes); audited. */
  @Transactional()
  async resetFor(actor: AuthUser, userId: string, reason: string): Promise<void> {
    const user = await this.accounts.lockOne(userId);
    refuseSelfOrStaff(actor, user);
    if (!(await this.totp.remove(userId))) {
      throw new AppError('CONFLICT', 'the account has no second factor');
    }
    await this.record(actor.id, AUDIT_ACTIONS.totpReset, userId, reason);
  }

  /**
   * At sign-in, after the password: passes an account without a second factor; otherwise
   * 401 TOTP_REQUIRED without one, 401 TOTP_INVALID for a wrong, old or reused one.
   */
  @Transactional()
  async checkSignIn(userId: string, factor: SecondFactor): Promise<void> {
    const found = await this.totp.find(userId, true);
    if (!found || found.enabledAt === null) return;
    if (!factor.code && !factor.recoveryCode) {
      throw new AppError('TOTP_REQUIRED', 'this account signs in with a code from its app too');
    }
    await this.check(userId, factor, found);
  }

  /** Checks a code (taking its time step) or spends a recovery code; 401 TOTP_INVALID otherwise. */
  private async check(
    userId: string,
    factor: SecondFactor,
    locked?: { secretEnc: string; lastStep: number; enabledAt: Date | null },
  ): Promise<void> {
    const found = locked ?? (await this.totp.find(userId, true));
    if (!found || found.enabledAt === null) {
      throw new AppError('CONFLICT', 'the account has no second factor');
    }
    if (factor.recoveryCode) {
      if (!(await this.totp.spendRecoveryCode(userId, hashOf(factor.recoveryCode))))
        throw invalid();
      await this.record(userId, AUDIT_ACTIONS.recoveryCodeUsed, userId, null);
      return;
    }
    const step = this.acceptedStep(found.secretEnc, found.lastStep, factor.code ?? '');
    if (step === null) throw invalid();
    await this.totp.accept(userId, step);
  }

  /** The time step of `code` when it is a current code of the secret newer than `lastStep`. */
  private acceptedStep(secretEnc: string, lastStep: number, code: string): number | null {
    if (!/^\d{6}$/.test(code)) return null;
    const now = Date.now();
    const delta = codes.clone({ epoch: now }).checkDelta(code, this.box.open(secretEnc));
    if (delta === null) return null;
    const step = Math.floor(now / TOTP_PERIOD_MS) + delta;
    return step > lastStep ? step : null;
  }

  private record(actorId: string, action: string, userId: string, reason: string | null) {
    return this.audit.record({
      actorId,
      action,
      targetType: 'user',
      targetId: userId,
      before: null,
      after: reason === null ? { second_factor: action } : { second_factor: action, reason },
    });
  }
}

const invalid = (): AppError => new AppError('TOTP_INVALID', 'wrong or already used code');

/** `xxxxx-xxxxx` of lower-case base32: 50 bits, typed once in a bad moment. */
function recoveryCode(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  const bytes = randomBytes(10);
  const text = Array.from(bytes, (byte) => alphabet[byte & 31]).join('');
  return `${text.slice(0, 5)}-${text.slice(5)}`;
}

const hashOf = (code: string): Buffer => sha256(code.trim().toLowerCase());
