import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { DataSource, type EntityMetadata, type Repository } from 'typeorm';
import { isUniqueViolation } from '../database/postgres-errors';
import { ROUTING_VERSION_SQL } from '../nodes/nodes.repository';
import { preparedRows, sqlRows } from '../database/sql';
import { DEFAULT_TRAFFIC_LIMIT_KEY } from '../settings-store/app-settings.repository';
import { type Role, User } from './entities/user.entity';
import { NoUserCondition, PartnerCodeTakenCondition, UsernameTakenCondition } from './users.errors';

export interface NewStaff {
  username: string;
  passwordHash: string;
  role: Role;
  commissionPercent?: string | null;
  partnerCode?: string | null;
}

/** The session and user an access token names. */
export interface SessionKey {
  sessionId: string;
  userId: string;
}

/** A user with the limits that apply to it when it has no override of its own. */
export interface UserWithDefaults {
  user: User;
  /** The stored default limit; null when none is stored. */
  defaultLimitBytes: string | null;
  /** The limit of the plan named by `plan_name`; null when it names no plan row (the trial). */
  planLimitBytes: string | null;
  /**
   * A staff account's second factor is on; false for other accounts. Read with the session
   * (`findBySessions`) only; other reads leave it undefined.
   */
  secondFactorOn?: boolean;
  /**
   * The nodes' routing counter (migration 0019) as the session's read found it, so that the
   * routing route needs no read of its own when its node list is current. Read with the session
   * (`findBySessions`) only.
   */
  routingVersion?: string;
}

/**
 * A user row (`u`, its `columns`) with its fallback limits; `$2` is the default limit's settings
 * key. The columns are named rather than `u.*`: a named prepared statement whose result gains a
 * column (a migration run by a newer instance) fails on every connection that prepared it.
 */
const withDefaults = (columns: string): string =>
  `${columns}, (SELECT s.value #>> '{}' FROM app_settings s WHERE s.key = $2) AS default_limit,
  (SELECT p.traffic_limit_bytes::text FROM plans p WHERE p.name = u.plan_name) AS plan_limit`;

/**
 * Accounts in `users`: reading users, creating accounts and staff, passwords, node access, and
 * locking user rows for other features' transactions. Subscriptions, referrals and traffic have
 * repositories of their own beside this one. Statements run in the caller's transaction, when
 * there is one.
 */
@Injectable()
export class AccountsRepository {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly dataSource: DataSource,
  ) {}

  /** The entity's columns of `u` and its fallback limits, made once. */
  private get withDefaultsSql(): string {
    this.userColumns ??= withDefaults(
      this.dataSource
        .getMetadata(User)
        .columns.map((column) => `u."${column.databaseName}"`)
        .join(', '),
    );
    return this.userColumns;
  }

  private userColumns?: string;

  private get users(): Repository<User> {
    return this.txHost.tx.getRepository(User);
  }

  async getById(id: string): Promise<User> {
    const user = await this.users.findOneBy({ id });
    if (!user) throw new NoUserCondition(id);
    return user;
  }

  /**
   * The user, the stored default traffic limit and its plan's limit, in one round trip. Plain SQL
   * mapped through the entity's own column metadata: this is the hottest read of the service
   * (`GET /users/me`), and the query builder's hydration cost more than the query itself.
   */
  async getWithDefaults(id: string): Promise<UserWithDefaults> {
    const rows = await preparedRows<Record<string, unknown>>(
      this.txHost.tx,
      `SELECT ${this.withDefaultsSql} FROM users u WHERE u.id = $1`,
      [id, DEFAULT_TRAFFIC_LIMIT_KEY],
    );
    if (!rows[0]) throw new NoUserCondition(id);
    return this.withDefaults(rows[0]);
  }

  /**
   * For each access token's session and user: what `getWithDefaults` gives for the user while that
   * refresh session is the user's and not revoked; null otherwise. One statement for all of them,
   * outside any transaction: authentication runs it for every signed-in request (concurrent
   * requests share one, see `JwtStrategy`), so revocation takes effect at once and the route has
   * its caller loaded, with the routing counter (`routingVersion`). Ids must be lower-case UUIDs.
   */
  async findBySessions(keys: SessionKey[]): Promise<(UserWithDefaults | null)[]> {
    const rows = await preparedRows<Record<string, unknown>>(
      this.dataSource,
      `SELECT r.id AS refresh_session_id, ${this.withDefaultsSql},
              CASE WHEN u.role IS NULL THEN false ELSE EXISTS (
                SELECT 1 FROM staff_totp t WHERE t.user_id = u.id AND t.enabled_at IS NOT NULL
              ) END AS second_factor_on,
              (SELECT version::text FROM (${ROUTING_VERSION_SQL}) v) AS routing_version
         FROM refresh_sessions r JOIN users u ON u.id = r.user_id
        WHERE r.id = ANY($1::uuid[]) AND r.revoked_at IS NULL`,
      [[...new Set(keys.map((key) => key.sessionId))], DEFAULT_TRAFFIC_LIMIT_KEY],
    );
    const bySession = new Map(rows.map((row) => [row.refresh_session_id as string, row]));
    return keys.map(({ sessionId, userId }) => {
      const row = bySession.get(sessionId);
      return row?.id === userId
        ? {
            ...this.withDefaults(row),
            secondFactorOn: row.second_factor_on === true,
            routingVersion: row.routing_version as string,
          }
        : null;
    });
  }

  private withDefaults(row: Record<string, unknown>): UserWithDefaults {
    return {
      user: this.fromRow(row),
      defaultLimitBytes: (row.default_limit as string | null) ?? null,
      planLimitBytes: (row.plan_limit as string | null) ?? null,
    };
  }

  /** Each named plan's traffic limit in bytes (digits), for views of many users at once. */
  async planLimits(planNames: string[]): Promise<Map<string, string>> {
    if (planNames.length === 0) return new Map();
    const rows = await sqlRows<{ name: string; bytes: string }>(
      this.txHost.tx,
      `SELECT p.name, p.traffic_limit_bytes::text AS bytes FROM plans p WHERE p.name = ANY($1)`,
      [[...new Set(planNames)]],
    );
    return new Map(rows.map((row) => [row.name, row.bytes]));
  }

  /**
   * The user a row of its columns holds, made as the entity's metadata makes one. The metadata is
   * looked up once: a repository from the transaction host looks it up again on every call, and
   * this runs for every signed-in request.
   */
  private fromRow(row: Record<string, unknown>): User {
    this.userMetadata ??= this.dataSource.getMetadata(User);
    const user = this.userMetadata.create() as User & Record<string, unknown>;
    for (const column of this.userMetadata.columns) {
      user[column.propertyName] = row[column.databaseName];
    }
    return user;
  }

  private userMetadata?: EntityMetadata;

  findBySeedHash(seedHash: string): Promise<User | null> {
    return this.users.findOneBy({ seedHash });
  }

  findByUsername(username: string): Promise<User | null> {
    return this.users.findOneBy({ username });
  }

  findById(id: string): Promise<User | null> {
    return this.users.findOneBy({ id });
  }

  findByTgId(tgId: number | string): Promise<User | null> {
    return this.users.findOneBy({ tgId: String(tgId) });
  }

  createSeedUser(seedHash: string): Promise<User> {
    return this.users.save(this.users.create({ seedHash }));
  }

  /** Creates the Telegram account on first contact; keeps its Telegram username current. */
  async upsertTelegramUser(tgId: number, tgUsername: string | null): Promise<User> {
    await this.users.query(
      `INSERT INTO users (tg_id, tg_username) VALUES ($1, $2)
       ON CONFLICT (tg_id) WHERE tg_id IS NOT NULL
       DO UPDATE SET tg_username = COALESCE(EXCLUDED.tg_username, users.tg_username)`,
      [String(tgId), tgUsername],
    );
    return (await this.findByTgId(tgId)) as User;
  }

  async createStaff(staff: NewStaff): Promise<User> {
    const repo = this.users;
    try {
      return await repo.save(
        repo.create({
          username: staff.username,
          passwordHash: staff.passwordHash,
          role: staff.role,
          commissionPercent: staff.commissionPercent ?? null,
          partnerCode: staff.partnerCode ?? null,
        }),
      );
    } catch (error) {
      if (isUniqueViolation(error, 'UQ_users_username'))
        throw new UsernameTakenCondition(staff.username);
      if (isUniqueViolation(error, 'UQ_users_partner_code'))
        throw new PartnerCodeTakenCondition(staff.partnerCode ?? null);
      throw error;
    }
  }

  async updatePasswordHash(id: string, passwordHash: string): Promise<void> {
    await this.users.update({ id }, { passwordHash });
  }

  /**
   * Locks these users' rows until the transaction ends, always in id order so that two writers
   * locking the same pair cannot deadlock. NO KEY UPDATE still lets other tables' foreign keys
   * reference the rows meanwhile. The ids of the users that exist.
   */
  async lock(ids: string[]): Promise<string[]> {
    const rows = await sqlRows<{ id: string }>(
      this.txHost.tx,
      `SELECT id FROM users WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE`,
      [ids],
    );
    return rows.map((row) => row.id);
  }

  /** The user, locked until the transaction ends, so a before/after read of it stays exact. */
  async lockOne(id: string): Promise<User> {
    const [row] = await sqlRows<Record<string, unknown>>(
      this.txHost.tx,
      `SELECT * FROM users WHERE id = $1 FOR NO KEY UPDATE`,
      [id],
    );
    if (!row) throw new NoUserCondition(id);
    return this.fromRow(row);
  }

  async setCanManageNodes(id: string, value: boolean): Promise<void> {
    await this.users.update({ id }, { canManageNodes: value });
  }

  /** Blocks the account from now (`blocked`), or lifts the block; when, or null. */
  async setBlocked(id: string, blocked: boolean): Promise<Date | null> {
    const [row] = await sqlRows<{ blockedAt: Date | null }>(
      this.txHost.tx,
      `UPDATE users SET blocked_at = CASE WHEN $2 THEN COALESCE(blocked_at, now()) END
        WHERE id = $1 RETURNING blocked_at AS "blockedAt"`,
      [id, blocked],
    );
    if (!row) throw new NoUserCondition(id);
    return row.blockedAt;
  }
}
