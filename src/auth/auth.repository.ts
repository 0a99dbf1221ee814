import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { sqlRows } from '../database/sql';

export type RotationResult =
  | { outcome: 'rotated'; userId: string; sessionId: string }
  | { outcome: 'reused'; userId: string }
  /** `userId`: the owner of a known session that was revoked or has expired. */
  | { outcome: 'invalid'; userId: string | null };

export type LoginCodeState =
  | { state: 'unknown' }
  | { state: 'pending' }
  | { state: 'expired' }
  | { state: 'confirmed'; userId: string };

/** A login code still waiting for its confirmation. */
const PENDING = `(confirmed_at IS NULL AND cancelled_at IS NULL AND expires_at > now())`;

/** The owner of `refresh_sessions`, `login_codes` and `bootstrap_tokens`. */
@Injectable()
export class AuthRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async createSession(
    userId: string,
    tokenHash: Buffer,
    ttlS: number,
    familyId: string | null = null,
  ): Promise<string> {
    const rows = await sqlRows<{ id: string }>(
      this.txHost.tx,
      `INSERT INTO refresh_sessions (user_id, family_id, token_hash, expires_at)
       VALUES ($1, COALESCE($2::uuid, gen_random_uuid()), $3, now() + make_interval(secs => $4))
       RETURNING id`,
      [userId, familyId, tokenHash, ttlS],
    );
    return rows[0].id;
  }

  /**
   * Marks the live session of `tokenHash` rotated; of any number of concurrent refreshes exactly
   * one gets it (the conditional update). Null when it is not live.
   */
  async markRotated(tokenHash: Buffer): Promise<{ userId: string; familyId: string } | null> {
    const [row] = await sqlRows<{ userId: string; familyId: string }>(
      this.txHost.tx,
      `UPDATE refresh_sessions SET rotated_at = now()
        WHERE token_hash = $1 AND rotated_at IS NULL AND revoked_at IS NULL AND expires_at > now()
        RETURNING user_id AS "userId", family_id AS "familyId"`,
      [tokenHash],
    );
    return row ?? null;
  }

  async findSession(
    tokenHash: Buffer,
  ): Promise<{ userId: string; rotatedAt: Date | null; revokedAt: Date | null } | null> {
    const [row] = await sqlRows<{ userId: string; rotatedAt: Date | null; revokedAt: Date | null }>(
      this.txHost.tx,
      `SELECT user_id AS "userId", rotated_at AS "rotatedAt", revoked_at AS "revokedAt"
         FROM refresh_sessions WHERE token_hash = $1`,
      [tokenHash],
    );
    return row ?? null;
  }

  /**
   * Revokes every session of the sign-in `sessionId` belongs to (its refresh family): the access
   * tokens issued before earlier refreshes name older rows of the family, and stop working too.
   */
  async revokeFamily(sessionId: string): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE refresh_sessions SET revoked_at = now()
        WHERE family_id = (SELECT family_id FROM refresh_sessions WHERE id = $1)
          AND revoked_at IS NULL`,
      [sessionId],
    );
  }

  async revokeAllSessions(userId: string): Promise<void> {
    await this.txHost.tx.query(
      'UPDATE refresh_sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL',
      [userId],
    );
  }

  async createLoginCode(codeHash: Buffer, pollSecretHash: Buffer, ttlS: number): Promise<Date> {
    const rows = await sqlRows<{ expires_at: Date }>(
      this.txHost.tx,
      `INSERT INTO login_codes (code_hash, poll_secret_hash, expires_at)
       VALUES ($1, $2, now() + make_interval(secs => $3)) RETURNING expires_at`,
      [codeHash, pollSecretHash, ttlS],
    );
    return rows[0].expires_at;
  }

  /**
   * Binds a pending code to the Telegram account that opened its link; the first account wins, and
   * the same account may open it again. Its creation time, or null when the code is unknown, no
   * longer pending, or was opened by another account.
   */
  async openLoginCode(codeHash: Buffer, userId: string): Promise<{ createdAt: Date } | null> {
    const rows = await sqlRows<{ created_at: Date }>(
      this.txHost.tx,
      `UPDATE login_codes SET opened_by_user_id = $2
        WHERE code_hash = $1 AND ${PENDING} AND (opened_by_user_id IS NULL OR opened_by_user_id = $2)
        RETURNING created_at`,
      [codeHash, userId],
    );
    return rows[0] ? { createdAt: rows[0].created_at } : null;
  }

  /** Confirms a pending code for the account that opened it; false when there is none. */
  async confirmLoginCode(codeHash: Buffer, userId: string): Promise<boolean> {
    const rows = await sqlRows(
      this.txHost.tx,
      `UPDATE login_codes SET user_id = $2, confirmed_at = now()
        WHERE code_hash = $1 AND opened_by_user_id = $2 AND ${PENDING}
        RETURNING code_hash`,
      [codeHash, userId],
    );
    return rows.length > 0;
  }

  /** Ends a pending code at the request of the account that opened it; false when there is none. */
  async cancelLoginCode(codeHash: Buffer, userId: string): Promise<boolean> {
    const rows = await sqlRows(
      this.txHost.tx,
      `UPDATE login_codes SET cancelled_at = now()
        WHERE code_hash = $1 AND opened_by_user_id = $2 AND ${PENDING}
        RETURNING code_hash`,
      [codeHash, userId],
    );
    return rows.length > 0;
  }

  async loginCodePollSecretHash(codeHash: Buffer): Promise<Buffer | null> {
    const rows = await sqlRows<{ poll_secret_hash: Buffer }>(
      this.txHost.tx,
      'SELECT poll_secret_hash FROM login_codes WHERE code_hash = $1',
      [codeHash],
    );
    return rows[0]?.poll_secret_hash ?? null;
  }

  /**
   * The state of a code for its poller. A confirmed code is handed over once: the conditional
   * update marks it delivered, so two concurrent polls cannot both receive a bootstrap token.
   */
  async takeLoginCode(codeHash: Buffer): Promise<LoginCodeState> {
    const delivered = await sqlRows<{ user_id: string }>(
      this.txHost.tx,
      `UPDATE login_codes SET delivered_at = now()
        WHERE code_hash = $1 AND confirmed_at IS NOT NULL AND delivered_at IS NULL AND expires_at > now()
        RETURNING user_id`,
      [codeHash],
    );
    if (delivered[0]) return { state: 'confirmed', userId: delivered[0].user_id };
    const rows = await sqlRows<{ pending: boolean }>(
      this.txHost.tx,
      `SELECT ${PENDING} AS pending FROM login_codes WHERE code_hash = $1`,
      [codeHash],
    );
    if (!rows[0]) return { state: 'unknown' };
    return rows[0].pending ? { state: 'pending' } : { state: 'expired' };
  }

  async createBootstrapToken(tokenHash: Buffer, userId: string, ttlS: number): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO bootstrap_tokens (token_hash, user_id, expires_at)
       VALUES ($1, $2, now() + make_interval(secs => $3))`,
      [tokenHash, userId, ttlS],
    );
  }

  /** Uses a bootstrap token once; the user it was issued for, or null. */
  async useBootstrapToken(tokenHash: Buffer): Promise<string | null> {
    const rows = await sqlRows<{ user_id: string }>(
      this.txHost.tx,
      `UPDATE bootstrap_tokens SET used_at = now()
        WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
        RETURNING user_id`,
      [tokenHash],
    );
    return rows[0]?.user_id ?? null;
  }

  /**
   * Deletes up to `batch` rows of `table` past their expiry; returns how many. Expired login
   * codes and bootstrap tokens answer like unknown ones; an expired refresh session, rotated or
   * revoked or not, is refused like an unknown one, and reuse of a rotated token matters only until
   * it would have expired.
   */
  async deleteExpired(
    table: 'login_codes' | 'bootstrap_tokens' | 'refresh_sessions',
    batch: number,
  ): Promise<number> {
    const rows = await sqlRows(
      this.txHost.tx,
      `DELETE FROM ${table}
        WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${table} WHERE expires_at < now() LIMIT $1))
        RETURNING 1`,
      [batch],
    );
    return rows.length;
  }
}
