import { ApiProperty } from '@nestjs/swagger';
import {
  AUTHOR_ROLES,
  type AuthorRole,
  TICKET_STATUSES,
  type TicketStatus,
} from '../entities/ticket.entity';
import type { Thread } from '../tickets.service';
import type { MessageRecord, TicketRecord } from '../tickets.repository';

export class TicketResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  user_id: string;

  @ApiProperty()
  subject: string;

  @ApiProperty({ enum: TICKET_STATUSES })
  status: TicketStatus;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;

  @ApiProperty({ format: 'date-time', type: String, nullable: true })
  closed_at: string | null;

  @ApiProperty({ format: 'date-time' })
  last_message_at: string;

  @ApiProperty({ description: "open, and the last message is the user's" })
  awaiting_staff: boolean;
}

export class TicketMessageResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  ticket_id: string;

  @ApiProperty({ format: 'uuid' })
  author_id: string;

  @ApiProperty({ enum: AUTHOR_ROLES })
  author_role: AuthorRole;

  @ApiProperty()
  body: string;

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

export class TicketThreadResponse {
  @ApiProperty({ type: TicketResponse })
  ticket: TicketResponse;

  @ApiProperty({ type: [TicketMessageResponse], description: 'oldest first' })
  messages: TicketMessageResponse[];
}

export class TicketPageResponse {
  @ApiProperty({ type: [TicketResponse] })
  items: TicketResponse[];

  @ApiProperty({ type: String, nullable: true, description: 'null on the last page' })
  next_cursor: string | null;
}

export function toTicketResponse(ticket: TicketRecord): TicketResponse {
  return {
    id: ticket.id,
    user_id: ticket.userId,
    subject: ticket.subject,
    status: ticket.status,
    created_at: ticket.createdAt.toISOString(),
    updated_at: ticket.updatedAt.toISOString(),
    closed_at: ticket.closedAt?.toISOString() ?? null,
    last_message_at: ticket.lastMessageAt.toISOString(),
    awaiting_staff: ticket.status === 'open' && ticket.lastAuthorRole === 'user',
  };
}

export function toMessageResponse(message: MessageRecord): TicketMessageResponse {
  return {
    id: message.id,
    ticket_id: message.ticketId,
    author_id: message.authorId,
    author_role: message.authorRole,
    body: message.body,
    created_at: message.createdAt.toISOString(),
  };
}

export function toThreadResponse(thread: Thread): TicketThreadResponse {
  return {
    ticket: toTicketResponse(thread.ticket),
    messages: thread.messages.map(toMessageResponse),
  };
}
