import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { sqlRows } from '../database/sql';
import type { ReminderKind } from './entities/bot-reminder.entity';

/** A subscription end some Telegram account should hear about. */
export interface DueReminder {
  userId: string;
  tgId: string;
  languageCode: string | null;
  /** Exact text of the end (microseconds kept), to match it again when claiming. */
  expiresAtText: string;
  expiresAt: Date;
  kind: ReminderKind;
}

/** A traffic warning the bot should send: 80% or 100% of the limit, once per period. */
export interface DueTrafficWarning {
  userId: string;
  tgId: string;
  languageCode: string | null;
  kind: 'traffic80' | 'traffic100';
  /** Exact text of the period key (microseconds kept), to match it again when claiming. */
  periodKeyText: string;
  /** When the traffic starts again from zero; null when the plan does not reset it. */
  resetsAt: Date | null;
}

/**
 * Every query on `bot_chats` and `bot_reminders`, and the sending side of `traffic_warnings`
 * (the traffic batch records them).
 */
@Injectable()
export class BotRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /**
   * The user wrote to the bot: remember its language and that it can be reached again. Writes only
   * when something changed, as it runs for every update.
   */
  async noteChat(tgId: number, languageCode: string | null): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO bot_chats AS c (tg_id, language_code) VALUES ($1, $2)
       ON CONFLICT (tg_id) DO UPDATE
         SET language_code = COALESCE(EXCLUDED.language_code, c.language_code),
             unreachable_at = NULL, updated_at = now()
       WHERE c.unreachable_at IS NOT NULL
          OR c.language_code IS DISTINCT FROM COALESCE(EXCLUDED.language_code, c.language_code)`,
      [String(tgId), languageCode],
    );
  }

  /** Telegram refused to deliver to this account (it blocked the bot). */
  async markUnreachable(tgId: string): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO bot_chats AS c (tg_id, unreachable_at) VALUES ($1, now())
       ON CONFLICT (tg_id) DO UPDATE SET unreachable_at = now(), updated_at = now()`,
      [tgId],
    );
  }

  /**
   * Telegram accounts whose subscription ends within 3 days, or ended within `endedDays`, that
   * have not had the reminder of that moment for that end, and are reachable. `now` is the
   * service's clock.
   */
  dueReminders(now: Date, endedDays: number, limit: number): Promise<DueReminder[]> {
    return sqlRows<DueReminder>(
      this.txHost.tx,
      `SELECT d.* FROM (
         SELECT u.id AS "userId", u.tg_id::text AS "tgId", c.language_code AS "languageCode",
           to_char(u.subscription_expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
             AS "expiresAtText",
           u.subscription_expires_at AS "expiresAt",
           CASE WHEN u.subscription_expires_at <= $1::timestamptz THEN 'ended'
                WHEN u.subscription_expires_at <= $1::timestamptz + interval '1 day' THEN '1d'
                ELSE '3d' END AS kind
         FROM users u LEFT JOIN bot_chats c ON c.tg_id = u.tg_id
         WHERE u.tg_id IS NOT NULL AND c.unreachable_at IS NULL
           AND NOT COALESCE(c.warnings_off, false)
           AND u.subscription_expires_at > $1::timestamptz - make_interval(days => $2)
           AND u.subscription_expires_at <= $1::timestamptz + interval '3 days'
       ) d
       WHERE NOT EXISTS (SELECT 1 FROM bot_reminders r
                         WHERE r.user_id = d."userId" AND r.expires_at = d."expiresAtText"::timestamptz
                           AND r.kind = d.kind)
       ORDER BY d."expiresAt", d."userId" LIMIT $3`,
      [now, endedDays, limit],
    );
  }

  /**
   * Claims one reminder just before it is sent, checking again that the subscription still ends
   * then (not renewed meanwhile), that the account is reachable, and that no one sent it yet. True
   * for the one caller that should send it.
   */
  async claimReminder(reminder: DueReminder): Promise<boolean> {
    const rows = await sqlRows<{ user_id: string }>(
      this.txHost.tx,
      `INSERT INTO bot_reminders (user_id, expires_at, kind)
       SELECT u.id, u.subscription_expires_at, $3 FROM users u
         LEFT JOIN bot_chats c ON c.tg_id = u.tg_id
        WHERE u.id = $1 AND u.subscription_expires_at = $2::timestamptz AND c.unreachable_at IS NULL
          AND NOT COALESCE(c.warnings_off, false)
       ON CONFLICT DO NOTHING RETURNING user_id`,
      [reminder.userId, reminder.expiresAtText, reminder.kind],
    );
    return rows.length > 0;
  }

  /** The message did not go out for a passing reason: the next run tries again. */
  async releaseReminder(reminder: DueReminder): Promise<void> {
    await this.txHost.tx.query(
      `DELETE FROM bot_reminders WHERE user_id = $1 AND expires_at = $2::timestamptz AND kind = $3`,
      [reminder.userId, reminder.expiresAtText, reminder.kind],
    );
  }

  /** The account turns warnings and reminders off (`off`) or on again. */
  async setWarningsOff(tgId: string, off: boolean): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO bot_chats AS c (tg_id, warnings_off) VALUES ($1, $2)
       ON CONFLICT (tg_id) DO UPDATE SET warnings_off = $2, updated_at = now()`,
      [tgId, off],
    );
  }

  async warningsOff(tgId: string): Promise<boolean> {
    const [row] = await sqlRows<{ off: boolean }>(
      this.txHost.tx,
      `SELECT warnings_off AS off FROM bot_chats WHERE tg_id = $1`,
      [tgId],
    );
    return row?.off ?? false;
  }

  /**
   * Traffic warnings not sent yet, recorded within `withinHours` (an older one says nothing
   * useful any more), of reachable accounts that have not turned warnings off; oldest first.
   */
  dueTrafficWarnings(withinHours: number, limit: number): Promise<DueTrafficWarning[]> {
    return sqlRows<DueTrafficWarning>(
      this.txHost.tx,
      `SELECT w.user_id AS "userId", u.tg_id::text AS "tgId", c.language_code AS "languageCode",
              w.kind,
              to_char(w.period_key AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
                AS "periodKeyText",
              CASE WHEN u.subscription_expires_at > now() THEN u.traffic_reset_at END AS "resetsAt"
         FROM traffic_warnings w JOIN users u ON u.id = w.user_id
         LEFT JOIN bot_chats c ON c.tg_id = u.tg_id
        WHERE w.sent_at IS NULL AND w.created_at > now() - make_interval(hours => $1)
          AND u.tg_id IS NOT NULL AND c.unreachable_at IS NULL
          AND NOT COALESCE(c.warnings_off, false)
        ORDER BY w.created_at LIMIT $2`,
      [withinHours, limit],
    );
  }

  /** Claims one warning just before it is sent; true for the one caller that should send it. */
  async claimTrafficWarning(warning: DueTrafficWarning): Promise<boolean> {
    const rows = await sqlRows<{ user_id: string }>(
      this.txHost.tx,
      `UPDATE traffic_warnings SET sent_at = now()
        WHERE user_id = $1 AND kind = $2 AND period_key = $3::timestamptz AND sent_at IS NULL
       RETURNING user_id`,
      [warning.userId, warning.kind, warning.periodKeyText],
    );
    return rows.length > 0;
  }

  /** The warning did not go out for a passing reason: the next run tries again. */
  async releaseTrafficWarning(warning: DueTrafficWarning): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE traffic_warnings SET sent_at = NULL
        WHERE user_id = $1 AND kind = $2 AND period_key = $3::timestamptz`,
      [warning.userId, warning.kind, warning.periodKeyText],
    );
  }
}
