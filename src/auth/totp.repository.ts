import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { sqlRows } from '../database/sql';

/** A staff account's second factor. */
export interface TotpRecord {
  secretEnc: string;
  enabledAt: Date | null;
  lastStep: number;
}

/** The owner of `staff_totp` and `staff_recovery_codes`. Statements run in the caller's transaction. */
@Injectable()
export class TotpRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** The account's second factor, its row locked until the transaction ends when `lock`. */
  async find(userId: string, lock = false): Promise<TotpRecord | null> {
    const [row] = await sqlRows<{ secretEnc: string; enabledAt: Date | null; lastStep: string }>(
      this.txHost.tx,
      `SELECT secret_enc AS "secretEnc", enabled_at AS "enabledAt", last_step::text AS "lastStep"
         FROM staff_totp WHERE user_id = $1 ${lock ? 'FOR UPDATE' : ''}`,
      [userId],
    );
    return row ? { ...row, lastStep: Number(row.lastStep) } : null;
  }

  /** A new secret awaiting its first code (replaces an earlier one not yet enabled). */
  async savePending(userId: string, secretEnc: string): Promise<boolean> {
    const rows = await sqlRows<{ user_id: string }>(
      this.txHost.tx,
      `INSERT INTO staff_totp (user_id, secret_enc) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET secret_enc = $2, last_step = 0, created_at = now()
         WHERE staff_totp.enabled_at IS NULL
       RETURNING user_id`,
      [userId, secretEnc],
    );
    return rows.length > 0;
  }

  /** Records the time step of an accepted code; enables the factor when it was pending. */
  async accept(userId: string, step: number): Promise<void> {
    await sqlRows(
      this.txHost.tx,
      `UPDATE staff_totp SET last_step = $2, enabled_at = COALESCE(enabled_at, now())
        WHERE user_id = $1`,
      [userId, step],
    );
  }

  /** Removes the factor and its recovery codes; whether there was one. */
  async remove(userId: string): Promise<boolean> {
    await sqlRows(this.txHost.tx, `DELETE FROM staff_recovery_codes WHERE user_id = $1`, [userId]);
    const rows = await sqlRows<{ user_id: string }>(
      this.txHost.tx,
      `DELETE FROM staff_totp WHERE user_id = $1 RETURNING user_id`,
      [userId],
    );
    return rows.length > 0;
  }

  async replaceRecoveryCodes(userId: string, hashes: Buffer[]): Promise<void> {
    await sqlRows(this.txHost.tx, `DELETE FROM staff_recovery_codes WHERE user_id = $1`, [userId]);
    await sqlRows(
      this.txHost.tx,
      `INSERT INTO staff_recovery_codes (user_id, code_sha256) SELECT $1, unnest($2::bytea[])`,
      [userId, hashes],
    );
  }

  /** Every account's sealed secret, locked until the transaction ends (resealing them). */
  lockAllSecrets(): Promise<{ userId: string; secretEnc: string }[]> {
    return sqlRows(
      this.txHost.tx,
      `SELECT user_id AS "userId", secret_enc AS "secretEnc" FROM staff_totp FOR UPDATE`,
    );
  }

  async replaceSecret(userId: string, secretEnc: string): Promise<void> {
    await sqlRows(this.txHost.tx, `UPDATE staff_totp SET secret_enc = $2 WHERE user_id = $1`, [
      userId,
      secretEnc,
    ]);
  }

  /** Spends an unused recovery code; whether it was one. */
  async spendRecoveryCode(userId: string, hash: Buffer): Promise<boolean> {
    const rows = await sqlRows<{ user_id: string }>(
      this.txHost.tx,
      `UPDATE staff_recovery_codes SET used_at = now()
        WHERE user_id = $1 AND code_sha256 = $2 AND used_at IS NULL RETURNING user_id`,
      [userId, hash],
    );
    return rows.length > 0;
  }

  async unusedRecoveryCodes(userId: string): Promise<number> {
    const [row] = await sqlRows<{ n: number }>(
      this.txHost.tx,
      `SELECT count(*)::int AS n FROM staff_recovery_codes WHERE user_id = $1 AND used_at IS NULL`,
      [userId],
    );
    return row.n;
  }
}
