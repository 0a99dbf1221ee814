import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { isUUID } from 'class-validator';
import type { SelectQueryBuilder } from 'typeorm';
import { type KeysetCursor, type KeysetOrder, keysetSql } from '../common/pagination';
import { User } from '../users/entities/user.entity';
import type { RoleFilter } from './dto/admin-users.dto';

const MAX_BIGINT = 9_223_372_036_854_775_807n;

export interface UserFilter {
  q?: string;
  role?: RoleFilter;
}

export interface UserPageRow {
  user: User;
  /** The row's keyset position, for the next page's cursor. */
  sortKey: string;
}

/** The reads of staff administration (writes of users are the users feature's repositories'). */
@Injectable()
export class AdminRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /** Newest first (`created_at DESC, id DESC`), `limit` rows after the cursor. */
  async pageUsers(
    filter: UserFilter,
    limit: number,
    after: KeysetCursor | null,
  ): Promise<UserPageRow[]> {
    const query = this.userPageQuery(filter, limit, after);
    const { entities, raw } = await query.getRawAndEntities<{ sort_key: string }>();
    return entities.map((user, index) => ({ user, sortKey: raw[index].sort_key }));
  }

  /** The statement of `pageUsers`, also planned by the query-plan test. */
  userPageQuery(
    filter: UserFilter,
    limit: number,
    after: KeysetCursor | null,
  ): SelectQueryBuilder<User> {
    const query = this.txHost.tx.getRepository(User).createQueryBuilder('u');
    const order: KeysetOrder = { at: 'u.created_at', id: 'u.id', direction: 'DESC' };
    const keyset = keysetSql(order, after, (value) => {
      const name = `keyset${Object.keys(query.getParameters()).length}`;
      query.setParameter(name, value);
      return `:${name}`;
    });
    query
      .addSelect(keyset.sortKey, 'sort_key')
      .andWhere(keyset.after)
      .orderBy(order.at, order.direction)
      .addOrderBy(order.id, order.direction)
      .limit(limit);

    if (filter.role === 'none') query.andWhere('u.role IS NULL');
    else if (filter.role) query.andWhere('u.role = :role', { role: filter.role });

    const q = filter.q ?? '';
    if (q !== '') {
      // Staff have usernames; subscribers only their Telegram one, often written with its '@'.
      const name = q.replace(/^@/, '').toLowerCase();
      const matches = ['lower(u.username) LIKE :prefix', 'lower(u.tg_username) LIKE :prefix'];
      const params: Record<string, string> = { prefix: `${escapeLike(name)}%` };
      if (/^\d{1,19}$/.test(q) && BigInt(q) <= MAX_BIGINT) {
        matches.push('u.tgId = :tgId');
        params.tgId = BigInt(q).toString();
      }
      if (isUUID(q)) {
        matches.push('u.id = :qId');
        params.qId = q.toLowerCase();
      } else {
        // The start of an id, as the list shows it (`02007e50…`): a range of the primary key.
        const range = idPrefixRange(q.replace(/…$/, ''));
        if (range) {
          matches.push('u.id BETWEEN :idLow AND :idHigh');
          Object.assign(params, range);
        }
      }
      // A partner by its code, in any case.
      matches.push('lower(u.partner_code) = :code');
      params.code = name;
      query.andWhere(`(${matches.join(' OR ')})`, params);
    }
    return query;
  }
}

/** The lowest and highest ids that start with `prefix` (4 hex digits or more), or null. */
export function idPrefixRange(prefix: string): { idLow: string; idHigh: string } | null {
  const given = prefix.toLowerCase();
  const hex = given.replace(/-/g, '');
  if (!/^[0-9a-f]{4,31}$/.test(hex)) return null;
  const canonical = (digits: string) =>
    `${digits.slice(0, 8)}-${digits.slice(8, 12)}-${digits.slice(12, 16)}-${digits.slice(16, 20)}-${digits.slice(20)}`;
  const idLow = canonical(hex.padEnd(32, '0'));
  // Dashes, when given, must stand where an id has them.
  if (!idLow.startsWith(given)) return null;
  return { idLow, idHigh: canonical(hex.padEnd(32, 'f')) };
}

/** A LIKE pattern matching `text` literally (backslash is PostgreSQL's default LIKE escape). */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
