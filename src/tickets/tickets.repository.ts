import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { sqlRows } from '../database/sql';
import { NoUserCondition } from '../users/users.errors';
import type { AuthorRole, TicketStatus } from './entities/ticket.entity';
import type { KeysetCursor } from '../common/pagination';
import { NoTicketsCondition } from './tickets.errors';

export interface TicketRecord {
  id: string;
  userId: string;
  subject: string;
  status: TicketStatus;
  createdAt: Date;
  updatedAt: Date;
  closedAt: Date | null;
  closedBy: string | null;
  lastMessageAt: Date;
  lastAuthorRole: AuthorRole;
}

/** A ticket in a list, with its exact sort key for the next page's cursor. */
export interface ListedTicket extends TicketRecord {
  sortKey: string;
}

export interface MessageRecord {
  id: string;
  ticketId: string;
  authorId: string;
  authorRole: AuthorRole;
  body: string;
  createdAt: Date;
}

export interface NewMessage {
  ticketId: string;
  authorId: string;
  authorRole: AuthorRole;
  body: string;
}

const TICKET = `t.id, t.user_id AS "userId", t.subject, t.status, t.created_at AS "createdAt",
  t.updated_at AS "updatedAt", t.closed_at AS "closedAt", t.closed_by AS "closedBy",
  t.last_message_at AS "lastMessageAt", t.last_author_role AS "lastAuthorRole"`;

const MESSAGE = `m.id, m.ticket_id AS "ticketId", m.author_id AS "authorId",
  m.author_role AS "authorRole", m.body, m.created_at AS "createdAt"`;

/** The timestamp with all six fractional digits, UTC; what a cursor carries. */
const exactKey = (column: string): string =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "sortKey"`;

/** Every query on `tickets` and `ticket_messages`. */
@Injectable()
export class TicketsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  transaction<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /**
   * Locks the user's row until the transaction ends, so that one user's ticket creations run one
   * after another. NO KEY UPDATE still lets other tables' foreign keys reference the row meanwhile.
   */
  async lockUser(tx: EntityManager, userId: string): Promise<void> {
    const rows = await sqlRows(tx, `SELECT id FROM users WHERE id = $1 FOR NO KEY UPDATE`, [
      userId,
    ]);
    if (rows.length === 0) throw new NoUserCondition(userId);
  }

  async countOpen(tx: EntityManager, userId: string): Promise<number> {
    const [row] = await sqlRows<{ n: number }>(
      tx,
      `SELECT count(*)::int AS n FROM tickets WHERE user_id = $1 AND status = 'open'`,
      [userId],
    );
    return row.n;
  }

  /** A new open ticket and its first message, both stamped with the transaction's time. */
  async insertTicket(
    tx: EntityManager,
    userId: string,
    subject: string,
    body: string,
  ): Promise<{ ticket: TicketRecord; message: MessageRecord }> {
    const [ticket] = await sqlRows<TicketRecord>(
      tx,
      `INSERT INTO tickets AS t (user_id, subject, last_message_at, last_author_role)
       VALUES ($1, $2, now(), 'user') RETURNING ${TICKET}`,
      [userId, subject],
    );
    const [message] = await sqlRows<MessageRecord>(
      tx,
      `INSERT INTO ticket_messages AS m (ticket_id, author_id, author_role, body, created_at)
       VALUES ($1, $2, 'user', $3, now()) RETURNING ${MESSAGE}`,
      [ticket.id, userId, body],
    );
    return { ticket, message };
  }

  /**
   * Reads and locks the ticket until the transaction ends (a concurrent close waits, or is waited
   * for). With `ownerId`, another user's ticket is the same NO_TICKETS as a missing one.
   */
  async lockTicket(tx: EntityManager, id: string, ownerId?: string): Promise<TicketRecord> {
    const [ticket] = await sqlRows<TicketRecord>(
      tx,
      `SELECT ${TICKET} FROM tickets t
       WHERE t.id = $1 AND ($2::uuid IS NULL OR t.user_id = $2) FOR NO KEY UPDATE`,
      [id, ownerId ?? null],
    );
    if (!ticket) throw new NoTicketsCondition(id);
    return ticket;
  }

  /**
   * Appends a message and moves the ticket's last-message fields to it. The clock, not the
   * transaction's start, stamps it: under the ticket lock that keeps the thread in insertion order.
   */
  async insertMessage(tx: EntityManager, message: NewMessage): Promise<MessageRecord> {
    const [inserted] = await sqlRows<MessageRecord>(
      tx,
      `WITH m AS (
         INSERT INTO ticket_messages (ticket_id, author_id, author_role, body, created_at)
         VALUES ($1, $2, $3, $4, clock_timestamp()) RETURNING *
       ), touched AS (
         UPDATE tickets SET last_message_at = m.created_at, last_author_role = m.author_role,
           updated_at = m.created_at
         FROM m WHERE tickets.id = m.ticket_id
       )
       SELECT ${MESSAGE} FROM m`,
      [message.ticketId, message.authorId, message.authorRole, message.body],
    );
    return inserted;
  }

  /**
   * Closes a ticket the caller has locked. Stamped by the clock, not the transaction's start, so a
   * reply that held the lock first is never dated after the close.
   */
  async markClosed(tx: EntityManager, id: string, closedBy: string): Promise<TicketRecord> {
    const [ticket] = await sqlRows<TicketRecord>(
      tx,
      `UPDATE tickets t SET status = 'closed', closed_at = c.at, closed_by = $2, updated_at = c.at
       FROM (SELECT clock_timestamp() AS at) c
       WHERE t.id = $1 RETURNING ${TICKET}`,
      [id, closedBy],
    );
    return ticket;
  }

  /** The ticket and its whole thread (oldest first), read from one snapshot. */
  thread(
    id: string,
    ownerId?: string,
  ): Promise<{ ticket: TicketRecord; messages: MessageRecord[] }> {
    return this.dataSource.transaction('REPEATABLE READ', async (tx) => {
      const ticket = await this.selectTicket(tx, id, ownerId);
      const messages = await sqlRows<MessageRecord>(
        tx,
        `SELECT ${MESSAGE} FROM ticket_messages m WHERE m.ticket_id = $1
         ORDER BY m.created_at, m.id`,
        [id],
      );
      return { ticket, messages };
    });
  }

  /** A user's own tickets, newest first. */
  pageOfUser(userId: string, after: KeysetCursor | null, limit: number): Promise<ListedTicket[]> {
    const params: unknown[] = [userId, limit];
    let position = '';
    if (after) {
      params.push(after.at, after.id);
      position = `AND (t.created_at, t.id) < ($3::timestamptz, $4::uuid)`;
    }
    return sqlRows<ListedTicket>(
      this.dataSource,
      `SELECT ${TICKET}, ${exactKey('t.created_at')} FROM tickets t
       WHERE t.user_id = $1 ${position}
       ORDER BY t.created_at DESC, t.id DESC LIMIT $2`,
      params,
    );
  }

  /** The staff queue: open tickets oldest first; closed ones most recently closed first. */
  pageOfQueue(
    status: TicketStatus,
    after: KeysetCursor | null,
    limit: number,
  ): Promise<ListedTicket[]> {
    const [column, direction, compare] =
      status === 'open' ? ['t.created_at', 'ASC', '>'] : ['t.closed_at', 'DESC', '<'];
    const params: unknown[] = [status, limit];
    let position = '';
    if (after) {
      params.push(after.at, after.id);
      position = `AND (${column}, t.id) ${compare} ($3::timestamptz, $4::uuid)`;
    }
    return sqlRows<ListedTicket>(
      this.dataSource,
      `SELECT ${TICKET}, ${exactKey(column)} FROM tickets t
       WHERE t.status = $1 ${position}
       ORDER BY ${column} ${direction}, t.id ${direction} LIMIT $2`,
      params,
    );
  }

  private async selectTicket(
    runner: DataSource | EntityManager,
    id: string,
    ownerId?: string,
  ): Promise<TicketRecord> {
    const [ticket] = await sqlRows<TicketRecord>(
      runner,
      `SELECT ${TICKET} FROM tickets t WHERE t.id = $1 AND ($2::uuid IS NULL OR t.user_id = $2)`,
      [id, ownerId ?? null],
    );
    if (!ticket) throw new NoTicketsCondition(id);
    return ticket;
  }
}
