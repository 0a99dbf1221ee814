import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { sqlRows } from '../database/sql';
import type { AuthorRole, TicketStatus } from './entities/ticket.entity';
import { type KeysetCursor, type KeysetOrder, keysetSql, positional } from '../common/pagination';
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

/** Messages a thread shows: its latest ones. */
export const THREAD_MESSAGES = 200;

/** The owner of `tickets` and `ticket_messages`. */
@Injectable()
export class TicketsRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async countOpen(userId: string): Promise<number> {
    const [row] = await sqlRows<{ n: number }>(
      this.txHost.tx,
      `SELECT count(*)::int AS n FROM tickets WHERE user_id = $1 AND status = 'open'`,
      [userId],
    );
    return row.n;
  }

  /** A new open ticket and its first message, both stamped with the transaction's time. */
  async insertTicket(
    userId: string,
    subject: string,
    body: string,
  ): Promise<{ ticket: TicketRecord; message: MessageRecord }> {
    const [ticket] = await sqlRows<TicketRecord>(
      this.txHost.tx,
      `INSERT INTO tickets AS t (user_id, subject, last_message_at, last_author_role)
       VALUES ($1, $2, now(), 'user') RETURNING ${TICKET}`,
      [userId, subject],
    );
    const [message] = await sqlRows<MessageRecord>(
      this.txHost.tx,
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
  async lockTicket(id: string, ownerId?: string): Promise<TicketRecord> {
    const [ticket] = await sqlRows<TicketRecord>(
      this.txHost.tx,
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
  async insertMessage(message: NewMessage): Promise<MessageRecord> {
    const [inserted] = await sqlRows<MessageRecord>(
      this.txHost.tx,
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
  async markClosed(id: string, closedBy: string): Promise<TicketRecord> {
    const [ticket] = await sqlRows<TicketRecord>(
      this.txHost.tx,
      `UPDATE tickets t SET status = 'closed', closed_at = c.at, closed_by = $2, updated_at = c.at
       FROM (SELECT clock_timestamp() AS at) c
       WHERE t.id = $1 RETURNING ${TICKET}`,
      [id, closedBy],
    );
    return ticket;
  }

  /**
   * The ticket's latest THREAD_MESSAGES messages, oldest first: a bounded read on the
   * (ticket_id, created_at) index however long the thread grows.
   */
  messagesOf(id: string): Promise<MessageRecord[]> {
    return sqlRows<MessageRecord>(
      this.txHost.tx,
      `SELECT * FROM (SELECT ${MESSAGE} FROM ticket_messages m WHERE m.ticket_id = $1
                       ORDER BY m.created_at DESC, m.id DESC LIMIT $2) latest
        ORDER BY latest."createdAt", latest.id`,
      [id, THREAD_MESSAGES],
    );
  }

  /** A user's own tickets, newest first. */
  pageOfUser(userId: string, after: KeysetCursor | null, limit: number): Promise<ListedTicket[]> {
    const order: KeysetOrder = { at: 't.created_at', id: 't.id', direction: 'DESC' };
    return this.page('t.user_id = $1', [userId], order, after, limit);
  }

  /**
   * The staff queue: open tickets oldest first; closed ones most recently closed first; with
   * `userId`, only that user's.
   */
  pageOfQueue(
    status: TicketStatus,
    userId: string | null,
    after: KeysetCursor | null,
    limit: number,
  ): Promise<ListedTicket[]> {
    const order: KeysetOrder =
      status === 'open'
        ? { at: 't.created_at', id: 't.id', direction: 'ASC' }
        : { at: 't.closed_at', id: 't.id', direction: 'DESC' };
    return userId === null
      ? this.page('t.status = $1', [status], order, after, limit)
      : this.page('t.status = $1 AND t.user_id = $2', [status, userId], order, after, limit);
  }

  /** `limit` tickets matching `filter` (on `$1`… = `values`), in `order`, after the cursor. */
  private page(
    filter: string,
    values: unknown[],
    order: KeysetOrder,
    after: KeysetCursor | null,
    limit: number,
  ): Promise<ListedTicket[]> {
    const params: unknown[] = [...values, limit];
    const limitParam = `$${params.length}`;
    const keyset = keysetSql(order, after, positional(params));
    return sqlRows<ListedTicket>(
      this.txHost.tx,
      `SELECT ${TICKET}, ${keyset.selectSortKey} FROM tickets t
       WHERE ${filter} AND ${keyset.after}
       ORDER BY ${keyset.orderBy} LIMIT ${limitParam}`,
      params,
    );
  }

  /** With `ownerId`, another user's ticket is the same NO_TICKETS as a missing one. */
  async find(id: string, ownerId?: string): Promise<TicketRecord> {
    const [ticket] = await sqlRows<TicketRecord>(
      this.txHost.tx,
      `SELECT ${TICKET} FROM tickets t WHERE t.id = $1 AND ($2::uuid IS NULL OR t.user_id = $2)`,
      [id, ownerId ?? null],
    );
    if (!ticket) throw new NoTicketsCondition(id);
    return ticket;
  }
}
