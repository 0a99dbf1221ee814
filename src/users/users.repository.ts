import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, Repository } from 'typeorm';
import { isUniqueViolation } from '../database/postgres-errors';
import { sqlRows } from '../database/sql';
import { DEFAULT_TRAFFIC_LIMIT_KEY } from '../settings-store/app-settings.repository';
import { type Role, User } from './entities/user.entity';
import { NoUserCondition, UsernameTakenCondition } from './users.errors';

export interface NewStaff {
  username: string;
  passwordHash: string;
  role: Role;
  commissionPercent?: string | null;
  partnerCode?: string | null;
}

/** A user with the limits that apply to it when it has no override of its own. */
export interface UserWithDefaults {
  user: User;
  /** The stored default limit; null when none is stored. */
  defaultLimitBytes: string | null;
  /** The limit of the plan named by `plan_name`; null when it names no plan row (the trial). */
  planLimitBytes: string | null;
}

/** Every query on `users`. */
@Injectable()
export class UsersRepository {
  constructor(@InjectRepository(User) private readonly users: Repository<User>) {}

  private repo(manager?: EntityManager): Repository<User> {
    return manager ? manager.getRepository(User) : this.users;
  }

  async getById(id: string, manager?: EntityManager): Promise<User> {
    const user = await this.repo(manager).findOneBy({ id });
    if (!user) throw new NoUserCondition(id);
    return user;
  }

  /**
   * The user, the stored default traffic limit and its plan's limit, in one round trip. Plain SQL
   * mapped through the entity's own column metadata: this is the hottest read of the service
   * (`GET /users/me`), and the query builder's hydration cost more than the query itself.
   */
  async getWithDefaults(id: string): Promise<UserWithDefaults> {
    const rows = await sqlRows<Record<string, unknown>>(
      this.users.manager,
      `SELECT u.*, (SELECT s.value #>> '{}' FROM app_settings s WHERE s.key = $2) AS default_limit,
         (SELECT p.traffic_limit_bytes::text FROM plans p WHERE p.name = u.plan_name) AS plan_limit
         FROM users u WHERE u.id = $1`,
      [id, DEFAULT_TRAFFIC_LIMIT_KEY],
    );
    const row = rows[0];
    if (!row) throw new NoUserCondition(id);
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
      this.users.manager,
      `SELECT p.name, p.traffic_limit_bytes::text AS bytes FROM plans p WHERE p.name = ANY($1)`,
      [[...new Set(planNames)]],
    );
    return new Map(rows.map((row) => [row.name, row.bytes]));
  }

  private fromRow(row: Record<string, unknown>): User {
    const user = this.users.create();
    for (const column of this.users.metadata.columns) {
      Object.assign(user, { [column.propertyName]: row[column.databaseName] });
    }
    return user;
  }

  findBySeedHash(seedHash: string): Promise<User | null> {
    return this.users.findOneBy({ seedHash });
  }

  findByUsername(username: string): Promise<User | null> {
    return this.users.findOneBy({ username });
  }

  findByTgId(tgId: number): Promise<User | null> {
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

  async createStaff(staff: NewStaff, manager?: EntityManager): Promise<User> {
    const repo = this.repo(manager);
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
      throw error;
    }
  }

  async updatePasswordHash(id: string, passwordHash: string): Promise<void> {
    await this.users.update({ id }, { passwordHash });
  }
}
