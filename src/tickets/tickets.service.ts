import { Injectable } from '@nestjs/common';
import { AppError, validationFailed } from '../common/errors';
import { NoUserCondition } from '../users/users.errors';
import {
  toMessageResponse,
  toTicketResponse,
  type TicketMessageResponse,
  type TicketPageResponse,
  type TicketResponse,
  type TicketThreadResponse,
} from './dto/ticket.response';
import type { AuthorRole, TicketStatus } from './entities/ticket.entity';
import {
  decodeCursor,
  encodeCursor,
  type KeysetCursor,
  DEFAULT_PAGE_LIMIT,
} from '../common/pagination';
import { NoTicketsCondition } from './tickets.errors';
import {
  type ListedTicket,
  type MessageRecord,
  type TicketRecord,
  TicketsRepository,
} from './tickets.repository';

/** A user may have at most this many open tickets at once. */
export const MAX_OPEN_TICKETS = 5;

export interface PageRequest {
  limit?: number;
  cursor?: string;
}

/** Who writes a message: the ticket's owner, or support staff on any ticket. */
interface Author {
  id: string;
  role: AuthorRole;
}

@Injectable()
export class TicketsService {
  constructor(private readonly tickets: TicketsRepository) {}

  /**
   * Opens a ticket with its first message. The user's row is locked before counting, so concurrent
   * creations by one user queue up and the limit holds under any concurrency.
   */
  open(userId: string, subject: string, message: string): Promise<TicketThreadResponse> {
    return this.mapped(() =>
      this.tickets.transaction(async (tx) => {
        await this.tickets.lockUser(tx, userId);
        if ((await this.tickets.countOpen(tx, userId)) >= MAX_OPEN_TICKETS) {
          throw new AppError(
            'CONFLICT',
            `at most ${MAX_OPEN_TICKETS} open tickets; wait for one to be closed`,
          );
        }
        const created = await this.tickets.insertTicket(tx, userId, subject, message);
        return threadView(created.ticket, [created.message]);
      }),
    );
  }

  async listOwn(userId: string, page: PageRequest): Promise<TicketPageResponse> {
    const { after, limit } = pageOf(page);
    return this.paged(limit, (n) => this.tickets.pageOfUser(userId, after, n));
  }

  /** `status` defaults to the open queue. */
  async listQueue(
    status: TicketStatus | undefined,
    page: PageRequest,
  ): Promise<TicketPageResponse> {
    const { after, limit } = pageOf(page);
    return this.paged(limit, (n) => this.tickets.pageOfQueue(status ?? 'open', after, n));
  }

  /** The thread; with `ownerId`, only that user's ticket is visible. */
  thread(ticketId: string, ownerId?: string): Promise<TicketThreadResponse> {
    return this.mapped(async () => {
      const { ticket, messages } = await this.tickets.thread(ticketId, ownerId);
      return threadView(ticket, messages);
    });
  }

  userReply(userId: string, ticketId: string, body: string): Promise<TicketMessageResponse> {
    return this.reply(ticketId, { id: userId, role: 'user' }, body, userId);
  }

  staffReply(staffId: string, ticketId: string, body: string): Promise<TicketMessageResponse> {
    return this.reply(ticketId, { id: staffId, role: 'staff' }, body);
  }

  /**
   * Closes the ticket. Closing an already-closed ticket is idempotent: 200 with the ticket as it
   * is (its first closer and time kept), so a retried or doubled click is not an error.
   */
  close(staffId: string, ticketId: string): Promise<TicketResponse> {
    return this.mapped(() =>
      this.tickets.transaction(async (tx) => {
        const ticket = await this.tickets.lockTicket(tx, ticketId);
        if (ticket.status === 'closed') return toTicketResponse(ticket);
        return toTicketResponse(await this.tickets.markClosed(tx, ticketId, staffId));
      }),
    );
  }

  /** The ticket stays locked from the status check to the insert: a concurrent close waits. */
  private reply(
    ticketId: string,
    author: Author,
    body: string,
    ownerId?: string,
  ): Promise<TicketMessageResponse> {
    return this.mapped(() =>
      this.tickets.transaction(async (tx) => {
        const ticket = await this.tickets.lockTicket(tx, ticketId, ownerId);
        if (ticket.status === 'closed') {
          throw new AppError('TICKET_CLOSED', 'the ticket is closed; open a new one');
        }
        const message = await this.tickets.insertMessage(tx, {
          ticketId,
          authorId: author.id,
          authorRole: author.role,
          body,
        });
        return toMessageResponse(message);
      }),
    );
  }

  /** Fetches one row more than asked to learn whether another page follows. */
  private async paged(
    limit: number,
    fetch: (n: number) => Promise<ListedTicket[]>,
  ): Promise<TicketPageResponse> {
    const rows = await fetch(limit + 1);
    const items = rows.slice(0, limit);
    const last = items[items.length - 1];
    return {
      items: items.map(toTicketResponse),
      next_cursor:
        rows.length > limit && last ? encodeCursor({ at: last.sortKey, id: last.id }) : null,
    };
  }

  /** Maps the data layer's conditions to the contract's errors. */
  private async mapped<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof NoTicketsCondition) throw new AppError('NO_TICKETS', 'ticket not found');
      if (error instanceof NoUserCondition) throw new AppError('NO_USER', 'user not found');
      throw error;
    }
  }
}

function threadView(ticket: TicketRecord, messages: MessageRecord[]): TicketThreadResponse {
  return { ticket: toTicketResponse(ticket), messages: messages.map(toMessageResponse) };
}

function pageOf(page: PageRequest): { after: KeysetCursor | null; limit: number } {
  let after: KeysetCursor | null = null;
  if (page.cursor !== undefined) {
    after = decodeCursor(page.cursor);
    if (!after) throw validationFailed([{ field: 'cursor', message: 'is not a valid cursor' }]);
  }
  return { after, limit: page.limit ?? DEFAULT_PAGE_LIMIT };
}
