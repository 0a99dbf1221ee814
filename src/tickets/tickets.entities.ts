import { TicketMessage } from './entities/ticket-message.entity';
import { Ticket } from './entities/ticket.entity';

/**
 * The entities of tickets/: TicketsModule registers them, src/entities.ts joins them for the CLI.
 */
export const TICKETS_ENTITIES = [Ticket, TicketMessage];
