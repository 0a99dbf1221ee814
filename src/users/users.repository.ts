import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, Repository } from 'typeorm';
import { isUniqueViolation } from '../database/postgres-errors';
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

/** A user with the default traffic limit that applies to it when it has no override. */
export interface UserWithDefaults {
  user: User;
  defaultLimitBytes: string | null;
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

  /** The user and the stored default traffic limit, in one round trip. */
  async getWithDefaults(id: string): Promise<UserWithDefaults> {
    const { entities, raw } = await this.users
      .createQueryBuilder('u')
      .addSelect(
        `(SELECT s.value #>> '{}' FROM app_settings s WHERE s.key = '${DEFAULT_TRAFFIC_LIMIT_KEY}')`,
        'default_limit',
      )
      .where('u.id = :id', { id })
      .getRawAndEntities<{ default_limit: string | null }>();
    if (!entities[0]) throw new NoUserCondition(id);
    return { user: entities[0], defaultLimitBytes: raw[0]?.default_limit ?? null };
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
