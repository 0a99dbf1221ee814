import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { isUUID } from 'class-validator';
import { DataSource, type EntityManager } from 'typeorm';
import { cursorAtSql, type KeysetCursor } from '../common/pagination';
import { isUniqueViolation } from '../database/postgres-errors';
import {
  AppSettingsRepository,
  DEFAULT_TRAFFIC_LIMIT_KEY,
} from '../settings-store/app-settings.repository';
import { User } from '../users/entities/user.entity';
import { NoUserCondition } from '../users/users.errors';
import { type NewStaff, UsersRepository } from '../users/users.repository';
import { PartnerCodeTakenCondition } from './admin.errors';
import type { RoleFilter } from './dto/admin-users.dto';

const MAX_BIGINT = 9_223_372_036_854_775_807n;

export interface UserFilter {
  q?: string;
  role?: RoleFilter;
}

export interface UserPageRow {
  user: User;
  /** The row's keyset position, for the next page's cursor. */
  cursorAt: string;
}

/** The queries of staff administration: locked reads and writes of users and of the default limit. */
@Injectable()
export class AdminRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly users: UsersRepository,
    private readonly appSettings: AppSettingsRepository,
  ) {}

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  async createStaff(manager: EntityManager, staff: NewStaff): Promise<User> {
    try {
      return await this.users.createStaff(staff, manager);
    } catch (error) {
      if (isUniqueViolation(error, 'UQ_users_partner_code'))
        throw new PartnerCodeTakenCondition(staff.partnerCode ?? null);
      throw error;
    }
  }

  /** The user, locked until the transaction ends, so before/after in the audit log are exact. */
  async lockUser(manager: EntityManager, id: string): Promise<User> {
    const user = await manager
      .getRepository(User)
      .findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
    if (!user) throw new NoUserCondition(id);
    return user;
  }

  async setCanManageNodes(manager: EntityManager, id: string, value: boolean): Promise<void> {
    await manager.getRepository(User).update({ id }, { canManageNodes: value });
  }

  /** `bytes` null: follow the default limit again. */
  async setTrafficLimit(manager: EntityManager, id: string, bytes: string | null): Promise<void> {
    await manager.getRepository(User).update({ id }, { trafficLimitBytes: bytes });
  }

  /** Serialises changes of the default limit, whose row may not exist yet to lock. */
  async lockDefaultLimit(manager: EntityManager): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `app_settings:${DEFAULT_TRAFFIC_LIMIT_KEY}`,
    ]);
  }

  /** The stored default limit in bytes (a string of digits), or null when none is stored. */
  async getDefaultLimit(manager?: EntityManager): Promise<string | null> {
    const value = await this.appSettings.get(DEFAULT_TRAFFIC_LIMIT_KEY, manager);
    if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
    return typeof value === 'string' && /^\d+$/.test(value) ? value : null;
  }

  /** Stored as a JSON string of digits, as `UsersRepository.getWithDefaults` reads it. */
  async setDefaultLimit(manager: EntityManager, bytes: string): Promise<void> {
    await this.appSettings.set(DEFAULT_TRAFFIC_LIMIT_KEY, bytes, manager);
  }

  /** Newest first (`created_at DESC, id DESC`), `limit` rows after the cursor. */
  async pageUsers(
    filter: UserFilter,
    limit: number,
    after: KeysetCursor | null,
  ): Promise<UserPageRow[]> {
    const query = this.dataSource
      .getRepository(User)
      .createQueryBuilder('u')
      .addSelect(cursorAtSql('u.created_at'), 'cursor_at')
      .orderBy('u.createdAt', 'DESC')
      .addOrderBy('u.id', 'DESC')
      .limit(limit);

    if (filter.role === 'none') query.andWhere('u.role IS NULL');
    else if (filter.role) query.andWhere('u.role = :role', { role: filter.role });

    const q = filter.q ?? '';
    if (q !== '') {
      const matches = ['lower(u.username) LIKE :prefix'];
      const params: Record<string, string> = { prefix: `${escapeLike(q.toLowerCase())}%` };
      if (/^\d{1,19}$/.test(q) && BigInt(q) <= MAX_BIGINT) {
        matches.push('u.tgId = :tgId');
        params.tgId = BigInt(q).toString();
      }
      if (isUUID(q)) {
        matches.push('u.id = :qId');
        params.qId = q.toLowerCase();
      }
      query.andWhere(`(${matches.join(' OR ')})`, params);
    }

    if (after) {
      query.andWhere(
        '(u.created_at, u.id) < (CAST(:afterAt AS timestamptz), CAST(:afterId AS uuid))',
        {
          afterAt: after.at,
          afterId: after.id,
        },
      );
    }

    const { entities, raw } = await query.getRawAndEntities<{ cursor_at: string }>();
    return entities.map((user, index) => ({ user, cursorAt: raw[index].cursor_at }));
  }
}

/** A LIKE pattern matching `text` literally (backslash is PostgreSQL's default LIKE escape). */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
