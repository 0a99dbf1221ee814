import { Injectable } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { AccountsRepository } from '../users/accounts.repository';
import { AppError } from '../common/errors';
import type { AuthorRole, TicketStatus } from './entities/ticket.entity';
import { keysetPage, type Page, type PageQuery, pagePosition } from '../common/pagination';
import { NoTicketsCondition } from './tickets.errors';
import { type MessageRecord, type TicketRecord, TicketsRepository } from './tickets.repository';

/** A user may have at most this many open tickets at once. */
export const MAX_OPEN_TICKETS = 5;

/** A ticket with its whole thread, oldest message first. */
export interface Thread {
  ticket: TicketRecord;
  messages: MessageRecord[];
}

/** Who writes a message: the ticket's owner, or support staff on any ticket. */
interface Author {
  id: string;
  role: AuthorRole;
}

@Injectable()
export class TicketsService {
  constructor(
    private readonly tickets: TicketsRepository,
    private readonly users: AccountsRepository,
  ) {}

  /**
   * Opens a ticket with its first message. The user's row is locked before counting, so concurrent
   * creations by one user queue up and the limit holds under any concurrency.
   */
  @Transactional()
  async open(userId: string, subject: string, message: string): Promise<Thread> {
    if ((await this.users.lock([userId])).length === 0) {
      throw new AppError('NO_USER', 'user not found');
    }
    if ((await this.tickets.countOpen(userId)) >= MAX_OPEN_TICKETS) {
      throw new AppError(
        'CONFLICT',
        `at most ${MAX_OPEN_TICKETS} open tickets; wait for one to be closed`,
      );
    }
    const created = await this.tickets.insertTicket(userId, subject, message);
    return { ticket: created.ticket, messages: [created.message] };
  }

  async listOwn(userId: string, page: PageQuery): Promise<Page<TicketRecord>> {
    const { after, limit } = pagePosition(page);
    return keysetPage(await this.tickets.pageOfUser(userId, after, limit + 1), limit);
  }

  /** `status` defaults to the open queue. */
  async listQueue(
    status: TicketStatus | undefined,
    userId: string | undefined,
    page: PageQuery,
  ): Promise<Page<TicketRecord>> {
    const { after, limit } = pagePosition(page);
    const rows = await this.tickets.pageOfQueue(status ?? 'open', userId ?? null, after, limit + 1);
    return keysetPage(rows, limit);
  }

  /** The thread; with `ownerId`, only that user's ticket is visible. */
  @Transactional<TransactionalAdapterTypeOrm>({ isolationLevel: 'REPEATABLE READ' })
  thread(ticketId: string, ownerId?: string): Promise<Thread> {
    // One snapshot: the ticket and its messages as they were at one moment.
    return this.mapped(async () => {
      const ticket = await this.tickets.find(ticketId, ownerId);
      return { ticket, messages: await this.tickets.messagesOf(ticketId) };
    });
  }

  userReply(userId: string, ticketId: string, body: string): Promise<MessageRecord> {
    return this.reply(ticketId, { id: userId, role: 'user' }, body, userId);
  }

  staffReply(staffId: string, ticketId: string, body: string): Promise<MessageRecord> {
    return this.reply(ticketId, { id: staffId, role: 'staff' }, body);
  }

  /**
   * Closes the ticket. Closing an already-closed ticket is idempotent: 200 with the ticket as it
   * is (its first closer and time kept), so a retried or doubled click is not an error.
   */
  @Transactional()
  close(staffId: string, ticketId: string): Promise<TicketRecord> {
    return this.mapped(async () => {
      const ticket = await this.tickets.lockTicket(ticketId);
      if (ticket.status === 'closed') return ticket;
      return this.tickets.markClosed(ticketId, staffId);
    });
  }

  /** The ticket stays locked from the status check to the insert: a concurrent close waits. */
  @Transactional()
  private reply(
    ticketId: string,
    author: Author,
    body: string,
    ownerId?: string,
  ): Promise<MessageRecord> {
    return this.mapped(async () => {
      const ticket = await this.tickets.lockTicket(ticketId, ownerId);
      if (ticket.status === 'closed') {
        throw new AppError('TICKET_CLOSED', 'the ticket is closed; open a new one');
      }
      return this.tickets.insertMessage({
        ticketId,
        authorId: author.id,
        authorRole: author.role,
        body,
      });
    });
  }

  /** Maps the data layer's conditions to the contract's errors. */
  private async mapped<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof NoTicketsCondition) throw new AppError('NO_TICKETS', 'ticket not found');
      throw error;
    }
  }
}
