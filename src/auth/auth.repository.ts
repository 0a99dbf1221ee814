import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { sqlRows } from '../database/sql';
import type { Role } from '../users/entities/user.entity';

export interface SessionCaller {
  userId: string;
  role: Role | null;
  canManageNodes: boolean;
}

export type RotationResult =
  | { outcome: 'rotated'; userId: string; sessionId: string }
  | { outcome: 'reused'; userId: string }
  | { outcome: 'invalid' };

export type LoginCodeState =
  | { state: 'unknown' }
  | { state: 'pending' }
  | { state: 'expired' }
  | { state: 'confirmed'; userId: string };

/** Every query on refresh sessions, login codes and bootstrap tokens. */
@Injectable()
export class AuthRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async createSession(
    userId: string,
    tokenHash: Buffer,
    ttlS: number,
    familyId: string | null = null,
  ): Promise<string> {
    const rows = await sqlRows<{ id: string }>(
      this.dataSource,
      `INSERT INTO refresh_sessions (user_id, family_id, token_hash, expires_at)
       VALUES ($1, COALESCE($2::uuid, gen_random_uuid()), $3, now() + make_interval(secs => $4))
       RETURNING id`,
      [userId, familyId, tokenHash, ttlS],
    );
    return rows[0].id;
  }

  /** The caller behind an access token, while its session is not revoked. */
  async activeSessionCaller(sessionId: string, userId: string): Promise<SessionCaller | null> {
    const rows = await sqlRows<{ user_id: string; role: Role | null; can_manage_nodes: boolean }>(
      this.dataSource,
      `SELECT u.id AS user_id, u.role, u.can_manage_nodes
           FROM refresh_sessions s JOIN users u ON u.id = s.user_id
          WHERE s.id = $1 AND s.user_id = $2 AND s.revoked_at IS NULL`,
      [sessionId, userId],
    );
    const row = rows[0];
    return row
      ? { userId: row.user_id, role: row.role, canManageNodes: row.can_manage_nodes }
      : null;
  }

  /**
   * Rotates the session of `tokenHash` and starts its successor in one transaction. The
   * conditional update lets exactly one of any number of concurrent refreshes win; a token that
   * was already rotated is reuse, and revokes every session of its user.
   */
  async rotate(tokenHash: Buffer, newTokenHash: Buffer, ttlS: number): Promise<RotationResult> {
    return this.dataSource.transaction(async (manager) => {
      const rotated = await sqlRows<{ id: string; user_id: string; family_id: string }>(
        manager,
        `UPDATE refresh_sessions SET rotated_at = now()
          WHERE token_hash = $1 AND rotated_at IS NULL AND revoked_at IS NULL AND expires_at > now()
          RETURNING id, user_id, family_id`,
        [tokenHash],
      );
      if (rotated[0]) {
        const { user_id: userId, family_id: familyId } = rotated[0];
        const created = await sqlRows<{ id: string }>(
          manager,
          `INSERT INTO refresh_sessions (user_id, family_id, token_hash, expires_at)
           VALUES ($1, $2, $3, now() + make_interval(secs => $4)) RETURNING id`,
          [userId, familyId, newTokenHash, ttlS],
        );
        return { outcome: 'rotated', userId, sessionId: created[0].id };
      }
      const found = await sqlRows<{
        user_id: string;
        rotated_at: Date | null;
        revoked_at: Date | null;
      }>(
        manager,
        'SELECT user_id, rotated_at, revoked_at FROM refresh_sessions WHERE token_hash = $1',
        [tokenHash],
      );
      const session = found[0];
      if (session && session.rotated_at !== null && session.revoked_at === null) {
        await manager.query(
          'UPDATE refresh_sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL',
          [session.user_id],
        );
        return { outcome: 'reused', userId: session.user_id };
      }
      return { outcome: 'invalid' };
    });
  }

  async revokeSession(sessionId: string): Promise<void> {
    await this.dataSource.query(
      'UPDATE refresh_sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL',
      [sessionId],
    );
  }

  async revokeAllSessions(userId: string): Promise<void> {
    await this.dataSource.query(
      'UPDATE refresh_sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL',
      [userId],
    );
  }

  async createLoginCode(codeHash: Buffer, pollSecretHash: Buffer, ttlS: number): Promise<Date> {
    const rows = await sqlRows<{ expires_at: Date }>(
      this.dataSource,
      `INSERT INTO login_codes (code_hash, poll_secret_hash, expires_at)
       VALUES ($1, $2, now() + make_interval(secs => $3)) RETURNING expires_at`,
      [codeHash, pollSecretHash, ttlS],
    );
    return rows[0].expires_at;
  }

  /** Confirms a pending, unexpired code for a user; false when there is none. */
  async confirmLoginCode(codeHash: Buffer, userId: string): Promise<boolean> {
    const rows = await sqlRows(
      this.dataSource,
      `UPDATE login_codes SET user_id = $2, confirmed_at = now()
        WHERE code_hash = $1 AND confirmed_at IS NULL AND expires_at > now()
        RETURNING code_hash`,
      [codeHash, userId],
    );
    return rows.length > 0;
  }

  async loginCodePollSecretHash(codeHash: Buffer): Promise<Buffer | null> {
    const rows = await sqlRows<{ poll_secret_hash: Buffer }>(
      this.dataSource,
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
      this.dataSource,
      `UPDATE login_codes SET delivered_at = now()
        WHERE code_hash = $1 AND confirmed_at IS NOT NULL AND delivered_at IS NULL AND expires_at > now()
        RETURNING user_id`,
      [codeHash],
    );
    if (delivered[0]) return { state: 'confirmed', userId: delivered[0].user_id };
    const rows = await sqlRows<{ pending: boolean }>(
      this.dataSource,
      `SELECT (confirmed_at IS NULL AND expires_at > now()) AS pending FROM login_codes WHERE code_hash = $1`,
      [codeHash],
    );
    if (!rows[0]) return { state: 'unknown' };
    return rows[0].pending ? { state: 'pending' } : { state: 'expired' };
  }

  async createBootstrapToken(tokenHash: Buffer, userId: string, ttlS: number): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO bootstrap_tokens (token_hash, user_id, expires_at)
       VALUES ($1, $2, now() + make_interval(secs => $3))`,
      [tokenHash, userId, ttlS],
    );
  }

  /** Uses a bootstrap token once; the user it was issued for, or null. */
  async useBootstrapToken(tokenHash: Buffer): Promise<string | null> {
    const rows = await sqlRows<{ user_id: string }>(
      this.dataSource,
      `UPDATE bootstrap_tokens SET used_at = now()
        WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
        RETURNING user_id`,
      [tokenHash],
    );
    return rows[0]?.user_id ?? null;
  }
}
