import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { sqlRows } from '../database/sql';
import { NoUserCondition } from './users.errors';

/** A partner as a buyer attaching to it sees it. */
export interface PartnerRef {
  id: string;
  partnerCode: string;
}

/** Who gets something when this buyer pays. */
export interface BuyerLinks {
  referrerId: string | null;
  partnerId: string | null;
  /** The partner's commission rate (numeric(5,2) text); null when it has none. */
  partnerPercent: string | null;
}

/**
 * Who referred a user, in the user's own columns: the partner a buyer is attached to
 * (`referred_by_partner_id`) and the user-to-user referrer (`referred_by_user_id`). Each is set
 * once, by one conditional UPDATE, so the first of racing attachments wins. Statements run in the
 * caller's transaction, when there is one.
 */
@Injectable()
export class ReferralsRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async buyerLinks(userId: string): Promise<BuyerLinks | null> {
    const [row] = await sqlRows<BuyerLinks>(
      this.txHost.tx,
      `SELECT u.referred_by_user_id AS "referrerId", u.referred_by_partner_id AS "partnerId",
         p.commission_percent AS "partnerPercent"
       FROM users u LEFT JOIN users p ON p.id = u.referred_by_partner_id WHERE u.id = $1`,
      [userId],
    );
    return row ?? null;
  }

  /** The partner account with this code, in any case; null when no partner has it. */
  async findPartnerByCode(code: string): Promise<PartnerRef | null> {
    const [row] = await sqlRows<PartnerRef>(
      this.txHost.tx,
      `SELECT id, partner_code AS "partnerCode" FROM users
       WHERE lower(partner_code) = lower($1) AND role = 'partner'`,
      [code],
    );
    return row ?? null;
  }

  /**
   * Attaches the buyer to the partner if it has none yet: one conditional update, so of racing
   * attachments exactly one wins. `current`: the partner the buyer has when it already had one
   * (null only if that partner was deleted in between).
   */
  async attachToPartner(
    buyerId: string,
    partnerId: string,
  ): Promise<{ attached: true } | { attached: false; current: string | null }> {
    const [attached] = await sqlRows<{ id: string }>(
      this.txHost.tx,
      `UPDATE users SET referred_by_partner_id = $2
       WHERE id = $1 AND referred_by_partner_id IS NULL RETURNING id`,
      [buyerId, partnerId],
    );
    if (attached) return { attached: true };
    const [row] = await sqlRows<{ current: string | null }>(
      this.txHost.tx,
      `SELECT referred_by_partner_id AS current FROM users WHERE id = $1`,
      [buyerId],
    );
    if (!row) throw new NoUserCondition(buyerId);
    return { attached: false, current: row.current };
  }

  /**
   * Records the user-to-user referrer, the account with Telegram id `referrerTgId`: once (the first
   * wins), never oneself, and only while the user has not paid an invoice. One conditional update,
   * so concurrent or repeated `/start` links cannot change an existing referrer.
   */
  async attachReferrerByTgId(userId: string, referrerTgId: string): Promise<boolean> {
    const rows = await sqlRows<{ id: string }>(
      this.txHost.tx,
      `UPDATE users u SET referred_by_user_id = r.id
         FROM users r
        WHERE u.id = $1 AND r.tg_id = $2 AND r.id <> u.id AND u.referred_by_user_id IS NULL
          AND NOT EXISTS (SELECT 1 FROM invoices i WHERE i.user_id = u.id AND i.status = 'paid')
        RETURNING u.id`,
      [userId, referrerTgId],
    );
    return rows.length > 0;
  }
}
